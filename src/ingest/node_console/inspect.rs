//! Node.js's `util.inspect` rendering of a value, as `console.log` prints an object: `{ runId:
//! 'b1e8...', step: 1, args: { order: 'A-1', amount_p: 4500 } }`, on one line when short,
//! else a member a line (the lines joined before they come here). Read into the JSON value
//! it stands for: keys bare or quoted, strings in `'`, `"` or `` ` ``, `undefined` as `null`.
//! What JSON has no value for (`[Function: f]`, `[Object]` past the depth, `[Circular *1]`,
//! `Symbol(x)`) is `null`, and a bare word (a `Date`, `NaN`) a string: the members around
//! it still count.

use serde_json::{Map, Number, Value};

/// Deeper than util.inspect ever prints (its depth is 2 by default): a hostile line is
/// turned away instead of overflowing the stack.
const MAX_DEPTH: usize = 32;

/// The value `text` renders, when all of it is one.
pub(crate) fn as_value(text: &str) -> Option<Value> {
    let mut r = Reader {
        b: text.as_bytes(),
        at: 0,
    };
    let value = r.value(0)?;
    r.blanks();
    (r.at == r.b.len()).then_some(value)
}

/// Whether `text` opens an object as util.inspect writes one: `{}`, or `{` then a blank or
/// the end (`{ runId: ...`, or the members on the lines below). JSON's `{"a":1}` is not.
pub(crate) fn opens_object(text: &[u8]) -> bool {
    matches!(text, [b'{'] | [b'{', b'}', ..] | [b'{', b' ' | b'\n', ..])
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn blanks(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.blanks();
        let ate = self.peek() == Some(c);
        self.at += usize::from(ate);
        ate
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.blanks();
        // `<ref *1> { ... }`: an object that refers to itself, marked.
        if self.b[self.at..].starts_with(b"<ref *") {
            let close = self.b[self.at..].iter().position(|&c| c == b'>')?;
            self.at += close + 1;
            self.blanks();
        }
        match self.peek()? {
            b'{' => self.object(depth),
            // `[Object: null prototype] { ... }`: the object after the mark.
            b'[' if self.special() => {
                self.blanks();
                match self.peek() {
                    Some(b'{') => self.object(depth),
                    _ => Some(Value::Null),
                }
            }
            b'[' => self.array(depth),
            q @ (b'\'' | b'"' | b'`') => self.string(q).map(Value::String),
            _ => self.word(depth),
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let mut members = Map::new();
        loop {
            if self.eat(b'}') {
                return Some(Value::Object(members));
            }
            if !members.is_empty() && !self.eat(b',') {
                return None;
            }
            // A trailing comma, as a member a line may end.
            if self.eat(b'}') {
                return Some(Value::Object(members));
            }
            self.blanks();
            // `[Symbol(x)]: 1`: a key JSON cannot have.
            let key = match self.peek()? {
                q @ (b'\'' | b'"') => Some(self.string(q)?),
                b'[' => {
                    self.special().then_some(())?;
                    None
                }
                _ => Some(self.name()?),
            };
            if !self.eat(b':') {
                return None;
            }
            let value = self.value(depth + 1)?;
            if let Some(key) = key {
                members.insert(key, value);
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            if self.eat(b']') {
                return Some(Value::Array(items));
            }
            if !items.is_empty() && !self.eat(b',') {
                return None;
            }
            if self.eat(b']') {
                return Some(Value::Array(items));
            }
            self.blanks();
            // `... 98 more items`: what util.inspect left out.
            if self.b[self.at..].starts_with(b"... ") {
                let end = (self.b[self.at..].iter()).position(|&c| c == b',' || c == b']')?;
                self.at += end;
                continue;
            }
            items.push(self.value(depth + 1)?);
        }
    }

    /// `[Function: f]`, `[Object]`, `[Array]`, `[Circular *1]`, `[Getter]`, `[class X]`: a
    /// bracketed word where a value is, read past.
    fn special(&mut self) -> bool {
        let rest = &self.b[self.at..];
        let special = rest.get(1).is_some_and(u8::is_ascii_uppercase)
            || rest.starts_with(b"[class ")
            || rest.starts_with(b"[Symbol(");
        match rest.iter().position(|&c| c == b']') {
            Some(close) if special && !rest[1..close].contains(&b'[') => {
                self.at += close + 1;
                true
            }
            _ => false,
        }
    }

    /// A quoted string; util.inspect escapes its own quote and control characters; a long
    /// one broken over lines is `'...' +` then the rest.
    fn string(&mut self, quote: u8) -> Option<String> {
        let mut out = Vec::new();
        loop {
            self.at += 1;
            loop {
                let c = self.peek()?;
                self.at += 1;
                match c {
                    b'\\' => {
                        let e = self.peek()?;
                        self.at += 1;
                        match e {
                            b'n' => out.push(b'\n'),
                            b't' => out.push(b'\t'),
                            b'r' => out.push(b'\r'),
                            b'b' => out.push(8),
                            b'f' => out.push(12),
                            b'x' | b'u' => self.escaped_char(e, &mut out)?,
                            other => out.push(other),
                        }
                    }
                    c if c == quote => break,
                    c => out.push(c),
                }
            }
            // `'first part' +\n  'second part'`.
            let mark = self.at;
            self.blanks();
            if self.peek() == Some(b'+') {
                self.at += 1;
                self.blanks();
                if self.peek() == Some(quote) {
                    continue;
                }
            }
            self.at = mark;
            return String::from_utf8(out).ok();
        }
    }

    /// `\xNN` or `\uNNNN` (a lone surrogate as the replacement character).
    fn escaped_char(&mut self, kind: u8, out: &mut Vec<u8>) -> Option<()> {
        let len = if kind == b'x' { 2 } else { 4 };
        let digits = std::str::from_utf8(self.b.get(self.at..self.at + len)?).ok()?;
        let code = u32::from_str_radix(digits, 16).ok()?;
        self.at += len;
        let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        Some(())
    }

    /// A member's bare name: letters, digits, `_` and `$`.
    fn name(&mut self) -> Option<String> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
        {
            self.at += 1;
        }
        (self.at > start).then(|| String::from_utf8_lossy(&self.b[start..self.at]).into_owned())
    }

    /// A bare word up to the next blank, `,`, `}` or `]`: a number, `true`, `undefined`, a Date; a
    /// class's name before its object (`AxiosHeaders { ... }`, `Map(1) { ... }`) gives the
    /// object.
    fn word(&mut self, depth: usize) -> Option<Value> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b'{') && !c.is_ascii_whitespace())
        {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.b[start..self.at]).ok()?;
        let end = self.at;
        self.blanks();
        if self.peek() != Some(b'{') {
            self.at = end;
        } else {
            let class = word.trim_end_matches(|c: char| c.is_ascii_digit() || "()".contains(c));
            let named = !class.is_empty()
                && (class.bytes()).all(|c| c.is_ascii_alphanumeric() || b"_$".contains(&c));
            return if named { self.object(depth) } else { None };
        }
        if word.is_empty() {
            return None;
        }
        Some(match word {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" | "undefined" => Value::Null,
            _ => match number(word) {
                Some(n) => Value::Number(n),
                None if word.starts_with("Symbol(") => Value::Null,
                None => Value::String(word.to_owned()),
            },
        })
    }
}

