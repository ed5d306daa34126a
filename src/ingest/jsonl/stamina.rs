//! stamina's retry through a structured logger: structlog's `{"callable": ..., "caused_by":
//! "ReadTimeout('timed out')", "wait_for": 0.3, ..., "event": "stamina.retry_scheduled"}`
//! (stamina's own hook when structlog is installed), or its standard-library hook through a
//! JSON formatter, the record's extras as `"stamina.caused_by"`, ... beside `"message":
//! "stamina.retry_scheduled"`. Read as its console line is (`text/retry_lines.rs`): the
//! latest call's failure, the request sent again after the wait.

use super::{Fields, Line, State, logged, read_raw};
use crate::event::Attrs;
use crate::ingest::ParseOptions;
use crate::ingest::text::EmbeddedMessages;

/// stamina's event, as a JSON string.
const STAMINA_EVENT: &str = "\"stamina.retry_scheduled\"";

impl State {
    /// The line, if its message is stamina's event; `None` for any other line, and in a
    /// typed trace (whose logger's lines are not read again).
    pub(super) fn stamina_retry(
        &mut self,
        text: &str,
        f: &Fields,
        opts: &ParseOptions,
    ) -> Option<Result<Line, String>> {
        if self.typed || !logged::message_is(f, STAMINA_EVENT) {
            return None;
        }
        let raw = read_raw(text, true).ok()?;
        let f = Fields::new(&raw);
        // Without its time the line says nothing of when the call failed: ignored, as
        // another message without one is.
        let Ok(at) = self.stamp(&f, opts) else {
            return Some(Ok(None));
        };
        let field = |name: &str| {
            let value = |k: &str| (f.0.extra.iter()).find(|(n, _)| n == k).map(|(_, v)| *v);
            value(name)
                .or_else(|| value(&format!("stamina.{name}")))
                .and_then(logged::scalar)
        };
        let [caused_by, callable, wait_for] = ["caused_by", "callable", "wait_for"].map(field);
        let fields = [&caused_by, &callable, &wait_for].map(|t| t.as_deref().map(str::as_bytes));
        let input = self.input;
        let reader = (self.embedded).get_or_insert_with(|| EmbeddedMessages::new(input, opts));
        let Some((at, kind)) = reader.stamina_retry(at, fields) else {
            return Some(Ok(None));
        };
        let attrs = if opts.keep_attrs {
            f.attrs()
        } else {
            Attrs::new()
        };
        Some(Ok(Some((at, kind, attrs))))
    }
}
