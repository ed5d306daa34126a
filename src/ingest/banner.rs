//! The lines a web framework's server writes about itself, with no timestamp, into the
//! same output as the service's own log: Flask's development server (werkzeug) starting
//! (` * Serving Flask app 'payments'`, `WARNING: This is a development server. ...`,
//! ` * Running on http://127.0.0.1:5001`, `Press CTRL+C to quit`) and uvicorn's default
//! logging (`INFO:     Started server process [14335]`, `INFO:     Application startup
//! complete.`, its access lines `INFO:     127.0.0.1:55250 - "POST /v1/refunds HTTP/1.1"
//! 201 Created`, `INFO:     Shutting down`). Each is a fixed message of the framework's,
//! known word for word, and never an event: it is read as understood and ignored, where a
//! line with no timestamp is otherwise skipped (it may be a damaged event); and detection
//! passes over it, as over a comment, so that a service's log that opens with its server's
//! banner is still read (review 35: Flask's 3 lines and uvicorn's 4 outvoted the refunds
//! and the whole log was passed over). Asked only of lines with no timestamp.

/// Whether `line` (trimmed, colour codes taken off) is one of a framework's own lines.
pub(crate) fn is_framework_line(line: &[u8]) -> bool {
    is_werkzeug_line(line) || is_uvicorn_line(line)
}

/// Flask's development server's lines as it starts and reloads (Flask 1 to 3).
fn is_werkzeug_line(line: &[u8]) -> bool {
    if let Some(rest) = line.strip_prefix(b"* ") {
        return [
            &b"Serving Flask app "[..],
            b"Debug mode: ",
            b"Running on ",
            b"Restarting with ",
            b"Debugger is active!",
            b"Debugger PIN: ",
            b"Detected change in ",
            b"Environment: ",
        ]
        .iter()
        .any(|p| rest.starts_with(p));
    }
    line.starts_with(b"WARNING: This is a development server. Do not use it in a production")
        || line == b"Use a production WSGI server instead."
        || line == b"Press CTRL+C to quit"
}

/// uvicorn's messages under its default formatter (`%(levelprefix)s %(message)s`: the
/// level, a colon, blanks), and its access lines.
fn is_uvicorn_line(line: &[u8]) -> bool {
    let Some(colon) = line.iter().take(9).position(|&b| b == b':') else {
        return false;
    };
    let level = &line[..colon];
    let levels = [
        &b"TRACE"[..],
        b"DEBUG",
        b"INFO",
        b"WARNING",
        b"ERROR",
        b"CRITICAL",
    ];
    let Some(message) = (levels.contains(&level))
        .then(|| &line[colon + 1..])
        .filter(|rest| rest.first() == Some(&b' '))
        .map(<[u8]>::trim_ascii_start)
    else {
        return false;
    };
    const MESSAGES: [&[u8]; 17] = [
        b"Started server process [",
        b"Waiting for application startup.",
        b"Application startup complete.",
        b"Application startup failed. Exiting.",
        b"Uvicorn running on ",
        b"Shutting down",
        b"Waiting for application shutdown.",
        b"Application shutdown complete.",
        b"Finished server process [",
        b"Waiting for connections to close.",
        b"Waiting for background tasks to complete.",
        b"Invalid HTTP request received.",
        b"Will watch for changes in these directories: ",
        b"Started reloader process [",
        b"Stopping reloader process [",
        b"ASGI 'lifespan' protocol appears unsupported.",
        b"Unsupported upgrade request.",
    ];
    MESSAGES.iter().any(|m| message.starts_with(m)) || is_uvicorn_access(message)
}

/// `127.0.0.1:55250 - "POST /v1/refunds HTTP/1.1" 201 Created`: the client, a dash, the
/// request line in quotes, the status.
fn is_uvicorn_access(message: &[u8]) -> bool {
    let Some(at) = memchr::memmem::find(message, b" - \"") else {
        return false;
    };
    let client = &message[..at];
    let rest = &message[at + 4..];
    let Some(close) = memchr::memmem::find(rest, b"\" ") else {
        return false;
    };
    let status = rest.get(close + 2..close + 5);
    !client.is_empty()
        && !client.contains(&b' ')
        && client.contains(&b':')
        && rest[..close].contains(&b' ')
        && status.is_some_and(|s| s.iter().all(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::is_framework_line;

    #[test]
    fn flask_and_uvicorn_lines_are_theirs() {
        for line in [
            "* Serving Flask app 'payments'",
            "* Debug mode: off",
            "WARNING: This is a development server. Do not use it in a production deployment. Use a production WSGI server instead.",
            "* Running on http://127.0.0.1:5001",
            "Press CTRL+C to quit",
            "INFO:     Started server process [14335]",
            "INFO:     Uvicorn running on http://127.0.0.1:5004 (Press CTRL+C to quit)",
            "WARNING:  Invalid HTTP request received.",
            "INFO:     127.0.0.1:55250 - \"POST /v1/refunds HTTP/1.1\" 201 Created",
            "INFO:     Finished server process [14335]",
        ] {
            assert!(is_framework_line(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn other_unstamped_lines_are_not() {
        for line in [
            // An application's own line under uvicorn's layout may be an event: not known.
            "INFO:     refund created refund_id=re_1 order_id=A-1 amount_minor=4500",
            "INFO:payments:refund created refund_id=re_1",
            "* refund re_1 created",
            "WARNING: refund re_1 looks odd",
            "127.0.0.1 - - [07/Dec/2026 08:01:02] \"POST /v1/refunds HTTP/1.1\" 201 -",
        ] {
            assert!(!is_framework_line(line.as_bytes()), "{line}");
        }
    }
}
