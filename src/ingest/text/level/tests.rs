use super::{after_one_word_logger, python_default_layout, without_level};

#[test]
fn a_level_in_capitals_and_one_blank_is_read_past() {
    for line in [
        "INFO refund rf_1  order A-1  4500p",
        "[WARN] refund rf_1  order A-1  4500p",
        "INFO: refund rf_1  order A-1  4500p",
        "INFO payments.refunds refund rf_1  order A-1  4500p",
        "INFO com.acme.payments.Refunds refund rf_1  order A-1  4500p",
        "[INFO   ] refund rf_1  order A-1  4500p",
        "[WARNING] refund rf_1  order A-1  4500p",
        "- payments.refunds - INFO - refund rf_1  order A-1  4500p",
    ] {
        assert_eq!(
            without_level(line.as_bytes()),
            b"refund rf_1  order A-1  4500p",
            "{line}"
        );
    }
    for line in [
        "Error refund rf_1",
        "info refund rf_1",
        "INFOS refund rf_1",
        "- refund rf_1 - order A-1",
        "[main   ] refund rf_1",
    ] {
        assert_eq!(without_level(line.as_bytes()), line.as_bytes(), "{line}");
    }
    // An exception's class is no logger's name: it stays the message's start.
    for (line, message) in [
        (
            "ERROR java.net.SocketTimeoutException Read timed out",
            "java.net.SocketTimeoutException Read timed out",
        ),
        (
            "INFO Com.acme.Refunds refund rf_1",
            "Com.acme.Refunds refund rf_1",
        ),
    ] {
        assert_eq!(without_level(line.as_bytes()), message.as_bytes(), "{line}");
    }
}

#[test]
fn java_layouts_are_read_past() {
    for line in [
        "[main] INFO  c.e.payments.RefundService - refund rf_1  order A-1  4500p",
        "[http-nio-8080-exec-1] ERROR com.example.Refunds - refund rf_1  order A-1  4500p",
        "INFO 12345 --- [           main] c.e.p.RefundService              : refund rf_1  order A-1  4500p",
        "WARN 7 --- [payments] [  exec-2] c.e.p.RefundService : refund rf_1  order A-1  4500p",
    ] {
        assert_eq!(
            without_level(line.as_bytes()),
            b"refund rf_1  order A-1  4500p",
            "{line}"
        );
    }
    // Not such a layout: a level and a sentence, brackets and no level, two names.
    for line in [
        "info refund rf_1 - order A-1",
        "[main] refunds - refund rf_1",
        "[main] INFO a.b c.d - refund rf_1",
        "INFO  - refund rf_1",
        "[main] INFO  c.e.RefundService -",
    ] {
        let got = without_level(line.as_bytes());
        assert!(!got.starts_with(b"refund rf_1"), "{line}");
    }
}

#[test]
fn levels_are_read_past() {
    for line in [
        "INFO  agent run 7f3a  started",
        "info  agent run 7f3a  started",
        "Warning     agent run 7f3a  started",
        "[ERROR]  agent run 7f3a  started",
        "DEBUG\tagent run 7f3a  started",
    ] {
        assert_eq!(
            without_level(line.as_bytes()),
            b"agent run 7f3a  started",
            "{line}"
        );
    }
}

