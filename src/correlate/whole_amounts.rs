//! Amounts written as bare whole numbers (`"amount": 4500` in GBP): Stripe's convention
//! and a JavaScript logger's `45` for 45.00 look alike, so the parsers keep the number and
//! leave the amount unknown. A service writes every amount one way, and a call it matched
//! says which: the call asked for 4500 minor units, and the service wrote 4500 (minor
//! units) or 45 (major units). Each log whose matched effects agree on the unit reads its
//! whole numbers in it (a rotated log's files, one log, learn together). A log whose
//! effects disagree, or that matched no call with an amount, keeps them unknown: another
//! log's unit says nothing of it (a table of pence beside a JavaScript service writing
//! pounds; review36 M2). A guess stays out: read the wrong way, an amount is off a
//! hundredfold. An input whose unit the user declared (`--whole-amounts`) had its whole
//! numbers read so as the model was built, and has none left here.

use super::{EffectRec, Model, WrittenAmount};
use crate::money::{Money, WholeUnit};
use std::collections::BTreeMap;

/// How an input writes its whole numbers, as far as its matched effects tell.
#[derive(Clone, Copy, Default)]
struct Seen {
    minor: bool,
    major: bool,
}

/// Gives each effect written as a whole number its amount, where its log's matched
/// effects say in which unit that log writes them.
pub(super) fn learn_whole_amounts(model: &mut Model) {
    let mut seen: BTreeMap<u32, Seen> = BTreeMap::new();
    for e in &model.effects {
        let (Some(whole), Some(id)) = (e.whole(), e.matched) else {
            continue;
        };
        let Some(asked) = model.dispatches[id.dispatch()].amount.map(Money::size) else {
            continue;
        };
        let unit = seen.entry(model.log_of(input_of(e))).or_default();
        if WholeUnit::Minor.read(whole) == Some(asked) {
            unit.minor = true;
        } else if WholeUnit::Major.read(whole) == Some(asked) {
            unit.major = true;
        }
    }
    if seen.is_empty() {
        return;
    }
    let logs = std::mem::take(&mut model.logs);
    let log_of = |input: u32| logs.get(input as usize).copied().unwrap_or(input);
    for e in &mut model.effects {
        let Some(whole) = e.whole() else {
            continue;
        };
        let learned = match seen.get(&log_of(input_of(e))) {
            Some(Seen {
                minor: true,
                major: false,
            }) => WholeUnit::Minor,
            Some(Seen {
                minor: false,
                major: true,
            }) => WholeUnit::Major,
            _ => WholeUnit::Auto,
        };
        if let Some(money) = learned.read(whole) {
            e.written = Some(WrittenAmount::new(money, true));
        }
    }
    model.logs = logs;
}

fn input_of(e: &EffectRec) -> u32 {
    e.locs.first().map_or(u32::MAX, |l| l.input)
}

#[cfg(test)]
mod tests {
    use crate::correlate::{CorrelateOptions, correlate};
    use crate::ingest::{ParseOptions, text};

