//! Failed attempts: exceptions, timeouts and client errors, classed by their cause.

use super::*;

/// Node's `fetch` fails every request as `TypeError: fetch failed`; the `[cause]:` in the
/// error's dump says what failed. Without one before the next stamped line, the wrapper
/// (ambiguous) stands.
#[test]
fn fetch_failed_is_classed_by_its_cause() {
    let classes = |text: &str| -> Vec<FailureClass> {
        (kinds(&run(text)).into_iter())
            .filter_map(|k| match k {
                EventKind::Failure(f) => Some(f.class),
                _ => None,
            })
            .collect()
    };
    let refused = "10:00:00  POST https://x/v1/refunds  (attempt 1)\n\
        10:00:01  TypeError: fetch failed\n    at node:internal/deps/undici/undici:14976:13\n  \
        [cause]: Error: connect ECONNREFUSED 127.0.0.1:47433\n      at TCPConnectWrap.afterConnect\n}\n";
    assert_eq!(classes(refused), [FailureClass::Safe]);
    let bare = "10:00:00  POST https://x/v1/refunds  (attempt 1)\n10:00:01  TypeError: fetch failed\n\
        10:00:02  POST https://x/v1/refunds  (attempt 2)\n  [cause]: Error: connect ECONNREFUSED x\n";
    assert_eq!(classes(bare), [FailureClass::Ambiguous]);
}

/// `console.error("refund attempt 1 failed:", err)`: the exception after the program's
/// words about a failure is the request's failure; words that say nothing failed, or a
/// class not named as an error, are no failure.
#[test]
fn an_exception_after_words_about_a_failure() {
    let p = run(
        "10:00:00  agent run r  step 2  tool=issue_refund  args={\"a\":1}\n10:00:01  POST https://x/v1/refunds  (attempt 1)\n\
         10:00:02  refund attempt 1 failed: RequestError: Timeout awaiting 'request' for 1000ms\n\
         10:00:03  POST https://x/v1/refunds  (attempt 2)\n\
         10:00:04  refund request error: ConnectionRefusedError: [Errno 111] Connection refused\n\
         10:00:04  receipt email failed: SMTPException: 421 try later\n\
         10:00:04  Retrying POST https://x/v1/refunds (1 retries left): Faraday::TimeoutError: Net::ReadTimeout with #<Socket:(closed)>\n\
         10:00:05  refund created: RefundRecord: re_1\n\
         10:00:06  refund failed: see the dashboard: it is down\n\
         10:00:07  sync done: IndexError: nothing to do\n",
    );
    let failures: Vec<(&str, FailureClass)> = (kinds(&p).into_iter())
        .filter_map(|k| match k {
            EventKind::Failure(f) => Some((f.error.as_str(), f.class)),
            _ => None,
        })
        .collect();
    assert_eq!(
        failures,
        [
            ("RequestError", FailureClass::Ambiguous),
            ("ConnectionRefusedError", FailureClass::Safe),
            ("Faraday::TimeoutError", FailureClass::Ambiguous)
        ]
    );
}

/// Words that name the current call's tool say whose failure it is (`issue_refund failed`);
/// the same words after another tool's call, or another thing's failure, do not.
#[test]
fn an_exception_after_the_tools_name() {
    let failures = |log: &str| -> Vec<(String, FailureClass)> {
        (kinds(&run(log)).into_iter())
            .filter_map(|k| match k {
                EventKind::Failure(f) => Some((f.error.to_string(), f.class)),
                _ => None,
            })
            .collect()
    };
    let failed = "10:00:11  issue_refund failed: ReadTimeout: The read operation timed out\n";
    let refund = "10:00:00  agent run r  step 2  tool=issue_refund  args={\"a\":1}\n\
                  10:00:01  POST https://x/v1/refunds  (attempt 1)\n";
    assert_eq!(
        failures(&format!("{refund}{failed}")),
        [("ReadTimeout".to_string(), FailureClass::Ambiguous)]
    );
    let lookup = "10:00:00  agent run r  step 2  tool=lookup_order  args={\"a\":1}\n\
                  10:00:01  GET https://x/v1/orders/1  (attempt 1)\n";
    assert_eq!(failures(&format!("{lookup}{failed}")), []);
    let email = "10:00:11  receipt email failed: SMTPException: 421 try later\n";
    assert_eq!(failures(&format!("{refund}{email}")), []);
    // Node's client's message without its class (`${err.message}`).
    let axios = "10:00:11  refund attempt 1 failed: timeout of 1000ms exceeded\n";
    assert_eq!(
        failures(&format!("{refund}{axios}")),
        [(String::new(), FailureClass::Ambiguous)]
    );
    let other = "10:00:11  receipt email failed: timeout of 1000ms exceeded\n";
    assert_eq!(failures(&format!("{refund}{other}")), []);
    // The tool's name must be the failure's subject, whole; a retry callback's words must
    // name a request.
    let short = "10:00:00  agent run r  step 2  tool=refund  args={\"a\":1}\n\
                 10:00:01  POST https://x/v1/refunds  (attempt 1)\n";
    let receipt = "10:00:11  refund receipt email failed: TimeoutError: timed out\n";
    assert_eq!(failures(&format!("{short}{receipt}")), []);
    let retrying = "10:00:11  retrying receipt email: ConnectionResetError: reset\n";
    assert_eq!(failures(&format!("{refund}{retrying}")), []);
}

