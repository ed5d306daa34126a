"""Rewrites a generated corpus (examples/gen_corpus.rs) in the other shapes real traffic has,
to measure idem-audit on them beside the benchmark's own (bench/RESULTS.md, "Other shapes").

    python3 bench/shapes.py bench/corpus-100M /tmp/named named
    python3 bench/shapes.py bench/corpus-100M /tmp/shared shared
    python3 bench/shapes.py bench/corpus-100M /tmp/jsonl jsonl
    python3 bench/shapes.py bench/corpus-100M /tmp/jsonl-extra jsonl-extra

`SHAPE=jsonl bench/run.sh 1G 3` runs the benchmark over a shape (written beside the corpus),
checking the findings against the corpus's truth as for the benchmark's own shape.

Shapes (the payments logs are copied as they are; truth.json is left out, since the scan
would read it as an input):
  named        every request and answer line names its call (`run=R  step=N`), as a log
               that concurrent runs write to must (SPEC 3.1)
  shared       named, and the agent logs merged into one by time: concurrent runs sharing
               one log, their calls' lines interleaved
  jsonl        the agent logs as JSON Lines (SPEC 3.2), every line naming its call
  jsonl-extra  jsonl with two fields the audit does not read on every line (level,
               service), as structured loggers add

The same month in any shape must give the same findings (the script does not check;
compare the reports' findings).
"""

import heapq
import json
import os
import re
import shutil
import sys

TOOL = re.compile(r"agent run (\S+)  step (\d+)  tool=(\S+)  args=(.*)$")
END = re.compile(r"agent run (\S+)  step (\d+)  (ok|failed)(?:  error=(\S+))?$")
LIFE = re.compile(r"agent run (\S+)  (started|crashed|resumed)$")
REQUEST = re.compile(r"(GET|POST|PUT|PATCH|DELETE) (\S+)  \(attempt (\d+)\)(?:  idempotency_key=(\S+))?$")
ANSWER = re.compile(r"(\d{3}) ([A-Za-z ]+?)((?:  \S+=\S+)*)$")
EXCEPTION = re.compile(r"(\S+Error): (.*)$")
STAMP = 24  # 2026-11-01T00:00:00.000Z, then two spaces


def agent_logs(corpus):
    return sorted(n for n in os.listdir(corpus) if n.startswith("agent") and n.endswith(".log"))


def copy_service_logs(corpus, out):
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".log") and not name.startswith("agent"):
            shutil.copy(os.path.join(corpus, name), os.path.join(out, name))


def named_lines(path):
    """The log's lines, each request and answer naming the call it belongs to."""
    current = None
    with open(path, "rb") as f:
        for line in f:
            msg = line[STAMP + 2 :].rstrip(b"\n")
            m = TOOL.match(msg.decode())
            if m:
                current = (m[1], m[2])
            elif current and not msg.startswith(b"agent run "):
                run, step = current
                line = line.rstrip(b"\n") + f"  run={run}  step={step}\n".encode()
            yield line


def as_json_lines(path, extra):
    """The log's events as JSON Lines objects, one a line."""
    current = None
    with open(path) as f:
        for line in f:
            ts, msg = line[:STAMP], line[STAMP + 2 :].rstrip("\n")
            o = dict(extra)
            o["ts"] = ts
            if m := TOOL.match(msg):
                current = {"run": m[1], "step": int(m[2])}
                o.update(type="tool_call", **current, tool=m[3], args=json.loads(m[4]))
            elif m := END.match(msg):
                o.update(type="step_end", run=m[1], step=int(m[2]), status=m[3])
                if m[4]:
                    o["error"] = m[4]
            elif m := LIFE.match(msg):
                o.update(type="run", run=m[1], event=m[2])
            elif m := REQUEST.match(msg):
                o.update(type="attempt", **current, attempt=int(m[3]), method=m[1], url=m[2])
                if m[4]:
                    o["idempotency_key"] = m[4]
            elif m := ANSWER.match(msg):
                o.update(type="response", **current, status=int(m[1]))
                for token in m[3].split():
                    name, value = token.split("=", 1)
                    if name == "refund_id":
                        o["effect_id"] = value
                    elif name == "replayed":
                        o["replayed"] = value == "true"
                    elif name == "amount_p":
                        o.update(amount_minor=int(value), currency="GBP")
                    else:
                        o[name] = value
            elif m := EXCEPTION.match(msg):
                o.update(type="failure", **current, error="read_timeout", message=m[2])
            else:
                sys.exit(f"{path}: a line this script cannot rewrite: {msg}")
            yield json.dumps(o, separators=(",", ":")) + "\n"


def main():
    corpus, out, shape = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    copy_service_logs(corpus, out)
    logs = [os.path.join(corpus, n) for n in agent_logs(corpus)]
    if shape == "named":
        for path in logs:
            with open(os.path.join(out, os.path.basename(path)), "wb") as w:
                w.writelines(named_lines(path))
    elif shape == "shared":
        # Stamps are fixed-width ISO times: their bytes sort as the times do.
        merged = heapq.merge(*(named_lines(p) for p in logs), key=lambda line: line[:STAMP])
        with open(os.path.join(out, "agent.log"), "wb") as w:
            w.writelines(merged)
    elif shape in ("jsonl", "jsonl-extra"):
        extra = {"level": "info", "service": "agent"} if shape == "jsonl-extra" else {}
        for path in logs:
            name = os.path.basename(path).replace(".log", ".jsonl")
            with open(os.path.join(out, name), "w") as w:
                w.writelines(as_json_lines(path, extra))
    else:
        sys.exit(f"unknown shape {shape!r}: named, shared, jsonl or jsonl-extra")


if __name__ == "__main__":
    main()
