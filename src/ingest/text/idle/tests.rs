use super::*;

#[test]
fn parts_of_a_line_are_text_when_they_lie_within_it_on_character_boundaries() {
    let ascii = b"agent run r1  step 2";
    assert_eq!(
        text_parts(ascii, [&ascii[10..12], &ascii[19..]]),
        Some(["r1", "2"])
    );
    let accented = "run caf\u{e9}  ok".as_bytes();
    assert_eq!(text_parts(accented, [&accented[4..9]]), Some(["caf\u{e9}"]));
    // Half of the `é`.
    assert_eq!(text_parts(accented, [&accented[4..8]]), None);
    assert_eq!(text_parts(b"caf\xe9", [&b"caf\xe9"[..3]]), None);
    // A part from elsewhere is never read as the line's text.
    let elsewhere = b"r1";
    assert_eq!(text_parts(ascii, [&elsewhere[..]]), None);
    assert_eq!(text_parts(&ascii[..12], [&ascii[10..14]]), None);
}

/// The table answers as reading the line would, whether the line is known or new, and
/// after URLs with ids have pushed entries out.
#[test]
fn known_request_lines_answer_as_reading_them_would() {
    let by_reading = |msg: &[u8]| {
        let (method, url) = plain_first_request(msg)?;
        (!url_names_effect(url)).then(|| SAFE_METHODS.contains(&method))
    };
    let mut lines: Vec<Vec<u8>> = vec![
        b"GET https://orders.internal/v1/orders  (attempt 1)".to_vec(),
        b"POST https://mail.internal/v1/emails  (attempt 1)".to_vec(),
        b"POST https://payments.internal/v1/refunds  (attempt 1)".to_vec(),
        b"GET https://orders.internal/v1/orders  (attempt 2)".to_vec(),
        b"DELETE https://x.internal/v1/things  (attempt 1)".to_vec(),
        b"POST https://mail.internal/v1/emails  (attempt 1)  idempotency_key=k".to_vec(),
    ];
    lines.extend((0..20).map(|i| format!("GET https://o/v1/orders/{i}  (attempt 1)").into()));
    let mut table = Recent::default();
    let mut cache = ShapeCache::default();
    for round in 0..3 {
        for line in &lines {
            let known = table.get(line, || plain_request(line, &mut cache));
            assert_eq!(known, by_reading(line), "round {round}: {line:?}");
        }
    }
    assert_eq!(table.known.len(), Recent::<Option<bool>>::MAX);
    assert_eq!(by_reading(&lines[0]), Some(true));
    assert_eq!(by_reading(&lines[1]), Some(false));
    assert_eq!(by_reading(&lines[2]), None);
}

/// A held call's end is recognised exactly when reading the line would give its run and
/// step: other runs and steps, leading zeros, ten digits, whitespace in the run.
#[test]
fn a_call_ends_on_the_lines_plain_step_ok_reads_as_its_own() {
    use super::super::plain::plain_step_ok;
    let runs = ["w0r1", "w0r12", "w0r", "a\x0cb", "a\rb", "run-7"];
    let steps = [0u32, 1, 7, 10, 999_999_999, 1_000_000_000, u32::MAX];
    let mut msgs: Vec<String> = Vec::new();
    for run in runs {
        for digits in [
            "0",
            "1",
            "01",
            "7",
            "10",
            "999999999",
            "1000000000",
            "4294967295",
            "x",
        ] {
            msgs.push(format!("agent run {run}  step {digits}  ok"));
            msgs.push(format!("agent run {run}  step {digits}  ok "));
            msgs.push(format!("agent run {run} step {digits}  ok"));
        }
    }
    let mut ended = 0;
    for run in runs {
        for step in steps {
            let mut idle = IdleCall::default();
            idle.run.push_str(run);
            idle.step = step;
            idle.run_has_blank = run.bytes().any(|b| b.is_ascii_whitespace());
            for msg in &msgs {
                let by_reading = plain_step_ok(msg.as_bytes()) == Some((run.as_bytes(), step));
                assert_eq!(
                    idle.is_end_line(msg.as_bytes()),
                    by_reading,
                    "{run} {step}: {msg:?}"
                );
                ended += usize::from(by_reading);
            }
        }
    }
    // Four runs without whitespace, each ending at steps 0, 1, 7, 10 and 999999999.
    assert_eq!(ended, 20);
}
