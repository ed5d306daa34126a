//! `--whole-amounts [INPUT=]UNIT` (and the config file's `whole-amounts`): the unit the
//! user declares for amounts written as bare whole numbers (`"amount": 4500` GBP), for every
//! input or for one (`payments.log=minor`, named as `--input-tz` names inputs). A number of
//! a format that says its unit (Stripe's objects, `amount_minor`, `45.00`) is not touched.

use crate::ingest::ParseOptions;
use crate::money::WholeUnit;

/// The declarations, file entries first, then the flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WholeAmounts {
    /// For inputs no entry names: the last `UNIT` given (auto when none).
    every: WholeUnit,
    /// `INPUT=UNIT` entries, in order: the last naming an input wins.
    named: Vec<(String, WholeUnit)>,
}

impl WholeAmounts {
    /// Reads `(origin, entry)` pairs in order, the origin naming where an entry was given
    /// (`--whole-amounts`, `whole-amounts in idem-audit.toml`) for the error.
    pub fn parse<'a>(
        entries: impl IntoIterator<Item = (String, &'a str)>,
    ) -> Result<WholeAmounts, String> {
        let mut out = WholeAmounts::default();
        for (origin, entry) in entries {
            let bad = || {
                format!(
                    "{origin} {entry}: expected {} for every input, or INPUT=UNIT for one (payments.log=minor)",
                    WholeUnit::NAMES
                )
            };
            match entry.rsplit_once('=') {
                Some((name, unit)) if !name.trim().is_empty() => {
                    let unit = WholeUnit::parse(unit).ok_or_else(bad)?;
                    out.named.push((name.trim().to_string(), unit));
                }
                Some(_) => return Err(bad()),
                None => out.every = WholeUnit::parse(entry).ok_or_else(bad)?,
            }
        }
        Ok(out)
    }

    /// The unit declared for the input shown as `display`: an entry naming it (the last),
    /// else the one for every input.
    pub fn unit_of(&self, display: &str) -> WholeUnit {
        (self.named.iter().rev())
            .find(|(name, _)| ParseOptions::names(name, display))
            .map_or(self.every, |&(_, unit)| unit)
    }

    /// Each input's declared unit, by input index; empty when nothing is declared.
    pub fn by_input<'a>(&self, displays: impl Iterator<Item = &'a str>) -> Vec<WholeUnit> {
        if *self == WholeAmounts::default() {
            return Vec::new();
        }
        displays.map(|d| self.unit_of(d)).collect()
    }

    /// The names of entries that name none of the inputs (a typo would change nothing).
    pub fn unused(&self, displays: &[&str]) -> Vec<String> {
        (self.named.iter())
            .filter(|(name, _)| !displays.iter().any(|d| ParseOptions::names(name, d)))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entries: &[&str]) -> Result<WholeAmounts, String> {
        WholeAmounts::parse(entries.iter().map(|e| ("--whole-amounts".to_string(), *e)))
    }

    #[test]
    fn an_input_named_takes_its_own_unit_and_the_rest_the_general_one() {
        let w = parse(&["minor", "logs/ledger.csv=major", "payments.log=auto"]).unwrap();
        assert_eq!(w.unit_of("agent.log"), WholeUnit::Minor);
        assert_eq!(w.unit_of("/data/logs/ledger.csv"), WholeUnit::Major);
        // A rotated log's files are named by its name.
        assert_eq!(w.unit_of("payments.log.1"), WholeUnit::Auto);
        assert_eq!(
            w.unused(&["agent.log", "payments.log"]),
            ["logs/ledger.csv"]
        );
        // Later entries win: a flag after the file's entry.
        let w = parse(&["ledger.csv=major", "ledger.csv=minor", "major", "auto"]).unwrap();
        assert_eq!(w.unit_of("ledger.csv"), WholeUnit::Minor);
        assert_eq!(w.unit_of("agent.log"), WholeUnit::Auto);
        // Nothing declared: nothing to look up.
        assert_eq!(
            parse(&["auto"]).unwrap().by_input(["a.log"].into_iter()),
            []
        );
    }

    #[test]
    fn a_bad_entry_says_what_is_expected() {
        for bad in ["cents", "ledger.csv=pence", "=minor", "ledger.csv="] {
            let e = parse(&[bad]).unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "--whole-amounts {bad}: expected auto, minor or major"
                )),
                "{e}"
            );
        }
    }
}
