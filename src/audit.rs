//! The pipeline every command shares: resolve inputs → read and parse them (in parallel) →
//! correlate → run the rules. Commands decide what to render from the result.

use crate::config::{AuditConfig, Period};
use crate::correlate::{
    AttemptRec, CorrelateOptions, EffectRec, MatchedBy, Model, correlate_parts_adding,
};
use crate::event::Event;
use crate::finding::Finding;
use crate::ingest::otlp::{Span, link};
use crate::ingest::rotated;
use crate::ingest::source::{self, InputError, Outcome};
use crate::ingest::{Format, MAX_PROBLEMS_KEPT, ParseOptions};
use crate::period;
use crate::progress::Progress;
use crate::relevance::{self, Dropped};
use crate::report::{InputReport, Metrics, ProblemReport};
use crate::rules;
use crate::stages::Stages;
use crate::time::{Duration, Timestamp};
use rayon::prelude::*;

mod disagreements;
mod guessed_calls;
mod unsettled_effects;
pub mod zone_gap;

/// Everything an audit produced.
#[derive(Debug)]
pub struct Audit {
    pub inputs: Vec<InputReport>,
    pub model: Model,
    pub findings: Vec<Finding>,
    /// Inputs that could not be read: reported, and the exit status is 2.
    pub unreadable: Vec<InputError>,
    /// The period findings were kept for (`--since` / `--until`).
    pub period: Period,
    /// Totals within the period, computed beside the rules.
    metrics: Metrics,
    /// `--input-tz` names that named no input (a typo would otherwise change nothing, quietly).
    pub unused_input_tz: Vec<String>,
    /// `--whole-amounts INPUT=UNIT` names that named no input.
    pub unused_whole_amounts: Vec<String>,
}

impl Audit {
    pub fn lines_skipped(&self) -> u64 {
        self.inputs.iter().map(|i| i.skipped).sum()
    }

    /// Every input was passed over as no log or was empty (none unreadable: those are
    /// errors of their own): nothing was audited. An empty stream (`zcat` of no files into
    /// `-`, `echo "" |`) or a file a crash left zeroed must not pass a CI job as "no
    /// findings".
    pub fn nothing_read(&self) -> bool {
        self.unreadable.is_empty()
            && !self.inputs.is_empty()
            && self
                .inputs
                .iter()
                .all(|i| i.format.is_none() || is_empty(i))
    }

    /// Of the inputs, how many were empty (no line, or only blank ones and NULs) and how
    /// many passed over as no recognised format.
    pub fn empty_and_passed_over(&self) -> (usize, usize) {
        let empty = (self.inputs.iter())
            .filter(|i| i.format.is_some() && is_empty(i))
            .count();
        let passed = self.inputs.iter().filter(|i| i.format.is_none()).count();
        (empty, passed)
    }

    /// Some times had no date (time-only lines with no `--date` nor `# date:`, placed on
    /// 1970-01-01) and others had one: the two sides cannot be matched in time.
    pub fn dateless_beside_dated(&self) -> bool {
        self.span()
            .is_some_and(|(first, last)| first.is_dateless() && !last.is_dateless())
    }

    /// The most an effect named in an attempt's answer was created before that attempt was
    /// sent, when that is more than half what `--max-skew` allows for: the agent's clock
    /// runs ahead of the service's by at least that much (likely more: this is one effect's
    /// lead), and effects matched by order and time alone may be missed. With the effect
    /// and the attempt.
    pub fn clock_lead(&self) -> Option<(Duration, &EffectRec, &AttemptRec)> {
        let m = &self.model;
        // On every core: a month's effects, each a look into its attempt. The index makes
        // the greatest unique (the last of equals, as `Iterator::max_by_key` would take).
        let (lead, e, attempt, _) = (m.effects.par_iter().enumerate())
            .filter(|(_, e)| e.matched_by == Some(MatchedBy::EffectId))
            .filter_map(|(i, e)| {
                let attempt = m.attempt(e.matched?);
                (!attempt.unlogged).then(|| (attempt.at.since(e.created), e, attempt, i))
            })
            .max_by_key(|(lead, e, _, i)| (*lead, std::cmp::Reverse(e.created), *i))?;
        (lead.0.saturating_mul(2) > m.max_skew.0).then_some((lead, e, attempt))
    }

