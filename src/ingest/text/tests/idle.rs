//! Idle calls held or settled ahead read as the same lines read one by one would.

use super::*;

/// What `cargo fuzz run parse_text` found next: an idle call's tool line held, then a
/// Celery pool process's header line (which moves the lines that follow to its task),
/// then a request. The held call was replayed after the pool's line had moved on, so its
/// tool call took the request back: the request was the idle call's with idle calls
/// dropped and the pool task's without.
#[test]
fn a_pool_line_after_a_held_call_reads_alike_with_and_without_dropping_idle_calls() {
    let bytes = include_bytes!("../testdata/fuzz-celery-pool-after-idle-call.log");
    crate::ingest::selfcheck::check_filter_agrees(
        crate::ingest::Format::Text,
        bytes,
        &ParseOptions::default(),
    );
}

/// A reader that gives one line per read: nothing is ever ahead of the line being read.
struct LineAtATime<'a>(&'a [u8]);

impl Read for LineAtATime<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let line = memchr::memchr(b'\n', self.0).map_or(self.0.len(), |p| p + 1);
        let n = line.min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Calls of every shape near the usual one: plain lookups and emails (settled ahead),
/// refunds, retries, failures, keys, comments, blank lines, sections, time-only stamps
/// in the middle of a call or on its tool call, a step's end for another step, and lines
/// the reader trims (a carriage return, a NUL, a leading blank, a tab after the time) or
/// skips (no blank after the time, a time alone, a line cut inside its time).
fn varied_trace() -> String {
    use std::fmt::Write;
    let mut t = String::from("# date: 2026-11-01\n");
    for i in 0..240u32 {
        let (run, step) = (format!("r{}", i / 4), i % 4 + 1);
        let at = |k: u32| format!("2026-11-01T10:{:02}:{:02}.{:03}Z", i / 60 % 60, i % 60, k);
        let (get, post) = (
            "GET https://orders.internal/v1/orders",
            "POST https://mail.internal/v1/emails",
        );
        let (tool, request) = match i % 3 {
            0 => ("lookup_order", get),
            1 => ("send_email", post),
            _ => ("issue_refund", "POST https://pay.internal/v1/refunds"),
        };
        let call = format!("agent run {run}  step {step}");
        let mut lines = vec![
            format!(
                "{}  {call}  tool={tool}  args={{\"order\":\"A-{i}\"}}",
                at(0)
            ),
            format!("{}  {request}  (attempt 1)", at(1)),
            format!("{}  200 OK", at(2)),
            format!("{}  {call}  ok", at(3)),
        ];
        match i % 23 {
            1 => lines.insert(2, format!("{}  {request}  (attempt 2)", at(1))),
            2 => lines[2] = format!("{}  500 Internal Server Error", at(2)),
            3 => lines.insert(2, "# a note".into()),
            4 => lines.insert(1, String::new()),
            5 => lines[1] = format!("10:00:{:02}.001  {request}  (attempt 1)", i % 60),
            6 => lines[1] = format!("{}  {request}  (attempt 1)  idempotency_key=k{i}", at(1)),
            7 => lines[3] = format!("{}  agent run {run}  step {}  ok", at(3), step + 1),
            8 => lines.insert(0, format!("{}  agent run {run}  started", at(0))),
            9 => lines.insert(3, "--- payments".into()),
            10 => lines.truncate(3),
            11 => lines[2] = format!("{}  201 Created  refund_id=rf_{i}", at(2)),
            12 => lines[0] = lines[0].replacen("2026-11-01T", "", 1).replacen('Z', "", 1),
            13 => lines[1].push('\r'),
            14 => lines[2].push('\0'),
            15 => lines[1].insert(0, ' '),
            16 => lines[3] = lines[3].replacen("Z  ", "Z\t", 1),
            17 => lines[2] = lines[2].replacen("Z  ", "Z", 1),
            18 => lines[2] = at(2),
            19 => lines[1].truncate(15),
            // Lines naming their call, as logs of concurrent runs write them: this call,
            // another step, the step alone.
            20 => {
                lines[1].push_str(&format!("  run={run}  step={step}"));
                lines[2].push_str(&format!("  run={run}  step={step}"));
            }
            21 => lines[2].push_str(&format!("  run={run}  step={}", step + 1)),
            22 => lines[1].push_str(&format!("  step={step}")),
            _ => {}
        }
        for l in lines {
            let _ = writeln!(t, "{l}");
        }
    }
    t
}

