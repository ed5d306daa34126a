//! A log level between the timestamp and the message (`14:02:11.402  INFO  POST ...`), as
//! loggers configured with a level column write, and the logger's name after it (`INFO
//! agent.tools  POST ...`, Python's `%(levelname)s  %(name)s  %(message)s`): read past, so
//! that such a log reads as the plain spelling (SPEC §3.1) does. Without this, every line of
//! such a log was *ignored*.

/// The levels read past, in any case, bare or in brackets (`[WARN]`), followed by the two or
/// more blanks (or a tab) that end a field.
pub(super) const LEVELS: &[&[u8]] = &[
    b"TRACE",
    b"DEBUG",
    b"INFO",
    b"NOTICE",
    b"WARN",
    b"WARNING",
    b"ERROR",
    b"ERR",
    b"CRIT",
    b"CRITICAL",
    b"FATAL",
    b"SEVERE",
];

/// `msg` without a leading level field, and without the logger's name after the level: a
/// single word (no blank, no `:`) ending its field. No message of SPEC §3.1 starts so: each
/// starts with a field of several words (`agent run 7f3a`, `POST https://...`, `201 Created`,
/// `refund rf_1`) or an exception's `Class: message`.
#[inline]
pub(super) fn without_level(msg: &[u8]) -> &[u8] {
    let rest = without_level_field(msg);
    if rest.len() == msg.len() {
        if msg.starts_with(b"- ") {
            return java_prefix(msg).unwrap_or(msg);
        }
        if msg.starts_with(b"| ") {
            return loguru_prefix(msg).unwrap_or(msg);
        }
        return match may_start_with_level(msg) {
            true => (logging_prefix(msg).or_else(|| java_prefix(msg)))
                .or_else(|| upper_case_level(msg))
                .unwrap_or(msg),
            false => msg,
        };
    }
    match first_field(rest) {
        Some((word, after)) if is_logger_name(word) && ends_field(after) => {
            let message = after.trim_ascii_start();
            if message.is_empty() { rest } else { message }
        }
        // Log4j 2's `%-5p [%t] %c - %m`: a padded level, then the thread and the logger.
        _ => java_prefix(msg).unwrap_or(rest),
    }
}

/// Words before a message that say what follows did not happen for real (`[dry-run] refund
/// created ...`, `simulate: ...`, `rollback: ...`): such a prefix is never read past.
const NOT_FOR_REAL: [&str; 14] = [
    "dry-run",
    "dry_run",
    "dryrun",
    "simulate",
    "simulated",
    "simulation",
    "test",
    "mock",
    "fake",
    "sandbox",
    "rollback",
    "revert",
    "reverted",
    "preview",
];

/// The message after every prefix [`without_logger_prefix`] reads past (several: `agent:
/// issue_refund: POST ...`), or `msg` itself. A loop, however many there are.
pub(super) fn without_logger_prefixes(msg: &[u8]) -> &[u8] {
    let mut msg = msg;
    while let Some(inner) =
        without_logger_prefix(msg).or_else(|| super::pino_pretty::without_origin(msg))
    {
        msg = inner;
    }
    msg
}

