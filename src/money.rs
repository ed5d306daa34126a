//! Money is integer minor units with an ISO 4217 currency: never floats (a penny lost to
//! rounding is a finance ticket).

use serde::{Deserialize, Serialize};
use std::num::NonZeroU16;

/// A three-letter upper-case currency code: its rank among all `AAA`..`ZZZ` codes, plus
/// one. Two bytes with a spare value, so an amount is 16 bytes and an `Option` of one too
/// (the model holds one per call and per effect of a month); ordered as the codes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency(NonZeroU16);

/// Every code `AAA`..`ZZZ`, three bytes each, for [`Currency::as_str`].
static CODES: [u8; 3 * CODE_COUNT] = all_codes();
const CODE_COUNT: usize = 26 * 26 * 26;

const fn all_codes() -> [u8; 3 * CODE_COUNT] {
    let mut out = [0u8; 3 * CODE_COUNT];
    let mut i = 0;
    while i < CODE_COUNT {
        out[3 * i] = b'A' + (i / 676) as u8;
        out[3 * i + 1] = b'A' + (i / 26 % 26) as u8;
        out[3 * i + 2] = b'A' + (i % 26) as u8;
        i += 1;
    }
    out
}

impl Currency {
    pub const GBP: Currency = Currency::of_letters(*b"GBP");

    /// Upper-case ASCII letters only (callers check).
    const fn of_letters(code: [u8; 3]) -> Currency {
        let rank =
            (code[0] - b'A') as u16 * 676 + (code[1] - b'A') as u16 * 26 + (code[2] - b'A') as u16;
        match NonZeroU16::new(rank + 1) {
            Some(n) => Currency(n),
            None => unreachable!(),
        }
    }

    /// Accepts any three ASCII letters, in any case (`gbp`).
    pub fn parse(code: &str) -> Option<Currency> {
        let b = code.trim().as_bytes();
        if b.len() != 3 || !b.iter().all(u8::is_ascii_alphabetic) {
            return None;
        }
        Some(Currency::of_letters([
            b[0].to_ascii_uppercase(),
            b[1].to_ascii_uppercase(),
            b[2].to_ascii_uppercase(),
        ]))
    }

    pub fn as_str(&self) -> &'static str {
        let i = 3 * (self.0.get() as usize - 1);
        // Only ASCII letters are in the table.
        std::str::from_utf8(&CODES[i..i + 3]).unwrap_or("???")
    }

    /// The ISO 4217 minor-unit exponent, when the code is a known currency: one look in a
    /// table built at compile time (asked of every effect line of a month).
    #[inline]
    pub fn exponent(&self) -> Option<u32> {
        match EXPONENTS[self.0.get() as usize - 1] {
            UNKNOWN => None,
            e => Some(e as u32),
        }
    }
}

/// Each code's exponent by its rank, [`UNKNOWN`] for codes no currency has.
static EXPONENTS: [u8; CODE_COUNT] = exponents();
const UNKNOWN: u8 = u8::MAX;

const fn exponents() -> [u8; CODE_COUNT] {
    let mut out = [UNKNOWN; CODE_COUNT];
    let lists: [(&[&str], u8); 4] = [
        (ZERO_DECIMAL, 0),
        (TWO_DECIMAL, 2),
        (THREE_DECIMAL, 3),
        (FOUR_DECIMAL, 4),
    ];
    let mut l = 0;
    while l < lists.len() {
        let (codes, exponent) = lists[l];
        let mut i = 0;
        while i < codes.len() {
            let b = codes[i].as_bytes();
            let rank =
                (b[0] - b'A') as usize * 676 + (b[1] - b'A') as usize * 26 + (b[2] - b'A') as usize;
            out[rank] = exponent;
            i += 1;
        }
        l += 1;
    }
    out
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Currency::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("bad currency {s}")))
    }
}

