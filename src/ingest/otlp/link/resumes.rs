//! Resumes in OTLP traces. No convention marks one: a worker that dies leaves no `crashed`
//! span (its last spans are often never exported), and the worker that takes the run over
//! starts a new trace under the run id it loaded (`gen_ai.conversation.id`, a LangGraph
//! `thread_id`). What the trace does show is the run's spans stopping in one process and
//! going on in another: a run named by an attribute whose spans, in the processes that make
//! its tool calls, pause (none of them open) and then start again in a process that made
//! none of the spans before the pause, by its resource ([`super::super::processes::other_process`]).
//! The first span after the pause is read as a `resumed` of the run, so correlation splits
//! the run into segments there as for a text log's `agent run 7f3a  resumed`. No `crashed`
//! is claimed: the first process may as well have finished its turn, a service with several
//! workers serving a conversation's turns one after another looks the same, and there a
//! segment changes nothing unless a call is repeated across it.
//!
//! Not a resume: a run going on in another trace of the same process (an SDK that makes
//! each model turn a trace of its own); spans of another process while the run's spans are
//! open (a tool served by another process inside the call, another worker on a parallel
//! branch); a run named only by its trace id (it does not outlive its process); spans of
//! processes that make none of the run's tool calls (a web front end naming the session).

use super::super::processes::other_process;
use super::Graph;
use super::run_attr;
use crate::time::Timestamp;
use rustc_hash::{FxHashMap, FxHashSet};

/// Where a run continued in another process: the span it continued at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Resume {
    pub run: String,
    pub span: usize,
    pub at: Timestamp,
}

impl Graph<'_> {
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
        let resources: FxHashSet<&str> = agents.values().flatten().copied().collect();
        // Each such run's spans in those processes: its tool calls and what encloses them
        // there (the agent's span, the model calls of a turn).
        let mut spans_of: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for i in (0..self.spans.len()).filter(|&i| self.live[i]) {
            let resource: &str = &self.spans[i].resource;
            if !resources.contains(resource) {
                continue;
            }
            if let Some(run) = self.named_run(i)
                && agents.get(&run).is_some_and(|r| r.contains(resource))
            {
                spans_of.entry(run).or_default().push(i);
            }
        }
        let mut runs: Vec<(String, Vec<usize>)> = spans_of.into_iter().collect();
        runs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::new();
        for (run, mut spans) in runs {
            spans.sort_by_key(|&i| (self.spans[i].start, self.spans[i].loc, i));
            // The processes of the spans since the last pause, and when the latest ends.
            let mut block: Vec<&str> = Vec::new();
            let mut open_until = Timestamp(i64::MIN);
            for i in spans {
                let s = &self.spans[i];
                if s.start > open_until && !block.is_empty() {
                    if block.iter().all(|p| other_process(p, &s.resource)) {
                        out.push(Resume {
                            run: run.clone(),
                            span: i,
                            at: s.start,
                        });
                    }
                    block.clear();
                }
                if !block.contains(&&*s.resource) {
                    block.push(&s.resource);
                }
                open_until = open_until.max(s.end);
            }
        }
        out
    }
}
