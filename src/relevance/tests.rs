use super::*;
use crate::event::ToolCall;
use crate::ingest::{Format, ParseOptions, Parsed, parse, source};

fn read(text: &str) -> Parsed {
    let opts = ParseOptions {
        relevance: Some(Relevance::default()),
        ..ParseOptions::default()
    };
    parse(Format::Text, &mut text.as_bytes(), 0, &opts).unwrap()
}

fn lines(events: &[Event]) -> Vec<u32> {
    let mut l: Vec<u32> = events.iter().map(|e| e.loc.line).collect();
    l.sort();
    l.dedup();
    l
}

const LOOKUP: &str = "\
2026-11-01T00:00:04.085Z  agent run r1  step 2  tool=lookup_order  args={\"order\":\"A-1\"}
2026-11-01T00:00:04.095Z  GET https://orders.internal/v1/orders  (attempt 1)
2026-11-01T00:00:04.418Z  200 OK
2026-11-01T00:00:04.420Z  agent run r1  step 2  ok
";

#[test]
fn an_idle_lookup_is_dropped_but_its_time_is_kept() {
    let p = read(LOOKUP);
    assert!(p.events.is_empty(), "{:?}", p.events);
    assert!(p.deferred.is_empty());
    assert_eq!((p.dropped.calls, p.dropped.events), (1, 4));
    let (first, last) = p.dropped.span.unwrap();
    assert_eq!(first.display(), "2026-11-01T00:00:04.085Z");
    assert_eq!(last.display(), "2026-11-01T00:00:04.420Z");
    assert_eq!(
        p.stats.events, 4,
        "dropped lines still count as events read"
    );
}

#[test]
fn anything_a_rule_reads_keeps_the_call() {
    let variants = [
        // a tool naming an effect kind
        LOOKUP.replace("lookup_order", "issue_refund"),
        // a URL naming one
        LOOKUP.replace("/v1/orders", "/v1/refunds"),
        // an amount in the arguments (noncanonical-args)
        LOOKUP.replace(r#"{"order":"A-1"}"#, r#"{"order":"A-1","amount":4.5}"#),
        // a key
        LOOKUP.replace("(attempt 1)", "Idempotency-Key: k1  (attempt 1)"),
        // a non-2xx answer
        LOOKUP.replace("200 OK", "404 Not Found"),
        // a step that failed
        LOOKUP.replace("step 2  ok", "step 2  failed  error=boom"),
    ];
    for v in variants {
        let p = read(&v);
        assert_eq!(lines(&p.events), vec![1, 2, 3, 4], "{v}");
        assert_eq!(p.dropped.calls, 0, "{v}");
    }
}

#[test]
fn a_retry_or_a_second_dispatch_keeps_every_line() {
    let retry = LOOKUP.replace(
        "2026-11-01T00:00:04.418Z  200 OK\n",
        "2026-11-01T00:00:14.095Z  ReadTimeoutError: read timeout=10\n\
         2026-11-01T00:00:14.195Z  GET https://orders.internal/v1/orders  (attempt 2)\n\
         2026-11-01T00:00:14.418Z  200 OK\n",
    );
    assert_eq!(lines(&read(&retry).events), vec![1, 2, 3, 4, 5, 6]);

    let again = format!("{LOOKUP}{}", LOOKUP.replace("00:00:04", "00:00:09"));
    let p = read(&again);
    assert!(
        p.events.is_empty() && p.dropped.calls == 2,
        "a dispatch that ended ok and idle is forgotten: the next is judged on its own"
    );
    let overlapping = LOOKUP.replace(
        "2026-11-01T00:00:04.418Z  200 OK\n",
        "2026-11-01T00:00:04.418Z  200 OK\n\
         2026-11-01T00:00:04.419Z  agent run r1  step 2  tool=lookup_order  args={\"order\":\"A-1\"}\n",
    );
    assert_eq!(lines(&read(&overlapping).events), vec![1, 2, 3, 4, 5]);
}

#[test]
fn a_call_still_open_at_the_end_is_kept() {
    let open: String = LOOKUP.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert_eq!(lines(&read(&open).events), vec![1, 2, 3]);
}

const EMAIL: &str = "\
2026-11-01T00:00:01.000Z  agent run r1  started
2026-11-01T00:00:02.546Z  agent run r1  step 1  tool=send_email  args={\"order\":\"A-1\"}
2026-11-01T00:00:02.556Z  POST https://mail.internal/v1/emails  (attempt 1)
2026-11-01T00:00:02.701Z  200 OK
2026-11-01T00:00:02.703Z  agent run r1  step 1  ok
";

#[test]
fn an_idle_post_is_deferred_and_restored_only_for_a_resumed_run() {
    let p = read(EMAIL);
    assert!(p.events.is_empty(), "{:?}", p.events);
    assert_eq!(p.started.len(), 1, "the run's start, set aside");
    assert_eq!(p.deferred.len(), 1);
    assert_eq!(p.deferred[0].run(), "r1");
    assert!(
        matches!(p.deferred[0], Deferred::Packed(_)),
        "the usual shape is packed"
    );
    let unpacked = p.deferred[0].clone().into_events();
    let mut unfiltered = parse(
        Format::Text,
        &mut EMAIL.as_bytes(),
        0,
        &ParseOptions::default(),
    )
    .unwrap()
    .events;
    unfiltered.remove(0);
    assert_eq!(unpacked, unfiltered, "unpacked exactly as read");

    let restored = restore_resumed(
        &Lifecycles::of(std::slice::from_ref(&p.events)),
        p.deferred.clone(),
        [],
        |_| Vec::new(),
    );
    assert!(restored.is_empty(), "not resumed: dropped");

    let resumed = format!("{EMAIL}2026-11-01T00:00:09.000Z  agent run r1  resumed\n");
    let p = read(&resumed);
    let mut events = restore_resumed(
        &Lifecycles::of(std::slice::from_ref(&p.events)),
        p.deferred,
        [],
        |_| Vec::new(),
    );
    events.extend(p.events);
    assert_eq!(lines(&events), vec![2, 3, 4, 5, 6]);
    let args = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolCall(t) => Some(t.parsed_args()),
        _ => None,
    });
    assert_eq!(
        args,
        Some(serde_json::json!({"order": "A-1"})),
        "parsed again"
    );
}

