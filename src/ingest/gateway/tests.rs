use super::*;
use crate::event::EventKind;
use crate::ingest::access_log;
use crate::time::Zone;

/// What a line shows, as (method, target, resent, shows).
fn shown(kind: Option<EventKind>) -> Option<(String, String, bool, String)> {
    match kind? {
        EventKind::GatewayTry(g) => Some((
            g.method.to_string(),
            g.target.to_string(),
            g.resent,
            g.shows.to_string(),
        )),
        other => panic!("not a gateway try: {other:?}"),
    }
}

fn access(line: &str) -> Option<(String, String, bool, String)> {
    assert!(
        access_log::stamp(line.as_bytes(), Zone::default()).is_some(),
        "{line}"
    );
    shown(of_access_line(line.as_bytes()))
}

fn stamped(line: &str) -> Option<(String, String, bool, String)> {
    shown(of_error_line(line.as_bytes()))
}

#[test]
fn nginx_upstream_fields_listing_two_upstreams_show_the_request_sent_again() {
    // nginx 1.22's log_format with $upstream_addr, $upstream_status (fixture
    // gateway-nginx-retry-logs, written by nginx).
    let (method, target, resent, shows) = access(
        r#"127.0.0.1 - - [07/Dec/2026:16:08:28 +0000] "POST /v1/refunds HTTP/1.1" 201 115 "-" "python-requests/2.34.2" rt=1.012 ua="127.0.0.2:5201, 127.0.0.3:5201" us="504, 201" urt="1.009, 0.004" request_id=f104e3124f51a48397ce062969123b3d"#,
    )
    .unwrap();
    assert_eq!(
        (method.as_str(), target.as_str(), resent),
        ("POST", "/v1/refunds", true)
    );
    assert_eq!(
        shows,
        "sent the request to 127.0.0.2:5201 (504), then to 127.0.0.3:5201 (201)"
    );
    // Unnamed quoted fields, three upstreams, a name, a UNIX socket and IPv6.
    let (.., shows) = access(
        r#"10.1.2.3 - - [07/Dec/2026:16:08:28 +0000] "POST /v1/refunds?x=1 HTTP/1.1" 502 0 "-" "curl/8" "api-1.internal:8080, unix:/run/pay.sock, [::1]:9000" "502, 502, 502" "0.001, 0.001, 0.002""#,
    )
    .unwrap();
    assert_eq!(
        shows,
        "sent the request to api-1.internal:8080 (502), then to unix:/run/pay.sock (502), then to [::1]:9000 (502)"
    );
}

#[test]
fn access_lines_showing_no_second_upstream_are_no_gateway_try() {
    for line in [
        // The default `combined`: no upstream fields.
        r#"127.0.0.1 - - [07/Dec/2026:16:08:28 +0000] "POST /v1/refunds HTTP/1.1" 201 115 "-" "python-requests/2.34.2""#,
        // One upstream (nginx's default proxy_next_upstream never resends a POST).
        r#"127.0.0.1 - - [07/Dec/2026:16:08:11 +0000] "POST /v1/refunds HTTP/1.1" 504 167 "-" "python-requests/2.34.2" rt=1.001 ua="127.0.0.2:5201" us="504" urt="1.001" request_id=0de67070e87de41cf93728746e709bde"#,
        // Addresses with ports but no statuses beside them (X-Forwarded-For), addresses
        // without ports, times.
        r#"127.0.0.1 - - [07/Dec/2026:16:08:11 +0000] "POST /v1/refunds HTTP/1.1" 201 1 "-" "-" "203.0.113.5:51234, 10.0.0.4:443""#,
        r#"127.0.0.1 - - [07/Dec/2026:16:08:11 +0000] "POST /v1/refunds HTTP/1.1" 201 1 "-" "-" "203.0.113.5, 10.0.0.4" "201, 201""#,
        r#"127.0.0.1 - - [07/Dec/2026:16:08:11 +0000] "POST /v1/refunds HTTP/1.1" 201 1 "-" "-" urt="1.009, 0.004""#,
        // A user agent with commas.
        r#"127.0.0.1 - - [07/Dec/2026:16:08:11 +0000] "GET / HTTP/1.1" 200 1 "-" "Mozilla/5.0 (KHTML, like Gecko) a:1, b:2""#,
        // No request a client sends (`"-"`, a probe's empty line).
        r#"127.0.0.1 - - [07/Dec/2026:16:08:10 +0000] "" 400 0 "-" "-" ua="a:1, b:2" us="502, 502""#,
        // werkzeug's, Django's.
        r#"127.0.0.1 - - [07/Dec/2026 16:07:59] "POST /v1/refunds HTTP/1.0" 201 -"#,
        r#"[07/Dec/2026 14:19:36] "POST /v1/refunds/ HTTP/1.1" 201 111"#,
    ] {
        assert_eq!(access(line), None, "{line}");
    }
}

