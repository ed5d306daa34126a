use super::*;

/// Every message made of one choice from each of `parts`, in order.
fn spellings(parts: &[&[&str]]) -> Vec<String> {
    parts.iter().fold(vec![String::new()], |msgs, choices| {
        (msgs.iter())
            .flat_map(|m| choices.iter().map(move |c| format!("{m}{c}")))
            .collect()
    })
}

/// Checks that whenever the plain reading answers for one of `msgs`, the fields read
/// it the same (both given as `Debug` text, by [`debug`]); returns how many it
/// answered for.
fn agree(
    msgs: &[String],
    plain: impl Fn(&[u8]) -> Option<String>,
    by_fields: impl Fn(&[u8]) -> Option<String>,
) -> usize {
    let mut answered = 0;
    for msg in msgs {
        let msg = msg.trim_ascii().as_bytes();
        if let Some(p) = plain(msg) {
            answered += 1;
            assert_eq!(Some(p), by_fields(msg), "{msg:?}");
        }
    }
    answered
}

/// Whenever an effect line is read plainly, the fields give the same effect, by way of
/// the checks that come first in their reading (an agent's line, a request, an answer,
/// an exception), over a grid of spellings near the usual one.
#[test]
fn an_effect_read_plainly_is_the_effect_its_fields_give() {
    use super::super::effects::effect_line;
    use super::super::{Local, effect_of, exception_line};
    use crate::time::{DateCache, Timestamp};
    let created = Local {
        at: Timestamp(1_764_000_000_000_000_000),
        shift: 0,
    };
    let plainly = |m: &[u8]| {
        let e = plain_effect_line(m)?;
        Some(effect_of(
            e,
            created,
            &mut DateCache::default(),
            crate::time::Zone::Fixed(0),
        ))
    };
    let by_fields = |m: &[u8]| {
        let f = Fields::split(m);
        let first = f.plain.first()?;
        let taken_before = first.starts_with(b"agent run")
            || http_request(first).is_some()
            || status_line(first).is_some()
            || exception_line(first).is_some();
        if taken_before {
            return None;
        }
        effect_line(
            &f,
            created,
            &mut DateCache::default(),
            crate::time::Zone::Fixed(0),
        )
        .ok()?
    };
    let msgs = spellings(&[
        &["refund", "Refund", "agent", ""],
        &[" "],
        &["rf_8XM1", "run", "a b", "x=1", "", "é"],
        GAPS,
        &["order "],
        &["A-88214", "", "A=1"],
        &["  "],
        &[
            "4500p",
            "0450p",
            "-45p",
            "4500.5p",
            "999999999999999999p",
            "9999999999999999999p",
            "p",
        ],
        &["  "],
        &["settled", "rejected", ""],
        &[" "],
        &[
            "2026-11-01T00:00:23.335Z",
            "14:02:22.884",
            "2026-11-01 14:02",
            "soon",
        ],
        &[
            "",
            "  key=k1",
            "  key=",
            "  Key=k",
            "  key=a b",
            "  amount_p=1",
        ],
    ]);
    let answered = agree(&msgs, |m| debug(plainly(m)), |m| debug(by_fields(m)));
    assert!(answered >= 40, "{answered}");
    assert!(plain_effect_line(b"refund rf_1  order A-1  4500p  settled 14:02:22.884").is_some());
    assert!(plain_effect_line(b"agent run  order A-1  4500p  settled 14:02:22.884").is_none());
}

/// The table holds exactly the bytes the SPEC's spelling allows, over every byte.
#[test]
fn the_byte_table_is_the_classes_it_names() {
    for b in 0..=255u8 {
        let classes = [
            (KIND, b.is_ascii_lowercase()),
            (
                ID,
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'),
            ),
            (DIGIT, b.is_ascii_digit()),
            (STATE, b.is_ascii_alphabetic() || b == b'_'),
            (
                TIME,
                b.is_ascii_alphanumeric() || matches!(b, b':' | b'.' | b'+' | b'-'),
            ),
        ];
        for (class, is) in classes {
            assert_eq!(EFFECT_CHARS[usize::from(b)] & class != 0, is, "{b} {class}");
        }
    }
}

