#!/usr/bin/env python3
"""Generates the issue-5 fixtures: a month of refunds with known duplicates in two
currencies (fixtures/finance-month/), and replay-rate traffic with and without a spike
(fixtures/replay-spike/, fixtures/replay-steady/). Deterministic: run it again and the files
are byte-identical. The answers (truth.json) come from this script's own bookkeeping, never
from idem-audit, so the tests that read them check the tool against an independent count.

    python3 scripts/gen_fixtures.py
"""
import json
import os
import random
from datetime import datetime, timedelta, timezone

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
UTC = timezone.utc


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def ms(n):
    return timedelta(milliseconds=n)


class Month:
    def __init__(self):
        self.agent, self.service, self.duplicates, self.decisions = [], [], [], []
        self.n = 0

    def amount(self, minor, currency):
        """Tool args, response/effect tokens for an amount."""
        if currency == "GBP":
            return {"amount_p": minor}, f"amount_p={minor}", f"{minor}p"
        args = {"amount_minor": minor, "currency": currency}
        tok = f"amount_minor={minor}  currency={currency}"
        return args, tok, tok

    def call(self, t0, order, minor, currency, shape):
        """One refund call. shape: ok | keyed-replay | client-retry | gateway-retry."""
        self.n += 1
        run, rid = f"m{self.n:04d}", f"rf_{self.n:04d}"
        args, resp_tok, eff_tok = self.amount(minor, currency)
        args = {"order": order, **args}
        a = self.agent
        a.append((t0, f"agent run {run}  step 2  tool=issue_refund  args={json.dumps(args, separators=(',', ':'))}"))
        url = "POST https://payments.internal/v1/refunds"
        key = f"k-{run}-2"
        effects = []
        if shape == "ok":
            a.append((t0 + ms(16), f"{url}  (attempt 1)  idempotency_key={key}"))
            effects.append((rid, t0 + ms(90)))
            a.append((t0 + ms(700), f"201 Created  refund_id={rid}  {resp_tok}"))
            end = t0 + ms(702)
        elif shape == "keyed-replay":
            a.append((t0 + ms(16), f"{url}  (attempt 1)  idempotency_key={key}"))
            effects.append((rid, t0 + ms(99)))
            a.append((t0 + ms(10016), "urllib3.exceptions.ReadTimeoutError: read timeout=10"))
            a.append((t0 + ms(10528), f"{url}  (attempt 2)  idempotency_key={key}"))
            a.append((t0 + ms(10700), f"200 OK  refund_id={rid}  replayed=true"))
            end = t0 + ms(10702)
        elif shape == "client-retry":
            a.append((t0 + ms(16), f"{url}  (attempt 1)"))
            effects.append((rid + "a", t0 + ms(99)))
            a.append((t0 + ms(10016), "urllib3.exceptions.ReadTimeoutError: read timeout=10"))
            a.append((t0 + ms(10528), f"{url}  (attempt 2)"))
            effects.append((rid + "b", t0 + ms(11686)))
            a.append((t0 + ms(11705), f"201 Created  refund_id={rid}b  {resp_tok}"))
            end = t0 + ms(11707)
        elif shape == "gateway-retry":
            a.append((t0 + ms(16), f"{url}  (attempt 1)"))
            effects.append((rid + "a", t0 + ms(120)))
            effects.append((rid + "b", t0 + ms(420)))
            a.append((t0 + ms(900), f"201 Created  refund_id={rid}a  {resp_tok}"))
            end = t0 + ms(902)
        a.append((end, f"agent run {run}  step 2  ok"))
        for eid, created in effects:
            settled = created + ms(11000)
            self.service.append((created, f"refund {eid}  order {order}  {eff_tok}  settled {stamp(settled)}"))
        if len(effects) > 1:
            self.duplicates.append({
                "order": order,
                "effects": [e for e, _ in effects],
                "currency": currency,
                "excess_minor": minor * (len(effects) - 1),
                "cause": shape,
                "duplicated_at": stamp(effects[1][1]),
            })


