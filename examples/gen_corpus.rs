//! Generates a seeded, deterministic month of agent traces and payments-service logs for the
//! benchmark (issue 6), with a ground-truth file of the duplicates it planted.
//!
//! ```sh
//! cargo run --release --example gen_corpus -- --out bench/corpus --size 100M --seed 7
//! ```
//!
//! Layout: `agent-N.log` (one per agent worker) and `payments-N.log` (one per service
//! replica), full ISO timestamps, and `truth.json` beside them. Most tool calls are no refunds
//! (lookups, emails); a few percent of refund attempts time out, some of those land anyway;
//! there are keyed retries that the service replays, unkeyed retries that duplicate, gateway
//! retries, step retries, resumes (correct and renumbered), duplicate decisions, legitimate
//! repeats weeks apart, 422s, health checks and checkout charges no client trace covers.
//! Fresh refund orders are numbered (`R-1000001`...), never drawn at random, so the only
//! refunds that share an order are the ones planted; `truth.json` is then exact.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// splitmix64: small, seeded, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// True with probability `per_mille` / 1000.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

const WORKERS: usize = 4;
const REPLICAS: usize = 2;
const MONTH_START_MS: i64 = 1_793_491_200_000; // 2026-11-01T00:00:00Z
const MONTH_MS: i64 = 30 * 86_400_000;

#[derive(Default)]
struct Truth {
    delivery: Vec<(String, Vec<String>)>,
    decision: Vec<(String, Vec<String>)>,
}

struct Gen {
    rng: Rng,
    agent: Vec<BufWriter<File>>,
    service: Vec<BufWriter<File>>,
    bytes: u64,
    line: String,
    effect_seq: u64,
    /// Fresh refund orders come from a counter, so that two unrelated refunds never share an
    /// order by chance (which would plant a duplicate decision the truth does not list).
    order_seq: u64,
    truth: Truth,
    /// Orders refunded earlier, with when: for legitimate repeats weeks later.
    past_orders: Vec<(String, i64, i64)>,
}

