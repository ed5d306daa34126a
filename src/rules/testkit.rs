//! Tests only: builds events the way a parser would, correlates them, and runs one rule, so
//! that a rule's unit tests do not depend on any input format. Times are milliseconds.

use super::{Level, Rule, Settings};
use crate::classify::{classify_failure, classify_status};
use crate::correlate::{CorrelateOptions, Model, correlate};
use crate::event::*;
use crate::finding::Finding;
use crate::money::{Currency, Money};
use crate::time::Timestamp;

#[derive(Default)]
pub struct Trace {
    events: Vec<Event>,
}

fn call(run: &str, step: u32) -> CallRef {
    CallRef {
        run: run.into(),
        step,
    }
}

impl Trace {
    pub fn new() -> Self {
        Trace::default()
    }

    fn push(&mut self, ms: i64, kind: EventKind) -> &mut Self {
        let line = self.events.len() as u32 + 1;
        self.events.push(Event {
            at: Timestamp::from_millis(ms),
            loc: Loc { input: 0, line },
            kind,
        });
        self
    }

    pub fn tool_call(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        tool: &str,
        args: &str,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::ToolCall(ToolCall {
                call: call(run, step),
                tool: tool.into(),
                args_raw: args.into(),
                args: serde_json::from_str(args).expect("test args are JSON"),
            }),
        )
    }

    pub fn attempt(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        n: u32,
        key: Option<&str>,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::Attempt(Attempt {
                call: Some(call(run, step)),
                number: n,
                method: Some("POST".into()),
                url: Some("https://payments.internal/v1/refunds".into()),
                key: key.map(Into::into),
            }),
        )
    }

    pub fn timeout(&mut self, ms: i64, run: &str, step: u32) -> &mut Self {
        let (error, message) = ("urllib3.exceptions.ReadTimeoutError", "read timeout=10");
        self.push(
            ms,
            EventKind::Failure(Failure {
                call: Some(call(run, step)),
                attempt: None,
                class: classify_failure(error, message),
                error: error.into(),
                message: message.into(),
            }),
        )
    }

    pub fn response(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        status: u16,
        text: &str,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::Response(Response {
                call: Some(call(run, step)),
                attempt: None,
                status,
                class: classify_status(status),
                effect_id: None,
                replayed: false,
                amount: None,
                message: text.into(),
            }),
        )
    }

    /// A 2xx naming the effect it made (or replayed).
    pub fn created(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        id: &str,
        replayed: bool,
    ) -> &mut Self {
        let status = if replayed { 200 } else { 201 };
        self.push(
            ms,
            EventKind::Response(Response {
                call: Some(call(run, step)),
                attempt: None,
                status,
                class: classify_status(status),
                effect_id: Some(id.into()),
                replayed,
                amount: None,
                message: String::new(),
            }),
        )
    }

    pub fn step_end(&mut self, ms: i64, run: &str, step: u32, error: Option<&str>) -> &mut Self {
        self.push(
            ms,
            EventKind::StepEnd(StepEnd {
                call: call(run, step),
                ok: error.is_none(),
                error: error.map(Into::into),
            }),
        )
    }

    pub fn run_event(&mut self, ms: i64, run: &str, what: Lifecycle) -> &mut Self {
        self.push(
            ms,
            EventKind::Run(RunEvent {
                run: run.into(),
                what,
            }),
        )
    }

    /// A settled refund of `pence` on `order`.
    pub fn refund(
        &mut self,
        ms: i64,
        id: &str,
        order: &str,
        pence: i64,
        key: Option<&str>,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::Effect(Effect {
                kind: "refund".into(),
                id: id.into(),
                order: Some(order.into()),
                amount: Some(Money::new(pence, Currency::GBP)),
                key: key.map(Into::into),
                state: Some("settled".into()),
                state_at: None,
                happened: true,
            }),
        )
    }

    pub fn model(&self) -> Model {
        correlate(self.events.clone(), &CorrelateOptions::default())
    }

    /// The rule's findings with default settings (plus `settings` tweaks).
    pub fn check_with(&self, rule: &Rule, settings: &Settings) -> Vec<Finding> {
        let mut out = Vec::new();
        (rule.check)(&self.model(), settings, &mut out);
        out
    }

    pub fn check(&self, rule: &Rule) -> Vec<Finding> {
        self.check_with(rule, &Settings::default())
    }

    /// Every enabled rule, as `scan` runs them.
    pub fn run_all(&self, settings: &Settings) -> Vec<Finding> {
        super::run_all(&self.model(), settings)
    }
}

/// Settings with one rule's level set.
pub fn with_level(id: &str, level: Level) -> Settings {
    let mut s = Settings::default();
    s.levels.insert(id.to_string(), level);
    s
}
