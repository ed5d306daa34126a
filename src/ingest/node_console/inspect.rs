//! Node.js's `util.inspect` rendering of a value, as `console.log` prints an object: `{ runId:
//! 'b1e8...', step: 1, args: { order: 'A-1', amount_p: 4500 } }`, on one line when short,
//! else a member a line (the lines joined before they come here). Read into the JSON value
//! it stands for: keys bare or quoted, strings in `'`, `"` or `` ` ``, `undefined` as `null`.
//! What JSON has no value for (`[Function: f]`, `[Object]` past the depth, `[Circular *1]`,
//! `Symbol(x)`) is `null`, and a bare word (a `Date`, `NaN`) a string: the members around
//! it still count.

pub(crate) use super::depth_cuts::Cut;
use super::depth_cuts::Cuts;
use serde_json::{Map, Number, Value};

/// Deeper than util.inspect ever prints (its depth is 2 by default): a hostile line is
/// turned away instead of overflowing the stack.
const MAX_DEPTH: usize = 32;

/// The value `text` renders, when all of it is one.
pub(crate) fn as_value(text: &str) -> Option<Value> {
    read_all(text, None).map(|(value, _)| value)
}

/// [`as_value`], with the values util.inspect cut at its depth (read as `null`), where
/// they were and what they were printed as.
pub(crate) fn as_value_noting_cuts(text: &str) -> Option<(Value, Vec<Cut>)> {
    read_all(text, Some(Cuts::default())).map(|(value, cuts)| (value, cuts.unwrap_or_default()))
}

fn read_all(text: &str, cuts: Option<Cuts>) -> Option<(Value, Option<Vec<Cut>>)> {
    let mut r = Reader {
        b: text.as_bytes(),
        at: 0,
        cuts,
    };
    let value = r.value(0)?;
    r.blanks();
    (r.at == r.b.len()).then(|| (value, r.cuts.map(|c| c.found)))
}