/// A Windows-1252 log (a French service's `200 R\xE9ussi`) read whole, with lines ahead,
/// reads as it does a line at a time: the lines ahead are recoded as the line being read
/// is, and counted in the input's note. (They were given as their bytes: an idle call was
/// settled from them, and its answer was missing from the note.)
#[test]
fn windows_1252_lines_settled_ahead_read_as_line_by_line() {
    let trace = varied_trace().into_bytes();
    let mut latin = Vec::new();
    let mut rest = &trace[..];
    while let Some(at) = memchr::memmem::find(rest, b"200 OK") {
        latin.extend_from_slice(&rest[..at]);
        latin.extend_from_slice(b"200 R\xE9ussi");
        rest = &rest[at + 6..];
    }
    latin.extend_from_slice(rest);
    let opts = filtering();
    let whole = parse_input(&mut &latin[..], 0, &opts, true)
        .unwrap()
        .finish();
    let by_line = parse_input(&mut LineAtATime(&latin), 0, &opts, true);
    let by_line = by_line.unwrap().finish();
    assert!(whole.dropped.calls > 20, "{:?}", whole.dropped);
    assert!(whole.stats.notes.iter().any(|n| n.contains("not UTF-8")));
    assert_eq!(format!("{whole:?}"), format!("{by_line:?}"));
}

#[test]
fn idle_calls_settled_ahead_are_settled_as_read_line_by_line() {
    let trace = varied_trace();
    let opts = ParseOptions {
        relevance: Some(crate::relevance::Relevance::default()),
        ..ParseOptions::default()
    };
    for rereadable in [false, true] {
        let whole = parse_input(&mut trace.as_bytes(), 0, &opts, rereadable).unwrap();
        let by_line = parse_input(&mut LineAtATime(trace.as_bytes()), 0, &opts, rereadable);
        let (whole, by_line) = (whole.finish(), by_line.unwrap().finish());
        assert!(whole.dropped.calls > 20, "{:?}", whole.dropped);
        assert_eq!(format!("{whole:?}"), format!("{by_line:?}"), "{rereadable}");
    }
}

/// Gives `p` the tool call of an email of `run`'s step 1 with the three usual lines after
/// it and one more; returns how many lines ahead `p` read.
fn settle_email(p: &mut TextParser, run: &str, eol: &str) -> usize {
    let tool = format!(
        "2026-11-01T00:00:02.546Z  agent run {run}  step 1  tool=send_email  \
         args={{\"order\":\"A-272203\"}}"
    );
    let settled = [
        "2026-11-01T00:00:02.556Z  POST https://mail.internal/v1/emails  (attempt 1)".to_string(),
        "2026-11-01T00:00:02.701Z  200 OK".to_string(),
        format!("2026-11-01T00:00:02.703Z  agent run {run}  step 1  ok"),
    ]
    .map(|l| format!("{l}{eol}"))
    .concat();
    let ahead = format!("{settled}2026-11-01T00:00:04.085Z  agent run {run}  step 2  ok{eol}");
    let end = (tool.len() + eol.len()) as u64;
    let newlines = newlines_of(ahead.as_bytes());
    p.line(
        1,
        0..end,
        tool.as_bytes(),
        Ahead::new(ahead.as_bytes(), &newlines),
    )
}

fn filtering() -> ParseOptions {
    ParseOptions {
        relevance: Some(crate::relevance::Relevance::default()),
        ..ParseOptions::default()
    }
}

