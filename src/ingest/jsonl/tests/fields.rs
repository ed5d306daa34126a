//! Field names and spellings: where each known name is looked for, the stamp under other names, escapes, and attributes kept.

use super::*;

/// Every known name is found at its place, and a name one byte or letter case away
/// from one (or of another length) is none.
#[test]
fn known_names_are_found_in_their_slot_and_others_are_not() {
    for (i, name) in KNOWN.iter().enumerate() {
        assert_eq!(slot(name), Some(i), "{name}");
        for at in 0..name.len() {
            let mut near = name.as_bytes().to_vec();
            near[at] ^= 0x20;
            let near = String::from_utf8(near).unwrap();
            assert_eq!(slot(&near), None, "{near}");
        }
        assert_eq!(slot(&format!("{name}s")), None);
        // `@timestamp` without its `@` is `timestamp`: another name, not this one.
        assert_ne!(slot(&name[1..]), Some(i), "{name}");
    }
    for other in [
        "",
        "t",
        "tz",
        "types",
        "tools",
        "events",
        "errors",
        "x-request-id",
        "@l",
        "@x",
        "@@t",
    ] {
        assert_eq!(slot(other), None, "{other}");
    }
}

/// The stamp under the names other structured loggers give it, and as unix
/// milliseconds (pino), reads as `ts` does; `ts` wins when a line has both.
#[test]
fn the_stamp_under_other_names() {
    let line = |stamp: &str| {
        format!(r#"{{{stamp},"type":"effect","effect_id":"rf_1","kind":"refund","order":"A-1"}}"#)
    };
    let at = |p: &Parsed| {
        assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
        p.events
            .iter()
            .chain(p.sealed.iter().flatten())
            .map(|e| e.at)
            .collect::<Vec<_>>()
    };
    let want = at(&run(&line(r#""ts":"2026-11-03T14:02:11.402Z""#)));
    assert_eq!(want.len(), 1);
    for stamp in [
        r#""timestamp":"2026-11-03T14:02:11.402Z""#,
        r#""@timestamp":"2026-11-03T14:02:11.402Z""#,
        r#""time":"2026-11-03T14:02:11.402Z""#,
        r#""time":1793714531402"#,
        r#""ts":"2026-11-03T14:02:11.402Z","time":"1999-01-01T00:00:00Z""#,
        r#""time":"1999-01-01T00:00:00Z","ts":"2026-11-03T14:02:11.402Z""#,
    ] {
        assert_eq!(at(&run(&line(stamp))), want, "{stamp}");
    }
    let none = run(&line(r#""when":"2026-11-03T14:02:11.402Z""#));
    assert_eq!(none.stats.skipped, 1);
    assert!(none.stats.problems[0].reason.contains("`ts`"));
}

#[test]
fn unknown_fields_are_kept_as_attributes() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"effect","effect_id":"rf_1","kind":"refund","reason":"requested_by_customer","meta":{"agent":"billing"},"retries":2,"note":null,"re\u0061son2":"x"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:12Z","type":"run","run":"7f3a","event":"started"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:13Z","type":"healthcheck","latency_ms":9}"#,
        "\n",
    ));
    assert_eq!(p.stats.events, 2);
    let pairs = |v: &[(&str, &str)]| -> Attrs {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        p.attrs,
        vec![(
            p.events[0].loc,
            pairs(&[
                ("reason", "requested_by_customer"),
                ("meta", r#"{"agent":"billing"}"#),
                ("retries", "2"),
                ("reason2", "x"),
            ])
        )],
        "strings unquoted, other values as JSON, nulls dropped; a line with none has none"
    );
}

#[test]
fn known_fields_an_event_type_does_not_read_are_kept_too() {
    let p = run(concat!(
        r#"{"ts":"2026-11-03T14:02:11Z","type":"run","run":"7f3a","event":"started","order":"A-1","agent":"billing"}"#,
        "\n",
        // Only a known field unread: no unknown one beside it.
        r#"{"ts":"2026-11-03T14:02:12Z","type":"run","run":"7f3b","event":"started","order":"A-2"}"#,
        "\n",
    ));
    assert_eq!(p.stats.events, 2);
    let attrs = |i: usize| -> Vec<(&str, &str)> {
        (p.attrs[i].1.iter())
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    };
    assert_eq!(attrs(0), [("agent", "billing"), ("order", "A-1")]);
    assert_eq!(attrs(1), [("order", "A-2")]);
}

/// Without attributes asked for (every command but `timeline`), the same events and
/// none: a month of lines with fields the audit does not read must not be held.
#[test]
fn attributes_are_kept_only_when_asked_for() {
    let text = concat!(
        r#"{"level":"info","ts":"2026-11-03T14:02:11Z","type":"run","run":"7f3a","event":"started","order":"A-1"}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:12Z","type":"response","run":"7f3a","step":1,"status":200,"trace":{"id":1}}"#,
        "\n",
    );
    let with = run(text);
    let opts = ParseOptions {
        keep_attrs: false,
        ..ParseOptions::default()
    };
    let without = parse(&mut text.as_bytes(), 0, &opts).unwrap();
    assert_eq!(with.attrs.len(), 2);
    assert!(without.attrs.is_empty(), "{:?}", without.attrs);
    assert_eq!(with.events, without.events);
    assert_eq!(with.stats, without.stats);
}

#[test]
fn escapes_spelling_and_numeric_timestamps() {
    let p = run(concat!(
        r#"{"ts":1762178531,"type":"tool_\u0063all","run":7,"step":"2","tool":"issue\u005frefund","args":{"order":"A","amount_p":4500.0}}"#,
        "\n",
        r#"{"ts":"2026-11-03T14:02:11Z","type":"response","status":201,"replayed":"true","effect_id":null}"#,
    ));
    assert_eq!(p.stats.problems, vec![]);
    let EventKind::ToolCall(t) = &p.events[0].kind else {
        panic!()
    };
    assert_eq!((t.call.run.as_str(), t.call.step), ("7", 2));
    assert_eq!(t.tool, "issue_refund");
    assert_eq!(
        t.args_raw, r#"{"order":"A","amount_p":4500.0}"#,
        "kept as written"
    );
    assert_eq!(p.events[0].at.display(), "2025-11-03T14:02:11.000Z");
    let EventKind::Response(r) = &p.events[1].kind else {
        panic!()
    };
    assert!(r.replayed && r.effect_id.is_none());
}