/// `take` stops at the first byte outside its class wherever it lies (in a step of four
/// or after), and takes none when the first byte is outside.
#[test]
fn take_stops_at_the_first_byte_outside_its_class() {
    for len in 0..12 {
        for stop in 0..=len {
            let mut b = vec![b'a'; len];
            if stop < len {
                b[stop] = b' ';
            }
            let taken = take(&b, KIND).map(|(t, _)| t.len());
            assert_eq!(taken, (stop > 0).then_some(stop), "{len} {stop}");
        }
    }
}

fn debug<T: std::fmt::Debug>(reading: Option<T>) -> Option<String> {
    reading.map(|r| format!("{r:?}"))
}

const GAPS: &[&str] = &["  ", "   ", "\t", " "];

#[test]
fn a_tool_call_read_plainly_is_the_call_its_fields_give() {
    fn by_fields(msg: &[u8]) -> Option<ToolCallLine<'_>> {
        let f = Fields::split(msg);
        let (run, step) = agent_step(&f)?;
        Some(ToolCallLine {
            run,
            step,
            tool: f.token(b"tool")?,
            args: f.token(b"args")?,
        })
    }
    let msgs = spellings(&[
        &["agent run "],
        &["w0r1", "", "a\tb", "r 1", "\x0cr", "r\x0c", "a\rb"],
        GAPS,
        &["step "],
        &["1", "07", "", "x", "1234567890"],
        &["  tool="],
        &["lookup_order", "", "send email", "a\tb", "t\x0c", "\rt"],
        GAPS,
        &["args="],
        &[
            r#"{"order":"A-1"}"#,
            "{}",
            "",
            r#"{"a": 1}"#,
            r#"{"a":"b  c"}"#,
        ],
    ]);
    let answered = agree(
        &msgs,
        |m| debug(plain_tool_call(m)),
        |m| debug(by_fields(m)),
    );
    assert!(answered > 10, "{answered}");
    // The usual spelling is answered plainly; others are left to the fields.
    assert!(
        plain_tool_call(br#"agent run w0r1  step 3  tool=lookup_order  args={"order":"A-1"}"#)
            .is_some()
    );
    assert!(plain_tool_call(b"agent run w0r1  step 3  tool=x  args={}  run=w9").is_none());
}

#[test]
fn a_request_read_plainly_is_the_request_its_fields_give() {
    fn by_fields(msg: &[u8]) -> Option<RequestLine<'_>> {
        let f = Fields::split(msg);
        let (method, url) = http_request(f.plain.first()?)?;
        let number = f.plain.iter().find_map(|p| {
            p.strip_prefix(b"(attempt ")
                .and_then(|r| r.strip_suffix(b")"))
        })?;
        let no_call_tokens = f.token(b"run").is_none() && f.token(b"step").is_none();
        let key = f.idempotency_key();
        no_call_tokens.then_some(RequestLine {
            method,
            url,
            number: parse_u32(number.trim_ascii())?,
            key,
        })
    }
    let msgs = spellings(&[
        &["POST", "GET", "FETCH", ""],
        &[" "],
        &[
            "https://pay/v1/refunds",
            "https://x/?a=b",
            "",
            "a b",
            "u\x0c",
        ],
        GAPS,
        &["(attempt "],
        &["1", "12", " 1", "x", "1234567890"],
        &[")"],
        &[
            "",
            "  idempotency_key=k1",
            "  idempotency_key=a=b",
            "  idempotency_key=",
            "  idempotency_key=a b",
            "  Idempotency-Key: k",
            "  run=r1",
            " x",
        ],
    ]);
    let answered = agree(
        &msgs,
        |m| debug(plain_request_line(m)),
        |m| debug(by_fields(m)),
    );
    assert!(answered >= 12, "{answered}");
}

