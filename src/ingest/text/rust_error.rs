//! A failed request as Rust's HTTP clients print it, after the program's words about it or
//! alone: reqwest's `Display` (`error sending request for url (http://...)`, the same words
//! for a timeout and a refused connection, so ambiguous) and any error's `Debug`
//! (`reqwest::Error { kind: Request, url: "...", source: TimedOut }`, whose source says
//! which). Read as nothing, a timed-out attempt had no outcome, and the retry after it no
//! reason.

/// The error's class and its text, if `field` (or its part after `...failed: `) is one.
pub(super) fn request_error(field: &[u8]) -> Option<(&'static [u8], &[u8])> {
    let error = match colon_blank(field) {
        Some(cut) if super::words_about_a_failure(&field[..cut]) == Some(true) => {
            field[cut + 2..].trim_ascii()
        }
        _ => field,
    };
    if error.starts_with(b"error sending request for url (")
        || error.starts_with(b"error trying to connect: ")
    {
        return Some((b"reqwest::Error", error));
    }
    debug_error(error)
}

/// The first `: ` in `field` (a search for its colons: no searcher built per line).
fn colon_blank(field: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b':', field).find(|&i| field.get(i + 1) == Some(&b' '))
}

/// `path::Error { kind: ..., source: ... }`: a Rust error's `Debug`, its type a path that
/// ends in `Error`; the class is the path.
fn debug_error(error: &[u8]) -> Option<(&'static [u8], &[u8])> {
    let brace = memchr::memchr_iter(b'{', error)
        .find(|&i| i > 0 && error[i - 1] == b' ' && error.get(i + 1) == Some(&b' '))?
        - 1;
    let class = &error[..brace];
    let is_path = class.windows(2).any(|w| w == b"::")
        && class.ends_with(b"Error")
        && class
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
    if !is_path {
        return None;
    }
    // The class is one of the few crates' own; others keep their own words as the message.
    let class: &'static [u8] = match class {
        b"reqwest::Error" => b"reqwest::Error",
        b"hyper::Error" => b"hyper::Error",
        b"hyper_util::client::legacy::Error" => b"hyper_util::client::legacy::Error",
        b"ureq::Error" => b"ureq::Error",
        _ => b"Error",
    };
    // The fields in braces are the message: the class is said once.
    Some((class, error[brace + 1..].trim_ascii()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(field: &str) -> Option<(String, String)> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        request_error(field.as_bytes()).map(|(c, m)| (text(c), text(m)))
    }

    #[test]
    fn reqwests_display_and_debug_are_failures() {
        assert_eq!(
            read("refund request failed: error sending request for url (http://x/v1/refunds)"),
            Some((
                "reqwest::Error".into(),
                "error sending request for url (http://x/v1/refunds)".into()
            ))
        );
        let debug = r#"refund request failed: reqwest::Error { kind: Request, url: "http://x/v1/refunds", source: TimedOut }; retrying"#;
        let (class, message) = read(debug).unwrap();
        assert_eq!(class, "reqwest::Error");
        assert!(message.contains("source: TimedOut"), "{message}");
        assert_eq!(
            read("error sending request for url (http://x)").unwrap().0,
            "reqwest::Error"
        );
    }

    #[test]
    fn other_words_and_values_are_no_request_error() {
        for field in [
            "receipt email failed: error sending request for url (http://mail/x)",
            "refund created: Refund { id: \"re_1\" }",
            "request failed: Config { retries: 2 }",
            "sending request for url (http://x)",
        ] {
            assert_eq!(read(field), None, "{field}");
        }
    }
}