    /// An input whose effects sit whole hours from their orders' calls ([`zone_gap`]).
    pub fn zone_gap(&self) -> Option<zone_gap::ZoneGap<'_>> {
        zone_gap::zone_gap(&self.model)
    }

    /// A period was asked for and some times had no date to place in it.
    pub fn dateless_in_a_period(&self) -> bool {
        !self.period.is_open() && self.span().is_some_and(|(first, _)| first.is_dateless())
    }

    pub fn metrics(&self) -> Metrics {
        self.metrics.clone()
    }

    /// The earliest and latest event of the whole input (client events, effects and their
    /// settlements).
    pub fn span(&self) -> Option<(Timestamp, Timestamp)> {
        let effects = self
            .model
            .effects
            .iter()
            .flat_map(|e| std::iter::once(e.created).chain(e.state_at));
        let client = self.model.client_span.into_iter().flat_map(|(a, b)| [a, b]);
        effects.chain(client).fold(None, |span, t| match span {
            None => Some((t, t)),
            Some((lo, hi)) => Some((t.min(lo), t.max(hi))),
        })
    }
}

/// Runs the whole audit. Fails only when the paths themselves cannot be resolved.
pub fn run(cfg: &AuditConfig) -> Result<Audit, InputError> {
    let inputs = source::resolve(&cfg.paths, &cfg.excludes)?;
    // Every parallel stage (parsing, sorting, rules) runs in the one pool `--threads` sizes.
    match cfg
        .threads
        .and_then(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().ok())
    {
        Some(pool) => pool.install(|| run_inputs(cfg, inputs)),
        None => run_inputs(cfg, inputs),
    }
}