#[test]
fn without_relevance_every_event_is_kept() {
    let p = parse(
        Format::Text,
        &mut LOOKUP.as_bytes(),
        0,
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(p.events.len(), 4);
    assert_eq!(p.dropped, Dropped::default());
}

#[test]
fn an_unusual_shape_is_deferred_as_it_was_read() {
    let events = parse(
        Format::Text,
        &mut EMAIL.as_bytes(),
        0,
        &ParseOptions::default(),
    )
    .unwrap()
    .events;
    let call = events[1].kind.call().unwrap().clone();
    let three = events[1..4].to_vec();
    let d = Deferred::pack(call, three.clone());
    assert!(matches!(d, Deferred::Loose(..)));
    assert_eq!(d.run(), "r1");
    assert_eq!(d.into_events(), three);
}

#[test]
fn a_request_whose_key_is_unknown_is_deferred_as_it_was_read() {
    // Found by the `parse_text` fuzz target: a client library's `POST url` (no `(attempt
    // N)`) is an attempt whose key is unknown; packed, it came back as one without a key.
    let trace = "09:00:01.0 agent run e10  step 2  tool=l args={\"\":\"\",\"\":\"\"}\n\
                 09:00:01.0 POST http://\n09:00:01.0 200 \n09:00:01.0 agent run e10  step 2  ok\n";
    let events = parse(
        Format::Text,
        &mut trace.as_bytes(),
        0,
        &ParseOptions::default(),
    )
    .unwrap()
    .events;
    assert!(matches!(&events[1].kind, EventKind::Attempt(a) if a.key_unseen));
    let call = events[0].kind.call().unwrap().clone();
    let d = Deferred::pack(call, events.clone());
    assert!(matches!(d, Deferred::Loose(..)));
    assert_eq!(d.into_events(), events);
    crate::ingest::selfcheck::check_filter_agrees(
        Format::Text,
        trace.as_bytes(),
        &ParseOptions::default(),
    );
}

/// `trace` read with the filter from a file, which can be read again: the file's input (in
/// `dir`), the options and what the parse gave.
fn read_file(dir: &tempfile::TempDir, trace: &str) -> (Vec<source::Input>, ParseOptions, Parsed) {
    read_named(dir, "agent.log", trace)
}

/// [`read_file`] with the file's name (its format is detected, as a scan would).
fn read_named(
    dir: &tempfile::TempDir,
    name: &str,
    trace: &str,
) -> (Vec<source::Input>, ParseOptions, Parsed) {
    let path = dir.path().join(name);
    std::fs::write(&path, trace).unwrap();
    let inputs = vec![source::Input {
        display: name.into(),
        origin: source::Origin::File(path),
        explicit: true,
    }];
    let opts = ParseOptions {
        relevance: Some(Relevance::default()),
        ..ParseOptions::default()
    };
    let Some(source::Outcome::Parsed(_, p)) = source::read_all(&inputs, None, &opts).pop() else {
        panic!("not parsed");
    };
    (inputs, opts, *p)
}

/// Both runs' emails of `trace` (r1's and r2's, r1 resumed) were set aside as places; r1's
/// is read again as its events were first read, and nothing else comes back with it.
fn r1_alone_is_read_again(format: Format, trace: &str) {
    let dir = tempfile::tempdir().unwrap();
    let name = if format == Format::Jsonl {
        "agent.jsonl"
    } else {
        "agent.log"
    };
    let (inputs, opts, p) = read_named(&dir, name, trace);
    assert!(p.deferred.is_empty(), "{:?}", p.deferred);
    // In the order the calls ended.
    let places: Vec<_> = p.deferred_lines.iter().map(|l| l.first_line).collect();
    assert_eq!(places, [2, 1]);
    let restored = restore_resumed(
        &Lifecycles::of(std::slice::from_ref(&p.events)),
        p.deferred,
        p.deferred_lines.into_iter().map(|l| (0, l)),
        |lines| source::reread_deferred(&inputs, &[Some(format)], lines, &opts).0,
    );
    let all = parse(format, &mut trace.as_bytes(), 0, &ParseOptions::default()).unwrap();
    let of_r1: Vec<Event> = (all.events.iter())
        .filter(|e| e.kind.call().is_some_and(|c| c.run == "r1"))
        .cloned()
        .collect();
    assert_eq!(of_r1.len(), 4);
    assert_eq!(
        restored, of_r1,
        "r1's events as first read, and no other line"
    );
}

#[test]
fn an_idle_post_in_a_file_is_deferred_as_its_place_and_read_again_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let resumed = format!("{EMAIL}2026-11-01T00:00:09.000Z  agent run r1  resumed\n");
    let (inputs, opts, p) = read_file(&dir, &resumed);
    assert!(p.deferred.is_empty(), "{:?}", p.deferred);
    assert!(
        matches!(p.deferred_lines.iter().collect::<Vec<_>>()[..], [l] if l.first_line == 2),
        "{:?}",
        p.deferred_lines
    );
    assert_eq!(p.stats.events, 6, "held lines still count as events read");
    let restored = restore_resumed(
        &Lifecycles::of(std::slice::from_ref(&p.events)),
        p.deferred,
        p.deferred_lines.into_iter().map(|l| (0, l)),
        |lines| source::reread_deferred(&inputs, &[Some(Format::Text)], lines, &opts).0,
    );
    let all = parse(
        Format::Text,
        &mut resumed.as_bytes(),
        0,
        &ParseOptions::default(),
    )
    .unwrap()
    .events;
    assert_eq!(
        restored,
        all[1..5].to_vec(),
        "read again exactly as first read"
    );
}

