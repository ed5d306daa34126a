//! The shapes of the lines httpx and urllib3 log of their requests, read at their fixed
//! separators ([`read`]), and the requests an agent sends of its own ([`agents_own`]).

use super::super::as_text;
use crate::event::{HTTP_METHODS, url_parts};

/// A client's line, as read.
#[derive(Debug, PartialEq)]
pub(in crate::ingest::text) enum ClientLine<'a> {
    /// A request and the status it got (httpx's and urllib3's lines).
    Answered {
        method: &'a [u8],
        url: String,
        status: u16,
        reason: &'a [u8],
    },
    /// urllib3 sends the request to `path` again after it failed with `error(message)`.
    Retrying {
        error: &'a [u8],
        message: &'a [u8],
        path: &'a [u8],
        /// `https://host[:port]`, when the error names its pool's host.
        origin: Option<String>,
    },
    /// urllib3 opens a connection to `origin`.
    Connecting { origin: String },
    /// A request is sent, its answer not yet known (go-retryablehttp's first try, the JDK
    /// client's `REQUEST:`); `headers_below`: its headers are logged on the lines after it.
    Sending {
        method: &'a [u8],
        url: &'a [u8],
        headers_below: bool,
    },
    /// A logged block of headers starts: its lines follow, without a timestamp.
    Headers,
    /// A client's account of an exchange it has already failed to its caller: no event.
    Diagnostic,
    /// The latest request to `url` (else the one sent last: the URL unnamed) failed with
    /// exception `class` (Go's `url.Error`) and its words `error`.
    Failed {
        url: Option<&'a [u8]>,
        class: &'a [u8],
        error: &'a [u8],
    },
    /// The request sent last, to `url` when named, got `status` (Stripe's SDK, Faraday).
    Answer { url: Option<&'a [u8]>, status: u16 },
    /// An SDK sends the latest request to `path` (`None`: the request sent last) again
    /// `after` a wait, saying no more of why (Stainless-generated SDKs' `Retrying request
    /// to /v1/x in 0.47 seconds`): the try before failed, unlogged unless its answer or
    /// failure was read.
    Retried {
        path: Option<&'a [u8]>,
        after: crate::time::Duration,
    },
    /// A retry middleware (reqwest-retry's) sends the request sent last again `after` a
    /// wait, naming neither it nor why.
    MiddlewareRetry { after: crate::time::Duration },
    /// The request to `url` is sent again `after` a wait, having got `status` if named.
    Resending {
        method: &'a [u8],
        url: &'a [u8],
        status: Option<u16>,
        after: crate::time::Duration,
    },
}

/// Reads a client's line (see the module's doc); `None` for any other message.
pub(in crate::ingest::text) fn read(msg: &[u8]) -> Option<ClientLine<'_>> {
    match msg.first()? {
        b'H' => httpx_request(msg).or_else(|| super::jdk_httpclient::read(msg)),
        b'h' => urllib3_request(msg),
        b'R' => (urllib3_retrying(msg))
            .or_else(|| super::stainless::read(msg))
            .or_else(|| super::reqwest_retry::read(msg))
            .or_else(|| super::jdk_httpclient::read(msg)),
        b'S' => (urllib3_connecting(msg))
            .or_else(|| super::stainless::read(msg))
            .or_else(|| super::faraday::status(msg)),
        b'E' | b'j' => super::jdk_httpclient::read(msg),
        b'm' => super::stripe::read(msg),
        _ => super::retryablehttp::read(msg),
    }
}

/// `HTTP Request: POST https://host/v1/refunds "HTTP/1.1 201 Created"` (httpx's
/// `'HTTP Request: %s %s "%s %d %s"'`; the reason may be empty).
fn httpx_request(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"HTTP Request: ")?;
    let (method, rest) = split_once(rest, b" ")?;
    let (url, answer) = split_once(rest, b" \"")?;
    let answer = answer.strip_suffix(b"\"")?;
    let (version, answer) = split_once(answer, b" ")?;
    let (status, reason) = match split_once(answer, b" ") {
        Some((status, reason)) => (status, reason.trim_ascii()),
        None => (answer, &b""[..]),
    };
    let known = HTTP_METHODS.contains(&method) && version.starts_with(b"HTTP/") && is_url(url);
    known.then_some(())?;
    Some(ClientLine::Answered {
        method,
        url: as_text(url)?.to_string(),
        status: status_code(status)?,
        reason,
    })
}

