//! Where util.inspect stopped printing: past its depth an object is `[Object]`, an array
//! `[Array]`, a class instance `[ClassName]` (`[Object [AxiosHeaders]]`, `[Object: null
//! prototype]`), with nothing of what they held. [`super::inspect`] reads each as `null`;
//! a reader that must say so (the OpenTelemetry SDK's console exporter, whose attributes
//! may be cut) asks for them, each with the path of members to it.

/// One value past the printed depth.
#[derive(Debug, PartialEq)]
pub(crate) struct Cut {
    /// The members to it from the printed object (`events[0].attributes.orders`).
    pub path: String,
    /// As printed (`[Array]`).
    pub mark: String,
    /// Its byte offset in the text read.
    pub at: usize,
}

/// The path being read and the cuts found on it.
#[derive(Default)]
pub(super) struct Cuts {
    path: Vec<String>,
    pub(super) found: Vec<Cut>,
}

impl Cuts {
    /// Into member `key` (`None`: one JSON cannot name, `[Symbol(x)]`).
    pub(super) fn enter(&mut self, key: Option<&str>) {
        let plain = |k: &str| {
            (k.bytes().next()).is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'$')
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        };
        let step = match key {
            Some(k) if plain(k) && self.path.is_empty() => k.to_string(),
            Some(k) if plain(k) => format!(".{k}"),
            Some(k) => format!("['{k}']"),
            None => "[?]".into(),
        };
        self.path.push(step);
    }

    /// Into an array's item `i`.
    pub(super) fn enter_item(&mut self, i: usize) {
        self.path.push(format!("[{i}]"));
    }

    pub(super) fn leave(&mut self) {
        self.path.pop();
    }

    /// `mark`, read at `at` where a value is, when it is a depth mark.
    pub(super) fn note(&mut self, mark: &[u8], at: usize) {
        if is_depth_mark(mark) {
            self.found.push(Cut {
                path: self.path.concat(),
                mark: String::from_utf8_lossy(mark).into_owned(),
                at,
            });
        }
    }
}

/// `[Object]`, `[Array]`, `[Map]`, `[Refund]`, `[Object [AxiosHeaders]]`, `[Object: null
/// prototype]`: what util.inspect prints past its depth. Not its other marks: `[Function:
/// f]`, `[Circular *1]`, `[Getter]`, `[class X]`, `[Symbol(x)]`.
fn is_depth_mark(mark: &[u8]) -> bool {
    let Some(inner) = mark.strip_prefix(b"[").and_then(|m| m.strip_suffix(b"]")) else {
        return false;
    };
    let named = inner.first().is_some_and(u8::is_ascii_uppercase)
        && inner
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$');
    let accessor = matches!(inner, b"Getter" | b"Setter");
    (named && !accessor)
        || inner.starts_with(b"Object [")
        || inner.starts_with(b"Array [")
        || inner == b"Object: null prototype"
}

#[cfg(test)]
mod tests {
    use super::super::inspect::as_value_noting_cuts;
    use super::*;

    #[test]
    fn depth_marks_are_told_apart_from_other_marks() {
        for mark in [
            "[Object]",
            "[Array]",
            "[Map]",
            "[TraceState]",
            "[Object [AxiosHeaders]]",
            "[Object: null prototype]",
        ] {
            assert!(is_depth_mark(mark.as_bytes()), "{mark}");
        }
        for mark in [
            "[Function: post]",
            "[Function (anonymous)]",
            "[Circular *1]",
            "[Getter]",
            "[Getter/Setter]",
            "[class Refund]",
            "[Symbol(x)]",
            "[length]",
        ] {
            assert!(!is_depth_mark(mark.as_bytes()), "{mark}");
        }
    }

    #[test]
    fn each_cut_is_found_with_its_path() {
        let text = "{\n  name: 'tool',\n  events: [\n    {\n      name: 'ev',\n      attributes: { orders: [Array], 'refund.by': [Object], f: [Function: f] },\n      time: [ 1, 2 ]\n    }\n  ],\n  links: [ [Object] ]\n}";
        let (value, cuts) = as_value_noting_cuts(text).expect("read");
        assert_eq!(
            value["events"][0]["attributes"]["orders"],
            serde_json::Value::Null
        );
        let found: Vec<(&str, &str)> = (cuts.iter())
            .map(|c| (c.path.as_str(), c.mark.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("events[0].attributes.orders", "[Array]"),
                ("events[0].attributes['refund.by']", "[Object]"),
                ("links[0]", "[Object]"),
            ]
        );
        assert_eq!(&text[cuts[0].at..cuts[0].at + 7], "[Array]");
        // Nothing cut: none found.
        let (_, none) = as_value_noting_cuts("{ a: [ 1, 2 ], b: { c: 'd' } }").expect("read");
        assert!(none.is_empty());
    }
}