/// A JSON number for `word` (a BigInt's `n` dropped), or `None` (`NaN`, `Infinity`).
fn number(word: &str) -> Option<Number> {
    let digits = word.strip_suffix('n').unwrap_or(word);
    if let Ok(i) = digits.parse::<i64>() {
        return Some(i.into());
    }
    let first = digits.bytes().next()?;
    (first.is_ascii_digit() || first == b'-')
        .then(|| digits.parse::<f64>().ok())
        .flatten()
        .and_then(Number::from_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_inspected_object_is_the_json_it_stands_for() {
        let text = "{\n  runId: 'b1e8',\n  step: 1,\n  tool: 'issue_refund',\n  args: { order: 'A-1', amount_p: 4500 },\n  idempotencyKey: undefined\n}";
        assert_eq!(
            as_value(text),
            Some(json!({"runId": "b1e8", "step": 1, "tool": "issue_refund",
                "args": {"order": "A-1", "amount_p": 4500}, "idempotencyKey": null}))
        );
        assert_eq!(
            as_value("{ err: \"Timeout awaiting 'request' for 1000ms\", code: 'ETIMEDOUT' }"),
            Some(json!({"err": "Timeout awaiting 'request' for 1000ms", "code": "ETIMEDOUT"}))
        );
        assert_eq!(as_value("{}"), Some(json!({})));
    }

    #[test]
    fn what_json_cannot_hold_is_null_and_the_rest_is_kept() {
        let text = "<ref *1> { 'content-type': 'application/json', at: 2026-12-06T07:41:20.706Z, f: [Function: post], deep: [Object], self: [Circular *1], list: [ 1, 2, ... 98 more items ], big: 12n, 'it\\'s': 'a' +\n  'b', h: AxiosHeaders { Accept: '*/*' } }";
        assert_eq!(
            as_value(text),
            Some(
                json!({"content-type": "application/json", "at": "2026-12-06T07:41:20.706Z",
                "f": null, "deep": null, "self": null, "list": [1, 2], "big": 12,
                "it's": "ab", "h": {"Accept": "*/*"}})
            )
        );
    }

    #[test]
    fn text_that_is_no_inspected_value_is_none() {
        for text in [
            "{ runId: 'open",
            "{ a: 1 } trailing",
            "{ a 1 }",
            "{ a: 1 b: 2 }",
            "the refund has been issued",
        ] {
            assert!(
                as_value(text).is_none() || !matches!(as_value(text), Some(Value::Object(_))),
                "{text}"
            );
        }
        let deep = "{ a: ".repeat(100) + &"}".repeat(100);
        assert_eq!(as_value(&deep), None);
        assert!(opens_object(b"{ runId: 'x' }") && opens_object(b"{") && opens_object(b"{}"));
        assert!(!opens_object(b"{\"runId\":\"x\"}"));
    }
}
