//! A finding's row of the JSON report, written as serde_json's pretty printer writes the
//! finding's [`FindingReport`](crate::report::FindingReport) two levels deep, but straight
//! from the [`Finding`]: a month's report has tens of thousands of rows, and making each
//! row's report (a string per field and per line of evidence) and walking it through
//! serde's machinery cost three times the writing. The tests hold the two to the same bytes.

use crate::finding::Finding;
use crate::flat_json::first_not_plain;
use crate::report::digits_beyond_doubles;

/// Each input's path as a JSON string, escaped once for every line of evidence citing it.
pub(super) struct QuotedPaths(Vec<Vec<u8>>);

impl QuotedPaths {
    pub(super) fn new(paths: &[&str]) -> Self {
        QuotedPaths(paths.iter().map(|p| quoted(p)).collect())
    }

    fn get(&self, input: u32) -> &[u8] {
        self.0.get(input as usize).map_or(b"\"?\"", Vec::as_slice)
    }
}

/// Appends the row of `f`, from its opening brace to its closing one.
pub(super) fn write_row(f: &Finding, paths: &QuotedPaths, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\n      \"rule\": ");
    string(out, f.rule);
    out.extend_from_slice(b",\n      \"severity\": ");
    string(out, f.severity.as_str());
    out.extend_from_slice(b",\n      \"cause\": ");
    optional(out, f.cause.map(|c| c.as_str()));
    out.extend_from_slice(b",\n      \"order\": ");
    optional(out, f.order.as_deref());
    out.extend_from_slice(b",\n      \"run\": ");
    optional(out, f.run.as_deref());
    out.extend_from_slice(b",\n      \"step\": ");
    match f.step {
        Some(step) => number(out, step),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\n      \"tool\": ");
    optional(out, f.tool.as_deref());
    out.extend_from_slice(b",\n      \"key\": ");
    optional(out, f.key.as_deref());
    out.extend_from_slice(b",\n      \"effects\": ");
    array(out, &f.effects, |out, e| {
        out.extend_from_slice(b"        ");
        string(out, &e.id);
    });
    out.extend_from_slice(b",\n      \"currency\": ");
    optional(out, f.currency.as_ref().map(|c| c.as_str()));
    out.extend_from_slice(b",\n      \"excess_minor\": ");
    match f.excess_minor {
        Some(minor) => number(out, minor),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(digits) = f.excess_minor.and_then(digits_beyond_doubles) {
        out.extend_from_slice(b",\n      \"excess_minor_string\": ");
        string(out, &digits);
    }
    if f.excess_partial() {
        out.extend_from_slice(b",\n      \"excess_partial\": true");
    }
    out.extend_from_slice(b",\n      \"first_effect_at\": ");
    optional(
        out,
        f.effects.first().map(|e| e.created.display()).as_deref(),
    );
    out.extend_from_slice(b",\n      \"last_effect_at\": ");
    optional(
        out,
        f.effects.last().map(|e| e.created.display()).as_deref(),
    );
    out.extend_from_slice(b",\n      \"message\": ");
    string(out, &f.message);
    out.extend_from_slice(b",\n      \"evidence\": ");
    array(out, &f.evidence, |out, l| {
        out.extend_from_slice(b"        {\n          \"path\": ");
        out.extend_from_slice(paths.get(l.input));
        out.extend_from_slice(b",\n          \"line\": ");
        number(out, l.line);
        out.extend_from_slice(b"\n        }");
    });
    out.extend_from_slice(b",\n      \"fingerprint\": ");
    string(out, &f.fingerprint());
    if let Some(at) = f.at {
        out.extend_from_slice(b",\n      \"at\": ");
        string(out, &at.display());
    }
    out.extend_from_slice(b"\n    }");
}

/// A member's array: `[]`, or each item on its own line (`item` writes its indentation).
fn array<T>(out: &mut Vec<u8>, items: &[T], mut item: impl FnMut(&mut Vec<u8>, &T)) {
    if items.is_empty() {
        return out.extend_from_slice(b"[]");
    }
    out.push(b'[');
    for (i, x) in items.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        item(out, x);
    }
    out.extend_from_slice(b"\n      ]");
}

fn optional(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(t) => string(out, t),
        None => out.extend_from_slice(b"null"),
    }
}

fn number(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn quoted(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 2);
    string(&mut out, text);
    out
}

