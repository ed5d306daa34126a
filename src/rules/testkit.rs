//! Tests only: builds events the way a parser would, correlates them, and runs one rule, so
//! that a rule's unit tests do not depend on any input format. Times are milliseconds.

use super::{Level, Rule, Settings};
use crate::classify::{classify_failure, classify_status};
use crate::correlate::{CorrelateOptions, Model, correlate};
use crate::event::*;
use crate::finding::Finding;
use crate::money::{Currency, Money};
use crate::time::Timestamp;

#[derive(Clone, Default)]
pub struct Trace {
    events: Vec<Event>,
}

fn call(run: &str, step: u32) -> CallRef {
    CallRef {
        run: run.into(),
        step,
        part: 0,
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

    /// The event just added was read from input `input` (another log than the first).
    pub fn in_input(&mut self, input: u32) -> &mut Self {
        if let Some(e) = self.events.last_mut() {
            e.loc.input = input;
        }
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
            EventKind::ToolCall(Box::new(ToolCall {
                call: call(run, step),
                tool: tool.into(),
                args_raw: args.into(),
                args: serde_json::from_str(args).expect("test args are JSON"),
            })),
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
        let refunds = "https://payments.internal/v1/refunds";
        self.sent(ms, run, step, n, "POST", refunds, key)
    }

    /// Attempt `n` of `run`/`step`: `method url` with `key`.
    #[allow(clippy::too_many_arguments)]
    pub fn sent(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        n: u32,
        method: &str,
        url: &str,
        key: Option<&str>,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::Attempt(Box::new(Attempt {
                call: Some(call(run, step)),
                number: n,
                method: Some(method.into()),
                url: Some(url.into()),
                key: key.map(Into::into),
                key_unseen: false,
                placed: false,
            })),
        )
    }

    pub fn timeout(&mut self, ms: i64, run: &str, step: u32) -> &mut Self {
        let (error, message) = ("urllib3.exceptions.ReadTimeoutError", "read timeout=10");
        self.push(
            ms,
            EventKind::Failure(Box::new(Failure {
                call: Some(call(run, step)),
                attempt: None,
                class: classify_failure(error, message),
                error: error.into(),
                message: message.into(),
                raised_in: None,
                resent_after: None,
            })),
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
            EventKind::Response(Box::new(Response {
                call: Some(call(run, step)),
                attempt: None,
                status,
                class: classify_status(status),
                effect_id: None,
                replayed: false,
                amount: None,
                message: text.into(),
            })),
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
            EventKind::Response(Box::new(Response {
                call: Some(call(run, step)),
                attempt: None,
                status,
                class: classify_status(status),
                effect_id: Some(id.into()),
                replayed,
                amount: None,
                message: Text::default(),
            })),
        )
    }

    pub fn step_end(&mut self, ms: i64, run: &str, step: u32, error: Option<&str>) -> &mut Self {
        self.push(
            ms,
            EventKind::StepEnd(Box::new(StepEnd {
                call: call(run, step),
                ok: error.is_none(),
                error: error.map(Into::into),
            })),
        )
    }

    pub fn run_event(&mut self, ms: i64, run: &str, what: Lifecycle) -> &mut Self {
        self.push(
            ms,
            EventKind::Run(Box::new(RunEvent {
                run: run.into(),
                what,
            })),
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
            EventKind::Effect(Box::new(Effect {
                kind: "refund".into(),
                id: id.into(),
                order: Some(order.into()),
                amount: Some(Money::new(pence, Currency::GBP)),
                whole: None,
                key: key.map(Into::into),
                state: Some("settled".into()),
                state_at: None,
                happened: true,
            })),
        )
    }

    /// A refund on `order` whose amount the service did not log.
    /// The attempt just added came from a line or span that shows no headers: its missing
    /// key is unknown ([`crate::event::Attempt::key_unseen`]).
    pub fn headers_unseen(&mut self) -> &mut Self {
        if let Some(Event {
            kind: EventKind::Attempt(a),
            ..
        }) = self.events.last_mut()
        {
            a.key_unseen = true;
        }
        self
    }

    pub fn refund_unpriced(&mut self, ms: i64, id: &str, order: &str) -> &mut Self {
        self.refund(ms, id, order, 0, None);
        if let Some(Event {
            kind: EventKind::Effect(e),
            ..
        }) = self.events.last_mut()
        {
            e.amount = None;
        }
        self
    }

    /// A row of the service's idempotency records, created at `ms`.
    pub fn record(
        &mut self,
        ms: i64,
        key: &str,
        status: &str,
        response: Option<&str>,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::Record(Box::new(Record {
                key: key.into(),
                request_hash: None,
                status: status.into(),
                response: response.map(Into::into),
            })),
        )
    }

    pub fn model(&self) -> Model {
        self.model_with(&CorrelateOptions::default())
    }

    pub fn model_with(&self, opts: &CorrelateOptions) -> Model {
        correlate(self.events.clone(), opts)
    }

    /// The rule's findings with default settings (plus `settings` tweaks).
    pub fn check_with(&self, rule: &Rule, settings: &Settings) -> Vec<Finding> {
        let (model, mut out) = (self.model(), Vec::new());
        (rule.check)(
            &model,
            settings,
            &super::Shared::new(&model, settings),
            &mut out,
        );
        out
    }

    pub fn check(&self, rule: &Rule) -> Vec<Finding> {
        self.check_with(rule, &Settings::default())
    }

    /// Every enabled rule, as `scan` runs them.
    pub fn run_all(&self, settings: &Settings) -> Vec<Finding> {
        super::run_all(&self.model(), settings)
    }

    /// Every finding of every rule, with default settings.
    pub fn findings(&self) -> Vec<Finding> {
        self.run_all(&Settings::default())
    }

    /// The findings of rule `id` among all rules' (as `scan` would report them).
    pub fn of(&self, id: &str) -> Vec<Finding> {
        self.findings()
            .into_iter()
            .filter(|f| f.rule == id)
            .collect()
    }

    /// A failure classified from its exception class and message, as the parsers do.
    pub fn failure(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        error: &str,
        message: &str,
    ) -> &mut Self {
        self.push(
            ms,
            EventKind::Failure(Box::new(Failure {
                call: Some(call(run, step)),
                attempt: None,
                class: classify_failure(error, message),
                error: error.into(),
                message: message.into(),
                raised_in: None,
                resent_after: None,
            })),
        )
    }

    /// Attempt `n` sending `method url`, without a key.
    pub fn request(
        &mut self,
        ms: i64,
        run: &str,
        step: u32,
        n: u32,
        method: &str,
        url: &str,
    ) -> &mut Self {
        self.sent(ms, run, step, n, method, url, None)
    }

    /// A read: a GET of the order, which can have no effect.
    pub fn get(&mut self, ms: i64, run: &str, step: u32) -> &mut Self {
        self.sent(
            ms,
            run,
            step,
            1,
            "GET",
            "https://orders.internal/v1/orders",
            None,
        )
    }

    /// A refund that settled at `settled_ms`.
    pub fn refund_settled(
        &mut self,
        ms: i64,
        id: &str,
        order: &str,
        pence: i64,
        settled_ms: i64,
    ) -> &mut Self {
        self.refund(ms, id, order, pence, None);
        if let Some(Event {
            kind: EventKind::Effect(e),
            ..
        }) = self.events.last_mut()
        {
            e.state_at = Some(Timestamp::from_millis(settled_ms));
        }
        self
    }
}

