//! A line cut short (the input's last line without its end: a writer still at work, a crash,
//! a container runtime's first parts of a split line) may end inside a value: `refund rf_1
//! order A-` was `order A-88214`. Whether a last line lost its end or only its newline cannot
//! be told from the line alone: a log written by `"\n".join(lines)` ends so, whole. So a value
//! is taken as cut only when it visibly stops mid-way, on a joining character (`A-`, `rf_`,
//! `k-12.`, `acct/`): it is then dropped, the event keeps the rest of the line and the line is
//! warned of; an event that cannot stand without it (an effect's id, a tool's name) is no
//! event, and the line is skipped as cut short, as a cut line that reads as nothing is. A
//! last word that looks whole (`A-8821`, `amount_p=45`) is read as written: a cut there looks
//! like a whole value, and dropping every last value of every file without its newline would
//! lose the orders of whole logs far more often than it saves a cut one.

use crate::event::EventKind;
use crate::money::Money;

/// What is left of an event read from a line cut short.
#[derive(Debug, PartialEq)]
pub(crate) enum Cut {
    /// Nothing it holds ran to the cut.
    Whole,
    /// These of its values ran to the cut and were dropped.
    Dropped(Vec<&'static str>),
    /// What it needs ran to the cut: no event.
    Unreadable,
}

/// The word a line cut short visibly ends inside: what follows its last blank, `=`, `:` or
/// quote, when the line's last byte joins the parts of an id (`-`, `_`, `.`, `/`, `+`, `#`,
/// `@`). `None` otherwise: a line ending after a blank, a closing quote or bracket, or a
/// letter or digit ended no value there that can be told.
pub(crate) fn word_at_cut(line: &[u8]) -> Option<&str> {
    let last = *line.last()?;
    if !b"-_./+#@".contains(&last) {
        return None;
    }
    let start = line
        .iter()
        .rposition(|b| b.is_ascii_whitespace() || b"=:\"'".contains(b))
        .map_or(0, |i| i + 1);
    std::str::from_utf8(&line[start..]).ok()
}

/// Drops from `kind` the values that are `word`, the word the line was cut inside
/// ([`word_at_cut`]).
pub(crate) fn drop_cut_values(kind: &mut EventKind, word: &str) -> Cut {
    let mut dropped = Vec::new();
    let mut drop = |value: &mut Option<crate::event::Text>, name: &'static str| {
        if value.as_deref() == Some(word) {
            *value = None;
            dropped.push(name);
        }
    };
    match kind {
        EventKind::Effect(e) => {
            if &*e.id == word {
                return Cut::Unreadable;
            }
            drop(&mut e.order, "order");
            drop(&mut e.key, "idempotency key");
            for (amount, name) in [(&mut e.amount, "amount"), (&mut e.whole, "amount")] {
                if amount.is_some_and(|m| is_amount_written(word, m)) {
                    *amount = None;
                    dropped.push(name);
                }
            }
        }
        EventKind::Response(r) => drop(&mut r.effect_id, "effect id"),
        EventKind::Attempt(a) => {
            drop(&mut a.key, "idempotency key");
            // The request had a key, whatever it was: unknown, not absent.
            a.key_unseen |= dropped.contains(&"idempotency key");
        }
        EventKind::Replay(r) => {
            drop(&mut r.effect_id, "effect id");
            drop(&mut r.key, "idempotency key");
            if r.effect_id.is_none() && r.key.is_none() {
                return Cut::Unreadable;
            }
        }
        EventKind::ToolCall(t) if &*t.tool == word || &*t.call.run == word => {
            return Cut::Unreadable;
        }
        EventKind::StepEnd(s) if &*s.call.run == word => return Cut::Unreadable,
        _ => {}
    }
    dropped.dedup();
    match dropped.is_empty() {
        true => Cut::Whole,
        false => Cut::Dropped(dropped),
    }
}

/// Why a line cut short is read without `dropped`, the values `word` gave.
pub(crate) fn warning(word: &str, dropped: &[&str]) -> String {
    format!(
        "cut short inside `{word}`: the line's last value may be part of a longer one, so its {} \
         is not read",
        dropped.join(" and ")
    )
}