/// Two runs' emails in one JSON Lines log, their lines interleaved (and a third run's
/// crash among them), then a resume of the first run. Each email is set aside as its
/// place; reading r1's place again gives r1's events exactly as first read, and none of
/// the other lines it spans.
#[test]
fn an_idle_post_in_a_json_lines_file_is_deferred_as_its_place_and_read_again_alone() {
    let line = |ms: u32, rest: &str| format!("{{\"ts\":\"2026-11-01T00:00:0{ms}Z\",{rest}}}\n");
    let call = |run: &str| format!("\"run\":\"{run}\",\"step\":1");
    let (r1, r2) = (call("r1"), call("r2"));
    let trace = [
        line(1, &format!("\"type\":\"tool_call\",{r1},\"tool\":\"send_email\",\"args\":{{}}")),
        line(2, &format!("\"type\":\"tool_call\",{r2},\"tool\":\"send_email\",\"args\":{{}}")),
        // No call's: read the first time, never again with r1's place.
        line(2, "\"type\":\"run\",\"run\":\"r3\",\"event\":\"crashed\""),
        line(3, &format!("\"type\":\"attempt\",{r1},\"attempt\":1,\"method\":\"POST\",\"url\":\"https://m/v1/emails\"")),
        line(4, &format!("\"type\":\"attempt\",{r2},\"attempt\":1,\"method\":\"POST\",\"url\":\"https://m/v1/emails\"")),
        line(5, &format!("\"type\":\"response\",{r1},\"status\":200")),
        line(6, &format!("\"type\":\"response\",{r2},\"status\":200")),
        line(7, &format!("\"type\":\"step_end\",{r2},\"status\":\"ok\"")),
        line(8, &format!("\"type\":\"step_end\",{r1},\"status\":\"ok\"")),
        line(9, "\"type\":\"run\",\"run\":\"r1\",\"event\":\"resumed\""),
    ]
    .concat();
    r1_alone_is_read_again(Format::Jsonl, &trace);
}

