//! The one `retryable` classification (SPEC §2). Every parser and every rule asks this module
//! what a failure means, so that no two places make a different judgement.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum FailureClass {
    /// Nothing reached the server: retry freely.
    Safe,
    /// The request may have been performed: retry only with a key.
    Ambiguous,
    /// A duplicate is in flight (409): back off, then retry.
    Conflict,
    /// The request will fail the same way again: never retry.
    Permanent,
    /// 2xx.
    Success,
}

impl FailureClass {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Safe => "safe",
            FailureClass::Ambiguous => "ambiguous",
            FailureClass::Conflict => "conflict",
            FailureClass::Permanent => "permanent",
            FailureClass::Success => "success",
        }
    }

    /// May the request be sent again? `keyed` says whether it carries an idempotency key.
    pub fn retryable(self, keyed: bool) -> bool {
        match self {
            FailureClass::Safe | FailureClass::Conflict => true,
            FailureClass::Ambiguous => keyed,
            FailureClass::Permanent | FailureClass::Success => false,
        }
    }
}

/// Classifies an HTTP status code.
pub fn classify_status(status: u16) -> FailureClass {
    match status {
        200..=299 => FailureClass::Success,
        // A redirect (or 304 Not Modified) answers without performing the request: the
        // client's resend to where it points is no retry of a request that may have run.
        300..=399 => FailureClass::Safe,
        409 => FailureClass::Conflict,
        400 | 401 | 403 | 404 | 422 => FailureClass::Permanent,
        // Other 4xx (405, 413, 429...) would fail the same way or are rate limits that say
        // nothing was done; 429 is a 4xx where the server promises no effect, and 408 one
        // where it never read the whole request (RFC 9110 §15.5.9: the client may repeat it).
        408 | 429 => FailureClass::Safe,
        405..=499 => FailureClass::Permanent,
        _ => FailureClass::Ambiguous,
    }
}

/// Phrases meaning the connection was never made: nothing reached the server.
const NEVER_CONNECTED: &[&str] = &[
    "connection refused",
    "failed to establish a new connection",
    "nameresolutionerror",
    "name or service not known",
    "connecttimeout",
    "connect timeout",
    "connect_timeout",
    "connection_refused",
    "temporary failure in name resolution",
    "nodename nor servname",
    "getaddrinfo failed",
    "no route to host",
    "network is unreachable",
    // Beyond Python's clients: Node (`connect ECONNREFUSED`, `getaddrinfo ENOTFOUND`, a
    // connect that timed out), Java (`UnknownHostException`, `Connect timed out`), Go
    // (`dial tcp ...`, `no such host`, a TLS handshake that timed out), Ruby
    // (`Net::OpenTimeout`), aiohttp (`Cannot connect to host`), httpx (`PoolTimeout`: no
    // connection was free) and a certificate refused before anything was sent.
    "connect etimedout",
    "connect timed out",
    "unknownhostexception",
    "no such host",
    "dial tcp",
    "tls handshake timeout",
    "opentimeout",
    "cannot connect to host",
    "pooltimeout",
    // httpx's ConnectError (refused, no such host, a handshake refused: nothing was sent),
    // as Stripe's SDK through httpx names it (`A ConnectError was raised`).
    "connecterror",
    "certificate verify failed",
    // libcurl's words (PHP's Guzzle wraps them all in one ConnectException): error 7,
    // error 6, and error 28 while connecting (`Operation timed out` is after sending).
    "couldn't connect to server",
    "could not resolve host",
    "connection timed out after",
    "resolving timed out after",
    // Ruby's Net::HTTP while connecting, whatever the cause in brackets (Faraday wraps it
    // in ConnectionFailed: `Failed to open TCP connection to h:443 (execution expired)`).
    "failed to open tcp connection",
];

/// Error codes (Node's, from the C library) meaning the connection was never made: matched
/// as whole words, since `enotfound` is also the end of `FileNotFound`, which Java raises
/// for a 404 the server sent.
const NEVER_CONNECTED_CODES: &[&str] = &["econnrefused", "enotfound", "eai_again"];