/// The usual idle call is settled from the lines ahead of its tool call, with LF or CRLF
/// endings: the reader skips the three lines it read. (The other tests hold the shortcut
/// to reading line by line; this one, that it is taken at all.)
#[test]
fn a_usual_idle_call_is_settled_from_the_lines_ahead() {
    for eol in ["\n", "\r\n"] {
        let mut p = TextParser::new(0, &filtering(), true);
        assert_eq!(settle_email(&mut p, "w0r1", eol), 3, "{eol:?}");
        let out = p.out.finish();
        assert_eq!((out.dropped.calls, out.dropped.events), (1, 4), "{eol:?}");
    }
}

/// An idle call whose request and answer name it (`run=R  step=N`, as logs of concurrent
/// runs write them) is settled ahead as the unnamed one is; one whose answer names another
/// step, or names its own with a leading zero, is left to the lines' reading.
#[test]
fn an_idle_call_whose_lines_name_it_is_settled_ahead() {
    let lines = |names: [&str; 2]| {
        [
            format!(
                "2026-11-01T00:00:02.556Z  POST https://mail.internal/v1/emails  (attempt 1){}",
                names[0]
            ),
            format!("2026-11-01T00:00:02.701Z  200 OK{}", names[1]),
            "2026-11-01T00:00:02.703Z  agent run w0r1  step 1  ok".to_string(),
        ]
        .map(|l| l + "\n")
        .concat()
    };
    let own = "  run=w0r1  step=1";
    let cases = [
        ([own, own], 3),
        (["", own], 3),
        ([own, ""], 3),
        ([own, "  run=w0r1  step=2"], 0),
        ([own, "  run=w0r2  step=1"], 0),
        (["  run=w0r1  step=01", ""], 0),
        (["  step=1  run=w0r1", ""], 0),
    ];
    for (names, read) in cases {
        let tool = "2026-11-01T00:00:02.546Z  agent run w0r1  step 1  tool=send_email  args={}";
        let ahead = lines(names);
        let newlines = newlines_of(ahead.as_bytes());
        let mut p = TextParser::new(0, &filtering(), true);
        let end = tool.len() as u64 + 1;
        let got = p.line(
            1,
            0..end,
            tool.as_bytes(),
            Ahead::new(ahead.as_bytes(), &newlines),
        );
        assert_eq!(got, read, "{names:?}");
    }
}

/// Calls of one run, of another, and of the first again, one after another: each is
/// settled ahead, whichever run the call before it was of.
#[test]
fn calls_of_runs_in_turn_are_each_settled_ahead() {
    let mut p = TextParser::new(0, &filtering(), true);
    let runs = ["w0r1", "w0r1", "w0r2", "w0r10", "w0r1", "x"];
    for run in runs {
        assert_eq!(settle_email(&mut p, run, "\n"), 3, "{run}");
    }
    assert_eq!(p.out.finish().dropped.calls, runs.len() as u64);
}

/// A proxy's `200 Connection established` in an idle call: the shortcut that settles idle
/// calls on their bytes refuses it as the general reading does (it took it for the call's
/// answer, so dropping idle calls changed the accounting).
#[test]
fn a_tunnel_reply_reads_alike_with_and_without_dropping_idle_calls() {
    for tunnel in [
        "200 Connection established",
        "200 Connection established  via proxy",
    ] {
        let log = format!(
            "2026-11-03T10:00:00Z  agent run r1  step 1  tool=lookup_order  args={{\"order\":\"A-1\"}}\n\
             2026-11-03T10:00:01Z  GET https://orders.internal/v1/orders/A-1  (attempt 1)\n\
             2026-11-03T10:00:02Z  {tunnel}\n\
             2026-11-03T10:00:03Z  agent run r1  step 1  ok\n"
        );
        let p = run(&log);
        assert_eq!((p.stats.events, p.stats.ignored), (3, 1), "{tunnel}");
        crate::ingest::selfcheck::check_filter_agrees(
            crate::ingest::Format::Text,
            log.as_bytes(),
            &ParseOptions::default(),
        );
    }
}