/// Whether `text` opens an object as util.inspect writes one: `{}`, or `{` then a blank or
/// the end (`{ runId: ...`, or the members on the lines below). JSON's `{"a":1}` is not.
pub(crate) fn opens_object(text: &[u8]) -> bool {
    matches!(text, [b'{'] | [b'{', b'}', ..] | [b'{', b' ' | b'\n', ..])
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    /// Kept only when asked for: the values cut at the printed depth.
    cuts: Option<Cuts>,
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
        let start = self.at;
        match self.peek()? {
            b'{' => self.object(depth),
            // `[Object: null prototype] { ... }`: the object after the mark.
            b'[' if self.special() => {
                let mark = start..self.at;
                self.blanks();
                match self.peek() {
                    Some(b'{') => self.object(depth),
                    _ => {
                        if let Some(cuts) = &mut self.cuts {
                            cuts.note(&self.b[mark.clone()], mark.start);
                        }
                        Some(Value::Null)
                    }
                }
            }
            b'[' => self.array(depth),
            // `<Buffer 7b 22>`, `<pending>`, `<1 empty item>`: nothing JSON holds.
            b'<' => self.angled().then_some(Value::Null),
            q @ (b'\'' | b'"' | b'`') => self.string(q).map(Value::String),
            _ => self.word(depth),
        }
    }

    /// Reads past `<...>` on its line.
    fn angled(&mut self) -> bool {
        let rest = &self.b[self.at..];
        match rest.iter().position(|&c| c == b'>' || c == b'\n') {
            Some(close) if rest[close] == b'>' => {
                self.at += close + 1;
                true
            }
            _ => false,
        }
    }

    /// Reads past `[...]` on its line (a key JSON cannot have: `[Symbol(x)]`, `%o`'s
    /// `[length]`, an error's `[cause]`).
    fn bracketed(&mut self) -> bool {
        let rest = &self.b[self.at..];
        let close = (rest.iter().skip(1)).position(|&c| c == b']' || c == b'\n' || c == b'[');
        match close.map(|c| c + 1) {
            Some(close) if close > 1 && rest[close] == b']' => {
                self.at += close + 1;
                true
            }
            _ => false,
        }
    }

    /// `:` between a key and its value, or a Map's `=>`.
    fn eat_separator(&mut self) -> bool {
        if self.eat(b':') {
            return true;
        }
        let arrow = self.b[self.at..].starts_with(b"=>");
        self.at += if arrow { 2 } else { 0 };
        arrow
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let mut members = Map::new();
        let mut first = true;
        loop {
            if self.eat(b'}') {
                return Some(Value::Object(members));
            }
            if !std::mem::take(&mut first) && !self.eat(b',') {
                return None;
            }
            // A trailing comma, as a member a line may end.
            if self.eat(b'}') {
                return Some(Value::Object(members));
            }
            self.blanks();
            // `[Symbol(x)]: 1`, `[length]: 1`: a key JSON cannot have.
            let key = match self.peek()? {
                q @ (b'\'' | b'"') => Some(self.string(q)?),
                b'[' => {
                    self.bracketed().then_some(())?;
                    None
                }
                // A WeakMap's `<items unknown>`.
                b'<' => {
                    self.angled().then_some(())?;
                    continue;
                }
                _ => Some(self.name()?),
            };
            if !self.eat_separator() {
                // A Set's item (`Set(2) { 'a', 'b' }`): no member.
                self.blanks();
                if matches!(self.peek(), Some(b',' | b'}')) {
                    continue;
                }
                return None;
            }
            if let Some(cuts) = &mut self.cuts {
                cuts.enter(key.as_deref());
            }
            let value = self.value(depth + 1)?;
            if let Some(cuts) = &mut self.cuts {
                cuts.leave();
            }
            if let Some(key) = key {
                members.insert(key, value);
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.at += 1;
        let mut items = Vec::new();
        let mut first = true;
        loop {
            if self.eat(b']') {
                return Some(Value::Array(items));
            }
            if !std::mem::take(&mut first) && !self.eat(b',') {
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
            if self.keyed_item(depth)? {
                continue;
            }
            if let Some(cuts) = &mut self.cuts {
                cuts.enter_item(items.len());
            }
            items.push(self.value(depth + 1)?);
            if let Some(cuts) = &mut self.cuts {
                cuts.leave();
            }
        }
    }

    /// An array's named member (`[length]: 1` under `%o`, `extra: 'x'`), read past: no
    /// item. `Some(false)` when the next item is a plain one.
    fn keyed_item(&mut self, depth: usize) -> Option<bool> {
        let start = self.at;
        let named = match self.peek() {
            Some(b'[') => self.bracketed(),
            _ => self.name().is_some(),
        };
        if named && self.peek() == Some(b':') && self.b.get(self.at + 1) == Some(&b' ') {
            self.at += 1;
            self.value(depth + 1)?;
            return Some(true);
        }
        self.at = start;
        Some(false)
    }

    /// `[Function: f]`, `[Object]`, `[Array]`, `[Circular *1]`, `[Getter]`, `[class X]`: a
    /// bracketed word where a value is, read past.
    fn special(&mut self) -> bool {
        let rest = &self.b[self.at..];
        let special = rest.get(1).is_some_and(u8::is_ascii_uppercase)
            || rest.starts_with(b"[class ")
            || rest.starts_with(b"[Symbol(");
        if !special {
            return false;
        }
        // Its closing bracket on its line; one mark may hold another (`[Object
        // [AxiosHeaders]]`, a class instance past the depth), no more. The look stops at a
        // third bracket in: an array of unclosed marks (`[ [A[, x], [A[, x], ...`) made
        // each item look to the end of the line, and a long line took minutes.
        let mut depth = 0u32;
        let close = rest.iter().position(|&c| {
            depth = match c {
                b'[' => depth + 1,
                b']' => depth.saturating_sub(1),
                _ => depth,
            };
            depth == 0 || depth > 2 || c == b'\n'
        });
        match close {
            Some(close) if rest[close] == b']' && depth == 0 => {
                self.at += close + 1;
                true
            }
            _ => false,
        }
    }

    /// A quoted string; util.inspect escapes its own quote and control characters; a long
    /// one broken over lines is `'...' +` then the rest, each part in its own quote.
    fn string(&mut self, mut quote: u8) -> Option<String> {
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
            // `'first 10,000 characters'... 2000 more characters`: util.inspect's cut of a
            // long string (its `maxStringLength`); the string is what was printed.
            if let Some(rest) = self.b[self.at..].strip_prefix(b"... ") {
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                let tail = &rest[digits..];
                if digits > 0 && tail.starts_with(b" more character") {
                    let word = if tail.starts_with(b" more characters") {
                        16
                    } else {
                        15
                    };
                    self.at += 4 + digits + word;
                }
            }
            // `'first part' +\n  'second part'`.
            let mark = self.at;
            self.blanks();
            if self.peek() == Some(b'+') {
                self.at += 1;
                self.blanks();
                // The next part in whichever quote suits it.
                if let Some(q @ (b'\'' | b'"' | b'`')) = self.peek() {
                    quote = q;
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
        if is_error_header(&self.b[start..]) {
            return self.error(start, depth);
        }
        while self
            .peek()
            .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b'{') && !c.is_ascii_whitespace())
        {
            self.at += 1;
        }
        let word = std::str::from_utf8(&self.b[start..self.at]).ok()?;
        let end = self.at;
        // A class's name before its object or array: `AxiosHeaders {`, `Map(1) {`,
        // `Object [AxiosHeaders] {`, `Uint8Array(3) [`.
        let class = word.trim_end_matches(|c: char| c.is_ascii_digit() || "()".contains(c));
        let named = class.starts_with(|c: char| c.is_ascii_uppercase())
            && (class.bytes()).all(|c| c.is_ascii_alphanumeric() || b"_$".contains(&c));
        self.blanks();
        if named && self.peek() == Some(b'[') && self.special() {
            self.blanks();
        }
        match self.peek() {
            Some(b'{') if named => {
                let object = self.object(depth)?;
                // A URL object is its address.
                return Some(match (class, object.get("href")) {
                    ("URL", Some(Value::String(href))) => Value::String(href.clone()),
                    _ => object,
                });
            }
            Some(b'[') if named => return self.array(depth),
            Some(b'{') => return None,
            _ => self.at = end,
        }
        // `Invalid Date`: one value of two words.
        if word == "Invalid" && self.b[end..].starts_with(b" Date") {
            self.at = end + 5;
            return Some(Value::Null);
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

impl Reader<'_> {
    /// An error where a value is: its first line (`DOMException [TimeoutError]: The
    /// operation was aborted due to timeout`) is the value; its stack below it (`at ...`
    /// lines) and its own members after the stack (`at ... {`, `code: 'ETIMEDOUT'`, `}`)
    /// are read past.
    fn error(&mut self, start: usize, depth: usize) -> Option<Value> {
        let line_end = |from: usize| {
            (self.b[from..].iter().position(|&c| c == b'\n')).map_or(self.b.len(), |p| from + p)
        };
        let mut end = line_end(start);
        let header = String::from_utf8_lossy(self.b[start..end].trim_ascii_end()).into_owned();
        let header = header.strip_suffix(" {").unwrap_or(&header).to_owned();
        let mut members_at = self.b[..end]
            .trim_ascii_end()
            .ends_with(b" {")
            .then(|| self.b[..end].trim_ascii_end().len() - 1);
        while members_at.is_none() && end < self.b.len() {
            let next = end + 1;
            let next_end = line_end(next);
            let line = self.b[next..next_end].trim_ascii();
            if !(line.starts_with(b"at ") || line.starts_with(b"... ")) {
                break;
            }
            end = next_end;
            if line.ends_with(b" {") {
                members_at = Some(next + (self.b[next..next_end].trim_ascii_end().len() - 1));
            }
        }
        self.at = end;
        if let Some(open) = members_at {
            self.at = open;
            // At the error's own depth: an error among its members (`cause: Error: ... {`)
            // is one level deeper, so a hostile chain of them is turned away at
            // `MAX_DEPTH` instead of overflowing the stack.
            self.object(depth)?;
        }
        Some(Value::String(header))
    }
}

/// Whether `text` starts with an error's first line as Node prints it: a class ending in
/// `Error` or `Exception`, perhaps its name in brackets, then `: ` (`TypeError: fetch
/// failed`, `DOMException [TimeoutError]: ...`, `RequestError: Timeout ...`).
pub(crate) fn is_error_header(text: &[u8]) -> bool {
    let name_end = (text.iter())
        .position(|b| !(b.is_ascii_alphanumeric() || b"_$.".contains(b)))
        .unwrap_or(text.len());
    let name = &text[..name_end];
    let class = name.first().is_some_and(u8::is_ascii_uppercase)
        && (name.ends_with(b"Error") || name.ends_with(b"Exception"));
    let mut rest = &text[name_end..];
    if let Some(bracket) = rest.strip_prefix(b" [")
        && let Some(close) = bracket.iter().take(64).position(|&b| b == b']')
    {
        rest = &bracket[close + 1..];
    }
    class && rest.starts_with(b": ")
}

/// A JSON number for `word` (a BigInt's `n` dropped), or `None` (`NaN`, `Infinity`, an
/// integer too long for JSON's numbers to keep, which stays its text).
fn number(word: &str) -> Option<Number> {
    let digits = word.strip_suffix('n').unwrap_or(word);
    if let Ok(i) = digits.parse::<i64>() {
        return Some(i.into());
    }
    if let Ok(u) = digits.parse::<u64>() {
        return Some(u.into());
    }
    let first = digits.bytes().next()?;
    let integer = digits
        .trim_start_matches('-')
        .bytes()
        .all(|b| b.is_ascii_digit());
    (!integer && (first.is_ascii_digit() || first == b'-'))
        .then(|| digits.parse::<f64>().ok())
        .flatten()
        .and_then(Number::from_f64)
}