/// `https://host:443 "POST /v1/refunds HTTP/1.1" 201 57` (urllib3's `'%s://%s:%s "%s %s
/// %s" %s %s'`: the pool's scheme, host and port, the request line, the status and the
/// length, `None` when unknown).
fn urllib3_request(msg: &[u8]) -> Option<ClientLine<'_>> {
    let (pool, rest) = split_once(msg, b" \"")?;
    let (request, answer) = split_once(rest, b"\" ")?;
    let (method, request) = split_once(request, b" ")?;
    let (target, version) = split_once(request, b" ")?;
    let (status, length) = split_once(answer, b" ")?;
    let length_ok =
        length == b"None" || (!length.is_empty() && length.iter().all(u8::is_ascii_digit));
    let known = HTTP_METHODS.contains(&method)
        && version.starts_with(b"HTTP/")
        && length_ok
        && !target.is_empty()
        && !target.iter().any(u8::is_ascii_whitespace);
    known.then_some(())?;
    let origin = origin_of(pool)?;
    // A request through a proxy names the whole URL.
    let url = match target.first() {
        Some(b'/') => format!("{origin}{}", as_text(target)?),
        _ if is_url(target) => as_text(target)?.to_string(),
        _ => return None,
    };
    Some(ClientLine::Answered {
        method,
        url,
        status: status_code(status)?,
        reason: b"",
    })
}

/// `Retrying (Retry(total=2, ...)) after connection broken by 'ReadTimeoutError("...")':
/// /v1/refunds` (urllib3's `"Retrying (%r) after connection broken by '%r': %s"`).
fn urllib3_retrying(msg: &[u8]) -> Option<ClientLine<'_>> {
    const BROKEN: &[u8] = b") after connection broken by '";
    let rest = msg.strip_prefix(b"Retrying (Retry(")?;
    let at = find(rest, BROKEN)?;
    let rest = &rest[at + BROKEN.len()..];
    // The path is last, and no path has `': ` in it; the error's text may.
    let end = rfind(rest, b"': ")?;
    let (error, path) = (&rest[..end], rest[end + 3..].trim_ascii());
    let open = error.iter().position(|&b| b == b'(')?;
    let (class, args) = (&error[..open], error[open + 1..].strip_suffix(b")")?);
    let is_class = !class.is_empty()
        && class
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    let is_path = path.starts_with(b"/") || is_url(path);
    (is_class && is_path && !path.iter().any(u8::is_ascii_whitespace)).then_some(())?;
    // One quoted argument is the message itself; several are kept as written.
    let message = match (args.first(), args.last()) {
        (Some(&q @ (b'"' | b'\'')), Some(&last)) if last == q && args.len() >= 2 => {
            &args[1..args.len() - 1]
        }
        _ => args,
    };
    Some(ClientLine::Retrying {
        error: class,
        message,
        path,
        origin: pool_origin(message),
    })
}

/// `Starting new HTTPS connection (1): host:443` (urllib3's `"Starting new %s connection
/// (%d): %s:%s"`).
fn urllib3_connecting(msg: &[u8]) -> Option<ClientLine<'_>> {
    let rest = msg.strip_prefix(b"Starting new ")?;
    let (scheme, rest) = split_once(rest, b" connection (")?;
    let (_, host_port) = split_once(rest, b"): ")?;
    let scheme = match scheme {
        b"HTTPS" => "https",
        b"HTTP" => "http",
        _ => return None,
    };
    let (host, port) = split_last(host_port, b':')?;
    Some(ClientLine::Connecting {
        origin: origin(scheme, as_text(host)?, as_text(port)?)?,
    })
}

/// `https://host:443` → `https://host`: the origin as a URL names it, its port left out
/// when it is the scheme's own.
fn origin_of(pool: &[u8]) -> Option<String> {
    let (scheme, rest) = split_once(pool, b"://")?;
    let (host, port) = split_last(rest, b':')?;
    origin(as_text(scheme)?, as_text(host)?, as_text(port)?)
}

fn origin(scheme: &str, host: &str, port: &str) -> Option<String> {
    let plain_host = !host.is_empty()
        && host.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'[' | b']' | b':')
        });
    if !plain_host || !matches!(scheme, "http" | "https") {
        return None;
    }
    let default = matches!((scheme, port), ("https", "443") | ("http", "80"));
    Some(match port {
        _ if default || port == "None" => format!("{scheme}://{host}"),
        p if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{scheme}://{host}:{p}")
        }
        _ => return None,
    })
}

