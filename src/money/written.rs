//! Amounts as people and services write them, beside the SPEC's `4500p` and `amount=`
//! tokens: a currency sign before or after the number (`£45.00`, `£ 45.00`, `45.00 €`,
//! `€1,200.50`, `R$ 45.00`, `45.00 zł`) or an ISO code (`45.00 GBP`, `GBP 45.00`, `45.00 gbp`,
//! `GBP45.00`). A sign that several currencies use (`$`, `¥`, `kr`) is read only where
//! something else names the currency: a wrong currency is summed into the wrong total. A minus sign is kept (`-£45.00` is
//! -4500 pence), as `-4500p` keeps it; correlation reads an effect's amount as its size.

use super::{Currency, Money, parse_major};

/// Currency signs and the currencies each may stand for. `R$` before `$`: the first sign
/// a text starts or ends with is its mark. `₩` is read as the won a payments service
/// refunds (KRW): North Korea's, which shares the sign, is not convertible.
const SIGNS: [(&str, &[&str]); 16] = [
    ("£", &["GBP"]),
    ("€", &["EUR"]),
    ("₹", &["INR"]),
    ("₩", &["KRW"]),
    ("R$", &["BRL"]),
    ("zł", &["PLN"]),
    ("Kč", &["CZK"]),
    ("₺", &["TRY"]),
    ("₽", &["RUB"]),
    ("₴", &["UAH"]),
    ("₪", &["ILS"]),
    ("₫", &["VND"]),
    ("₦", &["NGN"]),
    (
        "$",
        &[
            "USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD", "ARS", "CLP", "COP",
        ],
    ),
    ("¥", &["JPY", "CNY"]),
    ("kr", &["SEK", "NOK", "DKK", "ISK"]),
];