#[test]
fn failures_keep_their_whole_message() {
    let p = run("10:00:00  agent run r  step 1  tool=t  args={}\n\
         10:00:01  POST https://x/v1/refunds  (attempt 3)\n\
         10:00:02  requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='x', port=443): Read timed out.  (read timeout=10)\n\
         10:00:03  TimeoutError\n\
         10:00:04  a.: x\n\
         10:00:05  .B: x\n\
         10:00:06  requests.exceptions.ConnectionError: ('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))\n");
    let k = kinds(&p);
    let EventKind::Failure(f) = k[2] else {
        panic!("{:?}", k[2])
    };
    assert_eq!(f.attempt, Some(3));
    assert!(
        f.message.ends_with("Read timed out.  (read timeout=10)"),
        "{}",
        f.message
    );
    assert_eq!(f.class, FailureClass::Ambiguous);
    let EventKind::Failure(f) = k[3] else {
        panic!("{:?}", k[3])
    };
    assert_eq!((f.error.as_str(), f.message.as_str()), ("TimeoutError", ""));
    assert_eq!(
        p.stats.ignored, 2,
        "`a.: x` and `.B: x` are no exception lines"
    );
    let EventKind::Failure(f) = k[4] else {
        panic!("{:?}", k[4])
    };
    assert_eq!(f.class, FailureClass::Ambiguous);
}

/// Failures as HTTP clients beyond Python's write them: Ruby's `::` paths, Node's `Error`,
/// Java's exceptions and Go's `url.Error` (`Post "URL": cause`) end the attempt, classified
/// by what they say; a line merely shaped like them is no failure.
#[test]
fn failures_of_clients_in_other_languages() {
    let lines = [
        (
            "Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>",
            Some(("Net::ReadTimeout", FailureClass::Ambiguous)),
        ),
        (
            "Errno::ECONNREFUSED: Failed to open TCP connection to p:443 (Connection refused)",
            Some(("Errno::ECONNREFUSED", FailureClass::Safe)),
        ),
        (
            "Error: read ECONNRESET",
            Some(("Error", FailureClass::Ambiguous)),
        ),
        (
            "java.net.SocketTimeoutException: Connect timed out",
            Some(("java.net.SocketTimeoutException", FailureClass::Safe)),
        ),
        (
            "Post \"https://payments.internal/v1/refunds\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            Some(("url.Error", FailureClass::Ambiguous)),
        ),
        (
            "Post \"https://p/v1/refunds\": dial tcp 10.0.0.1:443: connect: connection refused",
            Some(("url.Error", FailureClass::Safe)),
        ),
        // Not failures: a path with a stray colon, a `::` left open, Go's shape without a
        // cause or with a method it does not write so, a status field.
        ("Net:ReadTimeout: x", None),
        ("Net::: x", None),
        ("Post \"https://p/v1/refunds\":", None),
        ("POST \"https://p/v1/refunds\": EOF", None),
        ("Send \"https://p/v1/refunds\": EOF", None),
        // Go's shape around no URL; a logger named by a Ruby path.
        ("Delete \"cache entry A-1\": not found", None),
        ("Get \"x\": y", None),
        ("Payments::RefundClient: refund issued rf_1", None),
        // Ruby's clients: a path with an error's name in it.
        (
            "Faraday::ConnectionFailed: end of file reached",
            Some(("Faraday::ConnectionFailed", FailureClass::Ambiguous)),
        ),
        (
            "Excon::Error::Socket: Connection reset by peer (Errno::ECONNRESET)",
            Some(("Excon::Error::Socket", FailureClass::Ambiguous)),
        ),
    ];
    for (line, want) in lines {
        let p = run(&format!(
            "10:00:00  agent run r1  step 1  tool=issue_refund  args={{}}\n\
             10:00:01  POST https://p/v1/refunds  (attempt 1)\n10:00:02  {line}\n"
        ));
        let got = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Failure(f) => Some((f.error.to_string(), f.class)),
            _ => None,
        });
        assert_eq!(got, want.map(|(e, c)| (e.to_string(), c)), "{line}");
    }
}
