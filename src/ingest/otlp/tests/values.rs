//! Attribute values, ids, and spans missing a start or an end.

use super::*;

#[test]
fn typed_attribute_values() {
    let attrs = kv(&[
        ("s", s("x")),
        ("i", json!({"intValue": "9007199254740993"})),
        ("d", json!({"doubleValue": 1.5})),
        ("b", json!({"boolValue": true})),
        (
            "a",
            json!({"arrayValue": {"values": [s("p"), {"intValue": "2"}]}}),
        ),
        (
            "k",
            json!({"kvlistValue": {"values": [{"key": "n", "value": {"intValue": 3}}]}}),
        ),
        ("empty", json!({})),
    ]);
    let got: Vec<(String, Value)> = attributes(attrs);
    let m: Map<String, Value> = got.into_iter().collect();
    assert_eq!(m["s"], json!("x"));
    assert_eq!(m["i"].as_i64(), Some(9_007_199_254_740_993));
    assert_eq!(m["d"].as_f64(), Some(1.5));
    assert_eq!(m["b"], json!(true));
    assert_eq!(m["a"], json!(["p", 2]));
    assert_eq!(m["k"], json!({"n": 3}));
    assert_eq!(m["empty"], Value::Null);
}

#[test]
fn ids_hex_or_base64() {
    assert_eq!(
        normalise_id("5B8EFFF798038103D269B633813FC60C", 16),
        "5b8efff798038103d269b633813fc60c"
    );
    assert_eq!(
        normalise_id("W47/95gDgQPSabYzgT/GDA==", 16),
        "5b8efff798038103d269b633813fc60c"
    );
    assert_eq!(
        normalise_id("AAAAAAAAAAE", 8),
        "0000000000000001",
        "unpadded base64"
    );
    assert_eq!(normalise_id("odd-id", 8), "odd-id");
}

/// A span missing one end of its interval is an instant at the other, whichever is
/// missing, and nothing is reported for it; a span with neither is skipped with its reason.
#[test]
fn a_span_missing_its_start_or_its_end_is_an_instant_at_the_other() {
    let at = |keep: &[&str]| {
        let mut v = span(TR, "5000000000000001", None, "x", 1, 10, 20, kv(&[]));
        for k in ["startTimeUnixNano", "endTimeUnixNano"] {
            if !keep.contains(&k) {
                v.as_object_mut().unwrap().remove(k);
            }
        }
        read(&batch("p", vec![v]), 0)
    };
    let ms = |n: i64| Timestamp(T0 + n * MS);
    for (keep, want) in [
        (&["endTimeUnixNano"][..], (ms(20), ms(20))),
        (&["startTimeUnixNano"][..], (ms(10), ms(10))),
        (
            &["startTimeUnixNano", "endTimeUnixNano"][..],
            (ms(10), ms(20)),
        ),
    ] {
        let p = at(keep);
        assert_eq!(p.stats.skipped, 0, "{keep:?}: {:?}", p.stats.problems);
        assert_eq!((p.spans[0].start, p.spans[0].end), want, "{keep:?}");
    }
    let neither = at(&[]);
    assert!(neither.spans.is_empty());
    assert_eq!(neither.stats.skipped, 1);
    assert_eq!(
        neither.stats.problems[0].reason,
        "span without startTimeUnixNano or endTimeUnixNano"
    );
}

/// Braces and escaped quotes inside strings do not confuse the document scanner, and a
/// snake_case document (protobuf's field names) is read like a camelCase one.
#[test]
fn strings_with_braces_and_snake_case_fields() {
    let doc = json!({"resource_spans": [{"scope_spans": [{"spans": [{
        "trace_id": TR, "span_id": "7000000000000001", "name": "a } { \" ]", "kind": 3,
        "start_time_unix_nano": "1000", "end_time_unix_nano": 2000,
        "attributes": kv(&[("http.method", s("POST")), ("note", s("{\"unbalanced\": [")) ])
    }]}]}]})
    .to_string();
    assert_eq!(
        crate::ingest::source::detect(doc.as_bytes(), &[]),
        Some(crate::ingest::Format::Otlp)
    );
    let p = read(&format!("{doc}\n{doc}"), 0);
    assert_eq!(p.stats.skipped, 0, "{:?}", p.stats.problems);
    assert_eq!(p.spans.len(), 2);
    assert_eq!(p.spans[1].loc.line, 2);
    assert_eq!(
        (p.spans[0].start, p.spans[0].end),
        (Timestamp(1000), Timestamp(2000))
    );
    assert_eq!(p.spans[0].kind, SpanKind::Client);
}