/// The message after what a logger put before it where no message of SPEC §3.1 starts so:
/// a program's name and a colon (`agent: POST ...`, Ruby's `progname`; `issue_refund: 201
/// Created ...`), a source file's place (`main.go:42: ...`, Go's `log.Lshortfile`), or a
/// request's tags in brackets (`[6073fddd-...] refund.created ...`, Rails' `log_tags`).
/// Asked only of a message no plain shape took; never of an effect's kind (`refund: {...}`),
/// a level (`[WARN]`) or words saying the line is not for real ([`NOT_FOR_REAL`]).
fn without_logger_prefix(msg: &[u8]) -> Option<&[u8]> {
    let (prefix, rest) = match msg.first()? {
        b'[' => {
            let end = msg.iter().position(|&b| b == b']')?;
            (&msg[1..end], &msg[end + 1..])
        }
        b'a'..=b'z' => {
            let end = name_end(msg)?;
            if msg[end] != b':' {
                return None;
            }
            let name = &msg[..end];
            // No capital: `requests.exceptions.ReadTimeout: ...` is an exception's class.
            let exception_like = name.iter().any(u8::is_ascii_uppercase);
            let kind = crate::event::is_effect_kind(&String::from_utf8_lossy(name));
            if exception_like || kind || !is_logger_name(name) {
                return None;
            }
            let after = &msg[end + 1..];
            // `main.go:42: `: the line number after the file's name.
            let digits = after.iter().take_while(|b| b.is_ascii_digit()).count();
            match after.get(digits) {
                Some(b':') if digits > 0 && name.contains(&b'.') => (name, &after[digits + 1..]),
                _ => (name, after),
            }
        }
        _ => return None,
    };
    let rest = rest.strip_prefix(b" ")?.trim_ascii_start();
    let is_level = LEVELS.iter().any(|l| l.eq_ignore_ascii_case(prefix));
    let bare_word = !prefix.is_empty() && !prefix.iter().any(|b| b.is_ascii_whitespace());
    let not_for_real = NOT_FOR_REAL
        .iter()
        .any(|w| w.as_bytes().eq_ignore_ascii_case(prefix));
    (bare_word && !is_level && !not_for_real && !rest.is_empty()).then_some(rest)
}

/// `INFO:payments.refunds:refund created ...`: Python's `logging.basicConfig` default layout,
/// which has no time (a line of it can be no event: said so when it is skipped).
pub(super) fn python_default_layout(line: &[u8]) -> bool {
    let Some(colon) = line.iter().take(10).position(|&b| b == b':') else {
        return false;
    };
    let level = &line[..colon];
    let rest = &line[colon + 1..];
    let names_logger = rest
        .iter()
        .position(|&b| b == b':')
        .is_some_and(|end| is_logger_name(&rest[..end]));
    ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
        .iter()
        .any(|l| l.as_bytes() == level)
        && names_logger
}

/// How far a level and a logger's name, closed by `]`, reach in `text` (` INFO  agent::tools]
/// ...`, the rest of `env_logger`'s bracketed header after its stamp): up to the bracket.
pub(super) fn level_and_target(text: &[u8]) -> Option<usize> {
    let close = text.iter().take(160).position(|&b| b == b']')?;
    let mut words = text[..close]
        .split(|&b| b == b' ')
        .filter(|w| !w.is_empty());
    let level = words.next()?;
    let target_ok = words.next().is_none_or(is_logger_name);
    (LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level)) && target_ok && words.next().is_none())
        .then_some(close)
}

/// How far a logger's name, its line and a level, closed by `]`, reach in `text` (` -
/// modern_treasury._base_client:1097 - INFO] ...`: the layout the Stainless-generated SDKs
/// give Python's logging, `[%(asctime)s - %(name)s:%(lineno)d - %(levelname)s]`): up to the
/// bracket.
pub(super) fn dashed_name_and_level(text: &[u8]) -> Option<usize> {
    let close = text.iter().take(200).position(|&b| b == b']')?;
    let header = text[..close].strip_prefix(b" - ")?;
    let at = memchr::memmem::rfind(header, b" - ")?;
    let (place, level) = (&header[..at], &header[at + 3..]);
    let colon = place.iter().rposition(|&b| b == b':')?;
    let (name, line) = (&place[..colon], &place[colon + 1..]);
    let line_ok = !line.is_empty() && line.iter().all(u8::is_ascii_digit);
    let level_ok = LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level));
    (line_ok && level_ok && is_logger_name(name)).then_some(close)
}

/// Where the first word of `msg` ends: its first `:` or blank, a Rust path's `::` being
/// part of the word (`agent::tools: POST ...`, tracing's and `log`'s target).
fn name_end(msg: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let end = from + msg[from..].iter().position(|&b| b == b':' || b == b' ')?;
        let path = msg[end] == b':'
            && msg.get(end + 1) == Some(&b':')
            && msg
                .get(end + 2)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        if !path {
            return Some(end);
        }
        from = end + 2;
    }
}