const ZERO_DECIMAL: &[&str] = &[
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND",
    "VUV", "XAF", "XOF", "XPF",
];
const THREE_DECIMAL: &[&str] = &["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"];
const FOUR_DECIMAL: &[&str] = &["CLF", "UYW"];
/// ISO 4217's List One (amendment 179, 2025) with two decimals, the fund codes (BOV, CHE,
/// CHW, COU, MXV, USN) and codes withdrawn lately that a month's logs may still hold (CUC,
/// HRK, SLL, ZWL). Codes of no minor unit (XAU, XDR, XXX...) have no exponent.
const TWO_DECIMAL: &[&str] = &[
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF",
    "CHE", "CHF", "CHW", "CNY", "COP", "COU", "CRC", "CUC", "CUP", "CVE", "CZK", "DKK", "DOP",
    "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GTQ",
    "GYD", "HKD", "HNL", "HRK", "HTG", "HUF", "IDR", "ILS", "INR", "IRR", "JMD", "KES", "KGS",
    "KHR", "KPW", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "MAD", "MDL", "MGA", "MKD",
    "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN",
    "NIO", "NOK", "NPR", "NZD", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "QAR", "RON", "RSD",
    "RUB", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SLL", "SOS", "SRD", "SSP",
    "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH",
    "USD", "USN", "UYU", "UZS", "VED", "VES", "WST", "XCD", "XCG", "YER", "ZAR", "ZMW", "ZWG",
    "ZWL",
];

/// An amount in minor units of a currency, as one line gave it. 16 bytes: the model holds
/// one per call and per effect of a month.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Money {
    pub minor: i64,
    pub currency: Currency,
}

impl Money {
    pub fn new(minor: i64, currency: Currency) -> Self {
        Money { minor, currency }
    }

    /// The amount without its sign. Ledgers write money paid out as negative (`-4500p`, a
    /// refund of `-45.00` in an export) and others do not: what a refund or a charge moved
    /// is its size either way, and one ledger's sign must not make its refunds differ from
    /// the call that asked for them.
    pub fn size(self) -> Money {
        Money {
            minor: self.minor.saturating_abs(),
            ..self
        }
    }

    /// Major units as an exact decimal string: `45.00`, `-0.05`, `4500` for JPY; for a code
    /// whose exponent is unknown, the minor units said as such (`4500 minor units`).
    pub fn major_string(&self) -> String {
        Total::from(*self).major_string()
    }

    /// `GBP 15,300.00`: the table's style, with thousands separators.
    pub fn display(&self) -> String {
        Total::from(*self).display()
    }
}

/// A sum of amounts of one currency: i128, so that a sum of any number of `i64` amounts is
/// exact and never saturates or wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Total {
    pub minor: i128,
    pub currency: Currency,
}

impl Total {
    pub fn new(minor: i128, currency: Currency) -> Self {
        Total { minor, currency }
    }

    // A code with no known exponent is never printed with guessed decimals: 4500 of them
    // is 45.00 or 4.500 or 4500 by the currency's rules, which this table does not know.
    pub fn major_string(&self) -> String {
        match self.currency.exponent() {
            Some(exp) => format_major(self.minor, exp, false),
            None => format!("{} minor units", self.minor),
        }
    }

    pub fn display(&self) -> String {
        match self.currency.exponent() {
            Some(exp) => format!("{} {}", self.currency, format_major(self.minor, exp, true)),
            None => format!(
                "{} {} minor units",
                self.currency,
                format_major(self.minor, 0, true)
            ),
        }
    }
}

impl From<Money> for Total {
    fn from(m: Money) -> Self {
        Total::new(m.minor.into(), m.currency)
    }
}

fn format_major(minor: i128, exponent: u32, group: bool) -> String {
    let negative = minor < 0;
    let abs = minor.unsigned_abs();
    let scale = 10u128.pow(exponent);
    let whole = (abs / scale).to_string();
    let whole = if group {
        group_thousands(&whole)
    } else {
        whole
    };
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    out.push_str(&whole);
    if exponent > 0 {
        out.push('.');
        out.push_str(&format!(
            "{:0width$}",
            abs % scale,
            width = exponent as usize
        ));
    }
    out
}

fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether a major-unit `amount` is a bare integer in a currency with decimals (`4500`
/// GBP): Stripe, Adyen and Square write minor units so, a spreadsheet or a JavaScript
/// logger may write whole pounds so, and 4500 is then 45.00 or 4,500.00. Such an amount is
/// read as unknown rather than guessed: a guess is wrong a hundredfold one way or the other.
pub fn ambiguous_whole_amount(written: &str, currency: Currency) -> bool {
    let digits = written.trim().trim_start_matches(['-', '+']);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && currency.exponent().is_some_and(|e| e > 0)
}

/// The bare whole number of an [`ambiguous_whole_amount`], as if it were minor units: kept
/// beside an unknown amount, so that effects written with the same number (the same
/// amount in whichever unit) are compared, and correlation can learn the unit from a call.
pub fn whole_amount(written: &str, currency: Currency) -> Option<Money> {
    let t = written.trim();
    let n = t.strip_prefix('+').unwrap_or(t).parse::<i64>().ok()?;
    ambiguous_whole_amount(written, currency).then(|| Money::new(n, currency))
}

/// Parses a decimal major-unit amount (`45.00`, `-3.5`, `1200`, `1,200.50`) into minor
/// units by the currency's exponent. Refuses amounts with more decimals than the currency
/// has, and amounts that overflow `i64`. Commas are read only as thousands separators
/// (groups of three), so a decimal comma (`45,50`) is refused, not misread.
/// An integer number of minor units, or why not: not an integer, or beyond what 64 bits
/// hold (which is no amount a payments service logs, but is not "not a number" either).
pub fn parse_minor(text: &str) -> Result<i64, &'static str> {
    use std::num::IntErrorKind;
    text.parse::<i64>().map_err(|e| match e.kind() {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => {
            "is too large for minor units (more than 64 bits hold)"
        }
        _ => "is not an integer number of minor units",
    })
}

pub fn parse_major(text: &str, currency: Currency) -> Result<i64, String> {
    let exp = currency.exponent().ok_or_else(|| {
        format!("currency `{currency}` is not an ISO 4217 code with a known exponent")
    })?;
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let valid = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let grouped: String;
    let whole = if whole.contains(',') {
        let mut groups = whole.split(',');
        let head = groups.next().unwrap_or("");
        if !(1..=3).contains(&head.len()) || !groups.all(|g| g.len() == 3) {
            return Err(format!("`{text}` is not a decimal amount"));
        }
        // `1,250` in a currency of three decimals may be 1.250 written with a decimal
        // comma: without a decimal point, which it is cannot be told.
        if exp >= 3 && !digits.contains('.') {
            return Err(format!(
                "`{text}` may be thousands or a decimal comma in {currency}: write `1,250.000` or `1.250`"
            ));
        }
        grouped = whole.replace(',', "");
        grouped.as_str()
    } else {
        whole
    };
    if whole.is_empty() && frac.is_empty() || !valid(whole) || !valid(frac) {
        return Err(format!("`{text}` is not a decimal amount"));
    }
    let frac = frac.trim_end_matches('0');
    if frac.len() > exp as usize {
        return Err(format!(
            "`{text}` has more decimals than {currency} has minor units ({exp})"
        ));
    }
    let mut minor: i64 = 0;
    let overflow = || format!("`{text}` is too large for an amount");
    for b in whole.bytes().chain(frac.bytes()) {
        minor = minor
            .checked_mul(10)
            .and_then(|m| m.checked_add((b - b'0') as i64))
            .ok_or_else(overflow)?;
    }
    minor = minor
        .checked_mul(10i64.pow(exp - frac.len() as u32))
        .ok_or_else(overflow)?;
    Ok(if negative { -minor } else { minor })
}

mod whole_unit;
mod written;
pub use whole_unit::WholeUnit;
pub use written::{in_currency, parse_written, whole_written};