/// The same in a text log whose lines name their calls: each email's tool call is held,
/// then read in full when the next line is another call's (r2's tool call, r1's request),
/// and still set aside as its place; r1's is read again alone.
#[test]
fn an_interrupted_idle_post_in_a_text_file_is_deferred_as_its_place_and_read_again_alone() {
    let trace = "\
2026-11-01T00:00:01.000Z  agent run r1  step 1  tool=send_email  args={}
2026-11-01T00:00:02.000Z  agent run r2  step 1  tool=send_email  args={}
2026-11-01T00:00:03.000Z  POST https://m/v1/emails  (attempt 1)  run=r1  step=1
2026-11-01T00:00:03.500Z  agent run r3  crashed
2026-11-01T00:00:04.000Z  POST https://m/v1/emails  (attempt 1)  run=r2  step=1
2026-11-01T00:00:05.000Z  200 OK  run=r1  step=1
2026-11-01T00:00:06.000Z  200 OK  run=r2  step=1
2026-11-01T00:00:07.000Z  agent run r2  step 1  ok
2026-11-01T00:00:08.000Z  agent run r1  step 1  ok
2026-11-01T00:00:09.000Z  agent run r1  resumed
";
    r1_alone_is_read_again(Format::Text, trace);
}

/// A JSON Lines call with a time-only stamp is dated by the lines before it, so it is set
/// aside as its events, not as a place to be read alone.
#[test]
fn a_json_lines_call_with_a_time_only_stamp_is_set_aside_as_events() {
    let trace = concat!(
        r#"{"ts":"2026-11-01T00:00:01Z","type":"tool_call","run":"r1","step":1,"tool":"send_email","args":{}}"#,
        "\n",
        r#"{"ts":"00:00:02","type":"attempt","run":"r1","step":1,"attempt":1,"method":"POST","url":"https://m/v1/emails"}"#,
        "\n",
        r#"{"ts":"2026-11-01T00:00:03Z","type":"response","run":"r1","step":1,"status":200}"#,
        "\n",
        r#"{"ts":"2026-11-01T00:00:04Z","type":"step_end","run":"r1","step":1,"status":"ok"}"#,
        "\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let (_, _, p) = read_named(&dir, "agent.jsonl", trace);
    assert!(p.deferred_lines.is_empty());
    assert_eq!(p.deferred.len(), 1);
}

#[test]
fn lines_of_a_run_that_was_not_resumed_are_not_read_again() {
    let d = DeferredLines::new(0, 10, 2, run_hash("r1")).expect("fits");
    let other_resumed = Event {
        at: Default::default(),
        loc: Loc { input: 0, line: 1 },
        kind: EventKind::Run(Box::new(RunEvent {
            run: "r2".into(),
            what: Lifecycle::Resumed,
        })),
    };
    let parts = [vec![other_resumed]];
    let restored = restore_resumed(&Lifecycles::of(&parts), Vec::new(), [(0, d)], |_| {
        panic!("read again")
    });
    assert!(restored.is_empty());
}

#[test]
fn a_runs_start_is_kept_only_if_the_run_crashed_somewhere() {
    let trace = "\
2026-11-01T00:00:01.000Z  agent run r1  started
2026-11-01T00:00:01.000Z  agent run r2  started
2026-11-01T00:00:05.000Z  agent run r2  crashed
";
    let p = read(trace);
    assert_eq!(lines(&p.events), vec![3], "the crash passes");
    assert_eq!(p.started.len(), 2);
    assert_eq!(
        p.dropped.span.map(|(a, _)| a.display()),
        Some("2026-11-01T00:00:01.000Z".into()),
        "a start still marks where the client traces begin"
    );
    let starts = restore_started(
        &Lifecycles::of(std::slice::from_ref(&p.events)),
        vec![p.started.clone()],
    );
    assert_eq!(lines(&starts), vec![2], "r2's start, not r1's");
    let unfiltered = parse(
        Format::Text,
        &mut trace.as_bytes(),
        0,
        &ParseOptions::default(),
    )
    .unwrap()
    .events;
    assert_eq!(starts[0], unfiltered[1], "restored exactly as read");
    assert!(restore_started(&Lifecycles::of(&[Vec::new()]), vec![p.started]).is_empty());
}

#[test]
fn lines_near_the_plain_shape_are_judged_in_full() {
    // Each differs from the plain idle call in one place the shortcut does not read.
    let variants = [
        LOOKUP.replace("200 OK", "200 OK  refund_id=rf_1"),
        LOOKUP.replace("200 OK", "200 OK  replayed=true"),
        LOOKUP.replace("200 OK", "200 OK  amount_p=4500"),
        LOOKUP.replace("(attempt 1)", "(attempt 2)"),
        LOOKUP.replace("(attempt 1)", "idempotency_key=k1  (attempt 1)"),
        LOOKUP.replace("/v1/orders  (attempt 1)", "/v1/refunds  (attempt 1)"),
        LOOKUP.replace("step 2  ok", "step 2  failed"),
    ];
    for v in variants {
        let p = read(&v);
        assert_eq!(lines(&p.events), vec![1, 2, 3, 4], "{v}");
    }
    // Spelled with other spacing, the plain call is still idle.
    let spaced = LOOKUP
        .replace("200 OK", "200   OK")
        .replace("  (attempt 1)", "    (attempt 1)");
    let p = read(&spaced);
    assert!(p.events.is_empty(), "{:?}", p.events);
    assert_eq!(p.dropped.calls, 1);
}

#[test]
fn money_is_named_in_arguments_in_any_case() {
    assert!(args_name_money(r#"{"order":"A-1","amount_p":4500}"#));
    assert!(args_name_money(r#"{"Currency":"gbp"}"#));
    assert!(args_name_money(r#"{"refundAMOUNT":1}"#));
    assert!(!args_name_money(
        r#"{"order":"A-1","amoun":1,"currenc":"x"}"#
    ));
    assert!(!args_name_money(""));
    // At either end of the text, and beside other `u`s.
    for yes in [
        "amount",
        "currency",
        "uamountu",
        "uucurrency",
        "CURRENCY",
        "xAmOuNt",
    ] {
        assert!(args_name_money(yes), "{yes}");
    }
    for no in ["amoun", "urrency", "mount", "u", "uuu", "currenc"] {
        assert!(!args_name_money(no), "{no}");
    }
}

#[test]
fn money_names_are_found_wherever_a_plain_search_finds_them() {
    let naive = |s: &str| {
        let l = s.to_ascii_lowercase();
        l.contains("amount") || l.contains("currency")
    };
    let pieces = [
        "am", "ount", "cu", "rrency", "u", "U", "AMO", "x", "Curr", "ency", "\"é\"",
    ];
    let mut x: u64 = 11;
    for _ in 0..20_000 {
        let mut s = String::new();
        for _ in 0..6 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.push_str(pieces[(x >> 59) as usize % pieces.len()]);
        }
        assert_eq!(args_name_money(&s), naive(&s), "{s}");
    }
}

#[test]
fn a_deferred_place_holds_its_offset_and_length_or_is_refused() {
    let d = DeferredLines::new((1 << 40) - 1, (1 << 24) - 1, 7, 9).expect("fits");
    assert_eq!((d.offset(), d.byte_len()), ((1 << 40) - 1, (1 << 24) - 1));
    assert_eq!((d.first_line, d.run_hash), (7, 9));
    let d = DeferredLines::new(123_456_789, 321, 1, 1).expect("fits");
    assert_eq!((d.offset(), d.byte_len()), (123_456_789, 321));
    assert!(DeferredLines::new(1 << 40, 10, 1, 1).is_none());
    assert!(DeferredLines::new(0, 1 << 24, 1, 1).is_none());
    assert_eq!(std::mem::size_of::<DeferredLines>(), 16);
}

#[test]
fn an_idle_post_too_long_for_a_place_is_kept_as_events() {
    // Blank lines inside the call (ignored lines) stretch it past the 16 MiB a place holds.
    let (head, tail) = EMAIL.split_at(EMAIL.find("2026-11-01T00:00:02.701Z").unwrap());
    let trace = format!("{head}{}{tail}", "\n".repeat(1 << 24));
    let dir = tempfile::tempdir().unwrap();
    let (_, _, p) = read_file(&dir, &trace);
    assert!(p.deferred_lines.is_empty(), "{:?}", p.deferred_lines);
    // Its four lines are events, set aside as on input that cannot be read again.
    let [call] = &p.deferred[..] else {
        panic!("{:?}", p.deferred);
    };
    assert_eq!(call.run(), "r1");
    let lines: Vec<u32> = call
        .clone()
        .into_events()
        .iter()
        .map(|e| e.loc.line)
        .collect();
    assert_eq!(lines, vec![2, 3, 4 + (1 << 24), 5 + (1 << 24)], "{lines:?}");
    assert_eq!(p.stats.ignored, 1 << 24);
}

#[test]
fn a_run_set_answers_exactly_behind_its_table_of_bits() {
    let members: Vec<String> = (0..3000).map(|i| format!("run-{i}")).collect();
    let set = RunSet::new(members.iter().map(String::as_str));
    for m in &members {
        assert!(set.contains(m), "{m}");
        assert!(set.has_hash(run_hash(m)), "{m}");
    }
    // Some others get past the table (a false "maybe"); none is taken for a member.
    let others: Vec<String> = (0..100_000).map(|i| format!("other-{i}")).collect();
    let past_the_table = others
        .iter()
        .filter(|o| set.bits.may_hold(HashBits::spread(run_hash(o))))
        .count();
    assert!(
        past_the_table > 0 && past_the_table < 10_000,
        "{past_the_table}"
    );
    assert!(others.iter().all(|o| !set.contains(o)));
    let empty = RunSet::new(std::iter::empty());
    assert!(empty.is_empty() && !empty.contains("run-1") && !empty.has_hash(run_hash("run-1")));
}

#[test]
fn the_filter_knows_every_call_it_keeps_or_holds_and_no_other() {
    let mut filter = Filter::new(Relevance::default());
    let mut out = Vec::new();
    let call = |i: u32| CallRef {
        run: format!("run-{}", i / 5).as_str().into(),
        step: i % 5 + 1,
        part: 0,
    };
    for i in 0..30_000 {
        // A refund is kept at once; a lookup is held until its step ends.
        let tool = if i % 3 == 0 {
            "issue_refund"
        } else {
            "lookup_order"
        };
        filter.push(
            Event {
                at: Timestamp(i64::from(i)),
                loc: Loc {
                    input: 0,
                    line: i + 1,
                },
                kind: EventKind::ToolCall(Box::new(ToolCall {
                    call: call(i),
                    tool: tool.into(),
                    args_raw: "{}".into(),
                    args: serde_json::Value::Null,
                })),
            },
            &mut out,
        );
    }
    assert_eq!(out.len(), 10_000, "the refunds passed on");
    for i in 0..30_000 {
        let c = call(i);
        assert!(filter.knows(&c.run, c.step), "{c:?}");
    }
    assert!((30_000..60_000).all(|i| !filter.knows(&call(i).run, call(i).step)));
}
