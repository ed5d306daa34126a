//! HTTP attempts and their outcomes, the agent's and the payments service's spans.

use super::*;

/// The agent's tool, its two requests to the payments service (a read timeout, then 201),
/// and what the payments service traced of the first: the SERVER span that took it and its
/// own request to its provider, keyed and answered 200.
fn agent_and_payments_spans() -> (Vec<Value>, Vec<Value>) {
    let tool = span(
        TR,
        "9100000000000001",
        None,
        "execute_tool issue_refund",
        1,
        0,
        3000,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
        ]),
    );
    let post = |url: &str| vec![("http.request.method", s("POST")), ("url.full", s(url))];
    let mut h1 = span(
        TR,
        "9100000000000002",
        Some("9100000000000001"),
        "POST",
        3,
        100,
        1100,
        kv(&post("https://pay/v1/refunds")),
    );
    h1["events"] = read_timeout();
    h1["status"] = json!({"code": 2});
    let mut ok = post("https://pay/v1/refunds");
    ok.push(("http.response.status_code", json!({"intValue": "201"})));
    let h2 = span(
        TR,
        "9100000000000003",
        Some("9100000000000001"),
        "POST",
        3,
        2000,
        2100,
        kv(&ok),
    );
    let server = span(
        TR,
        "9100000000000004",
        Some("9100000000000002"),
        "POST /v1/refunds",
        2,
        110,
        900,
        kv(&[("http.request.method", s("POST"))]),
    );
    let mut provider = post("https://psp/v1/refunds");
    provider.push(("http.response.status_code", json!({"intValue": "200"})));
    provider.push((
        "http.request.header.idempotency-key",
        json!({"arrayValue": {"values": [s("psp-k1")]}}),
    ));
    let psp = span(
        TR,
        "9100000000000005",
        Some("9100000000000004"),
        "POST",
        3,
        120,
        800,
        kv(&provider),
    );
    (vec![tool, h1, h2], vec![server, psp])
}

/// What each attempt was: its URL, key and outcome.
fn attempt_outcomes(l: &Linked) -> Vec<String> {
    events(l)
        .into_iter()
        .filter_map(|e| match &e.kind {
            EventKind::Attempt(a) => Some(format!("#{} {:?} {:?}", a.number, a.url, a.key)),
            EventKind::Response(r) => Some(format!("{} {:?}", r.status, r.class)),
            EventKind::Failure(f) => Some(format!("{} {:?}", f.error, f.class)),
            _ => None,
        })
        .collect()
}

/// A service traced in the same trace (a Collector gathering both): the SERVER span that
/// took the agent's request, and the requests it made itself, are the service's. The
/// agent's attempts are what the agent alone gave, whether the service shares its process
/// or not; the service's spans alone give no attempt.
#[test]
fn a_services_own_requests_under_its_server_span_are_no_attempts_of_the_agent() {
    let (agent, payments) = agent_and_payments_spans();
    let (_, alone) = linked(&[&batch("agent", agent.clone())]);
    let want = attempt_outcomes(&alone);
    assert_eq!(want.len(), 4, "{want:?}");
    assert!(
        want[0].contains("pay/v1/refunds") && want[1].contains("Ambiguous"),
        "{want:?}"
    );
    let (_, apart) = linked(&[
        &batch("agent", agent.clone()),
        &batch("payments", payments.clone()),
    ]);
    assert_eq!(attempt_outcomes(&apart), want);
    let (_, one_process) = linked(&[&batch("agent", [agent, payments.clone()].concat())]);
    assert_eq!(attempt_outcomes(&one_process), want);
    let (_, service_only) = linked(&[&batch("payments", payments)]);
    assert!(attempt_outcomes(&service_only).is_empty());
}

/// A `requests` span whose urllib3 retried inside it: the wrapper's final 200 is the second
/// inner attempt's; the first keeps its own read timeout. An inner span that recorded no
/// outcome takes the wrapper's.
#[test]
fn an_attempts_own_outcome_wins_over_its_wrappers() {
    let tool = span(
        TR,
        "9200000000000001",
        None,
        "execute_tool t",
        1,
        0,
        3000,
        kv(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("issue_refund")),
        ]),
    );
    let post = |status: Option<&str>| {
        let mut attrs = vec![("http.request.method", s("POST"))];
        if let Some(code) = status {
            attrs.push(("http.response.status_code", json!({"intValue": code})));
        }
        kv(&attrs)
    };
    let wrapper = |status| {
        span(
            TR,
            "9200000000000002",
            Some("9200000000000001"),
            "POST",
            3,
            10,
            2900,
            post(status),
        )
    };
    let mut timed_out = span(
        TR,
        "9200000000000003",
        Some("9200000000000002"),
        "POST",
        3,
        20,
        1100,
        post(None),
    );
    timed_out["events"] = read_timeout();
    timed_out["status"] = json!({"code": 2});
    let answered = span(
        TR,
        "9200000000000004",
        Some("9200000000000002"),
        "POST",
        3,
        2000,
        2800,
        post(Some("200")),
    );
    let (_, l) = linked(&[&batch(
        "p",
        vec![tool.clone(), wrapper(Some("200")), timed_out, answered],
    )]);
    let got = attempt_outcomes(&l);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[1], "requests.exceptions.ReadTimeout Ambiguous");
    assert_eq!(got[3], "200 Success");
    let silent = span(
        TR,
        "9200000000000003",
        Some("9200000000000002"),
        "POST",
        3,
        20,
        1100,
        post(None),
    );
    let (_, l) = linked(&[&batch("p", vec![tool, wrapper(Some("503")), silent])]);
    assert_eq!(attempt_outcomes(&l)[1], "503 Ambiguous");
}
