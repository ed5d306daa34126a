//! One process, two tracer providers: Mastra's `OtelExporter` writes the agent's spans under
//! a resource of its own (`telemetry.sdk.name` = `@mastra/otel-exporter`), while the
//! application's OpenTelemetry SDK writes its HTTP client's spans under another (its
//! `service.name` alone), both without `service.instance.id`. The requests are roots of
//! their own traces, so they can be given to a tool call only by time, and only within one
//! process (SPEC §3.4): two resources are taken for one process when they name the same
//! service and agree on every attribute that tells processes apart that both carry, and a
//! resource with requests but no tool call is read as the one such resource with tool
//! calls, if there is exactly one.

use rustc_hash::FxHashMap;

/// Attributes that tell two processes of one service apart, where a resource has them.
const PROCESS_KEYS: [&str; 8] = [
    "service.namespace",
    "host.name",
    "host.id",
    "process.pid",
    "container.id",
    "container.name",
    "k8s.pod.uid",
    "k8s.pod.name",
];

/// For each of `requests` (resources of HTTP spans) that is not among `with_calls`
/// (resources of tool calls), the one resource of `with_calls` it may share a process with,
/// where exactly one may, and no other resource of requests read as that one is another
/// process (two pids' requests beside one resource that names none: which is its?).
pub(super) fn same_process<'a>(
    requests: impl Iterator<Item = &'a str>,
    with_calls: &[&'a str],
) -> FxHashMap<&'a str, &'a str> {
    let mut alias: FxHashMap<&'a str, &'a str> = FxHashMap::default();
    for r in requests {
        if with_calls.contains(&r) || alias.contains_key(r) {
            continue;
        }
        let mut candidates = with_calls.iter().filter(|c| may_share_process(r, c));
        if let (Some(&only), None) = (candidates.next(), candidates.next()) {
            alias.insert(r, only);
        }
    }
    let apart: Vec<&str> = (alias.iter())
        .filter(|(r, c)| {
            (alias.iter())
                .any(|(other, oc)| oc == *c && other != *r && !may_share_process(r, other))
        })
        .map(|(r, _)| *r)
        .collect();
    for r in apart {
        alias.remove(r);
    }
    alias
}

/// Whether two resources, as [`super::resource_identity`] writes them, may be one process.
fn may_share_process(a: &str, b: &str) -> bool {
    let (Some(a), Some(b)) = (attributes(a), attributes(b)) else {
        return false;
    };
    let name = "service.name";
    a.get(name).is_some_and(|n| b.get(name) == Some(n))
        && PROCESS_KEYS
            .iter()
            .all(|k| a.get(k).is_none_or(|v| b.get(k).is_none_or(|w| v == w)))
}

/// Whether two resources, as [`super::resource_identity`] writes them, are surely two
/// processes: two `service.instance.id`s, or attribute sets that differ on a value both
/// carry that names a process or its build (`service.name`, `service.version`, or one of
/// [`PROCESS_KEYS`]). Anything less certain is not: one instance id beside a resource
/// without one (two tracer providers of one process may write both), a file standing for
/// its process (`input:N`, a JavaScript console dump without a resource), or resources that
/// differ only in what says nothing of the process (`telemetry.sdk.name`: Mastra's exporter
/// beside the application's SDK). Used to see a run continue in another process
/// ([`super::link`]'s resumes).
pub(super) fn other_process(a: &str, b: &str) -> bool {
    if a == b {
        return false;
    }
    if a.starts_with("instance:") && b.starts_with("instance:") {
        return true;
    }
    let (Some(a), Some(b)) = (attributes(a), attributes(b)) else {
        return false;
    };
    (["service.name", "service.version"]
        .iter()
        .chain(&PROCESS_KEYS))
    .any(|k| a.get(k).is_some_and(|v| b.get(k).is_some_and(|w| v != w)))
}

/// A resource's attributes, `None` for one named by its `service.instance.id` (a process
/// of its own, by the SDK's word).
fn attributes(identity: &str) -> Option<FxHashMap<&str, &str>> {
    if identity.starts_with("instance:") || identity.starts_with("input:") {
        return None;
    }
    Some(
        (identity.split('\u{1f}'))
            .filter_map(|kv| kv.split_once('='))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SDK: &str = "service.name=\"agent\"";
    const MASTRA: &str = "service.name=\"agent\"\u{1f}telemetry.sdk.name=\"@mastra/otel-exporter\"";

    #[test]
    fn a_resource_of_requests_only_is_the_one_same_service_resource_of_tool_calls() {
        let alias = same_process([SDK].into_iter(), &[MASTRA]);
        assert_eq!(alias.get(SDK), Some(&MASTRA));
    }

    #[test]
    fn another_service_another_host_or_two_candidates_are_no_process_of_its() {
        let other_service = "service.name=\"payments\"\u{1f}telemetry.sdk.name=\"x\"";
        assert!(same_process([SDK].into_iter(), &[other_service]).is_empty());
        let host = |h: &str| format!("host.name=\"{h}\"\u{1f}service.name=\"agent\"");
        let (h1, h2) = (host("h1"), host("h2"));
        assert!(same_process([h1.as_str()].into_iter(), &[h2.as_str()]).is_empty());
        // Both hosts' tool calls could be the process of requests that name no host.
        assert!(same_process([SDK].into_iter(), &[h1.as_str(), h2.as_str()]).is_empty());
        assert!(same_process([SDK].into_iter(), &["instance:abc"]).is_empty());
    }

    #[test]
    fn two_processes_of_requests_beside_one_resource_of_tool_calls_are_neither_its() {
        let pid = |p: &str| format!("process.pid={p}\u{1f}service.name=\"agent\"");
        let (p1, p2) = (pid("100"), pid("200"));
        let alias = same_process([p1.as_str(), p2.as_str()].into_iter(), &[MASTRA]);
        assert!(alias.is_empty(), "{alias:?}");
        // One of them alone is.
        assert_eq!(same_process([p1.as_str()].into_iter(), &[MASTRA]).len(), 1);
    }
}
