//! The small readers of a line's words that every shape shares: a request, a status
//! line, the message after a stamp, a number, text out of bytes.

use super::*;

/// `POST https://...`; `POST url=https://...` too, as tracing's text layout writes a
/// request logged as the method with its URL as a field (`info!(%url, "POST")`): one blank
/// between the message and the field.
#[inline]
pub(super) fn http_request(field: &[u8]) -> Option<(&[u8], &[u8])> {
    let sp = field.iter().position(|&b| b == b' ')?;
    let (method, url) = (&field[..sp], field[sp + 1..].trim_ascii());
    let url = (url
        .strip_prefix(b"url=")
        .or_else(|| url.strip_prefix(b"uri=")))
    .unwrap_or(url);
    (HTTP_METHODS.contains(&method) && !url.is_empty() && !url.contains(&b' '))
        .then_some((method, url))
}

/// `201 Created`, `409 Conflict`, `503`; also after the protocol, as HTTP clients and
/// proxies write a status line (`HTTP/1.1 201 Created`, `HTTP/2 409`, `HTTP 201`). Not an
/// interim answer (`100 Continue`, `103 Early Hints`) nor a proxy's `200 Connection
/// established` (its tunnel is open; the request is yet to be sent): neither ends an attempt.
#[inline]
pub(super) fn status_line(field: &[u8]) -> Option<(u16, &[u8])> {
    let field = match field.first() {
        Some(b'H' | b'h') => without_protocol(field),
        _ => field,
    };
    if field.len() < 3 || !field[..3].iter().all(u8::is_ascii_digit) {
        return None;
    }
    if field.len() > 3 && field[3] != b' ' {
        return None;
    }
    let status = parse_u32(&field[..3])? as u16;
    if !(200..600).contains(&status) {
        return None;
    }
    let text = field[3..].trim_ascii();
    let tunnel = status == 200 && text.eq_ignore_ascii_case(b"Connection established");
    (!tunnel).then_some((status, text))
}

/// `field` after a leading `HTTP/1.1 `, `HTTP/2 ` or `HTTP ` (in any case); else all of it.
#[cold]
fn without_protocol(field: &[u8]) -> &[u8] {
    let Some(head) = field.get(..4).filter(|h| h.eq_ignore_ascii_case(b"HTTP")) else {
        return field;
    };
    let rest = &field[head.len()..];
    let version_len = match rest.strip_prefix(b"/") {
        Some(v) => {
            1 + v
                .iter()
                .take_while(|b| b.is_ascii_digit() || **b == b'.')
                .count()
        }
        None => 0,
    };
    match rest[version_len..].strip_prefix(b" ") {
        Some(after) if version_len != 1 => after,
        _ => field,
    }
}

/// ` +0000]`: an offset written apart from its time, closing the brackets; the offset.
pub(super) fn written_offset_after(rest: &[u8]) -> Option<&[u8]> {
    let offset = rest.strip_prefix(b" ")?.get(..5)?;
    let signed = matches!(offset[0], b'+' | b'-') && offset[1..].iter().all(u8::is_ascii_digit);
    (signed && rest.get(6) == Some(&b']')).then_some(offset)
}

/// ` INFO/MainProcess`: Celery's level and process, after its stamp.
pub(super) fn split_celery_header(header: &[u8]) -> Option<(&[u8], &[u8])> {
    let header = header.strip_prefix(b" ")?;
    let slash = header.iter().position(|&b| b == b'/')?;
    Some((&header[..slash], &header[slash + 1..]))
}

/// Up to nine ASCII digits (so no overflow), read without the text machinery: it runs
/// for every step and attempt number.
#[inline]
pub(super) fn parse_u32(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 9 {
        return None;
    }
    b.iter().try_fold(0u32, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
    })
}

/// The message after a line's timestamp, without the blanks around it: `rest.trim_ascii()`,
/// with the usual spelling (two spaces before, none after) answered without a search (the
/// standard trim tests each byte for every kind of blank; a tenth of an idle call's reading).
#[inline]
pub(super) fn message_of(rest: &[u8]) -> &[u8] {
    if let [b' ', b' ', first, .., last] = rest
        && !first.is_ascii_whitespace()
        && !last.is_ascii_whitespace()
    {
        return &rest[2..];
    }
    rest.trim_ascii()
}

/// Bytes as text if they are UTF-8. Logs are nearly all ASCII, which is checked a word at
/// a time; the full validation (several times the cost on a short field) only runs when a
/// byte above 127 turns up.
#[inline]
pub(super) fn as_text(b: &[u8]) -> Option<&str> {
    if b.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(b) })
    } else {
        std::str::from_utf8(b).ok()
    }
}

/// Bytes as text; invalid UTF-8 is replaced, never fatal.
#[inline]
pub(super) fn text(b: &[u8]) -> Cow<'_, str> {
    match as_text(b) {
        Some(s) => Cow::Borrowed(s),
        None => String::from_utf8_lossy(b),
    }
}

/// Bytes as an event's text: inline up to 16 bytes, invalid UTF-8 replaced. Valid text
/// (nearly all) is copied at once: the lossy reading builds it a chunk at a time.
#[inline]
pub(super) fn small(b: &[u8]) -> Text {
    match as_text(b) {
        Some(s) => Text::from(s),
        None => Text::from_utf8_lossy(b),
    }
}