/// What names the currency of a written amount.
enum Mark<'a> {
    Code(&'a str),
    Sign(&'static str, &'static [&'static str]),
}

/// A field read as a currency mark and a number (the number starts with a digit).
struct Written<'a> {
    mark: Mark<'a>,
    negative: bool,
    number: &'a str,
}

/// `£45.00`, `45.00 GBP`...: `None` when `text` is not written like an amount at all, an
/// error when it is but cannot be read exactly (a sign of several currencies, more
/// decimals than the currency has, a decimal number before a code in capitals with no known
/// exponent: `45.00 ZZZ` is money in a currency this table does not know, while `2.5 min`
/// and `TXN 12345` are no money).
pub fn parse_written(text: &str) -> Option<Result<Money, String>> {
    let w = split(text.trim())?;
    let currency = match w.mark {
        Mark::Code(code) => {
            let c = Currency::parse(code)?;
            let money_like = code.bytes().all(|b| b.is_ascii_uppercase())
                && w.number.contains('.')
                && text.trim_end().ends_with(code);
            if c.exponent().is_none() && !money_like {
                return None;
            }
            c
        }
        Mark::Sign(_, [only]) => Currency::parse(only)?,
        Mark::Sign(sign, _) => {
            return Some(Err(format!(
                "`{text}`: `{sign}` is the sign of more than one currency; write the code (`45.00 USD`) or `amount=` with `currency=`"
            )));
        }
    };
    Some(read(&w, currency, text).map(|minor| Money::new(minor, currency)))
}

/// `4500 GBP`, `GBP 4500`: a bare whole number beside the code of a currency with
/// decimals, as a program writes `"#{amount} #{currency}"` with minor units; 45.00 or
/// 4,500.00, so kept as the number ([`super::whole_amount`]) for correlation to settle.
/// A sign (`£4500`) is left to [`parse_written`]: people write pounds so.
pub fn whole_written(text: &str) -> Option<Money> {
    let w = split(text.trim())?;
    let Mark::Code(code) = w.mark else {
        return None;
    };
    let currency = Currency::parse(code)?;
    let whole = super::whole_amount(w.number, currency)?;
    Some(if w.negative {
        Money::new(-whole.minor, currency)
    } else {
        whole
    })
}

/// A major-unit amount where something else (an export's column, a `currency` field) names
/// the currency: the plain number, or the number with a sign or code that agrees with it
/// (`£45.00` in a GBP row; `$45.00` in a USD row, where the row settles what `$` means).
pub fn in_currency(text: &str, currency: Currency) -> Result<i64, String> {
    let plain = parse_major(text, currency);
    if plain.is_ok() {
        return plain;
    }
    let Some(w) = split(text.trim()) else {
        return plain;
    };
    let agrees = match w.mark {
        Mark::Code(code) => Currency::parse(code) == Some(currency),
        Mark::Sign(_, codes) => codes.contains(&currency.as_str()),
    };
    if !agrees {
        return Err(format!("`{text}` disagrees with currency {currency}"));
    }
    read(&w, currency, text)
}

fn read(w: &Written, currency: Currency, text: &str) -> Result<i64, String> {
    if w.number.starts_with('-') {
        return Err(format!("`{text}` has two minus signs"));
    }
    let size = parse_major(w.number, currency).map_err(|e| format!("`{text}`: {e}"))?;
    Ok(if w.negative { -size } else { size })
}

fn split(t: &str) -> Option<Written<'_>> {
    let (negative, unsigned) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    fn written<'a>(mark: Mark<'a>, negative: bool, number: &'a str) -> Option<Written<'a>> {
        // One minus sign, before the mark or after it: `-£-12.00` keeps its second one,
        // which `read` refuses.
        let (neg, number) = match number.strip_prefix('-') {
            Some(n) if !negative => (true, n),
            _ => (false, number),
        };
        number
            .trim_start_matches('-')
            .starts_with(|c: char| c.is_ascii_digit())
            .then_some(())?;
        Some(Written {
            mark,
            negative: negative || neg,
            number,
        })
    }
    for &(sign, codes) in &SIGNS {
        if let Some(n) = unsigned.strip_prefix(sign) {
            return written(Mark::Sign(sign, codes), negative, n.trim_start());
        }
        if let Some(n) = unsigned.strip_suffix(sign) {
            return written(Mark::Sign(sign, codes), negative, n.trim_end());
        }
    }
    let Some((a, b)) = unsigned.split_once(' ') else {
        return glued(unsigned, negative);
    };
    let letters = |s: &str| s.len() == 3 && s.bytes().all(|c| c.is_ascii_alphabetic());
    // A code first only in capitals: `try 2` or `all 3` is no money.
    if letters(b) {
        written(Mark::Code(b), negative, a)
    } else if letters(a) && a.bytes().all(|c| c.is_ascii_uppercase()) {
        written(Mark::Code(a), negative, b)
    } else {
        None
    }
}