fn run_inputs(cfg: &AuditConfig, inputs: Vec<source::Input>) -> Result<Audit, InputError> {
    let mut stages = Stages::start();
    let progress = Progress::start(&inputs, cfg.progress);
    let outcomes =
        source::read_all_counting(&inputs, cfg.forced_format, &cfg.parse, progress.counter());
    // Each input's events, kept apart: correlation merges them in time order.
    let mut parts: Vec<Vec<Event>> = Vec::with_capacity(inputs.len() + 2);
    let mut spans: Vec<Span> = Vec::new();
    let mut attrs = Vec::new();
    let mut dropped = Dropped::default();
    let mut deferred = Vec::new();
    let mut deferred_lines = Vec::new();
    let mut started = Vec::new();
    let mut reports = Vec::with_capacity(inputs.len());
    // Each input's format, for reading a deferred call's place again.
    let mut formats = Vec::with_capacity(inputs.len());
    let mut unreadable = Vec::new();
    for (index, (input, outcome)) in inputs.iter().zip(outcomes).enumerate() {
        let mut report = InputReport {
            path: input.display.clone(),
            format: None,
            lines: 0,
            events: 0,
            ignored: 0,
            skipped: 0,
            problems: Vec::new(),
            warned: 0,
            warnings: Vec::new(),
            note: None,
            blank: false,
        };
        formats.push(match &outcome {
            Outcome::Parsed(format, _) => Some(*format),
            _ => None,
        });
        match outcome {
            Outcome::Parsed(format, parsed) => {
                let parsed = *parsed;
                let s = parsed.stats;
                report.format = Some(format.as_str().to_string());
                report.lines = s.lines;
                report.events = s.events;
                report.ignored = s.ignored;
                report.skipped = s.skipped;
                if !s.notes.is_empty() {
                    report.note = Some(s.notes.join("; "));
                }
                report.blank = s.blank;
                if let Some(why) = s.failed.clone().filter(|_| s.lines == 0) {
                    // Failed before its first line: unreadable, as a file that will not open.
                    report.format = None;
                    report.note = Some(format!("unreadable: {why}"));
                    unreadable.push(InputError {
                        path: input.display.clone(),
                        reason: why,
                    });
                } else if let Some(why) = s.failed {
                    // An error of the input's, as an unreadable one is (exit 2), with what
                    // was read before it kept and audited.
                    let n = s.last_line;
                    let why = if s.last_line_cut {
                        format!(
                            "cut short inside line {n} ({why}): the lines before it were read, and line {n} as far as it went; the rest is missing; read a whole copy to audit it all"
                        )
                    } else {
                        format!(
                            "cut short after line {n} ({why}): the lines up to it were read, the rest is missing; read a whole copy to audit it all"
                        )
                    };
                    report.note = Some(why.clone());
                    unreadable.push(InputError {
                        path: input.display.clone(),
                        reason: why,
                    });
                }
                let located = |p: crate::ingest::Problem| ProblemReport {
                    line: p.line,
                    reason: p.reason,
                };
                report.problems = s.problems.into_iter().map(located).collect();
                report.warned = s.warned;
                report.warnings = s.warnings.into_iter().map(located).collect();
                spans.extend(parsed.spans);
                attrs.extend(parsed.attrs);
                dropped.merge(&parsed.dropped);
                deferred.extend(parsed.deferred);
                // Kept per input: joining them would copy a month of emails' places.
                deferred_lines.push((index as u32, parsed.deferred_lines));
                // Kept per input: joined, a month of runs' starts would be copied to grow.
                started.push(parsed.started);
                parts.extend(parsed.sealed);
                parts.push(parsed.events);
            }
            Outcome::NotALog(why) => report.note = Some(why),
            Outcome::Unreadable(why) => {
                report.note = Some(format!("unreadable: {why}"));
                unreadable.push(InputError {
                    path: input.display.clone(),
                    reason: why,
                });
            }
        }
        reports.push(report);
    }
    stages.mark("parse");
    parts.push(link_spans(&spans, &mut reports));
    // Set-aside events of runs that crashed or resumed, restored from the client's parts
    // while the service's side is built.
    let restore = |client: &[Vec<Event>]| {
        let runs = relevance::Lifecycles::of(client);
        let starts = relevance::restore_started(&runs, started);
        let lines = deferred_lines
            .into_iter()
            .flat_map(|(input, lines)| lines.into_iter().map(move |l| (input, l)));
        let restored = relevance::restore_resumed(&runs, deferred, lines, |lines| {
            let (events, problems) = source::reread_deferred(&inputs, &formats, lines, &cfg.parse);
            for (input, why) in problems {
                if let Some(r) = reports.get_mut(input as usize) {
                    r.note = Some(match r.note.take() {
                        Some(note) => format!("{note}; {why}"),
                        None => why,
                    });
                }
            }
            events
        });
        vec![starts, restored]
    };
    let displays = || inputs.iter().map(|i| i.display.as_str());
    let exports = (formats.iter().enumerate())
        .filter(|(_, f)| **f == Some(Format::Csv))
        .map(|(i, _)| i as u32)
        .collect();
    let correlate_opts = CorrelateOptions {
        logs: rotated::logs(&inputs),
        whole_units: cfg.whole_amounts.by_input(displays()),
        exports,
        ..cfg.correlate.clone()
    };
    let mut model = correlate_parts_adding(parts, &correlate_opts, restore);
    model.attrs = attrs.into_iter().collect();
    // Dropped calls still show where the client traces begin and end.
    if let Some((first, last)) = dropped.span {
        let (a, b) = model.client_span.unwrap_or((first, last));
        model.client_span = Some((a.min(first), b.max(last)));
        model.latest_event = model.latest_event.max(Some(last));
    }
    disagreements::warn(&model, &mut reports);
    guessed_calls::warn(&model, &mut reports);
    unsettled_effects::warn(&model, &mut reports);
    stages.mark("correlate");
    // Totals read the model only: they are counted while the rules run.
    // Both ask `shared` for the keyed attempts: whichever asks first classifies them.
    let shared = rules::Shared::new(&model, &cfg.rules);
    let (findings, metrics) = rayon::join(
        || rules::run_all_sharing(&model, &cfg.rules, &shared),
        || crate::metrics::totals_within(shared.keyed(), &cfg.period),
    );
    drop(shared);
    let findings = period::filter(findings, &model, &cfg.period);
    stages.mark("rules");
    progress.finish();
    let unused_input_tz = (cfg.parse.input_tz.iter())
        .filter(|(name, _)| !reports.iter().any(|r| ParseOptions::names(name, &r.path)))
        .map(|(name, _)| name.clone())
        .collect();
    let unused_whole_amounts = (cfg.whole_amounts).unused(&displays().collect::<Vec<_>>());
    Ok(Audit {
        inputs: reports,
        model,
        findings,
        unreadable,
        period: cfg.period,
        metrics,
        unused_input_tz,
        unused_whole_amounts,
    })
}