/// The origin an urllib3 error names: `HTTPSConnectionPool(host='h', port=443): ...`.
fn pool_origin(message: &[u8]) -> Option<String> {
    let (scheme, rest) = if let Some(at) = find(message, b"HTTPSConnectionPool(host='") {
        ("https", &message[at + 26..])
    } else {
        let at = find(message, b"HTTPConnectionPool(host='")?;
        ("http", &message[at + 25..])
    };
    let (host, rest) = split_once(rest, b"', port=")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    origin(scheme, as_text(host)?, as_text(&rest[..digits])?)
}

/// A status code of three digits, as a client logs the answer's.
pub(super) fn status_code(digits: &[u8]) -> Option<u16> {
    (digits.len() == 3 && digits.iter().all(u8::is_ascii_digit))
        .then(|| digits.iter().fold(0, |n, d| n * 10 + u16::from(d - b'0')))
        .filter(|s| (100..600).contains(s))
}

pub(super) fn is_url(b: &[u8]) -> bool {
    (b.starts_with(b"http://") || b.starts_with(b"https://"))
        && !b.iter().any(u8::is_ascii_whitespace)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

pub(super) fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

pub(super) fn split_once<'a>(b: &'a [u8], sep: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let at = find(b, sep)?;
    Some((&b[..at], &b[at + sep.len()..]))
}

fn split_last(b: &[u8], sep: u8) -> Option<(&[u8], &[u8])> {
    let at = b.iter().rposition(|&c| c == sep)?;
    Some((&b[..at], &b[at + 1..]))
}

/// Requests an agent sends of its own while a tool runs, never an attempt of the tool: to
/// a model (OpenAI's, Azure OpenAI's, Anthropic's, Google's, Mistral's, Cohere's, Groq's,
/// ... APIs, or any URL ending in a model endpoint: `/chat/completions`, `/completions`,
/// `/embeddings`, `:generateContent`, Ollama's `/api/chat`), and telemetry (LangSmith,
/// Langfuse, an OTLP exporter's `/v1/traces`, Sentry, PostHog, ...). A fixed list: a tool
/// whose whole job is one of these has no effect the audit counts.
pub(crate) fn agents_own(url: &[u8]) -> bool {
    const HOSTS: &[&str] = &[
        "api.openai.com",
        "api.anthropic.com",
        "generativelanguage.googleapis.com",
        "api.mistral.ai",
        "api.cohere.ai",
        "api.cohere.com",
        "api.groq.com",
        "api.together.xyz",
        "api.fireworks.ai",
        "openrouter.ai",
        "api.deepseek.com",
        "api.x.ai",
        "api.perplexity.ai",
        "api.smith.langchain.com",
        "eu.api.smith.langchain.com",
        "cloud.langfuse.com",
        "us.cloud.langfuse.com",
        "api.honeycomb.io",
        "api.wandb.ai",
        "otlp.arize.com",
        "app.posthog.com",
        "us.i.posthog.com",
        "eu.i.posthog.com",
    ];
    /// Hosts under these domains (`NAME.openai.azure.com`, `o1.ingest.sentry.io`).
    const DOMAINS: &[&str] = &[
        ".openai.azure.com",
        ".ingest.sentry.io",
        ".ingest.us.sentry.io",
        "-aiplatform.googleapis.com",
    ];
    const PATHS: &[&[u8]] = &[
        b"/chat/completions",
        b"/completions",
        b"/embeddings",
        // OpenAI's Responses API, the Agents SDK's default (through a proxy: LiteLLM).
        b"/v1/responses",
        b":generateContent",
        b":streamGenerateContent",
        b"/api/chat",
        b"/api/generate",
        b"/api/embed",
        b"/v1/traces",
        b"/v1/logs",
        b"/v1/metrics",
    ];
    let Some(url) = as_text(url) else {
        return false;
    };
    let (authority, path) = url_parts(url);
    let path = path.split_once('?').map_or(path, |(p, _)| p).as_bytes();
    let host = authority.map(|a| match a.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h.to_string(),
        _ => a,
    });
    let bedrock = |h: &str| h.starts_with("bedrock-runtime.") && h.ends_with(".amazonaws.com");
    host.as_deref()
        .is_some_and(|h| HOSTS.contains(&h) || DOMAINS.iter().any(|d| h.ends_with(d)) || bedrock(h))
        || PATHS.iter().any(|p| path.ends_with(p))
}
