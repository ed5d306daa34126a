//! Lines of the Python stacks `fixtures/stacks-make/` runs: Django's development server and
//! its docs' "verbose" layout (the level before the stamp, the process and thread ids after
//! the module), aiohttp's banner, and the retry libraries' lines that say a call is made
//! again (stamina's, tenacity's, backoff's). Lines that only look alike are left alone.

use super::*;
use crate::classify::FailureClass;
use crate::time::Duration;

fn run(text: &str) -> Parsed {
    parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

fn counts(p: &Parsed) -> (u64, u64, u64) {
    (p.stats.events, p.stats.ignored, p.stats.skipped)
}

fn failures(p: &Parsed) -> Vec<&Failure> {
    (p.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::Failure(f) => Some(&**f),
            _ => None,
        })
        .collect()
}

/// `manage.py runserver`'s whole console output, as `fixtures/django-drf-stamina` has it.
#[test]
fn a_django_runserver_log_is_read_whole() {
    let p = run(concat!(
        "Watching for file changes with StatReloader\n",
        "Performing system checks...\n",
        "\n",
        "System check identified no issues (0 silenced).\n",
        "December 07, 2026 - 14:22:47\n",
        "Django version 5.2.20, using settings 'payments.settings'\n",
        "Starting development server at http://127.0.0.1:5201/\n",
        "Quit the server with CONTROL-C.\n",
        "\n",
        "WARNING: This is a development server. Do not use it in a production setting. Use a production WSGI or ASGI server instead.\n",
        "For more information on production servers see: https://docs.djangoproject.com/en/5.2/howto/deployment/\n",
        "INFO 2026-12-07 14:22:47,566 views 18608 140037425460928 Refund re_466f0fba9a6f created for order A-5101: 45.00 GBP\n",
        "[07/Dec/2026 14:22:48] \"POST /v1/refunds/ HTTP/1.1\" 201 114\n",
        "Bad Request: /v1/refunds/\n",
        "[07/Dec/2026 14:22:48] \"POST /v1/refunds/ HTTP/1.1\" 400 65\n",
        "Internal Server Error: /v1/refunds/\n",
        "Traceback (most recent call last):\n",
        "  File \"/app/payments/views.py\", line 30, in post\n",
        "KeyError: 'order_id'\n",
    ));
    // Blank lines are ignored too: 16 lines of the server's, one refund.
    assert_eq!(counts(&p), (1, 18, 0), "{:?}", p.stats.problems);
    match &p.events[0].kind {
        EventKind::Effect(e) => {
            assert_eq!(
                (e.id.as_str(), e.order.as_deref(), e.amount.map(|m| m.minor)),
                ("re_466f0fba9a6f", Some("A-5101"), Some(4500))
            );
        }
        other => panic!("{other:?}"),
    }
    // The server's traceback is its record's, no failure.
    assert!(failures(&p).is_empty());
}

/// The level before the stamp, in any of Python's padded spellings; the process and thread
/// ids after the logger's name, before the stamp's level or after it.
#[test]
fn a_level_before_the_stamp_and_ids_after_the_name_are_read_past() {
    for line in [
        "INFO 2026-12-07 14:22:47,566 views 18608 140037425460928 refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP\n",
        "INFO     2026-12-07 14:22:47,566 refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP\n",
        "INFO 2026-12-07 14:22:47,566 payments.views 18608 refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP\n",
        "2026-12-07 14:22:47,566 INFO views 18608 140037425460928 refund created refund_id=re_1 order_id=A-1 amount=45.00 currency=GBP\n",
    ] {
        let p = run(line);
        assert_eq!(counts(&p), (1, 0, 0), "{line}");
        assert_eq!(
            p.events[0].at,
            Timestamp(1_796_653_367_566_000_000),
            "{line}"
        );
    }
    // A message that starts with a number is read as it was: an answer.
    let p = run(concat!(
        "2026-12-07 14:22:47,000 INFO agent tool call run_id=r1 step=1 tool=issue_refund args={\"order\": \"A-1\"}\n",
        "2026-12-07 14:22:47,566 INFO agent 201 Created  refund_id=re_1\n",
    ));
    assert!(matches!(&p.events[1].kind, EventKind::Response(r) if r.status == 201));
}