/// A logger's name: a word of letters, digits, `.`, `_` and `-` that starts with a letter or
/// `_` (`agent.tools`, `__main__`), or a Rust path (`agent::tools`), and no HTTP method (a
/// request written `POST  https://...`).
pub(super) fn is_logger_name(word: &[u8]) -> bool {
    let starts_word = |b: &u8| b.is_ascii_alphabetic() || *b == b'_';
    let parts = word.split(|&b| b == b':').count();
    word.first().is_some_and(starts_word)
        && parts % 2 == 1
        && word.split(|&b| b == b':').enumerate().all(|(i, part)| {
            // `a::b` splits into `a`, ``, `b`: every other part is the empty one.
            match i % 2 {
                1 => part.is_empty(),
                _ => {
                    part.first().is_some_and(starts_word)
                        && (part.iter()).all(|&b| {
                            // `$`: a Java nested class's logger (`RefundAgent$Client`).
                            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'$')
                        })
                }
            }
        })
        && !crate::event::HTTP_METHODS.contains(&word)
}

/// The message after Python's `%(levelname)s %(name)s %(message)s` with a logger named in
/// one word (`INFO payments refund created ...`, `INFO __main__ ...`). Such a name cannot be
/// told from a message's first word (`INFO refund created ...` has no logger), so this is
/// asked only of a line whose message, read with the word, was nothing.
pub(super) fn after_one_word_logger(msg: &[u8]) -> Option<&[u8]> {
    let (level, rest) = first_field(msg)?;
    let (name, after) = first_field(rest.strip_prefix(b" ")?)?;
    let message = after.strip_prefix(b" ")?;
    let one_word = is_logger_name(name) && !name.contains(&b'.') && !name.contains(&b':');
    // `INFO dry-run refund created ...`: words saying the line is not for real.
    let not_for_real = (NOT_FOR_REAL.iter()).any(|w| w.as_bytes().eq_ignore_ascii_case(name));
    let starts = message.first().is_some_and(|b| !b.is_ascii_whitespace());
    (LEVELS.contains(&level) && one_word && !not_for_real && starts).then_some(message)
}

/// The `debug` module's namespace before a message (`openai-agents:core Invoking tool
/// ...`, `app:http POST ...`): lower-case words joined by `:`, then a blank; the namespace
/// and the message after it.
pub(crate) fn after_debug_namespace(msg: &[u8]) -> Option<(&[u8], &[u8])> {
    let blank = memchr::memchr(b' ', msg)?;
    let (first, rest) = (&msg[..blank], msg[blank + 1..].trim_ascii_start());
    let word = |w: &[u8]| {
        w.first().is_some_and(u8::is_ascii_lowercase)
            && (w.iter())
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.*".contains(b))
    };
    let parts = first.split(|&b| b == b':');
    let namespace = memchr::memchr(b':', first).is_some() && parts.into_iter().all(word);
    (namespace && !rest.is_empty()).then_some((first, rest))
}

/// The first word of `text` and what follows it, from the blank after it.
fn first_field(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = text.iter().position(|&b| b == b' ' || b == b'\t')?;
    Some((&text[..end], &text[end..]))
}

/// A field ends at two or more blanks, or a tab.
fn ends_field(after: &[u8]) -> bool {
    after.starts_with(b"  ") || after.starts_with(b"\t")
}

/// Whether `msg` may start with a level. The plain messages start `agent`, a method, a
/// status, an exception's module or an effect's kind: one byte tells nearly all of them
/// from a level.
#[inline]
fn may_start_with_level(msg: &[u8]) -> bool {
    matches!(
        msg.first(),
        Some(b'T' | b'D' | b'I' | b'N' | b'W' | b'E' | b'C' | b'F' | b'S' | b'[')
            | Some(b't' | b'd' | b'i' | b'n' | b'w' | b'e' | b'c' | b'f' | b's')
    )
}

