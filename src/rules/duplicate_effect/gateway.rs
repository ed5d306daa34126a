//! A gateway's own lines about the one request of a `gateway-retry` duplicate: the line
//! where it sent the request again (nginx's `$upstream_addr` listing two upstreams,
//! HAProxy's retry count) or gave up on an upstream that had taken it (nginx's `upstream
//! timed out ... while reading response header from upstream`). They name the replay the
//! cause only guesses at; they never add or remove an effect.

use super::cause::Evidence;
use crate::correlate::{AttemptRec, GatewayTryRec};
use crate::event::url_parts;
use crate::time::Duration;

/// How far a gateway's stamp may lie outside its request's span: nginx writes whole seconds.
const STAMP_SLACK: Duration = Duration(1_000_000_000);

impl<'m> Evidence<'m> {
    /// The gateway lines about the request the group's producing dispatches sent: of its
    /// method and target, stamped between its sending and its answer (or the last effect,
    /// when none came), widened by `--max-skew` and a second. Where one input has two such
    /// lines (two requests to one path at once), which is this one's is not known: none of
    /// them is taken.
    pub(super) fn gateway_lines(&self) -> Vec<&'m GatewayTryRec> {
        let model = self.model;
        if model.gateway_tries.is_empty() {
            return Vec::new();
        }
        let last_effect = self.effects.iter().map(|e| e.created).max();
        let mut found: Vec<&GatewayTryRec> = Vec::new();
        let attempts = (self.producing.iter()).flat_map(|&d| &model.dispatches[d].attempts);
        for a in attempts {
            let Some((lo, hi)) = span(a, last_effect, model.max_skew) else {
                continue;
            };
            let (method, url) = (a.method.as_deref(), a.url.as_deref());
            let (Some(method), Some(url)) = (method, url) else {
                continue;
            };
            let target = url_parts(url).1;
            let first = model.gateway_tries.partition_point(|g| g.at < lo);
            let near = model.gateway_tries[first..]
                .iter()
                .take_while(|g| g.at <= hi);
            found.extend(near.filter(|g| {
                g.shows.method.eq_ignore_ascii_case(method) && g.shows.target == target
            }));
        }
        found.sort_by_key(|g| (g.at, g.loc));
        found.dedup_by_key(|g| g.loc);
        let one_per_input = |g: &&GatewayTryRec| {
            found
                .iter()
                .filter(|o| o.loc.input == g.loc.input && o.shows.resent == g.shows.resent)
                .count()
                == 1
        };
        found.iter().copied().filter(one_per_input).collect()
    }
}

/// When a gateway's line about attempt `a` may be stamped.
fn span(
    a: &AttemptRec,
    last_effect: Option<crate::time::Timestamp>,
    skew: Duration,
) -> Option<(crate::time::Timestamp, crate::time::Timestamp)> {
    let end = a.outcome.as_ref().map(|o| o.at).or(last_effect)?.max(a.at);
    let wide = Duration(skew.0.saturating_add(STAMP_SLACK.0));
    Some((a.at.minus(wide), end.plus(wide)))
}

/// What the gateway lines say, for the finding's message: `sent the request to A (504),
/// then to B (201)`, each said once.
pub(super) fn said(lines: &[&GatewayTryRec]) -> String {
    let mut said: Vec<&str> = Vec::new();
    for g in lines {
        if !said.contains(&g.shows.shows.as_str()) {
            said.push(&g.shows.shows);
        }
    }
    said.join(", and ")
}