/// `GBP45.00`, `45.00GBP`: a known code run into a number, and nothing else in the text
/// (`EUR2024Q1` is no amount).
fn glued(t: &str, negative: bool) -> Option<Written<'_>> {
    let known = |code: &str| {
        code.bytes().all(|b| b.is_ascii_uppercase())
            && Currency::parse(code).is_some_and(|c| c.exponent().is_some())
    };
    let numeric = |n: &str| {
        n.trim_start_matches('-')
            .starts_with(|c: char| c.is_ascii_digit())
            && n.bytes().all(|b| b.is_ascii_digit() || b",.-".contains(&b))
    };
    let (code, number) = match (t.get(..3), t.get(3..), t.len().checked_sub(3)) {
        (Some(code), Some(n), _) if known(code) && numeric(n) => (code, n),
        (_, _, Some(at)) if t.is_char_boundary(at) && known(&t[at..]) && numeric(&t[..at]) => {
            (&t[at..], &t[..at])
        }
        _ => return None,
    };
    let (neg, number) = match number.strip_prefix('-') {
        Some(n) if !negative => (true, n),
        _ => (false, number),
    };
    Some(Written {
        mark: Mark::Code(code),
        negative: negative || neg,
        number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Result<(i64, String), String>> {
        parse_written(text).map(|r| r.map(|m| (m.minor, m.currency.to_string())))
    }

    #[test]
    fn signs_and_codes_give_minor_units_by_the_currencys_exponent() {
        let ok = |minor: i64, code: &str| Some(Ok((minor, code.to_string())));
        assert_eq!(read("£45.00"), ok(4500, "GBP"));
        assert_eq!(read("£45"), ok(4500, "GBP"));
        assert_eq!(read("£ 45.00"), ok(4500, "GBP"));
        assert_eq!(read("45.00 €"), ok(4500, "EUR"));
        assert_eq!(read("45.00€"), ok(4500, "EUR"));
        assert_eq!(read("€1,200.50"), ok(120_050, "EUR"));
        assert_eq!(read("45.00 GBP"), ok(4500, "GBP"));
        assert_eq!(read("45.00 gbp"), ok(4500, "GBP"));
        assert_eq!(read("GBP 45.00"), ok(4500, "GBP"));
        assert_eq!(read("4500 JPY"), ok(4500, "JPY"));
        assert_eq!(read("1.250 KWD"), ok(1250, "KWD"));
        // The sign is kept, as `-4500p` keeps it: correlation reads an effect's size.
        assert_eq!(read("-£45.00"), ok(-4500, "GBP"));
        assert_eq!(read("£-45.00"), ok(-4500, "GBP"));
        assert_eq!(read("-45.00 GBP"), ok(-4500, "GBP"));
        // Signs of one currency, and a known code run into the number (review36 H1).
        assert_eq!(read("₩15000"), ok(15000, "KRW"));
        assert_eq!(read("₩15,000"), ok(15000, "KRW"));
        assert_eq!(read("R$ 45.00"), ok(4500, "BRL"));
        assert_eq!(read("45.00 R$"), ok(4500, "BRL"));
        assert_eq!(read("45.00 zł"), ok(4500, "PLN"));
        assert_eq!(read("GBP45.00"), ok(4500, "GBP"));
        assert_eq!(read("45.00GBP"), ok(4500, "GBP"));
        assert_eq!(read("-GBP45.00"), ok(-4500, "GBP"));
        assert_eq!(read("GBP-45.00"), ok(-4500, "GBP"));
    }

    #[test]
    fn a_decimal_in_a_code_of_no_known_exponent_says_why() {
        let Some(Err(why)) = read("45.00 ZZZ") else {
            panic!("45.00 ZZZ read");
        };
        assert!(why.contains("ZZZ") && why.contains("exponent"), "{why}");
    }

    #[test]
    fn what_cannot_be_read_exactly_is_an_error_and_the_rest_is_no_amount() {
        for refused in [
            "$45.00",
            "¥4500",
            "kr45",
            "£45.001",
            "45.5 JPY",
            "£4x",
            "-$45.00",
            "-£-12.00",
            "-12.00- GBP",
            "1,250 KWD",
            "45.00 ZZZ",
            "GBP45.001",
            "1 250,00 Kč",
        ] {
            assert!(matches!(read(refused), Some(Err(_))), "{refused}");
        }
        for other in [
            "settled 14:02:22.884",
            "order A-88214",
            "ok",
            "45.00",
            "XYZ 45.00",
            "try 2",
            "all 3",
            "£",
            "$ refund",
            "2.5 min",
            "TXN 12345",
            "45 ZZZ",
            "EUR2024Q1",
            "ZZZ45.00",
            "R$",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }

    #[test]
    fn a_currency_named_elsewhere_settles_a_shared_sign() {
        let gbp = Currency::GBP;
        let usd = Currency::parse("USD").unwrap();
        assert_eq!(in_currency("45.00", gbp), Ok(4500));
        assert_eq!(in_currency("£45.00", gbp), Ok(4500));
        assert_eq!(in_currency("45.00 GBP", gbp), Ok(4500));
        assert_eq!(in_currency("$1,045.00", usd), Ok(104_500));
        assert_eq!(in_currency("-£4.50", gbp), Ok(-450));
        let eur = Currency::parse("EUR").unwrap();
        for wrong in [
            "€45.00",
            "45.00 EUR",
            "£45.00x",
            "45,00",
            "-€4.50",
            "$45.00",
            "kr45",
        ] {
            assert!(in_currency(wrong, gbp).is_err(), "{wrong}");
        }
        assert!(in_currency("¥1,045", eur).is_err());
    }
}
