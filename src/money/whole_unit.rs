//! The unit a log writes its bare whole numbers in (`"amount": 4500` GBP), where the user
//! declares it (`--whole-amounts`): nothing in the number tells 45.00 from 4,500.00, and
//! where no call the log's effects matched tells either (`correlate/whole_amounts.rs`),
//! the person who knows the service does.

use super::Money;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WholeUnit {
    /// Not declared: learnt from the calls a log's effects matched, else unknown.
    #[default]
    Auto,
    /// Minor units, as Stripe's, Adyen's and Square's APIs write amounts.
    Minor,
    /// Whole currency units, as a spreadsheet or `JSON.stringify(45.00)` writes them.
    Major,
}

impl WholeUnit {
    pub const NAMES: &'static str = "auto, minor or major";

    pub fn parse(text: &str) -> Option<WholeUnit> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(WholeUnit::Auto),
            "minor" => Some(WholeUnit::Minor),
            "major" => Some(WholeUnit::Major),
            _ => None,
        }
    }

    /// A bare whole number (held as if minor units, [`super::whole_amount`]) read in this
    /// unit; `None` when the unit is not declared, or the amount is beyond 64 bits.
    pub fn read(self, whole: Money) -> Option<Money> {
        match self {
            WholeUnit::Auto => None,
            WholeUnit::Minor => Some(whole),
            WholeUnit::Major => as_major(whole),
        }
    }
}

/// The whole number as major units, in minor units (45 GBP is 4500; 4500 JPY is 4500).
fn as_major(whole: Money) -> Option<Money> {
    let exp = whole.currency.exponent()?;
    let minor = whole.minor.checked_mul(10i64.checked_pow(exp)?)?;
    Some(Money::new(minor, whole.currency))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Currency;

    #[test]
    fn a_declared_unit_reads_the_number_and_auto_leaves_it_unknown() {
        let gbp = |minor| Money::new(minor, Currency::GBP);
        assert_eq!(WholeUnit::Minor.read(gbp(4500)), Some(gbp(4500)));
        assert_eq!(WholeUnit::Major.read(gbp(45)), Some(gbp(4500)));
        assert_eq!(WholeUnit::Auto.read(gbp(4500)), None);
        let kwd = Currency::parse("KWD").unwrap();
        assert_eq!(
            WholeUnit::Major.read(Money::new(3, kwd)),
            Some(Money::new(3000, kwd))
        );
        // Beyond 64 bits, or a code of no known exponent: no amount.
        assert_eq!(WholeUnit::Major.read(gbp(i64::MAX / 10)), None);
        let unknown = Currency::parse("ZZZ").unwrap();
        assert_eq!(WholeUnit::Major.read(Money::new(45, unknown)), None);
        assert_eq!(WholeUnit::parse(" Minor "), Some(WholeUnit::Minor));
        assert_eq!(WholeUnit::parse("cents"), None);
    }
}