    /// The amounts the effects of a text trace end with, by id.
    fn amounts(trace: &str) -> Vec<(String, Option<i64>)> {
        let parsed = text::parse(&mut trace.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let model = correlate(parsed.events, &CorrelateOptions::default());
        let mut out: Vec<_> = (model.effects.iter())
            .map(|e| (e.id.to_string(), e.amount().map(|m| m.minor)))
            .collect();
        out.sort();
        out
    }

    /// A call asking for 4500 pence, its refund logged as `amount=WRITTEN`, and an
    /// untraced refund of another order logged as `amount=OTHER` by the same service.
    fn trace(written: &str, other: &str) -> String {
        format!(
            "# date: 2026-11-03\n\
             14:02:11.402  agent run r  step 4  tool=issue_refund  args={{\"order\":\"A-1\",\"amount_p\":4500}}\n\
             14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)\n\
             14:02:12.107  201 Created  refund_id=re_1\n\
             14:02:12.109  agent run r  step 4  ok\n\
             --- payments ---\n\
             14:02:11.501  refund re_1  order A-1  amount={written}  currency=GBP\n\
             14:30:00.000  refund re_2  order B-2  amount={other}  currency=GBP\n"
        )
    }

    #[test]
    fn the_call_an_effect_matched_tells_the_unit_its_input_writes() {
        // Minor units: 4500 is what the call asked for.
        let minor = amounts(&trace("4500", "1250"));
        assert_eq!(
            minor,
            [("re_1".into(), Some(4500)), ("re_2".into(), Some(1250))]
        );
        // Major units: 45 pounds is 4500 pence.
        let major = amounts(&trace("45", "12"));
        assert_eq!(
            major,
            [("re_1".into(), Some(4500)), ("re_2".into(), Some(1200))]
        );
        // Neither: the number says nothing of the unit, and stays unknown.
        let neither = amounts(&trace("99", "12"));
        assert_eq!(neither, [("re_1".into(), None), ("re_2".into(), None)]);
        // A decimal amount is no whole number: read as written, teaching nothing.
        let decimal = amounts(&trace("45.00", "12"));
        assert_eq!(
            decimal,
            [("re_1".into(), Some(4500)), ("re_2".into(), None)]
        );
    }

    /// A rotated service log: one file's matched refund teaches the other file's unit; two
    /// logs do not (review36 M2: a table of pence took a JavaScript service's pounds).
    #[test]
    fn a_logs_files_learn_together_and_other_logs_not() {
        let agent = "# date: 2026-11-03\n\
            14:02:11.402  agent run r  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}\n\
            14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)\n\
            14:02:12.107  201 Created  refund_id=re_1\n";
        let older =
            "# date: 2026-11-03\n14:02:11.501  refund re_1  order A-1  amount=45  currency=GBP\n";
        let newer =
            "# date: 2026-11-03\n14:40:00.000  refund re_2  order B-2  amount=12  currency=GBP\n";
        let opts = ParseOptions::default();
        let mut events = Vec::new();
        for (input, text) in [agent, older, newer].into_iter().enumerate() {
            let parsed = text::parse(&mut text.as_bytes(), input as u32, &opts).unwrap();
            events.extend(parsed.events);
        }
        events.sort_by_key(|e| (e.at, e.loc));
        let amounts = |logs: Vec<u32>| -> Vec<(String, Option<i64>)> {
            let opts = CorrelateOptions {
                logs,
                ..CorrelateOptions::default()
            };
            let model = correlate(events.clone(), &opts);
            (model.effects.iter())
                .map(|e| (e.id.to_string(), e.amount().map(|m| m.minor)))
                .collect()
        };
        let read =
            |a: Option<i64>, b: Option<i64>| vec![("re_1".to_string(), a), ("re_2".to_string(), b)];
        // `payments.log.1` and `payments.log`: one log.
        assert_eq!(amounts(vec![0, 1, 1]), read(Some(4500), Some(1200)));
        // Two logs: the second matched no call, and says nothing of its unit.
        assert_eq!(amounts(vec![0, 1, 2]), read(Some(4500), None));
    }

    #[test]
    fn an_input_whose_effects_disagree_on_the_unit_keeps_them_unknown() {
        let trace = "# date: 2026-11-03\n\
            14:02:11.402  agent run r  step 4  tool=issue_refund  args={\"order\":\"A-1\",\"amount_p\":4500}\n\
            14:02:11.418  POST https://payments.internal/v1/refunds  (attempt 1)\n\
            14:02:12.107  201 Created  refund_id=re_1\n\
            14:05:11.402  agent run r  step 5  tool=issue_refund  args={\"order\":\"A-2\",\"amount_p\":4500}\n\
            14:05:11.418  POST https://payments.internal/v1/refunds  (attempt 1)\n\
            14:05:12.107  201 Created  refund_id=re_2\n\
            --- payments ---\n\
            14:02:11.501  refund re_1  order A-1  amount=4500  currency=GBP\n\
            14:05:11.501  refund re_2  order A-2  amount=45  currency=GBP\n";
        assert_eq!(
            amounts(trace),
            [("re_1".into(), None), ("re_2".into(), None)]
        );
    }
}
