//! A line's JSON object read without serde when it is plain: names and strings of
//! printable ASCII without escapes, nesting no deeper than [`MAX_DEPTH`] (the scalars are
//! read as [`crate::flat_json`] reads a tool call's arguments). Nearly every line of a structured log is
//! plain, and serde_json's reading was about half of the JSON Lines parse. Anything else
//! (an escape, a number or word JSON does not allow, a second object after the first) is
//! left to serde_json, which reads every line alike: a property test holds the two to the
//! same members for every line this reading accepts.

use crate::flat_json::{literal, number, plain_string};

/// Nested objects and arrays deeper than this are left to serde_json (its own limit is 128).
const MAX_DEPTH: u32 = 32;

/// Gives `member(name, value)` for each member of the object that `text` is, in order,
/// `value` as written (a string with its quotes, an object with its braces), and returns
/// true; false as soon as `text` is not a plain object. Members may have been given by
/// then: the caller starts again with serde_json.
pub(super) fn plain_members<'a>(text: &'a str, mut member: impl FnMut(&'a str, &'a str)) -> bool {
    let b = text.as_bytes();
    let mut at = skip_blanks(b, 0);
    if b.get(at) != Some(&b'{') {
        return false;
    }
    at = skip_blanks(b, at + 1);
    if b.get(at) == Some(&b'}') {
        return skip_blanks(b, at + 1) == b.len();
    }
    loop {
        let Some(name_end) = plain_string(b, at) else {
            return false;
        };
        let name = &text[at + 1..name_end - 1];
        at = skip_blanks(b, name_end);
        if b.get(at) != Some(&b':') {
            return false;
        }
        at = skip_blanks(b, at + 1);
        let Some(value_end) = value_end(b, at, 0) else {
            return false;
        };
        member(name, &text[at..value_end]);
        at = skip_blanks(b, value_end);
        match b.get(at) {
            Some(b',') => at = skip_blanks(b, at + 1),
            Some(b'}') => return skip_blanks(b, at + 1) == b.len(),
            _ => return false,
        }
    }
}

