#!/usr/bin/env python3
"""Two or more idem-audit binaries timed in alternation over the same arguments.

The VM this project is measured on changes speed from hour to hour by more than most
changes gain, so binaries are compared round by round, never one batch after another.
Prints, per binary, the medians of wall time, CPU time, peak RSS and the stages that
`IDEM_AUDIT_STAGES=1` reports, and the sorted wall times.

    python3 bench/alternate.py ROUNDS BIN_A BIN_B [...] -- scan --format json FILES...

Needs GNU time at /usr/bin/time.
"""
import re
import statistics
import subprocess
import sys


def main():
    if "--" not in sys.argv or len(sys.argv) < 4:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    rounds, binaries, args = int(sys.argv[1]), sys.argv[2:split], sys.argv[split + 1 :]
    runs = {b: [] for b in binaries}
    env = {"IDEM_AUDIT_STAGES": "1", "PATH": "/usr/bin:/bin"}
    for _ in range(rounds):
        for b in binaries:
            p = subprocess.run(
                ["/usr/bin/time", "-f", "TIME %e %U %S %M", b, *args],
                capture_output=True, text=True, env=env,
            )
            wall, user, sys_, rss = re.search(r"TIME (\S+) (\S+) (\S+) (\S+)", p.stderr).groups()
            stages = dict(re.findall(r"stage (\w+)\s+([\d.]+) s", p.stderr))
            runs[b].append((
                float(wall), float(user) + float(sys_), int(rss) / 1024,
                float(stages.get("parse", 0)), float(stages.get("correlate", 0)),
                float(stages.get("rules", 0)),
            ))
    for b in binaries:
        cols = list(zip(*runs[b]))
        medians = tuple(statistics.median(c) for c in cols)
        print(b, "wall %.3f cpu %.2f peak %.0f MiB | parse %.4f correlate %.4f rules %.4f" % medians)
        print("   walls", sorted(cols[0]))


if __name__ == "__main__":
    main()
