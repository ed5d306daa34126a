//! What a dispatch keeps of its arguments: their canonical form (which groups dispatches
//! into logical calls), the order and amount they name, and the value when a parser gave
//! one. Flat objects as written, most tool calls of a month, are read without building
//! their value; a property test holds that reading to the parsed one.

use super::kinds::{order_and_amount, order_and_amount_flat};
use crate::canonical::{canonical, canonical_flat};
use crate::event::Text;
use crate::flat_json::flat_members;
use crate::money::{Money, WholeUnit};
use serde_json::Value;

/// What a dispatch keeps of its arguments.
pub(super) struct CallArgs {
    pub(super) canonical: Text,
    pub(super) order: Option<Text>,
    pub(super) amount: Option<Money>,
    /// JSON `null`, missing, or not JSON.
    pub(super) null: bool,
    /// The value the parser gave, kept as given.
    pub(super) given: Option<Box<Value>>,
}

impl CallArgs {
    /// From the arguments as written, or as the value the parser gave (when not null).
    /// A flat object as written (most tool calls) is read without building its value, its
    /// canonical form written in `scratch` first. `whole`: the unit declared for the call's
    /// input's bare whole amounts.
    pub(super) fn read(raw: &str, given: Value, scratch: &mut String, whole: WholeUnit) -> Self {
        if !given.is_null() {
            return Self::of_value(given, true, whole);
        }
        if let Some(flat) = Self::flat(raw, scratch, whole) {
            return flat;
        }
        // The parsers skip a call whose arguments are no JSON or nest deeper than this can
        // read (`event::args_nest_too_deep`): null here is arguments that are missing.
        let parsed = serde_json::from_str(raw).unwrap_or(Value::Null);
        Self::of_value(parsed, false, whole)
    }

    pub(super) fn of_value(args: Value, given: bool, whole: WholeUnit) -> Self {
        let (order, amount) = order_and_amount(&args, whole);
        CallArgs {
            canonical: Text::from(canonical(&args)),
            order,
            amount,
            null: args.is_null(),
            given: given.then(|| Box::new(args)),
        }
    }

    /// What [`CallArgs::of_value`] gives for a flat object, from its members as written.
    fn flat(raw: &str, scratch: &mut String, whole: WholeUnit) -> Option<Self> {
        // Tool calls have a few arguments: more than this are left to the parser.
        const MAX: usize = 8;
        let mut members = [("", ""); MAX];
        let (mut len, mut fits) = (0, true);
        let flat = flat_members(raw.as_bytes(), |k, v| {
            // Places are character boundaries, since a flat object is ASCII.
            match (members.get_mut(len), raw.get(k), raw.get(v)) {
                (Some(slot), Some(k), Some(v)) => {
                    *slot = (k, v);
                    len += 1;
                }
                _ => fits = false,
            }
        });
        if !(flat && fits) {
            return None;
        }
        let members = &mut members[..len];
        if !canonical_flat(members, scratch) {
            return None;
        }
        let (order, amount) = order_and_amount_flat(members, whole);
        Some(CallArgs {
            canonical: Text::from(scratch.as_str()),
            order,
            amount,
            null: false,
            given: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parts(a: &CallArgs) -> (&str, Option<&str>, Option<Money>, bool, bool) {
        let order = a.order.as_deref();
        (&a.canonical, order, a.amount, a.null, a.given.is_some())
    }

    /// Read without building it, a flat object gives what its parsed value gives.
    fn agrees(raw: &str, scratch: &mut String) -> bool {
        for whole in [WholeUnit::Auto, WholeUnit::Minor, WholeUnit::Major] {
            let Some(flat) = CallArgs::flat(raw, scratch, whole) else {
                return false;
            };
            let parsed = serde_json::from_str(raw).expect("flat objects are JSON");
            assert_eq!(
                parts(&flat),
                parts(&CallArgs::of_value(parsed, false, whole)),
                "{raw}"
            );
        }
        true
    }

    #[test]
    fn flat_arguments_read_as_their_parsed_value_reads() {
        // One scratch buffer for all of them, as in the builder.
        let mut scratch = String::new();
        for raw in [
            r#"{}"#,
            r#"{"order":"A-272203"}"#,
            r#"{"order":"R-1","amount_p":10450}"#,
            r#"{"amount_minor":4500.0,"currency":"EUR","order_id":7}"#,
            r#"{"z":1e3,"a":-0,"m":true,"n":null,"amount_p":"4500"}"#,
            r#"{"orderId":1.5e-7,"amount_p":12345678901234567890}"#,
            r#"{"amount":4500,"currency":"gbp"}"#,
            r#"{"amount":45.5,"currency":"USD"}"#,
            r#"{"amount":"45.00 GBP"}"#,
            r#"{"amount":"4500 GBP","order":"A-1"}"#,
            r#"{"amount":4500,"currency":"jpy"}"#,
        ] {
            assert!(agrees(raw, &mut scratch), "{raw} is flat");
        }
        // A repeated key is left to the parser, which keeps the last; so are many keys.
        let auto = WholeUnit::Auto;
        let repeated = r#"{"order":"A","order":"B"}"#;
        assert!(CallArgs::flat(repeated, &mut String::new(), auto).is_none());
        let many = r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"order":"X"}"#;
        assert!(CallArgs::flat(many, &mut String::new(), auto).is_none());
        let read = CallArgs::read(many, Value::Null, &mut String::new(), auto);
        assert_eq!(parts(&read).1, Some("X"));
        assert_eq!(read.canonical, many);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn any_flat_arguments_read_as_their_parsed_value_reads(
            members in proptest::collection::vec((
                "(order|order_id|orderId|order_ref|currency|amount_p|amount_minor|amount|x|Note)",
                r#"("[A-Za-z0-9 ~/_-]{0,6}"|-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,3})?([eE][+-]?[0-9]{1,3})?|true|false|null|"(GBP|EUR|JPY|gbp| 12 )")"#,
            ), 0..5),
        ) {
            let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            let raw = format!("{{{}}}", body.join(","));
            let mut keys: Vec<&String> = members.iter().map(|(k, _)| k).collect();
            keys.sort();
            keys.dedup();
            if keys.len() == members.len() {
                prop_assert!(agrees(&raw, &mut String::new()), "{} is flat", raw);
            }
        }
    }
}