#[cfg(test)]
mod tests {
    /// Too many digits is said as such, not as "not a number": the line is skipped either
    /// way, and the reason tells the user which.
    #[test]
    fn minor_units_beyond_64_bits_are_too_large_not_malformed() {
        assert_eq!(super::parse_minor("4500"), Ok(4500));
        assert_eq!(super::parse_minor("-12"), Ok(-12));
        let too_large = Err("is too large for minor units (more than 64 bits hold)");
        assert_eq!(super::parse_minor("18446744073709551615"), too_large);
        assert_eq!(super::parse_minor("-18446744073709551615"), too_large);
        let malformed = Err("is not an integer number of minor units");
        assert_eq!(super::parse_minor("45.00"), malformed);
        assert_eq!(super::parse_minor(""), malformed);
    }

    #[test]
    fn a_whole_amount_in_a_currency_with_decimals_is_ambiguous() {
        let gbp = Currency::GBP;
        let jpy = Currency::parse("JPY").unwrap();
        assert!(ambiguous_whole_amount("4500", gbp));
        assert!(ambiguous_whole_amount(" -45 ", gbp));
        assert!(!ambiguous_whole_amount("45.00", gbp));
        assert!(!ambiguous_whole_amount("4500", jpy));
        assert!(!ambiguous_whole_amount("£45", gbp));
    }

    use super::*;

    #[test]
    fn formats_major_units_by_exponent() {
        let gbp = Currency::GBP;
        assert_eq!(Money::new(4500, gbp).major_string(), "45.00");
        assert_eq!(Money::new(1_530_000, gbp).display(), "GBP 15,300.00");
        assert_eq!(Money::new(-5, gbp).major_string(), "-0.05");
        let jpy = Currency::parse("jpy").unwrap();
        assert_eq!(Money::new(4500, jpy).display(), "JPY 4,500");
        let kwd = Currency::parse("KWD").unwrap();
        assert_eq!(Money::new(4500, kwd).major_string(), "4.500");
        assert_eq!(std::mem::size_of::<Option<Money>>(), 16);
        for code in ["AAA", "GBP", "ZZZ", "usd"] {
            let c = Currency::parse(code).unwrap();
            assert_eq!(c.as_str(), code.to_ascii_uppercase());
        }
        assert!(Currency::parse("EUR").unwrap() < Currency::parse("GBP").unwrap());
        assert!(Currency::parse("GB1").is_none() && Currency::parse("GBPX").is_none());
        // The table holds each list's exponent, and none for a code no currency has.
        let exponent = |c: &str| Currency::parse(c).unwrap().exponent();
        let lists = [
            (ZERO_DECIMAL, 0),
            (TWO_DECIMAL, 2),
            (THREE_DECIMAL, 3),
            (FOUR_DECIMAL, 4),
        ];
        for (codes, e) in lists {
            assert!(codes.iter().all(|c| exponent(c) == Some(e)), "{e}");
        }
        assert_eq!(
            (exponent("AAA"), exponent("XXX"), exponent("ZZZ")),
            (None, None, None)
        );
        // Against ISO 4217's List One as published (amendment 179, 2025), written apart
        // from the tables: every code's exponent, and none for those of no minor unit
        // (review36 M3: UYU and VED were missing, and their amounts refused).
        let list_one = "AED2 AFN2 ALL2 AMD2 ANG2 AOA2 ARS2 AUD2 AWG2 AZN2 BAM2 BBD2 BDT2 BGN2 \
            BHD3 BIF0 BMD2 BND2 BOB2 BOV2 BRL2 BSD2 BTN2 BWP2 BYN2 BZD2 CAD2 CDF2 CHE2 CHF2 \
            CHW2 CLF4 CLP0 CNY2 COP2 COU2 CRC2 CUP2 CVE2 CZK2 DJF0 DKK2 DOP2 DZD2 EGP2 ERN2 \
            ETB2 EUR2 FJD2 FKP2 GBP2 GEL2 GHS2 GIP2 GMD2 GNF0 GTQ2 GYD2 HKD2 HNL2 HTG2 HUF2 \
            IDR2 ILS2 INR2 IQD3 IRR2 ISK0 JMD2 JOD3 JPY0 KES2 KGS2 KHR2 KMF0 KPW2 KRW0 KWD3 \
            KYD2 KZT2 LAK2 LBP2 LKR2 LRD2 LSL2 LYD3 MAD2 MDL2 MGA2 MKD2 MMK2 MNT2 MOP2 MRU2 \
            MUR2 MVR2 MWK2 MXN2 MXV2 MYR2 MZN2 NAD2 NGN2 NIO2 NOK2 NPR2 NZD2 OMR3 PAB2 PEN2 \
            PGK2 PHP2 PKR2 PLN2 PYG0 QAR2 RON2 RSD2 RUB2 RWF0 SAR2 SBD2 SCR2 SDG2 SEK2 SGD2 \
            SHP2 SLE2 SOS2 SRD2 SSP2 STN2 SVC2 SYP2 SZL2 THB2 TJS2 TMT2 TND3 TOP2 TRY2 TTD2 \
            TWD2 TZS2 UAH2 UGX0 USD2 USN2 UYI0 UYU2 UYW4 UZS2 VED2 VES2 VND0 VUV0 WST2 XAF0 \
            XCD2 XCG2 XOF0 XPF0 YER2 ZAR2 ZMW2 ZWG2 CUC2 HRK2 SLL2 ZWL2";
        for item in list_one.split_whitespace() {
            let (code, e) = item.split_at(3);
            assert_eq!(exponent(code), Some(e.parse().unwrap()), "{code}");
        }
        let listed = |c: &&str| list_one.split_whitespace().any(|i| i.starts_with(*c));
        for lists in [ZERO_DECIMAL, TWO_DECIMAL, THREE_DECIMAL, FOUR_DECIMAL] {
            assert!(lists.iter().all(listed), "a code not in List One");
        }
        for none in [
            "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA",
        ] {
            assert_eq!(exponent(none), None, "{none}");
        }
        let beyond = Total::new(i128::from(i64::MAX) * 3, gbp);
        assert_eq!(beyond.major_string(), "276701161105643274.21");
    }

