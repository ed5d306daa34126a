#!/usr/bin/env python3
"""A synthetic agent trace of idle calls only, for profiling the parse's commonest path.

Each call is four lines (tool call, request, `200 OK`, the step's `ok`), alternating a
lookup (GET) and an email (POST), with a run's start every six calls: the shape that is
most of a month of traces, without the refunds that take the ordinary path.

    python3 bench/idle_calls.py OUT.log [CALLS]      (default 50000 calls, about 13 MB)

Measured with callgrind over the parse only, one thread:

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \
        --toggle-collect='idem_audit::ingest::parse_input*' \
        target/release/idem-audit scan --threads 1 --format json OUT.log
    python3 bench/callgrind_inline.py cg.out target/release/idem-audit --per CALLS
"""
import datetime
import sys


def stamp(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_path = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    t = datetime.datetime(2026, 11, 1)
    run, step = 0, 0
    with open(out_path, "w") as out:
        for i in range(calls):
            if i % 6 == 0:
                run, step = run + 1, 0
                out.write(f"{stamp(t)}  agent run w0r{run}  started\n")
            step += 1
            t += datetime.timedelta(milliseconds=1234)
            if i % 2 == 0:
                tool, request = "lookup_order", "GET https://orders.internal/v1/orders  (attempt 1)"
            else:
                tool, request = "send_email", "POST https://mail.internal/v1/emails  (attempt 1)"
            args = '{"order":"A-%d"}' % (272203 + i)
            out.write(f"{stamp(t)}  agent run w0r{run}  step {step}  tool={tool}  args={args}\n")
            t += datetime.timedelta(milliseconds=10)
            out.write(f"{stamp(t)}  {request}\n")
            t += datetime.timedelta(milliseconds=145)
            out.write(f"{stamp(t)}  200 OK\n")
            t += datetime.timedelta(milliseconds=2)
            out.write(f"{stamp(t)}  agent run w0r{run}  step {step}  ok\n")


if __name__ == "__main__":
    main()