#[test]
fn lines_that_only_look_level_first_are_not() {
    for line in [
        // A level in another case, a word that is no level, no stamp after the level.
        "Info 2026-12-07 14:22:47,566 views 1 2 refund created refund_id=re_1\n",
        "REFUND 2026-12-07 14:22:47,566 views 1 2 refund created refund_id=re_1\n",
        "INFO refund created refund_id=re_1 order_id=A-1\n",
    ] {
        let p = run(line);
        assert_eq!(counts(&p), (0, 0, 1), "{line}");
    }
    // A dotted word without ids after the stamp may be the message's own: not read past.
    let p = run("INFO 2026-12-07 14:22:47,566 payments.views refund created refund_id=re_1\n");
    assert_eq!(counts(&p), (0, 1, 0));
}

#[test]
fn aiohttps_banner_and_access_lines_are_ignored() {
    let p = run(concat!(
        "======== Running on http://127.0.0.1:5202 ========\n",
        "(Press CTRL+C to quit)\n",
        "2026-12-07 14:22:59,582 INFO aiohttp.access: 127.0.0.1 [07/Dec/2026:14:22:59 +0000] \"POST /v1/refunds HTTP/1.1\" 201 290 \"-\" \"Python/3.11 aiohttp/3.14.5\"\n",
    ));
    assert_eq!(counts(&p), (0, 3, 0));
}

/// stamina through the standard library names no exception: an ambiguous failure of the
/// call's request, sent again; through structlog, the exception and the wait.
#[test]
fn staminas_line_is_a_failure_whose_request_is_sent_again() {
    let call = "2026-12-07 14:22:47,557 INFO agent: tool call run_id=r1 step=1 tool=issue_refund args={\"order_id\": \"A-1\"}\n";
    let p = run(&format!(
        "{call}2026-12-07 14:22:48,561 WARNING stamina: stamina.retry_scheduled\n"
    ));
    let f = failures(&p);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].error.as_str(), f[0].class, f[0].resent_after),
        (
            "unlogged failure",
            FailureClass::Ambiguous,
            Some(Duration(0))
        )
    );
    assert_eq!(f[0].call.as_ref().map(|c| c.step), Some(1));
    let p = run(&format!(
        "{call}2026-12-07 14:22:48 [warning  ] stamina.retry_scheduled        args=(\"{{'order_id': 'A-1'}}\", '{{}}') callable=__main__.post_refund caused_by=\"ConnectError('[Errno 111] Connection refused')\" kwargs={{}} retry_num=1 wait_for=0.1 waited_so_far=0.0\n"
    ));
    let f = failures(&p);
    assert_eq!(
        (f[0].error.as_str(), f[0].class, f[0].resent_after),
        (
            "ConnectError",
            FailureClass::Safe,
            Some(Duration(100_000_000))
        )
    );
    assert_eq!(f[0].raised_in.as_deref(), Some("__main__.post_refund"));
    // Other words about stamina are no retry.
    let p = run(&format!(
        "{call}2026-12-07 14:22:48,561 INFO agent: stamina.retry_scheduled_total=3\n"
    ));
    assert!(failures(&p).is_empty());
}

/// tenacity's and backoff's lines say the wait before the call is made again; backoff's
/// `Giving up` says it is not.
#[test]
fn a_retry_librarys_failure_says_when_its_request_is_sent_again() {
    let call = "2026-12-07 14:22:58,372 INFO agent: tool call run_id=r1 step=1 tool=issue_refund args={\"order_id\": \"A-1\"}\n";
    let resent = |line: &str| {
        let p = run(&format!("{call}{line}\n"));
        failures(&p).first().map(|f| f.resent_after)
    };
    assert_eq!(
        resent(
            "2026-12-07 14:22:59,375 INFO backoff: Backing off post_refund(...) for 0.2s (TimeoutError)"
        ),
        Some(Some(Duration(200_000_000)))
    );
    assert_eq!(
        resent(
            "2026-12-07 14:22:59,375 WARNING agent: Retrying agent.post_refund in 2.0 seconds as it raised ReadTimeout: timed out."
        ),
        Some(Some(Duration(2_000_000_000)))
    );
    assert_eq!(
        resent(
            "2026-12-07 14:22:59,375 ERROR backoff: Giving up post_refund(...) after 3 tries (TimeoutError)"
        ),
        Some(None)
    );
    // The program's own failure line sends nothing again.
    assert_eq!(
        resent("2026-12-07 14:22:59,375 ERROR agent: httpx.ReadTimeout: timed out"),
        Some(None)
    );
}