    #[test]
    fn parses_decimal_amounts_exactly() {
        let gbp = Currency::GBP;
        assert_eq!(parse_major("45.00", gbp), Ok(4500));
        assert_eq!(parse_major("45", gbp), Ok(4500));
        assert_eq!(parse_major("0.1", gbp), Ok(10));
        assert_eq!(parse_major("-3.5", gbp), Ok(-350));
        assert!(parse_major("45.001", gbp).is_err());
        assert!(parse_major("4x", gbp).is_err());
        assert!(parse_major("99999999999999999999", gbp).is_err());
        assert!(parse_major("1.00", Currency::parse("XYZ").unwrap()).is_err());
        // Its minor units are printed as such, never with guessed decimals.
        let xyz = Total::new(450_000, Currency::parse("XYZ").unwrap());
        assert_eq!(xyz.major_string(), "450000 minor units");
        assert_eq!(xyz.display(), "XYZ 450,000 minor units");
        assert_eq!(Total::new(450_000, gbp).display(), "GBP 4,500.00");
        assert_eq!(parse_major("12", Currency::parse("JPY").unwrap()), Ok(12));
        // Thousands separators, never a decimal comma.
        assert_eq!(parse_major("1,200.50", gbp), Ok(120_050));
        assert_eq!(parse_major("12,345,678", gbp), Ok(1_234_567_800));
        for bad in ["45,50", "1,2000.00", ",200", "1,,200", "1,200,5"] {
            assert!(parse_major(bad, gbp).is_err(), "{bad}");
        }
        let kwd = Currency::parse("KWD").unwrap();
        assert!(
            parse_major("1,250", kwd).is_err(),
            "1.250 with a decimal comma?"
        );
        assert_eq!(parse_major("1,250.500", kwd), Ok(1_250_500));
    }
}