/// Whether `word` is an amount as written that reads as `amount`: a number (`4500`,
/// `45.00`, `4500p`, `£45.00`) equal to it in minor units or in major units of any usual
/// scale. A cut `amount_p=45` read 45p.
fn is_amount_written(word: &str, amount: Money) -> bool {
    let number = word
        .trim_start_matches(['£', '$', '€'])
        .trim_end_matches('p');
    let number = number.replace(',', "");
    let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 4 {
        return false;
    }
    let Ok(whole) = whole.parse::<i64>() else {
        return false;
    };
    let fraction_value = fraction.parse::<i64>().unwrap_or(0);
    (0..=3u32).any(|exp| {
        let scale = 10i64.pow(exp);
        let places = fraction.len() as u32;
        places <= exp
            && whole
                .checked_mul(scale)
                .and_then(|w| w.checked_add(fraction_value * 10i64.pow(exp - places)))
                == Some(amount.minor)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Currency;

    #[test]
    fn the_word_a_line_is_cut_inside() {
        fn word(line: &str) -> Option<&str> {
            word_at_cut(line.as_bytes())
        }
        assert_eq!(word("14:02:23.088  refund rf_9KQ2  order A-"), Some("A-"));
        assert_eq!(
            word("refund created refund_id=re_1 key=k-12f0-"),
            Some("k-12f0-")
        );
        assert_eq!(word("{\"order\":\"A-"), Some("A-"));
        // Cut after a blank or a closing quote or bracket, or after what may be a whole
        // value's last letter or digit: no value known to be cut.
        for whole in [
            "refund rf_9KQ2  ",
            "order='A-1'",
            "args={\"a\":1}",
            "x=(1)",
            "order A-88214",
            "amount_p=45",
        ] {
            assert_eq!(word(whole), None, "{whole}");
        }
    }

    #[test]
    fn an_amount_as_written() {
        let gbp = |minor| Money::new(minor, Currency::GBP);
        for (word, minor) in [
            ("4500p", 4500),
            ("45.00", 4500),
            ("45", 4500),
            ("45", 45),
            ("£45.00", 4500),
            ("4,500", 4500),
        ] {
            assert!(is_amount_written(word, gbp(minor)), "{word} {minor}");
        }
        for (word, minor) in [("45", 4501), ("A-1", 4500), ("45.5.0", 4550), ("", 0)] {
            assert!(!is_amount_written(word, gbp(minor)), "{word} {minor}");
        }
    }

    /// What a text log's last line gives, ended or cut short where it stops, and the
    /// warnings and skipped lines it makes.
    fn read_last(line: &str, ended: bool) -> (Vec<String>, u64, u64) {
        let head = "14:02:11.000  agent run 7f3a  step 4  tool=issue_refund  args={\"order\":\"A-1\"}\n\
                    14:02:11.100  POST https://pay/v1/refunds  (attempt 1)  idempotency_key=k-1\n";
        let text = format!("{head}{line}{}", if ended { "\n" } else { "" });
        let opts = crate::ingest::ParseOptions::default();
        let p = crate::ingest::text::parse(&mut text.as_bytes(), 0, &opts).unwrap();
        let last = (p.events.iter())
            .filter(|e| e.loc.line == 3)
            .map(|e| format!("{:?}", e.kind));
        (last.collect(), p.stats.warned, p.stats.skipped)
    }

    /// An id or key the cut visibly ran into is dropped and warned of; an effect whose
    /// id it ran into, or a tool call whose tool, is no event and skipped as cut short. The
    /// same line ended, or cut after a blank, is read whole.
    #[test]
    fn values_the_cut_ran_into_are_not_read() {
        let cases = [
            ("14:02:12.000  refund rf_1  4500p  order A-", "order: Some"),
            (
                "14:02:12.000  refund rf_1  order A-88214  key=k-1f-",
                "key: Some",
            ),
            (
                "14:02:12.000  201 Created  refund_id=rf_",
                "effect_id: Some",
            ),
            (
                "14:02:12.000  POST https://pay/v1/refunds  (attempt 2)  idempotency_key=k-",
                "key: Some",
            ),
            (
                "14:02:12.000  refund replayed  refund_id=rf_1  key=k-",
                "key: Some",
            ),
        ];
        for (line, whole) in cases {
            let (ended, warned, _) = read_last(line, true);
            assert!(ended[0].contains(whole), "{line}: {ended:?}");
            assert_eq!(warned, 0, "{line}");
            let (cut, warned, skipped) = read_last(line, false);
            assert_eq!((cut.len(), warned, skipped), (1, 1, 0), "{line}: {cut:?}");
            assert!(!cut[0].contains(whole), "{line}: {cut:?}");
            // Cut after a blank: the value ended there.
            let (blank, warned, _) = read_last(&format!("{line}  "), false);
            assert_eq!((blank, warned), (ended, 0), "{line}");
        }
        // What the event needs: no event, the line skipped as cut short.
        for line in [
            "14:02:12.000  refund created  order A-88214  4500p  refund_id=rf_",
            "14:02:12.000  agent run 7f3a  step 5  args={\"order\":\"A-2\"}  tool=issue_",
        ] {
            let (ended, _, _) = read_last(line, true);
            assert_eq!(ended.len(), 1, "{line}: {ended:?}");
            assert_eq!(read_last(line, false), (vec![], 0, 1), "{line}");
        }
    }

    /// A last line without its newline whose last value looks whole (a log written with
    /// `"\n".join(lines)`) is read as it would be with its newline, and not warned of.
    #[test]
    fn a_whole_looking_last_value_is_read_as_written() {
        for line in [
            "14:02:12.000  refund rf_1  4500p  order A-88214",
            "14:02:12.000  refund rf_1  order A-88214  amount_p=45",
            "14:02:12.000  201 Created  refund_id=rf_1",
            "14:02:12.000  refund replayed  refund_id=rf_1  key=k-1",
        ] {
            assert_eq!(read_last(line, false), read_last(line, true), "{line}");
        }
    }
}
