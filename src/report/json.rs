//! JSON output: the serde form of [`Report`], pretty-printed, so tests can parse it back.

use super::{Report, finding_report, input_paths};
use crate::finding::Finding;
use serde::ser::{Serialize, SerializeStruct, Serializer};

pub fn render(report: &Report) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to memory fails only if serialising does, and a report always serialises.
    write(report, &mut out).unwrap_or_default();
    out
}

/// Writes the report to `out` as it serialises, with a final newline.
pub fn write(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}

/// Writes `report` (made by [`super::summarise`], without rows) with a row for each of
/// `findings`, each row made as it is written: the same bytes as [`write()`] of the report
/// with its rows, without a month's rows in memory at once.
pub fn write_with_rows(
    report: &Report,
    findings: &[Finding],
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let streamed = Streamed { report, findings };
    serde_json::to_writer_pretty(&mut *out, &streamed)?;
    out.write_all(b"\n")
}

/// [`Report`]'s fields in its order, with `findings` as rows made one at a time.
struct Streamed<'a> {
    report: &'a Report,
    findings: &'a [Finding],
}

impl Serialize for Streamed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.report;
        let mut st = s.serialize_struct("Report", 5)?;
        st.serialize_field("schema", &r.schema)?;
        st.serialize_field("inputs", &r.inputs)?;
        st.serialize_field("summary", &r.summary)?;
        st.serialize_field("findings", &Rows(self))?;
        st.serialize_field("metrics", &r.metrics)?;
        st.end()
    }
}

struct Rows<'s, 'a>(&'s Streamed<'a>);

impl Serialize for Rows<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let paths = input_paths(&self.0.report.inputs);
        let rows = self.0.findings.iter().map(|f| finding_report(f, &paths));
        s.collect_seq(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use crate::report::{InputReport, build, summarise};

    #[test]
    fn rows_written_as_made_are_the_report_with_its_rows() {
        let input = InputReport {
            path: "trace.log".into(),
            format: Some("text".into()),
            lines: 3,
            events: 2,
            ignored: 1,
            skipped: 0,
            problems: Vec::new(),
            note: None,
        };
        let mut findings = Vec::new();
        for order in ["A-1", "B-2"] {
            let mut f = Finding::new(
                "duplicate-effect",
                Severity::Error,
                format!("{order} twice"),
            );
            f.order = Some(order.into());
            f.evidence.push(crate::event::Loc { input: 0, line: 2 });
            findings.push(f);
        }
        let whole = render(&build(
            vec![input.clone()],
            findings.clone(),
            Default::default(),
        ));
        let head = summarise(vec![input], &findings, Default::default());
        let mut streamed = Vec::new();
        write_with_rows(&head, &findings, &mut streamed).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(whole).unwrap()
        );
        assert!(
            String::from_utf8(render(&head))
                .unwrap()
                .contains("\"findings\": []")
        );
    }
}
