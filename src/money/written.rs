//! Amounts as people and services write them, beside the SPEC's `4500p` and `amount=`
//! tokens: a currency symbol (`£45.00`, `€1,200.50`) or an ISO code before or after the
//! number (`45.00 GBP`, `GBP 45.00`). A symbol that names more than one currency (`$`,
//! `¥`) is refused rather than guessed: a wrong currency is summed into the wrong total.

use super::{Currency, Money, parse_major};

/// Symbols that name one currency.
const SYMBOLS: [(&str, &str); 3] = [("£", "GBP"), ("€", "EUR"), ("₹", "INR")];

/// Symbols used by several currencies.
const AMBIGUOUS: [&str; 3] = ["$", "¥", "kr"];

/// `£45.00`, `-£4.50`, `€1,200`, `45.00 GBP`, `GBP 45.00`: `None` when `text` is not written
/// like an amount at all, an error when it is but cannot be read exactly (an ambiguous
/// symbol, more decimals than the currency has, an unknown code).
pub fn parse_written(text: &str) -> Option<Result<Money, String>> {
    let t = text.trim();
    if let Some((code, number)) = code_and_number(t) {
        let currency = Currency::parse(code)?;
        currency.exponent()?;
        return Some(major(number, currency, text));
    }
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    if let Some((code, number)) = SYMBOLS
        .iter()
        .find_map(|&(sym, code)| Some((code, unsigned.strip_prefix(sym)?)))
        .filter(|(_, n)| n.starts_with(|c: char| c.is_ascii_digit()))
    {
        let currency = Currency::parse(code)?;
        let number = if negative {
            format!("-{number}")
        } else {
            number.to_string()
        };
        return Some(major(&number, currency, text));
    }
    AMBIGUOUS
        .iter()
        .find(|sym| {
            unsigned
                .strip_prefix(**sym)
                .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|sym| {
            Err(format!(
                "`{text}`: `{sym}` is the sign of more than one currency; write the code (`45.00 USD`) or `amount=` with `currency=`"
            ))
        })
}

/// `45.00 GBP` or `GBP 45.00`: three upper-case letters and a number starting with a digit
/// or a sign, one space apart.
fn code_and_number(t: &str) -> Option<(&str, &str)> {
    let (a, b) = t.split_once(' ')?;
    let is_code = |s: &str| s.len() == 3 && s.bytes().all(|c| c.is_ascii_uppercase());
    let is_number = |s: &str| {
        s.trim_start_matches(['-', '+'])
            .starts_with(|c: char| c.is_ascii_digit())
    };
    if is_code(b) && is_number(a) {
        Some((b, a))
    } else if is_code(a) && is_number(b) {
        Some((a, b))
    } else {
        None
    }
}

/// A major-unit amount in a row (an export's) that names its currency: the plain number,
/// or the number after a symbol or code that agrees with the currency (`£45.00` in a GBP
/// row; `$45.00` in a USD row, where the row settles what `$` means).
pub fn in_currency(text: &str, currency: Currency) -> Result<i64, String> {
    let plain = parse_major(text, currency);
    if plain.is_ok() {
        return plain;
    }
    let t = text.trim();
    if let Some((code, number)) = code_and_number(t) {
        return match Currency::parse(code) {
            Some(c) if c == currency => parse_major(number, currency),
            _ => Err(format!(
                "amount `{text}` disagrees with currency {currency}"
            )),
        };
    }
    let (sign, unsigned) = match t.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", t),
    };
    let named = SYMBOLS.iter().find_map(|&(sym, code)| {
        let number = unsigned.strip_prefix(sym)?;
        Some((Currency::parse(code) == Some(currency), number))
    });
    let shared = || AMBIGUOUS.iter().find_map(|sym| unsigned.strip_prefix(*sym));
    match named.or_else(|| shared().map(|n| (true, n))) {
        Some((true, number)) => parse_major(&format!("{sign}{number}"), currency),
        Some((false, _)) => Err(format!(
            "amount `{text}` disagrees with currency {currency}"
        )),
        None => plain,
    }
}

fn major(number: &str, currency: Currency, text: &str) -> Result<Money, String> {
    parse_major(number, currency)
        .map(|minor| Money::new(minor, currency))
        .map_err(|e| format!("amount `{text}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Result<(i64, String), String>> {
        parse_written(text).map(|r| r.map(|m| (m.minor, m.currency.to_string())))
    }

    #[test]
    fn symbols_and_codes_give_minor_units_by_the_currencys_exponent() {
        let ok = |minor: i64, code: &str| Some(Ok((minor, code.to_string())));
        assert_eq!(read("£45.00"), ok(4500, "GBP"));
        assert_eq!(read("£45"), ok(4500, "GBP"));
        assert_eq!(read("-£4.5"), ok(-450, "GBP"));
        assert_eq!(read("€1,200.50"), ok(120_050, "EUR"));
        assert_eq!(read("45.00 GBP"), ok(4500, "GBP"));
        assert_eq!(read("GBP 45.00"), ok(4500, "GBP"));
        assert_eq!(read("4500 JPY"), ok(4500, "JPY"));
        assert_eq!(read("1.250 KWD"), ok(1250, "KWD"));
    }

    #[test]
    fn a_row_that_names_its_currency_settles_the_symbol() {
        let gbp = Currency::GBP;
        let usd = Currency::parse("USD").unwrap();
        assert_eq!(in_currency("45.00", gbp), Ok(4500));
        assert_eq!(in_currency("£45.00", gbp), Ok(4500));
        assert_eq!(in_currency("-£4.50", gbp), Ok(-450));
        assert_eq!(in_currency("45.00 GBP", gbp), Ok(4500));
        assert_eq!(in_currency("$1,045.00", usd), Ok(104_500));
        for wrong in ["€45.00", "45.00 EUR", "£45.00x", "45,00"] {
            assert!(in_currency(wrong, gbp).is_err(), "{wrong}");
        }
    }

    #[test]
    fn what_cannot_be_read_exactly_is_an_error_and_the_rest_is_no_amount() {
        for refused in ["$45.00", "¥4500", "£45.001", "45.5 JPY", "£4x"] {
            assert!(matches!(read(refused), Some(Err(_))), "{refused}");
        }
        for other in [
            "settled 14:02:22.884",
            "order A-88214",
            "ok",
            "45.00",
            "XYZ 45.00",
            "£",
            "$ refund",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }
}
