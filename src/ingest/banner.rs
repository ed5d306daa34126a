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
//!
//! Django's development server (`manage.py runserver`) is read the same way: its banner
//! (`Watching for file changes with StatReloader`, `Performing system checks...`, the date,
//! `Django version 5.2.20, using settings '...'`, `Starting development server at ...`,
//! `Quit the server with CONTROL-C.`) and `django.request`'s line for an answer of 4xx or
//! 5xx, which Django's default logging prints bare while `DEBUG` is on (`Bad Request:
//! /v1/refunds/`, `Method Not Allowed (GET): /v1/refunds/`): the service's own record of a
//! refusal, no effect, as an access line is. So is aiohttp's `run_app` banner (`========
//! Running on http://127.0.0.1:8080 ========`, `(Press CTRL+C to quit)`).

/// Whether `line` (trimmed, colour codes taken off) is one of a framework's own lines.
pub(crate) fn is_framework_line(line: &[u8]) -> bool {
    is_werkzeug_line(line)
        || is_uvicorn_line(line)
        || is_django_line(line)
        || is_aiohttp_line(line)
        || is_lambda_platform_line(line)
}

/// AWS Lambda's platform's lines around each invocation, in the function's log beside its
/// runtime's (`START RequestId: ID Version: $LATEST`, `END RequestId: ID`, `REPORT
/// RequestId: ID\tDuration: 2.45 ms\t...`), and about its start (`INIT_START Runtime
/// Version: ...`, `INIT_REPORT Init Duration: ...`) and its extensions: no stamp, no event.
fn is_lambda_platform_line(line: &[u8]) -> bool {
    const STARTS: [&[u8]; 9] = [
        b"START RequestId: ",
        b"END RequestId: ",
        b"REPORT RequestId: ",
        b"INIT_START Runtime Version: ",
        b"INIT_REPORT Init Duration: ",
        b"INIT_RUNTIME_DONE",
        b"RESTORE_START Runtime Version: ",
        b"RESTORE_REPORT Restore Duration: ",
        b"EXTENSION\tName: ",
    ];
    matches!(line.first(), Some(b'S' | b'E' | b'R' | b'I'))
        && STARTS.iter().any(|p| line.starts_with(p))
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

/// Django's `runserver` banner and autoreloader lines, and `django.request`'s bare line
/// (Django 3 to 5).
fn is_django_line(line: &[u8]) -> bool {
    const STARTS: [&[u8]; 9] = [
        b"Watching for file changes with ",
        b"Performing system checks...",
        b"System check identified ",
        b"Django version ",
        b"Starting development server at ",
        b"Starting ASGI/Daphne ",
        b"Quit the server with ",
        b"For more information on production servers see: ",
        b"Run 'python manage.py migrate' to apply them.",
    ];
    STARTS.iter().any(|p| line.starts_with(p))
        || (line.starts_with(b"You have ")
            && memchr::memmem::find(line, b" unapplied migration(s). ").is_some())
        || line.ends_with(b" changed, reloading.")
        || is_runserver_date(line)
        || is_request_log_line(line)
}

/// `December 07, 2026 - 14:19:32`: the time `runserver` started (`%B %d, %Y - %X`, in
/// English).
fn is_runserver_date(line: &[u8]) -> bool {
    const MONTHS: [&[u8]; 12] = [
        b"January ",
        b"February ",
        b"March ",
        b"April ",
        b"May ",
        b"June ",
        b"July ",
        b"August ",
        b"September ",
        b"October ",
        b"November ",
        b"December ",
    ];
    let Some(rest) = MONTHS.iter().find_map(|m| line.strip_prefix(*m)) else {
        return false;
    };
    let shape = b"99, 9999 - 99:99:99";
    rest.len() == shape.len()
        && shape.iter().zip(rest).all(|(p, c)| match p {
            b'9' => c.is_ascii_digit(),
            _ => p == c,
        })
}

/// `django.request`'s line for an answer of 4xx or 5xx (`%s: %s`, the reason phrase and
/// the path; `Method Not Allowed (GET): /x` and `Forbidden (CSRF token missing.): /x` with
/// a detail in brackets): a reason phrase of Python's `http.HTTPStatus`, then a path.
fn is_request_log_line(line: &[u8]) -> bool {
    const REASONS: [&[u8]; 44] = [
        b"Bad Request",
        b"Unauthorized",
        b"Payment Required",
        b"Forbidden",
        b"Not Found",
        b"Method Not Allowed",
        b"Not Acceptable",
        b"Proxy Authentication Required",
        b"Request Timeout",
        b"Conflict",
        b"Gone",
        b"Length Required",
        b"Precondition Failed",
        b"Request Entity Too Large",
        b"Content Too Large",
        b"Request-URI Too Long",
        b"URI Too Long",
        b"Unsupported Media Type",
        b"Requested Range Not Satisfiable",
        b"Range Not Satisfiable",
        b"Expectation Failed",
        b"I'm a Teapot",
        b"Misdirected Request",
        b"Unprocessable Entity",
        b"Unprocessable Content",
        b"Locked",
        b"Failed Dependency",
        b"Too Early",
        b"Upgrade Required",
        b"Precondition Required",
        b"Too Many Requests",
        b"Request Header Fields Too Large",
        b"Unavailable For Legal Reasons",
        b"Internal Server Error",
        b"Not Implemented",
        b"Bad Gateway",
        b"Service Unavailable",
        b"Gateway Timeout",
        b"HTTP Version Not Supported",
        b"Variant Also Negotiates",
        b"Insufficient Storage",
        b"Loop Detected",
        b"Not Extended",
        b"Network Authentication Required",
    ];
    let Some(cut) = memchr::memmem::find(line, b": /") else {
        return false;
    };
    let (reason, path) = (&line[..cut], &line[cut + 2..]);
    let reason = match reason.strip_suffix(b")") {
        Some(r) => match memchr::memmem::find(r, b" (") {
            Some(open) => &r[..open],
            None => return false,
        },
        None => reason,
    };
    REASONS.contains(&reason) && !path.iter().any(u8::is_ascii_whitespace)
}

/// aiohttp's `web.run_app` banner, printed to standard output.
fn is_aiohttp_line(line: &[u8]) -> bool {
    (line.starts_with(b"======== Running on ") && line.ends_with(b" ========"))
        || line == b"(Press CTRL+C to quit)"
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
    fn djangos_and_aiohttps_lines_are_theirs() {
        for line in [
            "Watching for file changes with StatReloader",
            "Performing system checks...",
            "System check identified no issues (0 silenced).",
            "December 07, 2026 - 14:19:32",
            "Django version 5.2.20, using settings 'payments.settings'",
            "Starting development server at http://127.0.0.1:5201/",
            "Quit the server with CONTROL-C.",
            "WARNING: This is a development server. Do not use it in a production setting. Use a production WSGI or ASGI server instead.",
            "For more information on production servers see: https://docs.djangoproject.com/en/5.2/howto/deployment/",
            "You have 18 unapplied migration(s). Your project may not work properly until you apply the migrations for app(s): admin, auth.",
            "Run 'python manage.py migrate' to apply them.",
            "/app/payments/views.py changed, reloading.",
            "Bad Request: /v1/refunds/",
            "Internal Server Error: /v1/refunds/",
            "Method Not Allowed (GET): /v1/refunds/",
            "Forbidden (CSRF cookie not set.): /v1/refunds/",
            "======== Running on http://127.0.0.1:5202 ========",
            "(Press CTRL+C to quit)",
        ] {
            assert!(is_framework_line(line.as_bytes()), "{line}");
        }
    }

    /// AWS Lambda's platform's lines, as its documentation and CloudWatch Logs show them.
    #[test]
    fn lambdas_platform_lines_are_its() {
        let id = "3f1c0b52-6a0e-4c59-9d1e-2b7f4a8c9e01";
        for line in [
            format!("START RequestId: {id} Version: $LATEST"),
            format!("END RequestId: {id}"),
            format!(
                "REPORT RequestId: {id}\tDuration: 2.45 ms\tBilled Duration: 3 ms\tMemory Size: 128 MB\tMax Memory Used: 40 MB\tInit Duration: 120.31 ms"
            ),
            "INIT_START Runtime Version: python:3.12.v38\tRuntime Version ARN: arn:aws:lambda:eu-west-2::runtime:0123".into(),
            "EXTENSION\tName: datadog-agent\tState: Ready\tEvents: [INVOKE,SHUTDOWN]".into(),
        ] {
            assert!(is_framework_line(line.as_bytes()), "{line}");
        }
        for line in [
            "START refund re_1 for order A-1",
            "END of batch",
            "REPORT: refunds created 2",
        ] {
            assert!(!is_framework_line(line.as_bytes()), "{line}");
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
            // A reason phrase before words that are no path, or a phrase of no status.
            "Bad Request: the amount exceeds the captured total",
            "Not Found: /v1/refunds/ re_1",
            "Refund created: /v1/refunds/re_1",
            "Conflict (: /v1/refunds/",
            // Another month's name, a date of another shape.
            "December 07, 2026 - 14:19",
            "Decembre 07, 2026 - 14:19:32",
            "======== Running on http://127.0.0.1:5202",
        ] {
            assert!(!is_framework_line(line.as_bytes()), "{line}");
        }
    }
}