/// Phrases meaning the request was sent and the answer was lost.
const BROKE_AFTER_SENDING: &[&str] = &[
    "read timeout",
    "readtimeout",
    "read timed out",
    "read_timeout",
    "remotedisconnected",
    "remote_disconnected",
    "remote end closed",
    "connection aborted",
    "connection reset",
    "connection_reset",
    "incompleteread",
    "protocolerror",
    "broken pipe",
];

/// Classifies a client-side failure from its exception class (or error code) and message.
/// A connection error is `safe` only when its text says the connection was never made;
/// anything unrecognised is `ambiguous`, the conservative reading.
pub fn classify_failure(error: &str, message: &str) -> FailureClass {
    let text = format!("{error} {message}").to_ascii_lowercase();
    // A read timeout wrapped in a ConnectionError is still a read timeout, so the
    // after-sending phrases are checked first.
    if BROKE_AFTER_SENDING.iter().any(|p| text.contains(p)) {
        return FailureClass::Ambiguous;
    }
    if NEVER_CONNECTED.iter().any(|p| text.contains(p))
        || NEVER_CONNECTED_CODES.iter().any(|c| has_word(&text, c))
        || error.eq_ignore_ascii_case("dns")
    {
        return FailureClass::Safe;
    }
    if let Some(status) = (leading_status(message).or_else(|| leading_status(error)))
        .or_else(|| guzzle_status(&text))
        .or_else(|| named_status(&text))
    {
        return classify_status(status);
    }
    FailureClass::Ambiguous
}

/// Guzzle's `ClientException` (`Client error: `POST ...` resulted in a `422 Unprocessable
/// Entity` response`): the answer's status.
fn guzzle_status(text: &str) -> Option<u16> {
    let at = text.find("resulted in a `")? + "resulted in a `".len();
    let digits = text.get(at..at + 3)?;
    digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())?
}

/// An error's words naming the answer's status (`unexpected status code: 422`, Go's
/// `status 422`, go-retryablehttp's `(status: 422)`, `status=503`): a client's or a
/// service's refusal, not a lost answer. A 4xx or 5xx only: a `status 200` in a failure's
/// words says nothing of this failure.
fn named_status(text: &str) -> Option<u16> {
    text.match_indices("status").find_map(|(at, word)| {
        let before = text.as_bytes()[..at].last();
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            return None;
        }
        let rest = &text[at + word.len()..];
        let rest = rest.strip_prefix(" code").unwrap_or(rest);
        let rest = rest.trim_start_matches([':', '=', ' ']);
        let digits = rest.get(..3)?;
        let ends = rest[3..]
            .bytes()
            .next()
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        let status: u16 = digits.parse().ok().filter(|_| ends)?;
        (400..600).contains(&status).then_some(status)
    })
}

/// The text names a request that was sent and whose answer was lost (a read timeout, a
/// reset): not merely unrecognised, as [`classify_failure`]'s conservative default is. For a
/// tool's own error, where anything else may have failed before a request was sent.
pub fn says_answer_lost(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    BROKE_AFTER_SENDING.iter().any(|p| text.contains(p))
}

/// The failure after the program's own words, when it is one of the messages Node's HTTP
/// clients give their errors, which a program logs without the class (`${err.message}`:
/// `refund attempt 1 failed: timeout of 1000ms exceeded`, axios's): the message.
pub fn node_client_failure(text: &str) -> Option<&str> {
    const STARTS: [&str; 9] = [
        "request failed with status code ",
        "read econnreset",
        "connect econnrefused",
        "connect etimedout",
        "getaddrinfo enotfound",
        "getaddrinfo eai_again",
        "write epipe",
        "socket hang up",
        "network error",
    ];
    let (_, tail) = text.rsplit_once(": ")?;
    let lower = tail.trim().to_ascii_lowercase();
    let timeout = lower.starts_with("timeout of ") && lower.ends_with("ms exceeded");
    (timeout || STARTS.iter().any(|s| lower.starts_with(s))).then_some(tail.trim())
}

/// `word` occurs in `text` with no letter, digit or `_` on either side.
fn has_word(text: &str, word: &str) -> bool {
    let is_word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices(word).any(|(at, _)| {
        let before = text.as_bytes()[..at].last().copied();
        let after = text.as_bytes().get(at + word.len()).copied();
        !before.is_some_and(is_word_byte) && !after.is_some_and(is_word_byte)
    })
}