#[test]
fn haproxy_lines_with_a_retry_show_the_request_sent_again() {
    // HAProxy 2.6's `option httplog` (fixture gateway-haproxy-retry, written by HAProxy).
    let (method, target, resent, shows) = access(
        r#"127.0.0.1:38892 [07/Dec/2026:16:11:35.890] payments replicas/pay-b 0/1001/0/8/1010 201 244 - - ---- 1/1/0/0/+1 0/0 "POST /v1/refunds HTTP/1.1""#,
    )
    .unwrap();
    assert_eq!(
        (method.as_str(), target.as_str(), resent),
        ("POST", "/v1/refunds", true)
    );
    assert_eq!(
        shows,
        "sent the request again 1 time, to another server (HAProxy's retries), and replicas/pay-b answered 201"
    );
    // Retried on the same server, twice; captured headers in braces before the request.
    let (.., shows) = access(
        r#"10.0.0.9:4711 [07/Dec/2026:16:11:35.890] fe be/s1 0/0/0/8/3010 201 244 - - ---- 3/3/1/1/2 0/0 {pay.internal|curl/8} "POST /v1/refunds HTTP/1.1""#,
    )
    .unwrap();
    assert_eq!(
        shows,
        "sent the request again 2 times (HAProxy's retries), and be/s1 answered 201"
    );
}

#[test]
fn haproxy_lines_without_a_retry_are_no_gateway_try() {
    for line in [
        r#"127.0.0.1:33832 [07/Dec/2026:16:08:44.140] payments replicas/pay-a 0/0/0/-1/1000 504 198 - - sH-- 1/1/0/0/0 0/0 "POST /v1/refunds HTTP/1.1""#,
        r#"127.0.0.1:39054 [07/Dec/2026:16:08:16.444] payments payments/<NOSRV> -1/-1/-1/-1/0 400 0 - - CR-- 1/1/0/0/0 0/0 "<BADREQ>""#,
        // tcplog: no request.
        "10.0.0.7:5432 [07/Dec/2026:16:11:35.890] fe_tcp be_db/db1 1/0/5007 212 -- 1/1/1/1/1 0/0",
    ] {
        assert_eq!(access(line), None, "{line}");
    }
}

#[test]
fn nginx_error_lines_giving_up_on_an_upstream_that_took_the_request() {
    // nginx 1.22's error.log (fixture gateway-nginx-retry-logs).
    let (method, target, resent, shows) = stamped(
        r#"2026/12/07 16:08:28 [error] 14238#14238: *2 upstream timed out (110: Connection timed out) while reading response header from upstream, client: 127.0.0.1, server: , request: "POST /v1/refunds HTTP/1.1", upstream: "http://127.0.0.2:5201/v1/refunds", host: "127.0.0.1:8081""#,
    )
    .unwrap();
    assert_eq!(
        (method.as_str(), target.as_str(), resent),
        ("POST", "/v1/refunds", false)
    );
    assert_eq!(
        shows,
        "gave up on http://127.0.0.2:5201/v1/refunds after sending it the request (upstream timed out (110: Connection timed out) while reading response header from upstream)"
    );
    assert!(stamped(
        r#"2026/12/07 16:08:28 [error] 7#7: *9 upstream prematurely closed connection while reading response header from upstream, client: 10.0.0.1, server: pay, request: "POST /v1/refunds HTTP/1.1", upstream: "http://10.0.0.2:80/v1/refunds", host: "pay""#
    )
    .is_some());
}

#[test]
fn nginx_error_lines_about_no_request_taken_are_no_gateway_try() {
    for line in [
        // Never reached the upstream, or no request at all.
        r#"2026/12/07 16:08:28 [error] 14238#14238: *2 connect() failed (111: Connection refused) while connecting to upstream, client: 127.0.0.1, server: , request: "POST /v1/refunds HTTP/1.1", upstream: "http://127.0.0.3:5201/v1/refunds", host: "127.0.0.1:8081""#,
        r#"2026/12/07 16:08:28 [error] 14238#14238: *2 no live upstreams while connecting to upstream, client: 127.0.0.1, server: , request: "POST /v1/refunds HTTP/1.1", upstream: "http://payments/v1/refunds", host: "127.0.0.1:8081""#,
        // A server set aside, at [warn]: no request's fate.
        r#"2026/12/07 16:08:28 [warn] 14238#14238: *2 upstream server temporarily disabled while reading response header from upstream, client: 127.0.0.1, server: , request: "POST /v1/refunds HTTP/1.1", upstream: "http://127.0.0.2:5201/v1/refunds", host: "127.0.0.1:8081""#,
        "2026/12/07 16:08:30 [notice] 14237#14237: signal 3 (SIGQUIT) received from 14300, shutting down",
        // No request field.
        r#"2026/12/07 16:08:28 [error] 1#1: *2 upstream timed out (110: Connection timed out) while reading response header from upstream, client: 127.0.0.1, server: "#,
    ] {
        assert_eq!(stamped(line), None, "{line}");
    }
}
