//! A web server's or gateway's access line written as JSON, as nginx's `log_format ...
//! escape=json` writes it for a log shipper (`{"time_iso8601": "...", "request": "POST
//! /v1/refunds HTTP/1.1", "status": 201, "upstream_addr": "127.0.0.2:5201, 127.0.0.3:5201",
//! "upstream_status": "504, 201", ...}`): the record of one request received, no event, as
//! its text line is ([`crate::ingest::access_log`]), unless it shows the request sent to
//! two upstreams ([`crate::ingest::gateway`]). Before, each line was skipped for having no
//! `type`, and a file of them without a stamp SPEC §3.2 names was passed over.

use super::{Fields, Line, STAMP_NAMES, State};
use crate::event::Attrs;
use crate::ingest::{ParseOptions, access_log, gateway};
use serde_json::{Map, Value};

/// The request an access record names, as its request line (`"request": "POST /v1/refunds
/// HTTP/1.1"`) or its method and URI (`request_method`, `request_uri` or `uri`), beside a
/// status code, with no message (an application's own line): method and target.
pub(crate) fn request_of(m: &Map<String, Value>) -> Option<(String, String)> {
    let text = |k: &str| m.get(k).and_then(Value::as_str);
    let status = match m.get("status")? {
        Value::Number(n) => n.as_u64().filter(|s| (100..600).contains(s)),
        Value::String(s) => s.parse().ok().filter(|s| (100..600).contains(s)),
        _ => None,
    };
    if status.is_none()
        || ["msg", "message", "event"]
            .iter()
            .any(|k| m.contains_key(*k))
    {
        return None;
    }
    let line = match (text("request"), text("request_method")) {
        (Some(line), _) => line.to_string(),
        (None, Some(method)) => format!("{method} {}", text("request_uri").or(text("uri"))?),
        _ => return None,
    };
    let (method, target) = gateway::method_and_target(line.as_bytes())?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Some((text(method), text(target)))
}

impl State {
    /// An access record's line: a gateway try where it shows the request sent to two
    /// upstreams, else no event. `None` when the line is no access record.
    pub(super) fn access_line(
        &mut self,
        text: &str,
        f: &Fields,
        opts: &ParseOptions,
    ) -> Option<Result<Line, String>> {
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) else {
            return None;
        };
        let (method, target) = request_of(&m)?;
        let lists: Vec<Vec<&[u8]>> = (m.values())
            .filter_map(Value::as_str)
            .map(|v| v.split(", ").map(str::as_bytes).collect())
            .collect();
        let Some((resent, shows)) = gateway::upstreams_tried(&lists) else {
            return Some(Ok(None));
        };
        let at = if STAMP_NAMES.iter().any(|k| f.get(k).is_some()) {
            self.stamp(f, opts)
        } else if let Some(t) = m.get("time_iso8601").and_then(Value::as_str) {
            self.clock.parse(t.as_bytes(), opts, false)
        } else if let Some(t) = m.get("time_local").and_then(Value::as_str) {
            access_log::clf_time(t.as_bytes(), opts.tz)
                .ok_or(format!("`time_local` {t:?} is no time"))
        } else if let Some(t) = m.get("msec").and_then(Value::as_str) {
            self.clock.parse(t.as_bytes(), opts, true)
        } else {
            Err("an access record showing a gateway's retry, with no time".into())
        };
        let event = gateway::try_event(method.as_bytes(), target.as_bytes(), resent, shows);
        Some(at.map(|at| Some((at, event, Attrs::new()))))
    }
}

#[cfg(test)]
mod tests {
    use crate::event::EventKind;
    use crate::ingest::{ParseOptions, jsonl::parse, looks_like_jsonl};

    /// nginx 1.22's `escape=json` line (fixture gateway-nginx-retry-logs' access-json.log).
    const RETRIED: &str = r#"{"time_iso8601":"2026-12-07T17:29:42+00:00","remote_addr":"127.0.0.1","request":"POST /v1/refunds HTTP/1.1","status":201,"body_bytes_sent":115,"request_time":1.007,"upstream_addr":"127.0.0.2:5201, 127.0.0.3:5201","upstream_status":"504, 201","upstream_response_time":"1.005, 0.002","request_id":"c8b105a24b9ebaf082fb6e4b9d1f4093","http_user_agent":"python-requests/2.34.2"}"#;

