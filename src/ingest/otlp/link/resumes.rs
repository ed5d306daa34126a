//! Resumes in OTLP traces. No convention marks one: a worker that dies leaves no `crashed`
//! span, and the worker that takes the run over starts a new trace under the run id it
//! loaded (`gen_ai.conversation.id`, a LangGraph `thread_id`). What the trace can show is a
//! run named by an attribute that stopped in the middle of its work in one process (a span
//! whose parent was never exported, or a process's top span ended in error: [`cut_short`])
//! and went on in another within a day, after a pause (none of its spans open, in any
//! process), by its resource ([`super::super::processes::other_process`]). The first span of
//! a tool-calling process after the pause is read as a `resumed` of the run, so correlation
//! splits the run into segments there as for a text log's `agent run 7f3a  resumed`. No
//! `crashed` is claimed.
//!
//! Not a resume: a run whose turns several workers serve one after another, each ended well
//! (a web service's workers: without the cut-short test every change of worker was one,
//! and a second refund of the same amount a later turn asked for was a resume's error);
//! another trace of the same process; another process while the run's spans are open (an
//! orchestrator's run span, a tool served by another process); a run id met again days
//! later; a run named only by its trace id.
//!
//! [`cut_short`]: Graph::cut_short

use super::super::processes::other_process;
use super::Graph;
use super::run_attr;
use crate::time::{Duration, Timestamp};
use rustc_hash::{FxHashMap, FxHashSet};

/// Where a run continued in another process: the span it continued at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Resume {
    pub run: String,
    pub span: usize,
    pub at: Timestamp,
}

/// How soon after a run's spans stopped another process must go on with it for a resume:
/// a run id met again days later (a LangGraph thread id `"1"` after a deploy) is another
/// conversation, not the same run taken over.
const RESUMED_WITHIN: Duration = Duration::from_secs(24 * 3600);

impl Graph<'_> {
    /// The span shows its process stopped in the middle of its work: its parent was never
    /// exported (a process killed with its turn's span open never exports it), or it is
    /// its process's top span (no parent, or one in another process: a front end's) and
    /// ended in error.
    fn cut_short(&self, i: usize) -> bool {
        let s = &self.spans[i];
        match self.parent[i] {
            Some(p) => s.error && self.spans[p].resource != s.resource,
            None => s.parent_id.is_some() || s.error,
        }
    }

    /// The run the span belongs to by an attribute on it or an ancestor, not by its trace.
    fn named_run(&self, i: usize) -> Option<String> {
        self.lineage(i).find_map(|a| run_attr(&self.spans[a]))
    }

    /// Each resume of each run named by an attribute, in the order of the runs' names and,
    /// within a run, of time.
    pub(super) fn resumes(&self, calls: &[usize]) -> Vec<Resume> {
        // The processes (resources) that make each run's tool calls; a run whose calls are
        // all in one resource cannot have gone on in another.
        let mut agents: FxHashMap<String, FxHashSet<&str>> = FxHashMap::default();
        for &t in calls {
            if let Some(run) = self.named_run(t) {
                agents
                    .entry(run)
                    .or_default()
                    .insert(&self.spans[t].resource);
            }
        }
        agents.retain(|_, resources| resources.len() > 1);
        if agents.is_empty() {
            return Vec::new();
        }
        // Each such run's spans, in every process: its tool calls and what encloses them
        // (the agent's span, an orchestrator's run span that stays open meanwhile).
        let mut spans_of: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for i in (0..self.spans.len()).filter(|&i| self.live[i]) {
            if let Some(run) = self.named_run(i)
                && agents.contains_key(&run)
            {
                spans_of.entry(run).or_default().push(i);
            }
        }
        let mut runs: Vec<(String, Vec<usize>)> = spans_of.into_iter().collect();
        runs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::new();
        for (run, mut spans) in runs {
            let makes_calls = &agents[&run];
            spans.sort_by_key(|&i| (self.spans[i].start, self.spans[i].loc, i));
            // The tool-calling processes of the spans since the last pause, whether that
            // stretch was cut short, and when its latest span ends; at a pause, the stretch
            // before it, awaiting the first span of a tool-calling process after it.
            let mut block: Vec<&str> = Vec::new();
            let mut cut_short = false;
            let mut open_until = Timestamp(i64::MIN);
            let mut before: Option<(Vec<&str>, bool, Timestamp)> = None;
            for i in spans {
                let s = &self.spans[i];
                if s.start > open_until && !block.is_empty() {
                    before = Some((std::mem::take(&mut block), cut_short, open_until));
                    cut_short = false;
                }
                let calling = makes_calls.contains(&*s.resource);
                if calling && let Some((processes, cut, ended)) = before.take() {
                    let resumed = cut
                        && s.start.since(ended) <= RESUMED_WITHIN
                        && processes.iter().all(|p| other_process(p, &s.resource));
                    if resumed {
                        out.push(Resume {
                            run: run.clone(),
                            span: i,
                            at: s.start,
                        });
                    }
                }
                if calling && !block.contains(&&*s.resource) {
                    block.push(&s.resource);
                }
                cut_short |= self.cut_short(i);
                open_until = open_until.max(s.end);
            }
        }
        out
    }
}