/// `text` as a JSON string, escaped as serde_json escapes it: quotes, backslashes and
/// control characters only, the common ones by letter and the rest as `\u00XX`.
fn string(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = text.as_bytes();
    let (mut run, mut at) = (0, 0);
    loop {
        // Printable ASCII, most of a report, is passed over sixteen bytes at a time; what
        // stops the search is a byte to escape or one to copy as it is (DEL, UTF-8).
        at = first_not_plain(bytes, at);
        let Some(&b) = bytes.get(at) else { break };
        at += 1;
        let letter = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0a => b'n',
            0x0c => b'f',
            0x0d => b'r',
            0x00..=0x1f => b'u',
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..at - 1]);
        run = at;
        out.extend_from_slice(&[b'\\', letter]);
        if letter == b'u' {
            out.extend_from_slice(&[
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Loc;
    use crate::finding::{Cause, EffectRef, Severity};
    use crate::money::{Currency, Money};
    use crate::report::{finding_report, json::pretty_at};
    use crate::time::Timestamp;
    use proptest::prelude::*;
    use serde::Serialize;

    /// The row as serde_json writes the finding's report two levels deep.
    fn by_serde(f: &Finding, paths: &[&str]) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, pretty_at(2));
        finding_report(f, paths).serialize(&mut ser).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn by_hand(f: &Finding, paths: &[&str]) -> String {
        let mut out = Vec::new();
        write_row(f, &QuotedPaths::new(paths), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let every_control: String = (0u8..0x20).map(char::from).collect();
        for text in [
            "",
            "plain",
            "say \"twice\"",
            r"C:\logs\agent.log",
            &every_control,
            "\u{7f} é ü 🦀 \u{2028}",
        ] {
            let mut out = Vec::new();
            string(&mut out, text);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(text).unwrap()
            );
        }
    }

    proptest! {
        /// Escapes anywhere in a long text, before, inside and after whole chunks of
        /// sixteen plain bytes.
        #[test]
        fn long_texts_are_escaped_as_serde_json_escapes_them(
            parts in prop::collection::vec(prop_oneof![
                "[ -~]{0,20}",
                "[\\x00-\\x1f\"\\\\\\x7f]",
                "[é🦀\u{2028}]",
            ], 0..12)
        ) {
            let text: String = parts.concat();
            let mut out = Vec::new();
            string(&mut out, &text);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&text).unwrap());
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9_ .:-]{0,12}",
            any::<String>(),
            Just("a \"quoted\" \\ back\tslash\n".to_string()),
        ]
    }

    prop_compose! {
        fn finding()(
            rule in prop::sample::select(vec!["duplicate-effect", "key-not-enforced"]),
            severity in prop::sample::select(vec![Severity::Info, Severity::Warning, Severity::Error]),
            cause in prop::option::of(prop::sample::select(vec![Cause::Resume, Cause::ClientRetry, Cause::Unknown])),
            order in prop::option::of(text()),
            run in prop::option::of(text()),
            step in prop::option::of(any::<u32>()),
            tool in prop::option::of(text()),
            key in prop::option::of(text()),
            effects in prop::collection::vec((text(), any::<i64>(), any::<i64>()), 0..3),
            currency in prop::option::of(prop::sample::select(vec!["EUR", "GBP", "JPY"])),
            excess in prop::option::of(any::<i128>()),
            message in text(),
            evidence in prop::collection::vec((0u32..3, any::<u32>()), 0..4),
            at in prop::option::of(any::<i64>()),
        ) -> Finding {
            let mut f = Finding::new(rule, severity, message);
            f.cause = cause;
            f.order = order;
            f.run = run;
            f.step = step;
            f.tool = tool;
            f.key = key;
            f.effects = effects
                .into_iter()
                .map(|(id, created, minor)| EffectRef {
                    id,
                    created: Timestamp(created),
                    amount: Some(Money { minor, currency: Currency::parse("EUR").unwrap() }),
                })
                .collect();
            f.currency = currency.and_then(Currency::parse);
            f.excess_minor = excess;
            f.evidence = evidence.into_iter().map(|(input, line)| Loc { input, line }).collect();
            f.at = at.map(Timestamp);
            f
        }
    }

    proptest! {
        #[test]
        fn a_row_by_hand_is_the_row_serde_writes(f in finding()) {
            // The third input is past the list of paths: its evidence names `?`.
            let paths = ["trace \"a\".log", r"logs\payments.log"];
            prop_assert_eq!(by_hand(&f, &paths), by_serde(&f, &paths));
        }
    }
}