#[test]
fn a_logger_name_after_a_level_is_read_past() {
    for (line, message) in [
        (
            "INFO  agent.tools  agent run 7f3a  started",
            "agent run 7f3a  started",
        ),
        (
            "WARNING  root\turllib3.exceptions.ReadTimeoutError: read timeout=10",
            "urllib3.exceptions.ReadTimeoutError: read timeout=10",
        ),
        // Not a name: a message's first field has several words, or a class and `:`.
        (
            "INFO  201 Created  refund_id=rf_9KQ2",
            "201 Created  refund_id=rf_9KQ2",
        ),
        (
            "ERROR  requests.exceptions.ConnectionError:  refused",
            "requests.exceptions.ConnectionError:  refused",
        ),
        (
            "INFO  refund rf_8XM1  order A-88214  4500p",
            "refund rf_8XM1  order A-88214  4500p",
        ),
        ("INFO  healthcheck", "healthcheck"),
        ("INFO  201  refund_id=rf_9KQ2", "201  refund_id=rf_9KQ2"),
        (
            "INFO  POST  https://payments.internal/v1/refunds",
            "POST  https://payments.internal/v1/refunds",
        ),
        ("INFO  __main__  agent run 7f3a  ok", "agent run 7f3a  ok"),
    ] {
        assert_eq!(without_level(line.as_bytes()), message.as_bytes(), "{line}");
    }
    // A Rust path (tracing's and `log`'s target), never a word ending in a colon.
    assert_eq!(without_level(b"INFO  agent::tools  POST x"), b"POST x");
    assert_eq!(without_level(b"INFO  agent::  POST x"), b"agent::  POST x");
    // Without a level, a first word is the message's own.
    let plain = b"agent.tools  agent run 7f3a  started";
    assert_eq!(without_level(plain), plain);
}

#[test]
fn pythons_default_layout_is_told_by_its_level_and_logger() {
    assert!(python_default_layout(
        b"INFO:httpx:HTTP Request: POST http://x"
    ));
    assert!(python_default_layout(b"WARNING:__main__:retrying"));
    for not in [
        "INFO: refund created",
        "Info:x:y",
        "ERROR:no logger",
        "HTTP:1.1:x",
    ] {
        assert!(!python_default_layout(not.as_bytes()), "{not}");
    }
}

#[test]
fn python_loggings_one_blank_spellings_are_read_past() {
    for (line, message) in [
        (
            "INFO payments.refunds: refund created  refund_id=rf_1",
            "refund created  refund_id=rf_1",
        ),
        (
            "INFO:payments.refunds:refund rf_1  order A-1",
            "refund rf_1  order A-1",
        ),
        (
            "WARNING:__main__:agent run 7f3a  started",
            "agent run 7f3a  started",
        ),
        (
            "error root: POST https://pay/v1/refunds",
            "POST https://pay/v1/refunds",
        ),
        // Not a logger: an exception's class, a message, no blank after the colon.
        // (The level in capitals and one blank is read past alone.)
        (
            "ERROR requests.exceptions.ConnectionError: refused",
            "requests.exceptions.ConnectionError: refused",
        ),
        ("INFO order A-1: refunded", "order A-1: refunded"),
        ("info order A-1: refunded", "info order A-1: refunded"),
        ("INFO payments.refunds:x", "payments.refunds:x"),
        ("INFORMATION payments: x", "INFORMATION payments: x"),
    ] {
        assert_eq!(without_level(line.as_bytes()), message.as_bytes(), "{line}");
    }
}

#[test]
fn a_one_word_logger_after_a_level_in_capitals_is_found_on_request() {
    for (line, message) in [
        (
            "INFO payments refund created id=re_1",
            Some("refund created id=re_1"),
        ),
        (
            "WARNING __main__ POST http://p/v1/refunds",
            Some("POST http://p/v1/refunds"),
        ),
        // Dotted names are read past at once; two blanks end a field; no level, no name.
        ("INFO payments.refunds refund created", None),
        ("INFO  payments refund created", None),
        ("info payments refund created", None),
        ("INFO payments  refund created", None),
        ("INFO refund", None),
        ("payments refund created id=re_1", None),
        ("INFO simulated refund created id=re_1", None),
        ("INFO dry-run refund created id=re_1", None),
    ] {
        let found = after_one_word_logger(line.as_bytes());
        assert_eq!(found, message.map(str::as_bytes), "{line}");
    }
}

#[test]
fn messages_that_only_look_like_levels_are_kept() {
    for line in [
        "agent run 7f3a  started",
        "POST https://payments.internal/v1/refunds  (attempt 1)",
        "ConnectionError: refused",
        "INFO",
        "INFO  ",
        "info message after one space",
        "Error: something  else",
        "charge ch_1  order A-1  4500p  captured",
        "information  is not a level",
    ] {
        let kept = without_level(line.trim_end().as_bytes());
        assert_eq!(kept, line.trim_end().as_bytes(), "{line}");
    }
}
