use super::*;

fn type_in(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(&typed(line, None)?).unwrap();
    Some(v["type"].as_str()?.to_string())
}

#[test]
fn each_event_is_known_by_its_fields() {
    let lines = [
        (
            r#"{"msg":"tool call","run":"r","step":4,"tool":"issue_refund","args":"{}"}"#,
            "tool_call",
        ),
        (
            r#"{"msg":"refund attempt","run":"r","step":4,"attempt":1,"method":"POST","url":"http://x"}"#,
            "attempt",
        ),
        (
            r#"{"msg":"refund attempt failed","run":"r","step":4,"attempt":1,"err":"Post \"x\": EOF"}"#,
            "failure",
        ),
        (
            r#"{"msg":"refund response","run":"r","step":4,"attempt":2,"status":201,"refund_id":"re_1"}"#,
            "response",
        ),
        (
            r#"{"msg":"step done","run":"r","step":4,"status":"ok"}"#,
            "step_end",
        ),
        (r#"{"msg":"agent run started","run":"r"}"#, "run"),
        // A tool's line with a status word is its end, not another call.
        (
            r#"{"msg":"tool done","run":"r","step":4,"tool":"issue_refund","status":"ok"}"#,
            "step_end",
        ),
        (
            r#"{"msg":"step done","run":"r","step":5,"status":"failed","error":"422"}"#,
            "step_end",
        ),
        (
            r#"{"msg":"refund response","run":"r","step":4,"attempt":1,"status":422,"error":"too much"}"#,
            "response",
        ),
        // A tool's error without its arguments: the step failed (pino's `tool failed`).
        (
            r#"{"msg":"tool failed","runId":"r","step":1,"tool":"issue_refund","err":"timeout of 1000ms exceeded"}"#,
            "step_end",
        ),
    ];
    for (line, ty) in lines {
        assert_eq!(type_in(line).as_deref(), Some(ty), "{line}");
    }
    let v: Value = serde_json::from_str(&typed(lines[3].0, None).unwrap()).unwrap();
    assert_eq!(v["effect_id"], "re_1");
    // Any kind's id: a capture's too.
    let capture = r#"{"msg":"capture response","run":"r","step":4,"attempt":1,"status":201,"capture_id":"cp_1"}"#;
    let v: Value = serde_json::from_str(&typed(capture, None).unwrap()).unwrap();
    assert_eq!(v["effect_id"], "cp_1");
    let v: Value = serde_json::from_str(&typed(lines[2].0, None).unwrap()).unwrap();
    assert_eq!(v["message"], "Post \"x\": EOF");
    let failed = lines.last().unwrap().0;
    let v: Value = serde_json::from_str(&typed(failed, None).unwrap()).unwrap();
    assert_eq!(
        (&v["status"], &v["error"]),
        (&"failed".into(), &"timeout of 1000ms exceeded".into())
    );
}

#[test]
fn a_programs_own_names_for_the_fields_are_read() {
    let line = r#"{"msg":"tool call","run_id":"r","step":1,"tool_name":"issue_refund","arguments":{"order":"A-1"}}"#;
    let v: Value = serde_json::from_str(&typed(line, None).unwrap()).unwrap();
    assert_eq!(
        (v["type"].as_str(), v["run"].as_str()),
        (Some("tool_call"), Some("r"))
    );
    assert_eq!(
        (v["tool"].as_str(), &v["args"]["order"]),
        (Some("issue_refund"), &Value::from("A-1"))
    );
    // A field of SPEC's own name wins over its alias.
    let line = r#"{"msg":"tool call","run":"r","run_id":"other","step":1,"tool":"t"}"#;
    let v: Value = serde_json::from_str(&typed(line, None).unwrap()).unwrap();
    assert_eq!(
        (v["run"].as_str(), v["run_id"].as_str()),
        (Some("r"), Some("other"))
    );
    // Without a step there is still no call.
    assert_eq!(type_in(r#"{"msg":"x","run_id":"r","tool_name":"t"}"#), None);
}

#[test]
fn a_status_written_with_its_reason_is_an_answer() {
    let line = r#"{"msg":"refund response","run":"r","step":4,"attempt":2,"status":"201 Created","refund_id":"re_1"}"#;
    let v: Value = serde_json::from_str(&typed(line, None).unwrap()).unwrap();
    assert_eq!(
        (v["type"].as_str(), v["status"].as_u64()),
        (Some("response"), Some(201))
    );
    assert_eq!(v["effect_id"], "re_1");
    // A word is a step's status, not an answer's.
    let line = r#"{"msg":"step done","run":"r","step":4,"status":"2xx-ish"}"#;
    assert_eq!(type_in(line).as_deref(), Some("step_end"));
}

#[test]
fn a_request_named_in_the_message_is_an_attempt() {
    let line = r#"{"msg":"POST https://payments/v1/refunds","run":"r","step":1,"attempt":2}"#;
    let v: Value = serde_json::from_str(&typed(line, None).unwrap()).unwrap();
    assert_eq!(v["type"], "attempt");
    assert_eq!(v["method"], "POST");
    assert_eq!(v["url"], "https://payments/v1/refunds");
    // A message that names no request leaves an attempt number alone.
    for msg in [
        "retrying POST https://payments/v1/refunds",
        "POST later",
        "post /v1/refunds",
    ] {
        let line = format!(r#"{{"msg":"{msg}","run":"r","step":1,"attempt":2}}"#);
        assert_eq!(type_in(&line), None, "{line}");
    }
}

/// PHP's Monolog writes an exception in the context as text or as an object.
#[test]
fn a_node_clients_failure_in_the_message_is_the_failure() {
    let said = |msg: &str| {
        let line = format!(r#"{{"level":40,"msg":"{msg}"}}"#);
        let v: Value = serde_json::from_str(&typed(&line, Some(2))?).unwrap();
        Some((
            v["type"].clone(),
            v["message"].clone(),
            v["attempt"].clone(),
        ))
    };
    let retrying = "retrying POST http://x/v1/refunds, attempt 2: timeout of 1000ms exceeded";
    assert_eq!(
        said(retrying),
        Some((
            "failure".into(),
            "timeout of 1000ms exceeded".into(),
            1.into()
        ))
    );
    assert!(said("refund attempt 1 failed: Request failed with status code 422").is_some());
    // Not about a request, or no client's words: none.
    assert_eq!(said("cache warm-up: timeout of 1000ms exceeded"), None);
    assert_eq!(said("refund attempt 1 failed: card declined"), None);
    assert!(may_say_a_client_failure(retrying));
}

/// An axios error logged whole, as pino nests it (`err`) and as winston spreads it: the
/// failure of the request its `config` names; a read's is no attempt's.
#[test]
fn an_http_clients_error_logged_whole_is_its_requests_failure() {
    let config = r#""config":{"method":"post","url":"http://x/v1/refunds"}"#;
    let pino = format!(
        r#"{{"level":40,"err":{{"type":"AxiosError","message":"timeout of 1000ms exceeded","code":"ECONNABORTED",{config}}},"msg":"timeout of 1000ms exceeded"}}"#
    );
    let winston = format!(
        r#"{{"level":"warn","name":"AxiosError","code":"ECONNABORTED",{config},"message":"timeout of 1000ms exceeded"}}"#
    );
    for line in [pino, winston] {
        let v: Value = serde_json::from_str(&typed(&line, Some(2)).unwrap()).unwrap();
        assert_eq!(
            (
                v["type"].as_str(),
                v["error"].as_str(),
                v["attempt"].as_u64()
            ),
            (Some("failure"), Some("AxiosError"), Some(1)),
            "{line}"
        );
    }
    let read = r#"{"err":{"type":"AxiosError","config":{"method":"get","url":"http://x/v1/orders/1"}},"msg":"timeout of 1000ms exceeded"}"#;
    assert_eq!(typed(read, Some(2)), None);
}

#[test]
fn an_exception_in_a_records_context_is_the_failure() {
    let text = r#"{"msg":"refund attempt failed","run":"r","step":4,"attempt":1,"exception":"[object] (GuzzleHttp\\Exception\\ConnectException(code: 0): cURL error 28: Operation timed out at /usr/share/php/x.php:210)"}"#;
    let v: Value = serde_json::from_str(&typed(text, None).unwrap()).unwrap();
    assert_eq!(v["type"], "failure");
    assert_eq!(v["error"], "GuzzleHttp\\Exception\\ConnectException");
    assert_eq!(v["message"], "cURL error 28: Operation timed out");
    let object = r#"{"msg":"refund attempt failed","run":"r","step":4,"exception":{"class":"E","message":"boom","code":0}}"#;
    let v: Value = serde_json::from_str(&typed(object, None).unwrap()).unwrap();
    assert_eq!(
        (v["error"].as_str(), v["message"].as_str()),
        (Some("E"), Some("boom"))
    );
}

#[test]
fn a_message_saying_the_step_ended_is_its_end() {
    // tracing's JSON of `info!(run_id, step, "step ok")`, its `fields` flattened.
    for (line, status) in [
        (r#"{"message":"step ok","run_id":"7f3a","step":4}"#, "ok"),
        (
            r#"{"msg":"step failed","run":"r","step":2,"error":"422"}"#,
            "failed",
        ),
    ] {
        let v: Value = serde_json::from_str(&typed(line, None).unwrap()).unwrap();
        assert_eq!(
            (v["type"].as_str(), v["status"].as_str()),
            (Some("step_end"), Some(status)),
            "{line}"
        );
    }
}

#[test]
fn fields_of_no_one_event_give_none() {
    for line in [
        r#"{"msg":"agent run finished","run":"r"}"#,
        r#"{"msg":"retrying","attempt":2}"#,
        // A service's own deliveries have attempts, and no agent's call.
        r#"{"msg":"webhook delivery","attempt":1,"method":"POST","url":"https://m.example/hooks"}"#,
        r#"{"msg":"webhook delivery failed","attempt":1,"error":"timeout"}"#,
        r#"{"msg":"request","status":"received","order_id":"A-1"}"#,
        // A step's words that are no end of it, or an end naming no step.
        r#"{"message":"step started","run_id":"r","step":4}"#,
        r#"{"message":"step ok","run_id":"r"}"#,
    ] {
        assert_eq!(typed(line, None), None, "{line}");
    }
}
