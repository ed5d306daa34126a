use super::*;

fn header_parts(line: &str) -> Option<(String, String, Option<String>, String)> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    header(line.as_bytes()).map(|h| {
        (
            text(h.stamp),
            text(h.level),
            h.name.map(text),
            text(h.message),
        )
    })
}

#[test]
fn headers_are_read_in_every_stamp_and_origin_pino_pretty_writes() {
    let parts = |stamp: &str, level: &str, name: Option<&str>, message: &str| {
        Some((
            stamp.into(),
            level.into(),
            name.map(Into::into),
            message.into(),
        ))
    };
    for (line, want) in [
        (
            "[2026-12-06 19:54:34.621 +0000] INFO (agent/14718): tool call",
            parts(
                "2026-12-06 19:54:34.621 +0000",
                "INFO",
                Some("agent"),
                "tool call",
            ),
        ),
        (
            "[19:53:52.297] WARN (13613): x",
            parts("19:53:52.297", "WARN", None, "x"),
        ),
        (
            "[1796586906886] ERROR (agent/1 on vm): refund failed",
            parts("1796586906886", "ERROR", Some("agent"), "refund failed"),
        ),
        (
            "[19:53:52.297] INFO: no origin",
            parts("19:53:52.297", "INFO", None, "no origin"),
        ),
        (
            "[19:53:52.297] INFO (agent/1):",
            parts("19:53:52.297", "INFO", Some("agent"), ""),
        ),
        (
            "INFO [2026-12-06 22:31:41.783 +0000] (agent/26731): level first",
            parts(
                "2026-12-06 22:31:41.783 +0000",
                "INFO",
                Some("agent"),
                "level first",
            ),
        ),
    ] {
        assert_eq!(header_parts(line), want, "{line}");
    }
    for other in [
        "[2026-12-06 19:54:34.621 +0000] info (agent/1): lower-case level",
        "[note] INFO (agent/1): no stamp",
        "2026-12-06T19:54:34.621Z INFO (agent/1): no brackets",
        "[19:53:52.297] refund rf_1 order A-1 4500p",
        "[19:53:52.297] INFO (agent/1) no colon",
        "INFO refund created [x]",
        "Refund [2026-12-06 22:31:41.783 +0000] (agent/1): not a level",
    ] {
        assert_eq!(header_parts(other), None, "{other}");
    }
}

#[test]
fn stamps_become_the_time_pino_would_have_written() {
    assert_eq!(stamp_value(b"1796586906886"), Value::from(1796586906886u64));
    assert_eq!(
        stamp_value(b"2026-12-06 19:54:34.621 +0000"),
        Value::from("2026-12-06T19:54:34.621+00:00")
    );
    assert_eq!(
        stamp_value(b"2026-12-06 21:54:34.621 +0200"),
        Value::from("2026-12-06T21:54:34.621+02:00")
    );
    assert_eq!(
        stamp_value(b"2026-12-06 19:54:34"),
        Value::from("2026-12-06T19:54:34")
    );
    assert_eq!(stamp_value(b"19:53:52.297"), Value::from("19:53:52.297"));
}

fn below(text: &str) -> Vec<String> {
    text.lines().map(String::from).collect()
}

/// pino-pretty 13's rendering of `log.error({ err, method }, "refund failed")` with an
/// AxiosError-like error, and of a nested object (written by it, then pasted here).
#[test]
fn members_below_are_the_logged_objects_members_errors_and_all() {
    let members = members_below(&below(
        r#"    method: "POST"
    err: {
      "type": "Error",
      "message": "timeout of 1000ms exceeded",
      "stack":
          AxiosError: timeout of 1000ms exceeded
              at file:///tmp/pp-err.mjs:4:11
              at ModuleJob.run (node:internal/modules/esm/module_job:325:25)
      "code": "ECONNABORTED",
      "name": "AxiosError"
    }
    a: {
      "b": [
        1,
        2
      ]
    }
    amount: 4500
    ok: true"#,
    ));
    assert_eq!(members["method"], "POST");
    assert_eq!(members["err"]["message"], "timeout of 1000ms exceeded");
    assert_eq!(members["err"]["code"], "ECONNABORTED");
    assert_eq!(members["err"]["name"], "AxiosError");
    assert_eq!(members["a"]["b"][1], 2);
    assert_eq!(members["amount"], 4500);
    assert_eq!(members["ok"], true);
    // A key as pino-pretty writes it, whatever its characters, is a member, never an error.
    let members = members_below(&below("    @context: \"payments\"\n    user id: 7"));
    assert_eq!(
        (members["@context"].as_str(), members["user id"].as_i64()),
        (Some("payments"), Some(7))
    );
    assert!(members.get("err").is_none());
    // The stack as the last member: what is left still reads.
    let members = members_below(&below(
        "    err: {\n      \"message\": \"boom\",\n      \"stack\":\n          Error: boom\n              at x (y.js:1:1)\n    }",
    ));
    assert_eq!(members["err"]["message"], "boom");
    // An error printed as its stack: its first line is the record's error.
    let members = members_below(&below(
        "    AxiosError: timeout of 1000ms exceeded\n        at RedirectableRequest.handleRequestTimeout (x.js:1:1)",
    ));
    assert_eq!(members["err"], "AxiosError: timeout of 1000ms exceeded");
}

fn read(log: &str) -> Parsed {
    parse(&mut log.as_bytes(), 0, &ParseOptions::default()).unwrap()
}

