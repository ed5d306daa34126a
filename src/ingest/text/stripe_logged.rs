//! One of Stripe's objects logged by Python's own logging after a message: `log.info("refund
//! created %s", refund)` with a `stripe.Refund` writes the object's JSON over the lines after
//! the message (`refund created {`, its members two blanks in, `}` alone on the last line),
//! and `%r` its repr (`refund created <Refund refund id=re_1 at 0x7f...> JSON: {`, the same
//! JSON below). A webhook endpoint logging `event.data.object` so was a payments log whose
//! every refund was skipped line by line. A plain dict of one (`refund.to_dict()`, a raw
//! response's `resp.json()`) is written on the message's line, as Python's repr writes a dict
//! (`refund created {'id': 're_1', 'object': 'refund', 'amount': 4500, ...}`), or as JSON
//! when the program dumps it. The object is read as it is in a JSON log
//! ([`crate::ingest::jsonl::stripe`]): a refund, charge, payout or transfer, or an event of
//! one, its `amount` in minor units as Stripe's API writes it; the effect at the stamped
//! line's time, as a logger line holding one is read. Lines below it are part of the record,
//! counted as ignored. Any other object, or JSON no Stripe object, a block not closed by a
//! `}` alone on a line, or one past [`MAX_LINES`], is not taken: its lines stay what they
//! were.

use super::effects::effect_line;
use super::fields::Fields;
use super::idle::Unsplit;
use super::*;
use crate::ingest::jsonl::stripe;

/// The most lines an object may span: a refund takes a dozen, an event about forty.
const MAX_LINES: usize = 200;

impl TextParser {
    /// The effect the Stripe object on the lines below a message ending `{` stands for,
    /// those lines read with it; `None` when there is no such object.
    #[cold]
    pub(super) fn stripe_object_below(
        &mut self,
        unsplit: &Unsplit,
        ahead: &Ahead,
    ) -> Option<Verdict> {
        let (head, lines) = object_below(unsplit.msg, ahead)?;
        let json = [&b"{\n"[..], &ahead.bytes()[..lines.1], b"}"].concat();
        let json = String::from_utf8(json).ok()?;
        let object = match head {
            Some(repr) => stripe::object_of_repr(&format!("{repr}{json}"))?,
            None => match serde_json::from_str(&json).ok()? {
                serde_json::Value::Object(object) => object,
                _ => return None,
            },
        };
        let object = serde_json::Value::Object(object).to_string();
        let verdict = match stripe::effect_line(&object) {
            Ok(None) => return None,
            Ok(Some(spec)) => match self.effect_of_spec(&spec, unsplit.at) {
                Ok(Some(effect)) => {
                    Verdict::Event(unsplit.at.at, EventKind::Effect(Box::new(effect)))
                }
                Ok(None) => return None,
                Err(why) => Verdict::Skipped(why),
            },
            Err(why) => Verdict::Skipped(why),
        };
        self.read_ahead += lines.0;
        self.out.stats.ignored += lines.0 as u64;
        Some(verdict)
    }

    /// The effect of the Stripe object logged after the message's words on its line, a
    /// Python dict's repr or JSON (the field holding the first `{`, which it ends); `None`
    /// when there is none (any other object: a logger's payload, read as it was).
    pub(super) fn stripe_object_on_line(
        &mut self,
        f: &Fields,
        at: Local,
    ) -> Option<Result<Option<Effect>, String>> {
        let (field, open) =
            (f.plain.iter()).find_map(|field| Some((*field, memchr::memchr(b'{', field)?)))?;
        let object = &field[open..];
        let set_apart = open == 0 || matches!(field[open - 1], b' ' | b':');
        // Parsed only when it may be one: Stripe names every object's kind.
        (set_apart && object.ends_with(b"}")).then_some(())?;
        memchr::memmem::find(object, b"object")?;
        let json = match std::str::from_utf8(object) {
            Ok(json) if serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok() => json.into(),
            _ => crate::ingest::python_repr::python_as_json(object)?,
        };
        // Stripe's own (a dated object of its kinds, or an event): any other dict that says
        // `'object': 'refund'` is a logger's payload, read as before.
        let top = serde_json::from_str::<serde_json::Map<_, _>>(&json).ok()?;
        let event = top.get("object").and_then(|o| o.as_str()) == Some("event");
        (event || stripe::is_object(&top)).then_some(())?;
        Some(match stripe::effect_line(&json) {
            Ok(None) => return None,
            Ok(Some(spec)) => self.effect_of_spec(&spec, at),
            Err(why) => Err(why),
        })
    }