/// Milliseconds of `hh:mm:ss[.fff]` on the `day`-th day after 2026-11-03, for traces that
/// span days.
pub fn t(day: i64, hms: &str) -> i64 {
    const BASE_DAYS: i64 = 20_760; // 2026-11-03
    let parts: Vec<&str> = hms.split([':', '.']).collect();
    let n = |i: usize| {
        parts
            .get(i)
            .map_or(0, |p| p.parse::<i64>().expect("number"))
    };
    let ms = ((n(0) * 60 + n(1)) * 60 + n(2)) * 1000 + n(3);
    (BASE_DAYS + day) * 86_400_000 + ms
}

/// The effect ids of a finding.
pub fn ids(f: &Finding) -> Vec<&str> {
    f.effects.iter().map(|e| e.id.as_str()).collect()
}

/// Settings with one rule's level set.
pub fn with_level(id: &str, level: Level) -> Settings {
    let mut s = Settings::default();
    s.levels.insert(id.to_string(), level);
    s
}
/// Shared scenarios: the issue's cases as event streams.
pub mod scenarios {
    use super::*;

    pub const ARGS: &str = r#"{"order":"A-88214","amount_p":4500}"#;

    /// Run 7f3a refunds at step 4, crashes, resumes. `replan`: the resumed run issues the
    /// refund again as step 5 with a key derived from the new step; else it replays step 4
    /// with its old key and the service answers from its records.
    pub fn resumed(replan: bool) -> Trace {
        let mut tr = Trace::default();
        tr.run_event(t(0, "14:00:00"), "7f3a", Lifecycle::Started)
            .tool_call(
                t(0, "14:00:00.500"),
                "7f3a",
                3,
                "lookup_order",
                r#"{"order":"A-88214"}"#,
            )
            .get(t(0, "14:00:00.510"), "7f3a", 3)
            .step_end(t(0, "14:00:00.700"), "7f3a", 3, None)
            .tool_call(t(0, "14:00:01"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:00:01.010"), "7f3a", 4, 1, Some("k4"))
            .refund(t(0, "14:00:01.100"), "rf_R1", "A-88214", 4500, Some("k4"))
            .created(t(0, "14:00:02.200"), "7f3a", 4, "rf_R1", false)
            .step_end(t(0, "14:00:02.210"), "7f3a", 4, None)
            .run_event(t(0, "14:00:03"), "7f3a", Lifecycle::Crashed)
            .run_event(t(0, "14:01:00"), "7f3a", Lifecycle::Resumed)
            .tool_call(
                t(0, "14:01:00.500"),
                "7f3a",
                3,
                "lookup_order",
                r#"{"order":"A-88214"}"#,
            )
            .get(t(0, "14:01:00.510"), "7f3a", 3)
            .step_end(t(0, "14:01:00.700"), "7f3a", 3, None);
        if replan {
            tr.tool_call(
                t(0, "14:01:01"),
                "7f3a",
                4,
                "lookup_customer",
                r#"{"order":"A-88214"}"#,
            )
            .get(t(0, "14:01:01.010"), "7f3a", 4)
            .step_end(t(0, "14:01:01.200"), "7f3a", 4, None)
            .tool_call(
                t(0, "14:01:02"),
                "7f3a",
                5,
                "issue_refund",
                r#"{"amount_p":4500,"order":"A-88214"}"#,
            )
            .attempt(t(0, "14:01:02.010"), "7f3a", 5, 1, Some("k5"))
            .refund(t(0, "14:01:02.100"), "rf_R2", "A-88214", 4500, Some("k5"))
            .created(t(0, "14:01:03.100"), "7f3a", 5, "rf_R2", false)
            .step_end(t(0, "14:01:03.110"), "7f3a", 5, None);
        } else {
            tr.tool_call(t(0, "14:01:02"), "7f3a", 4, "issue_refund", ARGS)
                .attempt(t(0, "14:01:02.010"), "7f3a", 4, 1, Some("k4"))
                .created(t(0, "14:01:02.100"), "7f3a", 4, "rf_R1", true)
                .step_end(t(0, "14:01:02.110"), "7f3a", 4, None);
        }
        tr
    }

    /// Two runs refund one order the same amount `gap_days` days plus 98 minutes apart.
    pub fn two_runs(day2: i64, pence2: i64) -> Trace {
        let mut tr = Trace::default();
        let args2 = format!(r#"{{"order":"A-88214","amount_p":{pence2}}}"#);
        tr.tool_call(t(0, "14:02:11.402"), "7f3a", 4, "issue_refund", ARGS)
            .attempt(t(0, "14:02:11.418"), "7f3a", 4, 1, Some("ka"))
            .refund(t(0, "14:02:11.501"), "rf_8XM1", "A-88214", 4500, Some("ka"))
            .created(t(0, "14:02:12.000"), "7f3a", 4, "rf_8XM1", false)
            .step_end(t(0, "14:02:12.010"), "7f3a", 4, None)
            .tool_call(t(day2, "15:40:05.118"), "9b21", 3, "issue_refund", &args2)
            .attempt(t(day2, "15:40:05.130"), "9b21", 3, 1, Some("kb"))
            .refund(
                t(day2, "15:40:05.230"),
                "rf_Q7P4",
                "A-88214",
                pence2,
                Some("kb"),
            )
            .created(t(day2, "15:40:06.000"), "9b21", 3, "rf_Q7P4", false)
            .step_end(t(day2, "15:40:06.010"), "9b21", 3, None);
        tr
    }
}