/// Every line is a record's header, one of its members, or skipped with why.
#[test]
fn every_line_is_read_counted_or_skipped() {
    let log = "[2026-12-06 19:54:34.621 +0000] INFO (agent/14718): tool call\n    \
        runId: \"r1\"\n    step: 1\n    tool: \"issue_refund\"\n    args: {\n      \
        \"order\": \"A-1\",\n      \"amount_p\": 4500\n    }\n\
        not a record\n\
        [2026-12-06 19:54:34.622 +0000] INFO (agent/14718): refund request {\"method\":\"POST\",\"url\":\"http://p/v1/refunds\"}\n";
    let parsed = read(log);
    let s = &parsed.stats;
    assert_eq!(s.lines, 10);
    assert_eq!(s.skipped, 1);
    assert_eq!(s.problems[0].line, 9);
    assert_eq!(s.lines, s.events + s.ignored + s.skipped, "{s:?}");
    assert!(s.events >= 1, "the tool call is an event: {s:?}");
}

#[test]
fn a_pino_pretty_head_is_told_from_a_text_log_with_bracketed_stamps() {
    let pretty = "[2026-12-06 19:54:34.620 +0000] INFO (agent/14718): agent run started\n    \
        runId: \"r1\"\n[2026-12-06 19:54:34.621 +0000] INFO (agent/14718): tool call\n";
    assert!(looks_like(pretty.as_bytes()));
    let text = "[2026-12-06 14:02:11.402] agent run 7f3a  step 4  tool=issue_refund  args={}\n\
        [2026-12-06 14:02:11.418] POST https://payments.internal/v1/refunds  (attempt 1)\n";
    assert!(!looks_like(text.as_bytes()));
    // Python's `[%(asctime)s] %(levelname)s: %(message)s`: no origin, no members below.
    let python = "[2026-12-06 14:02:11,402] INFO: agent run 7f3a  step 4  tool=issue_refund\n\
        [2026-12-06 14:02:11,418] INFO: POST https://payments.internal/v1/refunds\n";
    assert!(!looks_like(python.as_bytes()));
    // pino-pretty told to leave the origin out still writes its members below.
    let no_origin = "[19:54:34.620] INFO: tool call\n    runId: \"r1\"\n[19:54:34.621] INFO: x\n";
    assert!(looks_like(no_origin.as_bytes()));
    // `npm start`'s banner may come first.
    assert!(looks_like(
        format!("\n> agent@1.0.0 start\n> node agent.mjs | pino-pretty\n\n{pretty}").as_bytes()
    ));
    // A `# date:` line may come first.
    assert!(looks_like(
        format!("# date: 2026-12-06\n{pretty}").as_bytes()
    ));
}

/// A record of endless member lines is read up to a bound; the lines past it are skipped
/// with why, never held.
#[test]
fn a_runaway_record_is_bounded() {
    let mut log = String::from("[19:53:52.297] INFO (agent/1): dump\n");
    let line = format!("    x: \"{}\"\n", "a".repeat(1000));
    for _ in 0..1100 {
        log.push_str(&line);
    }
    let p = read(&log);
    assert!(
        p.stats.skipped > 0 && p.stats.skipped < 100,
        "{:?}",
        p.stats.skipped
    );
    assert_eq!(
        p.stats.lines,
        p.stats.events + p.stats.ignored + p.stats.skipped
    );
}

#[test]
fn the_name_is_the_origins_first_part_unless_only_a_process() {
    let name = |o: &str| name_in(o.as_bytes()).map(|n| String::from_utf8_lossy(n).into_owned());
    assert_eq!(name("agent/14718").as_deref(), Some("agent"));
    assert_eq!(name("agent/14718 on vm").as_deref(), Some("agent"));
    assert_eq!(name("agent").as_deref(), Some("agent"));
    assert_eq!(name("agent on vm").as_deref(), Some("agent"));
    assert_eq!(name("14718"), None);
    assert_eq!(name("14718 on vm"), None);
}

/// pino-pretty's default stamp is a time of day: a `# date:` line dates the records after
/// it, as in a text trace; one that is no date is skipped with why.
#[test]
fn a_date_comment_dates_the_time_of_day_stamps_after_it() {
    let log = "# date: 2026-12-06\n[19:54:34.621] INFO (agent/1): tool call\n    runId: \"r1\"\n    \
        step: 1\n    tool: \"issue_refund\"\n    args: {\n      \"order\": \"A-1\"\n    }\n";
    let p = read(log);
    assert_eq!(p.events.len(), 1, "{:?}", p.stats);
    assert_eq!(p.events[0].at.to_string(), "2026-12-06T19:54:34.621Z");
    let bad = read("# date: tomorrow\n");
    assert_eq!(bad.stats.skipped, 1);
    // npm's banner is no record, and nothing wrong either.
    let banner = read("> agent@1.0.0 start\n> node agent.mjs\n");
    assert_eq!((banner.stats.ignored, banner.stats.skipped), (2, 0));
}

#[test]
fn a_message_of_several_lines_is_one_records_not_skipped_lines() {
    // `logger.error({ err }, "refund failed\nsee the payments dashboard")`.
    let log = "[2026-12-06 19:54:34.621 +0000] ERROR (agent/14718): refund failed\n\
        see the payments dashboard\n    \
        runId: \"r1\"\n\
        [2026-12-06 19:54:34.622 +0000] INFO (agent/14718): done\n";
    let parsed = read(log);
    let s = &parsed.stats;
    assert_eq!((s.lines, s.skipped), (4, 0), "{:?}", s.problems);
    assert_eq!(s.lines, s.events + s.ignored + s.skipped);
    // Once members are below the header, a line at the margin is no part of the message.
    let after_members = log.replace(
        "see the payments dashboard\n    runId: \"r1\"",
        "    runId: \"r1\"\nsee the payments dashboard",
    );
    let parsed = read(&after_members);
    assert_eq!(parsed.stats.skipped, 1);
    assert_eq!(parsed.stats.problems[0].line, 3);
}