    /// The SPEC effect line (JSON) Stripe's object stands for, as this log's effect at
    /// `at`: its id, kind, order, amount in minor units, status and key as tokens.
    fn effect_of_spec(&mut self, spec: &str, at: Local) -> Result<Option<Effect>, String> {
        let spec: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(spec).map_err(|e| e.to_string())?;
        let field = |name: &str| match spec.get(name) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let (Some(kind), Some(id)) = (field("kind"), field("effect_id")) else {
            return Ok(None);
        };
        let mut line = format!("{kind} {id}");
        for (token, name) in [
            ("order_id", "order"),
            ("amount_minor", "amount_minor"),
            ("currency", "currency"),
            ("status", "status"),
            ("idempotency_key", "idempotency_key"),
        ] {
            if let Some(value) = field(name).filter(|v| !v.is_empty() && !v.contains(' ')) {
                line.push_str(&format!("  {token}={value}"));
            }
        }
        effect_line(
            &Fields::split(line.as_bytes()),
            at,
            &mut self.dates,
            self.zone,
        )
    }
}

/// Where the object below `msg` lies: the repr's head when the message ends with one
/// (`<Refund refund id=re_1 at 0x7f...> JSON: {`), and how many lines ahead it takes with
/// where its last member line ends (before the `}` alone that closes it).
fn object_below<'a>(msg: &'a [u8], ahead: &Ahead) -> Option<(Option<&'a str>, (usize, usize))> {
    let open = msg.strip_suffix(b"{")?;
    let head = match open.strip_suffix(b"> JSON: ") {
        Some(before) => {
            let start = memchr::memrchr(b'<', before)?;
            let repr = std::str::from_utf8(&msg[start..msg.len() - 1]).ok()?;
            repr.contains(" at 0x").then_some(repr)?;
            Some(repr)
        }
        // The object after the message's words, or alone (`log.info("%s", refund)`).
        None => {
            (open.is_empty() || open.ends_with(b" ")).then_some(())?;
            None
        }
    };
    // The object's members, two blanks in: its first line says so at once.
    ahead.bytes().starts_with(b"  \"").then_some(())?;
    let bytes = ahead.bytes();
    let mut start = 0;
    for k in 0..MAX_LINES {
        let end = ahead.line_end(k)?;
        let line = &bytes[start..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line == b"}" {
            return Some((head, (k + 1, start)));
        }
        if !line.starts_with(b"  ") {
            return None;
        }
        start = end + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::event::EventKind;
    use crate::ingest::ParseOptions;
    use crate::ingest::text::parse;

    const STAMP: &str = "2026-12-07 13:47:21,591 INFO webhook: ";
    const REFUND: &str = "  \"amount\": 4500,\n  \"created\": 1796651241,\n  \"currency\": \"gbp\",\n  \"id\": \"re_0001\",\n  \"metadata\": {\n    \"order_id\": \"A-1\"\n  },\n  \"object\": \"refund\",\n  \"status\": \"succeeded\"\n}\n";
    const NEXT: &str = "2026-12-07 13:47:25,635 INFO webhook: done\n";

    /// Each effect read (`id order amount`) and the lines ignored and skipped.
    fn read(text: &str) -> (Vec<String>, u64, u64) {
        let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let effects = (p.events.iter())
            .filter_map(|e| match &e.kind {
                EventKind::Effect(e) => Some(format!(
                    "{} {} {}",
                    e.id,
                    e.order.as_deref().unwrap_or("-"),
                    e.amount.map_or("-".into(), |m| m.display())
                )),
                _ => None,
            })
            .collect();
        (effects, p.stats.ignored, p.stats.skipped)
    }

    #[test]
    fn a_stripe_object_below_a_message_is_its_effect_in_minor_units() {
        let repr = "refund created <Refund refund id=re_0001 at 0x7f374441f110> JSON: {\n";
        for head in ["refund created {\n", repr, "{\n"] {
            let text = format!("{STAMP}{head}{REFUND}{NEXT}");
            // The object's 10 lines ignored, and the next line.
            let want = (vec!["re_0001 A-1 GBP 45.00".to_string()], 11, 0);
            assert_eq!(read(&text), want, "{head}");
        }
        // An event of one, as `%r` of `stripe.Event` writes it: its request's key too.
        let event = format!(
            "{STAMP}event <Event event id=evt_1 at 0x7f1> JSON: {{\n  \"created\": 1796651241,\n  \"data\": {{\n    \"object\": {{\n{}  }}\n  }},\n  \"object\": \"event\",\n  \"request\": {{\n    \"id\": \"req_1\",\n    \"idempotency_key\": \"k-1\"\n  }},\n  \"type\": \"refund.created\"\n}}\n",
            REFUND
                .replace("\n  ", "\n      ")
                .replacen("  ", "      ", 1)
                .trim_end_matches("}\n")
        );
        let p = parse(&mut event.as_bytes(), 0, &ParseOptions::default()).unwrap();
        let key = p.events.iter().find_map(|e| match &e.kind {
            EventKind::Effect(e) => e.key.as_ref().map(|k| k.to_string()),
            _ => None,
        });
        assert_eq!(key.as_deref(), Some("k-1"));
    }

    #[test]
    fn json_below_that_is_no_stripe_object_is_not_taken() {
        let customer = REFUND.replace("\"refund\"", "\"customer\"");
        let unclosed = REFUND.trim_end_matches("}\n");
        for (head, body) in [
            // Another of Stripe's objects.
            (
                "customer <Customer customer id=cus_1 at 0x7f1> JSON: {\n",
                customer.as_str(),
            ),
            // Some other JSON: a config dumped with `indent=2`.
            ("settings {\n", "  \"retries\": 3\n}\n"),
            // Not closed by a `}` alone before the next stamped line.
            ("refund created {\n", unclosed),
            // No blank before the brace: not an object after the message.
            ("refund created:{\n", REFUND),
        ] {
            let text = format!("{STAMP}{head}{body}{NEXT}");
            let (effects, _, skipped) = read(&text);
            assert!(effects.is_empty(), "{head}: {effects:?}");
            // Its lines are what they were: skipped as lines without a stamp.
            assert_eq!(skipped as usize, body.lines().count(), "{head}");
        }
    }

    #[test]
    fn a_stripe_refund_that_cannot_be_read_is_skipped_with_why() {
        let no_created = REFUND.replace("  \"created\": 1796651241,\n", "");
        // On the message's line: dated, no amount.
        let on_line = "refund created {'id': 're_1', 'object': 'refund', 'created': 1796660363, 'currency': 'gbp'}\n";
        for text in [
            format!("{STAMP}refund created {{\n{no_created}{NEXT}"),
            format!("{STAMP}{on_line}{NEXT}"),
        ] {
            let p = parse(&mut text.as_bytes(), 0, &ParseOptions::default()).unwrap();
            assert_eq!(p.stats.skipped, 1);
            let why = &p.stats.problems[0].reason;
            assert!(why.starts_with("a Stripe refund needs"), "{why}");
        }
    }

    /// A dict of one of Stripe's objects on the message's line (`log.info("refund created
    /// %s", refund.to_dict())`, `log.info("refund response %s", resp.json())`), as Python's
    /// repr writes it or as JSON: its effect, order and minor units as below a message.
    #[test]
    fn a_stripe_object_on_the_messages_line_is_its_effect() {
        const DICT: &str = "{'id': 're_0001', 'object': 'refund', 'amount': 4500, 'charge': 'ch_1', 'created': 1796660363, 'currency': 'gbp', 'metadata': {'order_id': 'A-1'}, 'status': 'succeeded'}";
        let json = DICT.replace('\'', "\"");
        let event = format!(
            "event {{'object': 'event', 'type': 'refund.created', 'created': 1796660363, 'request': {{'id': 'req_1', 'idempotency_key': None}}, 'data': {{'object': {DICT}}}}}"
        );
        let answered = "2026-12-07 13:47:21,500 INFO httpx: HTTP Request: POST https://api.stripe.com/v1/refunds \"HTTP/1.1 200 OK\"\n";
        for (before, message) in [
            ("", format!("refund created {DICT}")),
            ("", format!("refund created {json}")),
            ("", format!("refund created: {DICT}")),
            ("", DICT.to_string()),
            ("", event),
            (answered, format!("refund response {DICT}")),
        ] {
            let text = format!("{before}{STAMP}{message}\n{NEXT}");
            let (effects, _, skipped) = read(&text);
            assert_eq!(effects, ["re_0001 A-1 GBP 45.00"], "{message}");
            assert_eq!(skipped, 0, "{message}");
        }
    }

    /// Any other dict on the line stays a logger's payload, read as before: no dated Stripe
    /// object (no `created`: a service's own body that looks like one), another of Stripe's
    /// objects, a dict Python's repr writes with what JSON cannot hold, an unclosed one.
    #[test]
    fn other_dicts_on_the_line_are_read_as_before() {
        let undated = "refund created {'id': 're_0001', 'object': 'refund', 'order_id': 'A-1', 'amount': 4500, 'currency': 'gbp'}";
        for (message, want) in [
            (undated, vec!["re_0001 A-1 -".to_string()]),
            (
                "customer created {'id': 'cus_1', 'object': 'customer', 'created': 1796660363}",
                vec![],
            ),
            (
                "refund created {'id': 're_0001', 'object': 'refund', 'amount': Decimal('45.00'), 'created': 1796660363}",
                vec!["re_0001 - -".to_string()],
            ),
            (
                "refund created {'id': 're_0001', 'object': 'refund', 'created': 1796660363",
                vec![],
            ),
        ] {
            let text = format!("{STAMP}{message}\n{NEXT}");
            let base = read(&text.replace("'object'", "'kind_of'"));
            assert_eq!(read(&text).0, want, "{message}");
            // What it was read as without the object's kind: the same.
            assert_eq!(read(&text).0, base.0, "{message}");
        }
    }
}