/// Past JSON's whitespace from `at`.
fn skip_blanks(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Just past the plain value at `at`, `depth` containers deep.
fn value_end(b: &[u8], at: usize, depth: u32) -> Option<usize> {
    match *b.get(at)? {
        b'"' => plain_string(b, at),
        b'{' => container_end(b, at, depth, b'}'),
        b'[' => container_end(b, at, depth, b']'),
        b't' => literal(b, at, b"true"),
        b'f' => literal(b, at, b"false"),
        b'n' => literal(b, at, b"null"),
        _ => number(b, at),
    }
}

/// Just past the object (closed by `}`) or array (`]`) at `at`.
fn container_end(b: &[u8], at: usize, depth: u32, close: u8) -> Option<usize> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let mut i = skip_blanks(b, at + 1);
    if b.get(i) == Some(&close) {
        return Some(i + 1);
    }
    loop {
        if close == b'}' {
            i = skip_blanks(b, plain_string(b, i)?);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_blanks(b, i + 1);
        }
        i = skip_blanks(b, value_end(b, i, depth + 1)?);
        match *b.get(i)? {
            b',' => i = skip_blanks(b, i + 1),
            c if c == close => return Some(i + 1),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn members(text: &str) -> Option<Vec<(String, String)>> {
        let mut got = Vec::new();
        plain_members(text, |k, v| got.push((k.to_string(), v.to_string()))).then_some(got)
    }

    /// The members serde_json reads, values as written.
    fn by_serde(text: &str) -> Option<Vec<(String, String)>> {
        struct Members(Vec<(String, String)>);
        impl<'de> serde::Deserialize<'de> for Members {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = Members;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<M: serde::de::MapAccess<'de>>(
                        self,
                        mut m: M,
                    ) -> Result<Members, M::Error> {
                        let mut all = Vec::new();
                        while let Some(k) = m.next_key::<String>()? {
                            let v: &RawValue = m.next_value()?;
                            all.push((k, v.get().to_string()));
                        }
                        Ok(Members(all))
                    }
                }
                d.deserialize_map(V)
            }
        }
        serde_json::from_str::<Members>(text).ok().map(|m| m.0)
    }

    #[test]
    fn plain_objects_read_as_serde_reads_them() {
        for text in [
            r#"{"ts":"2026-11-01T00:00:02.546Z","type":"tool_call","run":"w0r1","step":1,"args":{"order":"A-1","n":[1,2.5e-3,{"x":null}]}}"#,
            r#" { "a" : true , "b":false,"c" :null, "d":-0.5E+7 , "e":[] ,"f":{} } "#,
            "{}",
        ] {
            assert_eq!(members(text), by_serde(text), "{text}");
        }
    }

    #[test]
    fn lines_that_are_not_plain_objects_are_left_to_serde() {
        for text in [
            r#"{"a":"tab\tescaped"}"#,
            r#"{"a":"caf\u00e9"}"#,
            // Not ASCII: read by serde (as tool calls' arguments are).
            r#"{"a":"café"}"#,
            r#"{"a\"b":1}"#,
            "{\"a\":\"raw\u{1}control\"}",
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":-}"#,
            r#"{"a":+1}"#,
            r#"{"a":tru}"#,
            r#"{"a":truex}"#,
            r#"{"a":1,}"#,
            r#"{"a":1}{"b":2}"#,
            r#"{"a":1} x"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":{"b":1,}}"#,
            r#"{"a":{"b"}}"#,
            r#"{"a":[1 2]}"#,
            r#"[1,2]"#,
            r#"{"a":1"#,
            "",
        ] {
            assert_eq!(members(text), None, "{text}");
        }
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(40), "]".repeat(40));
        assert_eq!(members(&deep), None);
        assert!(by_serde(&deep).is_some());
    }

    /// Objects built from JSON's grammar (with spellings near it: escapes, control
    /// characters, numbers JSON refuses, broken words), some then cut or given a stray
    /// byte: whatever this reading accepts, serde_json reads as the same members.
    fn json_ish() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let scalar = prop::sample::select(vec![
            "\"a\"",
            "\"\"",
            "\"s p\"",
            "\"x\\\"y\"",
            "\"\u{1}\"",
            "\"é\"",
            "0",
            "-1",
            "12",
            "1.5",
            "2e3",
            "-0.5E+7",
            "01",
            "1.",
            ".5",
            "1e",
            "-",
            "true",
            "false",
            "null",
            "nul",
            "truex",
        ])
        .prop_map(str::to_string);
        let blank = prop::sample::select(vec!["", "", " ", "\t", "\r\n"]);
        let value = scalar.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-c]", inner), 0..4).prop_map(|v| {
                    let m: Vec<String> = v.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", m.join(","))
                }),
            ]
        });
        let members = prop::collection::vec(("[a-z_]{1,4}", value, blank), 0..6);
        let damage = (
            0..4u8,
            any::<prop::sample::Index>(),
            prop::sample::select(vec![",", "}", "\"", " ", "x"]),
        );
        (members, damage).prop_map(|(members, (kind, at, byte))| {
            let m: Vec<String> = (members.iter())
                .map(|(k, v, b)| format!("{b}\"{k}\"{b}:{b}{v}{b}"))
                .collect();
            let mut text = format!("{{{}}}", m.join(","));
            let at = at.index(text.len() + 1);
            if text.is_char_boundary(at) {
                match kind {
                    0 => text.truncate(at),
                    1 => text.insert_str(at, byte),
                    _ => {}
                }
            }
            text
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        #[test]
        fn whatever_is_read_plainly_serde_reads_alike(text in json_ish()) {
            if let Some(got) = members(&text) {
                proptest::prop_assert_eq!(Some(got), by_serde(&text), "{}", text);
            }
        }
    }

    /// The property must see plain objects, not only refusals.
    #[test]
    fn the_generator_makes_plain_objects_too() {
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let plain = (0..4000)
            .filter(|_| {
                let text = json_ish().new_tree(&mut runner).unwrap().current();
                members(&text).is_some()
            })
            .count();
        assert!(plain > 400, "{plain}");
    }
}
