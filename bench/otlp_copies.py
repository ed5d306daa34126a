#!/usr/bin/env python3
"""Many runs' worth of OpenTelemetry traces, from the real frameworks' fixtures.

    python3 bench/otlp_copies.py COPIES OUT_DIR

Writes OUT_DIR/traces.jsonl: every fixtures/otlp-*/trace.jsonl, COPIES times, each copy
with its own trace and span ids (the digits of every id rewritten), so that linking sees
COPIES times as many runs. For measuring what holding spans costs (peak memory grows with
the spans held until every input is read); the reports of copies are not checked here.
"""
import json
import pathlib
import re
import sys

HEX_ID = re.compile(r'"(traceId|spanId|parentSpanId)":\s*"([0-9a-fA-F]{16}|[0-9a-fA-F]{32})"')


def main():
    copies, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    root = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
    docs = []
    for d in sorted(root.glob("otlp-*")):
        trace = d / "trace.jsonl"
        if d.is_dir() and trace.exists():
            docs += [l for l in trace.read_text().splitlines() if l.strip()]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "traces.jsonl", "w") as f:
        for c in range(copies):
            stamp = f"{c:08x}"

            def fresh(m):
                ident = m.group(2)
                return f'"{m.group(1)}":"{stamp}{ident[8:]}"'

            for doc in docs:
                f.write(HEX_ID.sub(fresh, doc))
                f.write("\n")


if __name__ == "__main__":
    main()