fn ts(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let dt = chrono::DateTime::from_timestamp(secs, (ms.rem_euclid(1000) * 1_000_000) as u32)
        .expect("in range");
    dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

impl Gen {
    fn emit(&mut self, worker: usize, ms: i64, msg: &str) {
        self.line.clear();
        let _ = writeln!(self.line, "{}  {msg}", ts(ms));
        self.bytes += self.line.len() as u64;
        let _ = self.agent[worker].write_all(self.line.as_bytes());
    }

    fn effect(&mut self, ms: i64, order: &str, amount: i64, key: Option<&str>) -> String {
        self.effect_seq += 1;
        let id = format!("rf_{:08X}", self.effect_seq);
        let replica = (self.effect_seq % REPLICAS as u64) as usize;
        self.line.clear();
        let _ = write!(
            self.line,
            "{}  refund {id}  order {order}  {amount}p  settled {}",
            ts(ms),
            ts(ms + 9_000 + self.rng.below(4000) as i64)
        );
        if let Some(k) = key {
            let _ = write!(self.line, "  key={k}");
        }
        self.line.push('\n');
        self.bytes += self.line.len() as u64;
        let _ = self.service[replica].write_all(self.line.as_bytes());
        id
    }

    fn service_noise(&mut self, ms: i64) {
        let replica = self.rng.below(REPLICAS as u64) as usize;
        self.line.clear();
        if self.rng.chance(500) {
            let _ = writeln!(
                self.line,
                "{}  healthcheck ok  latency_ms={}",
                ts(ms),
                3 + self.rng.below(20)
            );
        } else {
            self.effect_seq += 1;
            let _ = writeln!(
                self.line,
                "{}  charge ch_{:08X}  order W-{}  {}p  captured {}",
                ts(ms),
                self.effect_seq,
                self.rng.below(10_000_000),
                500 + self.rng.below(20_000),
                ts(ms + 2_000)
            );
        }
        self.bytes += self.line.len() as u64;
        let _ = self.service[replica].write_all(self.line.as_bytes());
    }

    /// One agent run on `worker` starting at `t`; returns when it ended.
    fn run(&mut self, worker: usize, run_no: u64, mut t: i64) -> i64 {
        let run = format!("w{worker}r{run_no}");
        self.emit(worker, t, &format!("agent run {run}  started"));
        let steps = 3 + self.rng.below(4);
        let refund_step = if self.rng.chance(350) {
            Some(1 + self.rng.below(steps))
        } else {
            None
        };
        for step in 1..=steps {
            t += 200 + self.rng.below(3000) as i64;
            if Some(step) == refund_step {
                t = self.refund(worker, &run, step, t);
            } else {
                t = self.lookup(worker, &run, step, t);
            }
            if self.rng.chance(30) {
                self.service_noise(t);
            }
        }
        t
    }

    fn lookup(&mut self, worker: usize, run: &str, step: u64, mut t: i64) -> i64 {
        let order = format!("A-{}", self.rng.below(900_000) + 100_000);
        let (tool, method, url) = if self.rng.chance(600) {
            ("lookup_order", "GET", "https://orders.internal/v1/orders")
        } else {
            ("send_email", "POST", "https://mail.internal/v1/emails")
        };
        self.emit(
            worker,
            t,
            &format!("agent run {run}  step {step}  tool={tool}  args={{\"order\":\"{order}\"}}"),
        );
        t += 10;
        self.emit(worker, t, &format!("{method} {url}  (attempt 1)"));
        t += 40 + self.rng.below(300) as i64;
        self.emit(worker, t, "200 OK");
        t += 2;
        self.emit(worker, t, &format!("agent run {run}  step {step}  ok"));
        t
    }

    fn refund(&mut self, worker: usize, run: &str, step: u64, mut t: i64) -> i64 {
        // A legitimate repeat: the same order and amount refunded again weeks later.
        let (order, amount) = match self
            .past_orders
            .iter()
            .position(|(_, _, at)| t - at > 20 * 86_400_000)
        {
            Some(i) if self.rng.chance(20) => {
                let (o, a, _) = self.past_orders.swap_remove(i);
                (o, a)
            }
            _ => {
                self.order_seq += 1;
                (
                    format!("R-{}", 1_000_000 + self.order_seq),
                    500 + 50 * self.rng.below(200) as i64,
                )
            }
        };
        if self.past_orders.len() < 5000 && self.rng.chance(50) {
            self.past_orders.push((order.clone(), amount, t));
        }
        let keyed = self.rng.chance(700);
        let key = format!("k{:x}", self.rng.next() >> 8);
        let args = format!("{{\"order\":\"{order}\",\"amount_p\":{amount}}}");
        self.emit(
            worker,
            t,
            &format!("agent run {run}  step {step}  tool=issue_refund  args={args}"),
        );
        let key_field = |k: &str| {
            if keyed {
                format!("  idempotency_key={k}")
            } else {
                String::new()
            }
        };
        t += 15;
        self.emit(
            worker,
            t,
            &format!(
                "POST https://payments.internal/v1/refunds  (attempt 1){}",
                key_field(&key)
            ),
        );
        let sent = t;
        let roll = self.rng.below(1000);
        let mut effects = Vec::new();
        let mut end_step = step;
        if roll < 40 {
            // Ambiguous timeout; the refund lands anyway half of the time.
            let landed = self.rng.chance(500);
            if landed {
                effects.push(self.effect(sent + 80, &order, amount, keyed.then_some(key.as_str())));
            }
            t = sent + 10_000;
            self.emit(
                worker,
                t,
                "urllib3.exceptions.ReadTimeoutError: read timeout=10",
            );
            t += 500;
            self.emit(
                worker,
                t,
                &format!(
                    "POST https://payments.internal/v1/refunds  (attempt 2){}",
                    key_field(&key)
                ),
            );
            t += 600;
            if keyed && landed {
                let id = effects[0].clone();
                self.emit(worker, t, &format!("200 OK  refund_id={id}  replayed=true"));
            } else {
                let id = self.effect(t - 30, &order, amount, keyed.then_some(key.as_str()));
                self.emit(
                    worker,
                    t,
                    &format!("201 Created  refund_id={id}  amount_p={amount}"),
                );
                effects.push(id);
            }
        } else if roll < 45 {
            // A gateway retry: one attempt, two refunds.
            effects.push(self.effect(sent + 100, &order, amount, None));
            let id = self.effect(sent + 400, &order, amount, None);
            t = sent + 900;
            self.emit(
                worker,
                t,
                &format!("201 Created  refund_id={id}  amount_p={amount}"),
            );
            effects.push(id);
        } else if roll < 55 {
            // A 422: the service refuses; nothing happens.
            t = sent + 120;
            self.emit(
                worker,
                t,
                "422 Unprocessable Entity  error=amount_exceeds_capture",
            );
        } else if roll < 65 {
            // A step retry: attempt 1 times out but lands; the step fails and the framework
            // dispatches it again. With the same key the service replays; without, it refunds
            // again.
            let kf = keyed.then_some(key.as_str());
            effects.push(self.effect(sent + 80, &order, amount, kf));
            t = sent + 10_000;
            self.emit(
                worker,
                t,
                "urllib3.exceptions.ReadTimeoutError: read timeout=10",
            );
            t += 2;
            self.emit(
                worker,
                t,
                &format!("agent run {run}  step {step}  failed  error=ReadTimeout"),
            );
            t += 700;
            self.emit(
                worker,
                t,
                &format!("agent run {run}  step {step}  tool=issue_refund  args={args}"),
            );
            t = self.second_dispatch(worker, t, (&order, amount), kf, kf, &mut effects);
        } else if roll < 75 {
            // A crash after the refund landed, before the step was marked done; on resume
            // the step is dispatched again, half of the time correctly (same step, same key:
            // replayed) and half renumbered (another step, so a newly derived key).
            let first_key = keyed.then_some(key.as_str());
            let id = self.effect(sent + 90, &order, amount, first_key);
            t = sent + 400;
            self.emit(
                worker,
                t,
                &format!("201 Created  refund_id={id}  amount_p={amount}"),
            );
            effects.push(id);
            self.emit(worker, t + 50, &format!("agent run {run}  crashed"));
            t += 4_000;
            self.emit(worker, t, &format!("agent run {run}  resumed"));
            t += 300;
            let renumbered = self.rng.chance(500);
            let drifted = format!("{key}r");
            let kf = match (renumbered, keyed) {
                (true, true) => Some(drifted.as_str()),
                (_, true) => Some(key.as_str()),
                (_, false) => None,
            };
            if renumbered {
                end_step = step + 100;
            }
            self.emit(
                worker,
                t,
                &format!("agent run {run}  step {end_step}  tool=issue_refund  args={args}"),
            );
            t = self.second_dispatch(worker, t, (&order, amount), kf, first_key, &mut effects);
        } else {
            let id = self.effect(sent + 90, &order, amount, keyed.then_some(key.as_str()));
            t = sent + 300 + self.rng.below(900) as i64;
            self.emit(
                worker,
                t,
                &format!("201 Created  refund_id={id}  amount_p={amount}"),
            );
            effects.push(id);
        }
        t += 3;
        self.emit(worker, t, &format!("agent run {run}  step {end_step}  ok"));
        if effects.len() > 1 {
            self.truth.delivery.push((order.clone(), effects.clone()));
        }
        // A duplicate decision: another run refunds the same order 98 minutes later.
        if !effects.is_empty() && self.rng.chance(8) {
            let later = t + 98 * 60_000;
            let other = format!("{run}-followup");
            self.emit(
                worker,
                later,
                &format!("agent run {other}  step 1  tool=issue_refund  args={args}"),
            );
            self.emit(
                worker,
                later + 15,
                "POST https://payments.internal/v1/refunds  (attempt 1)",
            );
            let id = self.effect(later + 100, &order, amount, None);
            self.emit(
                worker,
                later + 400,
                &format!("201 Created  refund_id={id}  amount_p={amount}"),
            );
            self.emit(
                worker,
                later + 403,
                &format!("agent run {other}  step 1  ok"),
            );
            self.truth
                .decision
                .push((order, vec![effects[0].clone(), id]));
        }
        t
    }
}

impl Gen {
    /// Attempt 1 of a second dispatch of a refund whose first dispatch's refund landed as
    /// `effects[0]`: replayed when it carries the key the refund was made with, else a new
    /// refund. Returns when the response came.
    fn second_dispatch(
        &mut self,
        worker: usize,
        mut t: i64,
        (order, amount): (&str, i64),
        key: Option<&str>,
        first_key: Option<&str>,
        effects: &mut Vec<String>,
    ) -> i64 {
        t += 15;
        let key_field = key
            .map(|k| format!("  idempotency_key={k}"))
            .unwrap_or_default();
        self.emit(
            worker,
            t,
            &format!("POST https://payments.internal/v1/refunds  (attempt 1){key_field}"),
        );
        let replayed = key.is_some() && key == first_key;
        t += 350;
        if replayed {
            let id = effects[0].clone();
            self.emit(worker, t, &format!("200 OK  refund_id={id}  replayed=true"));
        } else {
            let id = self.effect(t - 200, order, amount, key);
            self.emit(
                worker,
                t,
                &format!("201 Created  refund_id={id}  amount_p={amount}"),
            );
            effects.push(id);
        }
        t
    }
}

fn parse_size(s: &str) -> u64 {
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().expect("size such as 10M or 1G") * mult
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, default: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_else(|| default.to_string())
    };
    let out = PathBuf::from(flag("--out", "bench/corpus"));
    let size = parse_size(&flag("--size", "100M"));
    let seed: u64 = flag("--seed", "7").parse().expect("numeric seed");
    std::fs::create_dir_all(&out)?;
    let open =
        |name: String| File::create(out.join(name)).map(|f| BufWriter::with_capacity(1 << 20, f));
    let mut g = Gen {
        rng: Rng(seed),
        agent: (0..WORKERS)
            .map(|i| open(format!("agent-{i}.log")))
            .collect::<Result<_, _>>()?,
        service: (0..REPLICAS)
            .map(|i| open(format!("payments-{i}.log")))
            .collect::<Result<_, _>>()?,
        bytes: 0,
        line: String::new(),
        effect_seq: 0,
        order_seq: 0,
        truth: Truth::default(),
        past_orders: Vec::new(),
    };
    // About 1.1 kB per run: space the runs so the corpus spans the month.
    let runs_per_worker = (size / 1100 / WORKERS as u64).max(1);
    let gap = MONTH_MS / runs_per_worker as i64;
    let mut clocks = [MONTH_START_MS; WORKERS];
    let mut run_no = 0u64;
    while g.bytes < size {
        for (w, clock) in clocks.iter_mut().enumerate() {
            run_no += 1;
            let start = (*clock).max(MONTH_START_MS + (run_no as i64 / WORKERS as i64) * gap);
            *clock = g.run(w, run_no, start);
        }
    }
    for f in g.agent.iter_mut().chain(g.service.iter_mut()) {
        f.flush()?;
    }
    let list = |v: &Vec<(String, Vec<String>)>| {
        v.iter()
            .map(|(o, e)| serde_json::json!({"order": o, "effects": e}))
            .collect::<Vec<_>>()
    };
    let truth = serde_json::json!({
        "seed": seed,
        "bytes": g.bytes,
        "delivery_duplicates": list(&g.truth.delivery),
        "decision_duplicates": list(&g.truth.decision),
    });
    std::fs::write(out.join("truth.json"), serde_json::to_vec_pretty(&truth)?)?;
    eprintln!(
        "wrote {} bytes, {} runs, {} delivery and {} decision duplicates to {}",
        g.bytes,
        run_no,
        g.truth.delivery.len(),
        g.truth.decision.len(),
        out.display()
    );
    Ok(())
}