/// No line, or nothing but blank lines and NUL bytes.
fn is_empty(input: &InputReport) -> bool {
    input.lines == 0 || (input.blank && input.events == 0 && input.skipped == 0)
}

/// OTLP spans from every input become events only now: a trace's spans are spread over lines
/// and files, children before parents. Each span counts once for its input: as skipped when
/// linking could not use it whole (reported with why, as a parser reports a broken line),
/// else as events when it became some and as ignored otherwise. A request given to a tool
/// call by a choice the trace does not settle is used, and reported as a warning.
fn link_spans(spans: &[Span], reports: &mut [InputReport]) -> Vec<Event> {
    if spans.is_empty() {
        return Vec::new();
    }
    let linked = link::link(spans);
    let mut skipped = vec![false; spans.len()];
    let mut touched = vec![false; reports.len()];
    for (span, why) in linked.problems {
        let loc = spans[span].loc;
        if let Some(r) = reports.get_mut(loc.input as usize) {
            skipped[span] = true;
            touched[loc.input as usize] = true;
            r.skipped += 1;
            r.problems.push(ProblemReport {
                line: loc.line,
                reason: why,
            });
        }
    }
    for ((span, used), skipped) in spans.iter().zip(&linked.used).zip(skipped) {
        if let Some(r) = reports.get_mut(span.loc.input as usize) {
            if skipped {
                continue;
            }
            if *used {
                r.events += 1;
            } else {
                r.ignored += 1;
            }
        }
    }
    for a in &linked.ambiguous {
        let loc = spans[a.request].loc;
        let place = |s: &Span| {
            let path = reports
                .get(s.loc.input as usize)
                .map_or("", |r| r.path.as_str());
            format!("{path}:{}", s.loc.line)
        };
        let reason = a.describe(spans, place);
        if let Some(r) = reports.get_mut(loc.input as usize) {
            r.warned += 1;
            r.warnings.push(ProblemReport {
                line: loc.line,
                reason,
            });
            touched[loc.input as usize] = true;
        }
    }
    // The parser's problems and linking's in the order of their lines, the first few kept.
    for (r, _) in reports.iter_mut().zip(touched).filter(|(_, t)| *t) {
        r.problems.sort_by_key(|p| p.line);
        r.problems.truncate(MAX_PROBLEMS_KEPT);
        r.warnings.sort_by_key(|p| p.line);
        r.warnings.truncate(MAX_PROBLEMS_KEPT);
    }
    linked.events.into_iter().map(|(_, e)| e).collect()
}