    /// (events as `time method target shows`, ignored, skipped reasons).
    fn read(text: &str) -> (Vec<String>, u64, Vec<String>) {
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let events = (p.events.iter())
            .map(|e| match &e.kind {
                EventKind::GatewayTry(g) => {
                    format!("{} {} {} {}", e.at, g.method, g.target, g.shows)
                }
                other => panic!("{other:?}"),
            })
            .collect();
        let why = p.stats.problems.iter().map(|p| p.reason.clone()).collect();
        (events, p.stats.ignored, why)
    }

    #[test]
    fn a_json_access_line_listing_two_upstreams_is_a_gateway_try() {
        let (events, ignored, skipped) = read(&format!("{RETRIED}\n"));
        assert_eq!(
            events,
            [
                "2026-12-07T17:29:42.000Z POST /v1/refunds sent the request to 127.0.0.2:5201 (504), then to 127.0.0.3:5201 (201)"
            ]
        );
        assert_eq!((ignored, skipped.len()), (0, 0));
        // Its time as `time_local`, `msec` or `@timestamp`; its request as method and URI.
        for (from, to) in [
            (
                r#""time_iso8601":"2026-12-07T17:29:42+00:00""#,
                r#""time_local":"07/Dec/2026:17:29:42 +0000""#,
            ),
            (
                r#""time_iso8601":"2026-12-07T17:29:42+00:00""#,
                r#""msec":"1796664582.000""#,
            ),
            (r#""time_iso8601":"#, r#""@timestamp":"#),
            (
                r#""request":"POST /v1/refunds HTTP/1.1""#,
                r#""request_method":"POST","request_uri":"/v1/refunds""#,
            ),
        ] {
            let line = RETRIED.replace(from, to);
            let (events, _, skipped) = read(&line);
            assert_eq!(events.len(), 1, "{line}: {skipped:?}");
            assert!(
                events[0].starts_with("2026-12-07T17:29:42.000Z POST /v1/refunds "),
                "{events:?}"
            );
        }
        // Detected as JSON Lines with no stamp SPEC §3.2 names.
        assert!(looks_like_jsonl(RETRIED));
    }

    #[test]
    fn other_json_access_lines_are_ignored_and_other_objects_still_skipped() {
        // One upstream: the record of a request, no event, nothing wrong.
        let once = RETRIED
            .replace("127.0.0.2:5201, 127.0.0.3:5201", "127.0.0.2:5201")
            .replace(r#""504, 201""#, r#""201""#);
        assert_eq!(read(&once), (vec![], 1, vec![]));
        // Upstreams with no statuses beside them: no retry shown.
        let no_statuses = RETRIED.replace(r#""upstream_status":"504, 201","#, "");
        assert_eq!(read(&no_statuses), (vec![], 1, vec![]));
        // A status and no request, a request and no status, an application's message: no
        // access record (skipped as before, or the application's own line).
        for (line, skipped) in [
            (
                RETRIED.replace(r#""request":"POST /v1/refunds HTTP/1.1","#, ""),
                1,
            ),
            (RETRIED.replace(r#""status":201,"#, ""), 1),
            (
                RETRIED.replace(
                    r#""request":"POST /v1/refunds HTTP/1.1""#,
                    r#""request":"refund it""#,
                ),
                1,
            ),
            (
                RETRIED.replace(
                    r#""remote_addr""#,
                    r#""msg":"handled request","remote_addr""#,
                ),
                0,
            ),
        ] {
            let (events, _, why) = read(&line);
            assert!(events.is_empty(), "{line}");
            assert_eq!(why.len(), skipped, "{line}: {why:?}");
        }
        assert!(!looks_like_jsonl(r#"{"status":201,"request":"refund it"}"#));
    }
}