/// `409 Conflict` → 409.
fn leading_status(text: &str) -> Option<u16> {
    let t = text.trim();
    let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.len() == 3
        && t[3..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
    {
        digits.parse().ok().filter(|s| (100..600).contains(s))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use FailureClass::*;

    #[test]
    fn statuses() {
        assert_eq!(classify_status(201), Success);
        assert_eq!(classify_status(409), Conflict);
        assert_eq!(classify_status(422), Permanent);
        assert_eq!(classify_status(405), Permanent);
        // The server never read the whole request, or promises it did nothing.
        assert_eq!(classify_status(408), Safe);
        assert_eq!(classify_status(429), Safe);
        assert_eq!(classify_status(503), Ambiguous);
        assert_eq!(classify_status(504), Ambiguous);
    }

    #[test]
    fn a_redirect_is_a_request_not_performed() {
        for status in [300, 301, 302, 303, 304, 307, 308, 399] {
            assert_eq!(classify_status(status), Safe, "{status}");
        }
        assert_eq!(classify_status(299), Success);
        assert_eq!(classify_status(500), Ambiguous);
        assert_eq!(classify_status(600), Ambiguous);
        // A failure that names its status is classified the same way.
        assert_eq!(
            classify_failure("HTTPError", "307 Temporary Redirect"),
            Safe
        );
    }

    /// PHP's Guzzle names one class for every libcurl failure: its words tell them apart.
    #[test]
    fn guzzles_curl_errors_by_their_words() {
        let connect = "GuzzleHttp\\Exception\\ConnectException";
        let curl = |m: &str| classify_failure(connect, m);
        assert_eq!(
            curl(
                "cURL error 28: Operation timed out after 1001 milliseconds with 0 bytes received"
            ),
            Ambiguous
        );
        assert_eq!(
            curl("cURL error 7: Failed to connect to 127.0.0.1 port 1: Couldn't connect to server"),
            Safe
        );
        assert_eq!(
            curl("cURL error 6: Could not resolve host: payments.internal"),
            Safe
        );
        assert_eq!(
            curl("cURL error 28: Connection timed out after 1000 milliseconds"),
            Safe
        );
        let client = classify_failure(
            "GuzzleHttp\\Exception\\ClientException",
            "Client error: `POST http://x/v1/refunds` resulted in a `422 Unprocessable Entity` response",
        );
        assert_eq!(client, Permanent);
    }

    /// Go's errors and retry libraries name the status in their words.
    #[test]
    fn a_status_named_in_an_errors_words_classifies_it() {
        for (error, message, class) in [
            ("", "status 422", Permanent),
            (
                "*errors.errorString",
                "unexpected status code: 422",
                Permanent,
            ),
            (
                "",
                "POST http://p/v1/refunds (status: 409): giving up",
                Conflict,
            ),
            ("", "upstream answered status=503", Ambiguous),
            ("", "status 429 too many requests", Safe),
            // No status: a word that only starts so, a number too long, a success.
            ("", "statusless 422", Ambiguous),
            ("", "status 4221", Ambiguous),
            ("", "status 200 then the connection reset", Ambiguous),
            ("", "status unknown after read timeout", Ambiguous),
        ] {
            assert_eq!(classify_failure(error, message), class, "{message}");
        }
    }

    #[test]
    fn connection_error_depends_on_message() {
        let ce = "requests.exceptions.ConnectionError";
        assert_eq!(
            classify_failure(
                ce,
                "HTTPSConnectionPool: Max retries exceeded (Caused by NewConnectionError: Failed to establish a new connection: [Errno 111] Connection refused)"
            ),
            Safe
        );
        assert_eq!(
            classify_failure(
                ce,
                "('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))"
            ),
            Ambiguous
        );
        assert_eq!(classify_failure(ce, "something odd"), Ambiguous);
        assert_eq!(
            classify_failure("urllib3.exceptions.ReadTimeoutError", "read timeout=10"),
            Ambiguous
        );
        assert_eq!(
            classify_failure(
                "urllib3.exceptions.ConnectTimeoutError",
                "connect timeout=5"
            ),
            Safe
        );
        assert_eq!(classify_failure("dns", ""), Safe);
        assert_eq!(classify_failure("connect_timeout", ""), Safe);
        assert_eq!(classify_failure("read_timeout", ""), Ambiguous);
        assert_eq!(classify_failure("weird", ""), Ambiguous);
        assert_eq!(classify_failure("", "409 Conflict"), Conflict);
    }

    /// What HTTP clients of several languages raise, as they spell it: a failure before
    /// the connection was made is `safe`, one after the request went out `ambiguous`.
    #[test]
    fn failures_as_clients_of_several_languages_spell_them() {
        let cases = [
            // Python: requests, httpx, aiohttp.
            (
                "requests.exceptions.ReadTimeout",
                "HTTPSConnectionPool(host='p', port=443): Read timed out. (read timeout=10)",
                Ambiguous,
            ),
            (
                "requests.exceptions.ConnectTimeout",
                "Max retries exceeded (Caused by ConnectTimeoutError('Connection to p timed out. (connect timeout=5)'))",
                Safe,
            ),
            (
                "httpx.ReadTimeout",
                "The read operation timed out",
                Ambiguous,
            ),
            ("httpx.ConnectError", "[Errno 111] Connection refused", Safe),
            ("httpx.PoolTimeout", "", Safe),
            (
                "httpx.RemoteProtocolError",
                "Server disconnected without sending a response.",
                Ambiguous,
            ),
            (
                "aiohttp.client_exceptions.ClientConnectorError",
                "Cannot connect to host p:443 ssl:default [Connect call failed ('10.0.0.1', 443)]",
                Safe,
            ),
            (
                "aiohttp.client_exceptions.ServerDisconnectedError",
                "Server disconnected",
                Ambiguous,
            ),
            (
                "ssl.SSLCertVerificationError",
                "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
                Safe,
            ),
            // Node.
            ("Error", "connect ECONNREFUSED 10.0.0.1:443", Safe),
            ("Error", "getaddrinfo ENOTFOUND p", Safe),
            ("Error", "getaddrinfo EAI_AGAIN p", Safe),
            // A 404 the server sent, as Java's HttpURLConnection raises it: not ENOTFOUND.
            (
                "java.io.FileNotFoundException",
                "https://p/v1/refunds",
                Ambiguous,
            ),
            (
                "com.acme.ResourceNotFoundException",
                "Requested resource not found",
                Ambiguous,
            ),
            ("Error", "connect ETIMEDOUT 10.0.0.1:443", Safe),
            ("Error", "read ECONNRESET", Ambiguous),
            ("Error", "ETIMEDOUT", Ambiguous),
            ("Error", "socket hang up", Ambiguous),
            // Java.
            (
                "java.net.SocketTimeoutException",
                "Read timed out",
                Ambiguous,
            ),
            ("java.net.SocketTimeoutException", "Connect timed out", Safe),
            ("java.net.UnknownHostException", "p", Safe),
            ("java.net.SocketException", "Connection reset", Ambiguous),
            // Go.
            ("url.Error", "dial tcp 10.0.0.1:443: i/o timeout", Safe),
            ("url.Error", "dial tcp: lookup p: no such host", Safe),
            ("url.Error", "net/http: TLS handshake timeout", Safe),
            (
                "url.Error",
                "read tcp 10.0.0.2:5555->10.0.0.1:443: i/o timeout",
                Ambiguous,
            ),
            (
                "url.Error",
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                Ambiguous,
            ),
            // Ruby.
            (
                "Net::ReadTimeout",
                "Net::ReadTimeout with #<TCPSocket:(closed)>",
                Ambiguous,
            ),
            ("Net::OpenTimeout", "execution expired", Safe),
            // axios's messages, read without a class.
            ("", "timeout of 1000ms exceeded", Ambiguous),
            ("", "connect ECONNREFUSED 127.0.0.1:9", Safe),
            ("", "Request failed with status code 422", Permanent),
            (
                "Faraday::ConnectionFailed",
                "Failed to open TCP connection to 127.0.0.1:40325 (Connection timed out - user specified timeout)",
                Safe,
            ),
            (
                "Faraday::ConnectionFailed",
                "end of file reached",
                Ambiguous,
            ),
            (
                "Errno::ECONNREFUSED",
                "Failed to open TCP connection to p:443 (Connection refused)",
                Safe,
            ),
        ];
        for (error, message, want) in cases {
            assert_eq!(classify_failure(error, message), want, "{error}: {message}");
        }
    }
}
