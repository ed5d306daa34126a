//! Logs that several runs share: calls' lines interleaved, most naming their call, runs that
//! crash and resume and send an email again. Dropping idle calls while reading (and setting
//! their emails aside as places in the file, read again for resumed runs) must give the
//! report `--keep-idle-calls` gives, in text and in JSON Lines.

use assert_cmd::Command;
use proptest::prelude::*;

/// One call's lines, as (run, step, what) with `what` one of the line kinds below.
#[derive(Clone, Debug)]
enum Line {
    Tool(&'static str, &'static str),
    Request(&'static str, &'static str, bool),
    Answer(bool),
    End,
    Crashed,
    Resumed,
}

#[derive(Clone, Debug)]
struct Call {
    run: usize,
    lines: Vec<Line>,
}

const TOOLS: [(&str, &str, &str, &str); 3] = [
    (
        "lookup_order",
        r#"{"order":"A-1"}"#,
        "GET",
        "https://orders.internal/v1/orders",
    ),
    (
        "send_email",
        r#"{"order":"A-1"}"#,
        "POST",
        "https://mail.internal/v1/emails",
    ),
    (
        "issue_refund",
        r#"{"order":"A-1","amount_p":4500}"#,
        "POST",
        "https://payments.internal/v1/refunds",
    ),
];

/// A call of `run`: its tool, whether its request and answer name it, and whether it ends
/// with a crash and a resume instead of its step's end.
fn call() -> impl Strategy<Value = Call> {
    (0..3usize, 0..3usize, any::<bool>(), any::<bool>(), 0..8u8).prop_map(
        |(run, tool, named, answer_named, fate)| {
            let (name, args, method, url) = TOOLS[tool];
            let mut lines = vec![
                Line::Tool(name, args),
                Line::Request(method, url, named),
                Line::Answer(answer_named),
            ];
            lines.push(if fate == 0 { Line::Crashed } else { Line::End });
            if fate == 0 {
                lines.push(Line::Resumed);
            }
            Call { run, lines }
        },
    )
}

/// Calls interleaved: `picks` says, line by line, which open call writes next.
fn trace() -> impl Strategy<Value = Vec<(usize, usize, Line)>> {
    (
        prop::collection::vec(call(), 1..10),
        prop::collection::vec(any::<prop::sample::Index>(), 64),
    )
        .prop_map(|(calls, picks)| {
            let mut steps = [0usize; 3];
            let numbered: Vec<(usize, usize, Vec<Line>)> = calls
                .into_iter()
                .map(|c| {
                    steps[c.run] += 1;
                    (c.run, steps[c.run], c.lines)
                })
                .collect();
            let mut next = vec![0usize; numbered.len()];
            let mut out = Vec::new();
            let mut pick = picks.iter().cycle();
            // Two calls open at a time at most, in order, so that a run's steps follow one
            // another as an agent's do.
            let mut open: Vec<usize> = Vec::new();
            let mut waiting = 0..numbered.len();
            loop {
                while open.len() < 2 {
                    match waiting.next() {
                        Some(i) => open.push(i),
                        None => break,
                    }
                }
                if open.is_empty() {
                    break;
                }
                let k = pick.next().expect("cycled").index(open.len());
                let i = open[k];
                let (run, step, lines) = &numbered[i];
                out.push((*run, *step, lines[next[i]].clone()));
                next[i] += 1;
                if next[i] == lines.len() {
                    open.remove(k);
                }
            }
            out
        })
}

fn text(trace: &[(usize, usize, Line)]) -> String {
    let mut s = String::new();
    for (i, (run, step, line)) in trace.iter().enumerate() {
        let at = format!("2026-11-03T10:{:02}:{:02}.000Z", i / 60, i % 60);
        let names = format!("  run=r{run}  step={step}");
        let msg = match line {
            Line::Tool(tool, args) => {
                format!("agent run r{run}  step {step}  tool={tool}  args={args}")
            }
            Line::Request(method, url, named) => {
                format!(
                    "{method} {url}  (attempt 1){}",
                    if *named { names.as_str() } else { "" }
                )
            }
            Line::Answer(named) => format!("200 OK{}", if *named { names.as_str() } else { "" }),
            Line::End => format!("agent run r{run}  step {step}  ok"),
            Line::Crashed => format!("agent run r{run}  crashed"),
            Line::Resumed => format!("agent run r{run}  resumed"),
        };
        s.push_str(&format!("{at}  {msg}\n"));
    }
    s
}

fn json_lines(trace: &[(usize, usize, Line)]) -> String {
    let mut s = String::new();
    for (i, (run, step, line)) in trace.iter().enumerate() {
        let at = format!("2026-11-03T10:{:02}:{:02}.000Z", i / 60, i % 60);
        let call = format!(r#""run":"r{run}","step":{step}"#);
        let body = match line {
            Line::Tool(tool, args) => {
                format!(r#""type":"tool_call",{call},"tool":"{tool}","args":{args}"#)
            }
            Line::Request(method, url, _) => {
                format!(r#""type":"attempt",{call},"attempt":1,"method":"{method}","url":"{url}""#)
            }
            Line::Answer(_) => format!(r#""type":"response",{call},"status":200"#),
            Line::End => format!(r#""type":"step_end",{call},"status":"ok""#),
            Line::Crashed => format!(r#""type":"run","run":"r{run}","event":"crashed""#),
            Line::Resumed => format!(r#""type":"run","run":"r{run}","event":"resumed""#),
        };
        s.push_str(&format!(r#"{{"ts":"{at}",{body}}}"#));
        s.push('\n');
    }
    s
}

fn report(path: &std::path::Path, keep: bool) -> Vec<u8> {
    let mut cmd = Command::cargo_bin("idem-audit").unwrap();
    cmd.arg("scan")
        .arg(path)
        .args(["--format", "json", "--fail-on", "never"]);
    if keep {
        cmd.arg("--keep-idle-calls");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn shared_logs_report_as_with_every_call_kept(trace in trace()) {
        let dir = tempfile::tempdir().unwrap();
        for (name, body) in [("agent.log", text(&trace)), ("agent.jsonl", json_lines(&trace))] {
            let path = dir.path().join(name);
            std::fs::write(&path, &body).unwrap();
            let (dropped, kept) = (report(&path, false), report(&path, true));
            prop_assert!(dropped == kept, "{}:\n{}\n{}\n---\n{}", name, body,
                String::from_utf8_lossy(&dropped), String::from_utf8_lossy(&kept));
        }
    }
}

/// The generator makes what the property is about: emails of runs that resume, set aside
/// and read again, in some cases.
#[test]
fn some_traces_resume_a_run_that_sent_an_email() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let resumed_after_email = (0..200)
        .filter(|_| {
            let t = trace().new_tree(&mut runner).unwrap().current();
            t.iter().enumerate().any(|(i, (run, _, l))| {
                matches!(l, Line::Resumed)
                    && t[..i]
                        .iter()
                        .any(|(r, _, l)| r == run && matches!(l, Line::Tool("send_email", _)))
            })
        })
        .count();
    assert!(resumed_after_email > 20, "{resumed_after_email}");
}
