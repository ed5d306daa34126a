//! Why serde_json refused a line's (or a document's) JSON, in a skipped line's reason.

/// Why bytes are no JSON, for a skipped line's reason: serde_json's message without its
/// `at line 1`, which beside the real `path:line` read as a contradiction (review37 L2);
/// the column stays. A document of several lines keeps its line.
pub(crate) fn json_why(e: &serde_json::Error) -> String {
    let said = e.to_string();
    let tail = format!(" at line 1 column {}", e.column());
    let why = match said.strip_suffix(&tail) {
        Some(why) if e.line() == 1 => format!("{why} at column {}", e.column()),
        _ => said,
    };
    match why.strip_prefix(RECURSION_LIMIT) {
        Some(place) => format!(
            "nested too deep{place}: more than {} levels of arrays and objects, the most \
             the JSON reader reads",
            crate::event::MAX_JSON_DEPTH
        ),
        None => why,
    }
}

/// serde_json's words for JSON nested past its recursion limit.
const RECURSION_LIMIT: &str = "recursion limit exceeded";

/// The reason a line (or a document) whose JSON serde_json refused is skipped: `not JSON:`
/// and why ([`json_why`]), or, for JSON nested deeper than it reads, that it is so:
/// serde_json's `recursion limit exceeded` said nothing of depth to a reader of the report.
pub(crate) fn unreadable_json(e: &serde_json::Error) -> String {
    let why = json_why(e);
    match why.starts_with("nested too deep") {
        true => why,
        false => format!("not JSON: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> serde_json::Error {
        serde_json::from_str::<serde_json::Value>(text).unwrap_err()
    }

    /// serde_json's `at line 1` is dropped beside the real `path:line`; its column stays.
    #[test]
    fn json_errors_say_their_column_not_line_one() {
        assert_eq!(
            json_why(&refused("{\"a\":1} x")),
            "trailing characters at column 9"
        );
        assert!(json_why(&refused("{\n\"a\" 1}")).ends_with("at line 2 column 5"));
        assert_eq!(
            unreadable_json(&refused("{\"a\": tru}")),
            "not JSON: expected ident at column 10"
        );
    }

    /// JSON nested past serde_json's limit is said to be nested too deep, and how deep the
    /// reader goes, not `not JSON: recursion limit exceeded`; JSON at the limit is read.
    #[test]
    fn json_nested_past_the_readers_depth_is_said_to_be() {
        let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        let deepest = crate::event::MAX_JSON_DEPTH;
        assert!(serde_json::from_str::<serde_json::Value>(&nested(deepest)).is_ok());
        let too_deep = refused(&nested(deepest + 1));
        assert_eq!(
            unreadable_json(&too_deep),
            "nested too deep at column 128: more than 127 levels of arrays and objects, the \
             most the JSON reader reads"
        );
        // Over several lines, the line in the document stays.
        let lines = format!("{{\n\"a\": {}}}", nested(200));
        assert!(unreadable_json(&refused(&lines)).starts_with("nested too deep at line 2 column"));
    }
}