/// The message after Python logging's one-blank spellings of a level and a logger's name:
/// `INFO payments.refunds: refund ...` (`%(levelname)s %(name)s: %(message)s`) and
/// `INFO:payments.refunds:refund ...` (`logging.basicConfig`'s default). The name must be a
/// module's path (its last part without capitals): `ERROR requests.ConnectionError: refused`
/// is an exception's class and message, not a logger's.
#[cold]
fn logging_prefix(msg: &[u8]) -> Option<&[u8]> {
    let sep = msg.iter().position(|&b| b == b' ' || b == b':')?;
    let (level, rest) = (&msg[..sep], &msg[sep + 1..]);
    if !LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level)) {
        return None;
    }
    let colon = rest.iter().position(|&b| b == b':')?;
    let (name, after) = (&rest[..colon], &rest[colon + 1..]);
    let module_path = name
        .rsplit(|&b| b == b'.')
        .next()
        .is_some_and(|last| !last.iter().any(u8::is_ascii_uppercase));
    if !is_logger_name(name) || !module_path || (msg[sep] == b' ' && !after.starts_with(b" ")) {
        return None;
    }
    let message = after.trim_ascii_start();
    (!message.is_empty()).then_some(message)
}

/// The message after loguru's default layout (Python): `| INFO     | __main__:do_POST:171 -
/// refund created ...`, the level padded, the place in the code, ` - `.
#[cold]
fn loguru_prefix(msg: &[u8]) -> Option<&[u8]> {
    let rest = msg.strip_prefix(b"| ")?;
    let bar = memchr::memmem::find(rest, b" | ")?;
    let level = rest[..bar].trim_ascii();
    if !LEVELS.iter().any(|l| l.eq_ignore_ascii_case(level)) && level != b"SUCCESS" {
        return None;
    }
    let place = &rest[bar + 3..];
    let dash = memchr::memmem::find(place, b" - ")?;
    if place[..dash].contains(&b' ') {
        return None;
    }
    let message = place[dash + 3..].trim_ascii_start();
    (!message.is_empty()).then_some(message)
}

/// The message after the Java loggers' default layouts: Logback's and Log4j 2's `[main]
/// INFO  c.e.payments.RefundService - msg` (`[%thread] %-5level %logger{36} - %msg`) and
/// Spring Boot's `INFO 12345 --- [           main] c.e.p.RefundService   : msg` (a process
/// id, `---`, an application's and a thread's names in brackets), and Python's cookbook
/// layout, `- payments.refunds - INFO - msg`. Read item by item: names in brackets, one
/// level, a process id after it, `---`, one logger's name (before or after the level), `- `
/// between them, and the separator ` - ` or ` : ` once both were read; anything else
/// leaves the message as it is.
#[cold]
fn java_prefix(msg: &[u8]) -> Option<&[u8]> {
    let (mut level, mut logger) = (false, false);
    let mut rest = msg;
    for _ in 0..8 {
        rest = rest.trim_ascii_start();
        if let Some(sep) = rest
            .strip_prefix(b"- ")
            .or_else(|| rest.strip_prefix(b": "))
        {
            let message = sep.trim_ascii_start();
            if level && logger {
                return (!message.is_empty()).then_some(message);
            }
            // Between the items of Python's `%(name)s - %(levelname)s - %(message)s`.
            if rest.starts_with(b"- ") {
                rest = message;
                continue;
            }
            return None;
        }
        if let Some(inner) = rest.strip_prefix(b"[") {
            let end = inner.iter().position(|&b| b == b']')?;
            rest = &inner[end + 1..];
            continue;
        }
        let end = rest.iter().position(|&b| b == b' ' || b == b'\t')?;
        let word = &rest[..end];
        if !level && LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word)) {
            level = true;
        } else if level && !logger && (word == b"---" || word.iter().all(u8::is_ascii_digit)) {
            // Spring Boot's process id and its separator.
        } else if !logger && is_logger_name(word) {
            logger = true;
        } else {
            return None;
        }
        rest = &rest[end..];
    }
    None
}