def finance_month():
    rnd = random.Random(5)
    m = Month()
    start = datetime(2026, 11, 1, tzinfo=UTC)
    shapes = ["ok"] * 7 + ["keyed-replay"] * 2 + ["client-retry"] * 2 + ["gateway-retry"]
    amounts = [1250, 2999, 4500, 8000, 15000, 120000]
    for day in range(30):
        for slot in range(4):
            t0 = start + timedelta(days=day, hours=2 + slot * 5, minutes=rnd.randrange(60), seconds=rnd.randrange(60))
            currency = "EUR" if rnd.random() < 0.4 else "GBP"
            order = f"{'E' if currency == 'EUR' else 'G'}-{day + 1:02d}{slot}"
            m.call(t0, order, rnd.choice(amounts), currency, rnd.choice(shapes))
    # The period's edges: duplicated just outside and just inside each end.
    edge = [
        ("EDGE-OUT-START", datetime(2026, 10, 31, 23, 59, 40, tzinfo=UTC), "GBP", "client-retry"),
        ("EDGE-IN-START", datetime(2026, 10, 31, 23, 59, 59, 900000, tzinfo=UTC), "EUR", "gateway-retry"),
        ("EDGE-IN-END", datetime(2026, 11, 30, 23, 59, 40, tzinfo=UTC), "GBP", "client-retry"),
        ("EDGE-OUT-END", datetime(2026, 11, 30, 23, 59, 59, 700000, tzinfo=UTC), "EUR", "gateway-retry"),
    ]
    for order, t0, currency, shape in edge:
        m.call(t0, order, 4500, currency, shape)
    # Decision duplicates: a second run refunds the same order and amount hours later.
    for order, t0, minor, currency in [
        ("DEC-G1", datetime(2026, 11, 10, 14, 2, 11, tzinfo=UTC), 4500, "GBP"),
        ("DEC-E1", datetime(2026, 11, 20, 9, 30, 0, tzinfo=UTC), 2999, "EUR"),
    ]:
        first = len(m.service)
        m.call(t0, order, minor, currency, "ok")
        m.call(t0 + timedelta(hours=1, minutes=38), order, minor, currency, "ok")
        effects = [line.split()[1] for _, line in m.service[first:]]
        m.decisions.append({"order": order, "effects": effects, "currency": currency,
                            "excess_minor": minor, "duplicated_at": stamp(m.service[first + 1][0])})
    folder = os.path.join(ROOT, "finance-month")
    os.makedirs(folder, exist_ok=True)
    for name, lines, section in [("agent.log", m.agent, None), ("payments.log", m.service, "payments service")]:
        with open(os.path.join(folder, name), "w") as f:
            if section:
                f.write(f"--- {section}, November 2026 ---\n")
            for t, text in sorted(lines, key=lambda x: x[0]):
                f.write(f"{stamp(t)}  {text}\n")
    truth = {
        "about": "Written by scripts/gen_fixtures.py: every duplicated refund in the logs, with "
                 "when the duplicate happened (the second effect's creation).",
        "duplicates": m.duplicates,
        "decisions": m.decisions,
    }
    with open(os.path.join(folder, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")


def replay_traffic(name, rates):
    """Keyed refund traffic, one window (minute) per entry of `rates`: (calls, replayed calls).
    A replayed call is attempt 1 timing out and attempt 2 answered from the records."""
    lines, n = [], 0
    start = datetime(2026, 11, 3, 14, 0, tzinfo=UTC)
    for w, (calls, replayed) in enumerate(rates):
        base = start + timedelta(minutes=w)
        gap = 58000 // calls
        replays = {k * (calls // replayed) for k in range(replayed)} if replayed else set()
        for i in range(calls):
            n += 1
            t = base + ms(i * gap)
            tag = f"run=t{n:05d}  step=1  idempotency_key=k{n:05d}"
            lines.append((t, f"POST /v1/refunds  (attempt 1)  {tag}"))
            if i in replays:
                # Attempt 1 times out within the window; attempt 2 is replayed.
                lines.append((t + ms(300), f"ReadTimeoutError: read timeout=0.3  run=t{n:05d}  step=1"))
                lines.append((t + ms(350), f"POST /v1/refunds  (attempt 2)  {tag}"))
                lines.append((t + ms(400), f"200 OK  refund_id=rf_t{n:05d}  replayed=true  run=t{n:05d}  step=1"))
            else:
                lines.append((t + ms(80), f"201 Created  refund_id=rf_t{n:05d}  run=t{n:05d}  step=1"))
    folder = os.path.join(ROOT, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "requests.log"), "w") as f:
        for t, text in sorted(lines, key=lambda x: x[0]):
            f.write(f"{stamp(t)}  {text}\n")


if __name__ == "__main__":
    finance_month()
    # About 0.4% replays, then one minute where the service is slower than the deadline.
    replay_traffic("replay-spike", [(250, 1)] * 5 + [(220, 70)] + [(250, 1)] * 2)
    # A steady 2% with a 15% minute: under 10 x the median, not a spike.
    replay_traffic("replay-steady", [(100, 2)] * 5 + [(100, 15)] + [(100, 2)] * 2)
