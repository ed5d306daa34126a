//! CSV output for spreadsheets (SPEC §6): one row per finding, amounts in major units beside
//! their currency, effect ids `;`-joined, RFC 4180 quoting.

use super::{Report, inert, money};

pub const HEADER: [&str; 13] = [
    "rule",
    "severity",
    "cause",
    "order",
    "run",
    "step",
    "tool",
    "effects",
    "currency",
    "excess",
    "first_effect_at",
    "last_effect_at",
    "message",
];

pub fn render(report: &Report) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // Writing into a Vec cannot fail; a failure here would be a bug in the csv crate.
    let _ = w.write_record(HEADER);
    for f in &report.findings {
        let excess = money(f.currency.as_deref(), f.excess_minor)
            .map(|m| m.major_string())
            .unwrap_or_default();
        let _ = w.write_record([
            f.rule.as_str(),
            f.severity.as_str(),
            f.cause.as_deref().unwrap_or(""),
            &inert(f.order.as_deref().unwrap_or("")),
            &inert(f.run.as_deref().unwrap_or("")),
            &f.step.map(|s| s.to_string()).unwrap_or_default(),
            &inert(f.tool.as_deref().unwrap_or("")),
            &inert(&f.effects.join(";")),
            f.currency.as_deref().unwrap_or(""),
            &excess,
            f.first_effect_at.as_deref().unwrap_or(""),
            f.last_effect_at.as_deref().unwrap_or(""),
            &inert(&f.message),
        ]);
    }
    w.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{EffectRef, Finding, Severity};
    use crate::money::{Currency, Money};
    use crate::report::build;
    use crate::time::Timestamp;

    #[test]
    fn text_from_the_logs_cannot_be_a_formula() {
        let mut f = Finding::new("duplicate-effect", Severity::Error, "-1 refund".into());
        f.order = Some(r#"=HYPERLINK("http://x.example/","click")"#.into());
        f.run = Some("@SUM(A1)".into());
        f.tool = Some("issue_refund".into());
        let csv = String::from_utf8(render(&build(vec![], vec![f], Default::default()))).unwrap();
        let row: Vec<String> = csv::Reader::from_reader(csv.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap()
            .iter()
            .map(String::from)
            .collect();
        assert_eq!(row[3], r#"'=HYPERLINK("http://x.example/","click")"#);
        assert_eq!(row[4], "'@SUM(A1)");
        assert_eq!(row[6], "issue_refund");
        assert_eq!(row[12], "'-1 refund");
    }

    #[test]
    fn one_row_per_finding_with_major_units_and_joined_effects() {
        let mut f = Finding::new(
            "duplicate-effect",
            Severity::Error,
            "two, \"quoted\"".into(),
        );
        f.order = Some("A-1".into());
        f.step = Some(4);
        let jpy = Currency::parse("JPY").unwrap();
        for (id, ms) in [("rf_1", 1000), ("rf_2", 2000)] {
            f.effects.push(EffectRef {
                id: id.into(),
                created: Timestamp::from_millis(ms),
                amount: Some(Money::new(4500, jpy)),
            });
        }
        f.currency = Some(jpy);
        f.excess_minor = Some(4500);
        let out = String::from_utf8(render(&build(vec![], vec![f], Default::default()))).unwrap();
        let mut lines = out.lines();
        assert_eq!(lines.next().unwrap(), HEADER.join(","));
        assert_eq!(
            lines.next().unwrap(),
            "duplicate-effect,error,,A-1,,4,,rf_1;rf_2,JPY,4500,00:00:01.000,00:00:02.000,\"two, \"\"quoted\"\"\""
        );
        assert!(lines.next().is_none());
    }
}