/// The message after a level in capitals and one blank (`%(levelname)s %(message)s`:
/// `INFO refund created: {...}`). Capitals only: a message may start with a word such as
/// `Error` or `notice` (a level's spelling in any case needs the field's two blanks).
#[cold]
fn upper_case_level(msg: &[u8]) -> Option<&[u8]> {
    let (word, after) = bracketed_level(msg).or_else(|| first_field(msg))?;
    let word = (word.strip_prefix(b"[").and_then(|w| w.strip_suffix(b"]"))).unwrap_or(word);
    let word = word.strip_suffix(b":").unwrap_or(word);
    let capitals = word.iter().all(u8::is_ascii_uppercase);
    let message = after.strip_prefix(b" ")?;
    let level = capitals && LEVELS.contains(&word);
    if !level || message.is_empty() || message.starts_with(b" ") {
        return None;
    }
    // `INFO payments.refunds refund created ...` (`%(levelname)s %(name)s %(message)s`): a
    // module's dotted path before the message, which no message starts with; or a Java
    // class's (`INFO com.acme.agent.RefundTool agent run ...`, JUL's `%4$s %3$s %5$s`).
    match first_field(message) {
        Some((name, after))
            if name.contains(&b'.')
                && is_logger_name(name)
                && (!name.iter().any(u8::is_ascii_uppercase) || is_java_class(name))
                && after.starts_with(b" ")
                && !after.starts_with(b"  ") =>
        {
            Some(&after[1..])
        }
        _ => Some(message),
    }
}

/// `com.acme.agent.RefundTool`: packages in lower case, then a class's name in capitals
/// that is no exception's (`java.net.SocketTimeoutException` starts a failure's line).
fn is_java_class(name: &[u8]) -> bool {
    let mut parts = name.rsplit(|&b| b == b'.');
    let class = parts.next().unwrap_or_default();
    let named_as_failure = [&b"Error"[..], b"Exception", b"Timeout", b"Throwable"]
        .iter()
        .any(|s| class.ends_with(s));
    class.first().is_some_and(u8::is_ascii_uppercase)
        && !named_as_failure
        && parts.all(|p| !p.is_empty() && !p.iter().any(u8::is_ascii_uppercase))
}

/// `[INFO   ] msg`: a level padded inside its brackets (JUL's `[%4$-7s]`), as the word
/// `INFO` and what follows the bracket.
fn bracketed_level(msg: &[u8]) -> Option<(&[u8], &[u8])> {
    let inner = msg.strip_prefix(b"[")?;
    let end = inner.iter().take(12).position(|&b| b == b']')?;
    let word = inner[..end].trim_ascii();
    (end > word.len()).then_some((word, &inner[end + 1..]))
}

/// `msg` without a leading level field.
#[inline]
pub(super) fn without_level_field(msg: &[u8]) -> &[u8] {
    if !may_start_with_level(msg) {
        return msg;
    }
    // `[info     ] refund created ...` (structlog's console layout): a level padded inside
    // its brackets, in any case; the brackets end it, so one blank after them will do.
    if let Some((word, after)) = bracketed_level(msg)
        && after.starts_with(b" ")
        && LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word))
    {
        let rest = after.trim_ascii_start();
        if !rest.is_empty() {
            return rest;
        }
    }
    let Some((word, after)) = first_field(msg) else {
        return msg;
    };
    let word = word
        .strip_prefix(b"[")
        .and_then(|w| w.strip_suffix(b"]"))
        .unwrap_or(word);
    if ends_field(after) && LEVELS.iter().any(|l| l.eq_ignore_ascii_case(word)) {
        let rest = after.trim_ascii_start();
        if !rest.is_empty() {
            return rest;
        }
    }
    msg
}

#[cfg(test)]
mod tests;