#[test]
fn an_answer_read_plainly_is_the_answer_its_fields_give() {
    fn by_fields(msg: &[u8]) -> Option<AnswerLine<'_>> {
        let f = Fields::split(msg);
        let (status, text) = status_line(f.plain.first()?)?;
        // Nothing the plain reading leaves out: no other field, token or flag.
        let others = [
            "error",
            "replayed",
            "amount_minor",
            "currency",
            "run",
            "step",
        ];
        if f.plain.len() > 1 || others.iter().any(|t| f.token(t.as_bytes()).is_some()) {
            return None;
        }
        Some(AnswerLine {
            status,
            text,
            effect_id: EFFECT_ID_TOKENS
                .iter()
                .find_map(|name| f.token(name.as_bytes())),
            amount_p: f.token(b"amount_p"),
        })
    }
    let msgs = spellings(&[
        &[
            "201 Created",
            "200 OK",
            "422 Unprocessable Entity",
            "201",
            "20 x",
            "201 a=b",
            "201\tCreated",
        ],
        &[
            "",
            "  refund_id=rf_1",
            "  charge_id=ch_1",
            "  refund_id=",
            "  Refund_ID=rf_1",
            "  refund_id=a b",
        ],
        &[
            "",
            "  amount_p=2000",
            "  amount_p=x",
            "  amount_p=1  amount_p=2",
            "  refund_id=rf_2",
            "  replayed=true",
            "\tamount_p=3",
        ],
    ]);
    let answered = agree(
        &msgs,
        |m| debug(plain_answer_line(m)),
        |m| debug(by_fields(m)),
    );
    assert!(answered >= 20, "{answered}");
}

#[test]
fn a_run_start_read_plainly_is_the_run_its_fields_give() {
    fn by_fields(msg: &[u8]) -> Option<&[u8]> {
        let f = Fields::split(msg);
        let run = f.plain.first()?.strip_prefix(b"agent run ")?.trim_ascii();
        let plain_start = f.plain.len() == 2 && f.plain[1] == b"started";
        (plain_start && f.tokens.is_empty()).then_some(run)
    }
    let msgs = spellings(&[
        &["agent run "],
        &[
            "w0r1",
            "",
            "r 1",
            "a\tb",
            "\x0cr",
            "r\x0c",
            "a=b",
            "r  started",
        ],
        GAPS,
        &["started"],
        &["", " ", "  x=1", "d"],
    ]);
    let answered = agree(
        &msgs,
        |m| debug(plain_run_start(m)),
        |m| debug(by_fields(m)),
    );
    assert!(answered >= 4, "{answered}");
    assert_eq!(
        plain_run_start(b"agent run w0r1  started"),
        Some(&b"w0r1"[..])
    );
}

#[test]
fn a_step_ends_plainly_only_spelt_exactly_so() {
    let ok = |msg: &[u8]| plain_step_ok(msg).map(|(run, step)| (run.to_vec(), step));
    assert_eq!(
        ok(b"agent run w0r1  step 12  ok"),
        Some((b"w0r1".to_vec(), 12))
    );
    assert_eq!(
        ok(b"agent run w0r1  step 0  ok"),
        Some((b"w0r1".to_vec(), 0))
    );
    assert_eq!(
        ok(b"agent run r  step 999999999  ok"),
        Some((b"r".to_vec(), 999_999_999))
    );
    for other in [
        &b"agent run w0r1  step 012  ok"[..],
        b"agent run w0r1  step  ok",
        b"agent run   step 1  ok",
        b"agent run w0r1  step 12  ok ",
        b"agent run w0r1  step 12 ok",
        b"agent run w0r1 step 12  ok",
        b"agent run w0r1  step 1x  ok",
        b"agent run w0r1  step zzzzzzzzz  ok",
        b"agent run w0r1  step 12  failed",
        b"agent run a\x0cb  step 1  ok",
        // Ten digits are more than a step number is read with.
        b"agent run r  step 4294967295  ok",
    ] {
        assert_eq!(ok(other), None, "{other:?}");
    }
    // Whenever it answers, the fields say the same.
    fn by_fields(msg: &[u8]) -> Option<(&[u8], u32)> {
        let f = Fields::split(msg);
        let plain_end = f.plain.len() == 3 && f.plain[2] == b"ok" && f.tokens.is_empty();
        plain_end.then(|| agent_step(&f))?
    }
    let msgs = spellings(&[
        &["agent run "],
        &["w0r1", "", "r 1", "a\tb", "\x0cr", "r\x0c"],
        GAPS,
        &["step "],
        &["1", "07", "", "x", "999999999", "4294967295", "4294967296"],
        GAPS,
        &["ok"],
    ]);
    let answered = agree(&msgs, |m| debug(plain_step_ok(m)), |m| debug(by_fields(m)));
    assert_eq!(
        answered, 2,
        "w0r1 with steps 1 and 999999999, two spaces apart"
    );
}
