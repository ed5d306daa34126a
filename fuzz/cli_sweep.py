#!/usr/bin/env python3
"""The whole pipeline over mutated fixtures: no panic, no exit status outside 0-2.

The cargo-fuzz targets reach the parsers only. This copies a fixture folder, mutates one to
three of its files (a cut, a line dropped, doubled, swapped or taken from another fixture,
a byte or a run of bytes changed, digits changed or made huge, CRLF endings, a blank after
`=`, a line repeated fifty times), and runs `scan` (JSON, table, CSV), `metrics` and
`timeline` (by an order or a run the files name) over it, so that correlation, the rules
and the reports see what the parsers make of bad input. A failure's folder is kept in the
work directory and printed.

    python3 fuzz/cli_sweep.py [--fixtures GLOB] BINARY [ROUNDS] [SEED] [WORKDIR]

Defaults: 300 rounds, seed 1, /tmp/idem-audit-sweep, every fixture folder. `--fixtures`
mutates only the folders matching GLOB (`'fixtures/otlp-console-*'`: the newest readers);
the lines taken from other fixtures still come from all of them. Run from the repository root.
"""
import glob
import os
import random
import re
import shutil
import subprocess
import sys


def main():
    args = sys.argv[1:]
    pattern = "fixtures/*"
    if args[:1] == ["--fixtures"] and len(args) > 1:
        pattern, args = args[1], args[2:]
    elif args[:1] and args[0].startswith("--fixtures="):
        pattern, args = args[0].split("=", 1)[1], args[1:]
    if not args:
        sys.exit(__doc__)
    binary = args[0]
    rounds = int(args[1]) if len(args) > 1 else 300
    rnd = random.Random(int(args[2]) if len(args) > 2 else 1)
    work = args[3] if len(args) > 3 else "/tmp/idem-audit-sweep"
    every = sorted(d for d in glob.glob("fixtures/*") if os.path.isdir(d))
    if not every:
        sys.exit("no fixtures/: run from the repository root")
    fixtures = sorted(d for d in glob.glob(pattern) if os.path.isdir(d))
    if not fixtures:
        sys.exit(f"no fixture folder matches {pattern}")
    donor_lines = [
        line
        for d in every
        for f in glob.glob(d + "/*")
        if os.path.isfile(f)
        for line in open(f, "rb").read().split(b"\n")[:50]
    ]
    runs = failures = 0
    for _ in range(rounds):
        case = os.path.join(work, "case")
        shutil.rmtree(case, ignore_errors=True)
        shutil.copytree(rnd.choice(fixtures), case)
        files = [f for f in glob.glob(case + "/*") if os.path.isfile(f)]
        if not files:
            continue
        for _ in range(rnd.randrange(1, 4)):
            f = rnd.choice(files)
            data = open(f, "rb").read()
            open(f, "wb").write(mutate(data, rnd, donor_lines))
        for args in commands(binary, case, files, rnd):
            runs += 1
            try:
                p = subprocess.run(args, capture_output=True, timeout=30)
                failed = p.returncode not in (0, 1, 2) or b"panicked" in p.stderr
                why = f"exit {p.returncode}: {p.stderr.decode(errors='replace')[-400:]}"
            except subprocess.TimeoutExpired:
                failed, why = True, "timed out"
            if failed:
                failures += 1
                kept = os.path.join(work, f"failure-{failures}")
                shutil.rmtree(kept, ignore_errors=True)
                shutil.copytree(case, kept)
                print(f"FAILED {' '.join(args[1:])}\n  kept in {kept}\n  {why}")
    print(f"{runs} runs, {failures} failures")
    sys.exit(1 if failures else 0)


def commands(binary, case, files, rnd):
    """The subcommands to run over one mutated case."""
    text = b"".join(open(f, "rb").read() for f in files)
    orders = re.findall(rb"[A-Z]-\d+", text) or [b"A-1"]
    runs = re.findall(rb'run[ =]"?([A-Za-z0-9_-]+)', text) or [b"r1"]
    scan = [binary, "scan", "--fail-on", "never"]
    if rnd.random() < 0.3:
        scan += ["--threads", "1"]
    if rnd.random() < 0.3:
        scan += ["--keep-idle-calls"]
    out = [scan + ["--format", fmt, case] for fmt in ("json", "table", "csv")]
    out.append([binary, "metrics", "--format", rnd.choice(["json", "table"]), case])
    order = rnd.choice(orders).decode(errors="replace")
    run = rnd.choice(runs).decode(errors="replace")
    out.append([binary, "timeline", "--order", order, case])
    out.append([binary, "timeline", "--run", run, case])
    return out


def mutate(data, rnd, donor_lines):
    """One random change of `data`."""
    lines = data.split(b"\n")
    kind = rnd.randrange(12)
    if kind == 0 and data:
        return data[: rnd.randrange(len(data))]
    if kind == 1 and len(lines) > 1:
        del lines[rnd.randrange(len(lines))]
    elif kind == 2 and lines:
        i = rnd.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 3 and len(lines) > 2:
        i = rnd.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == 4 and data:
        changed = bytearray(data)
        changed[rnd.randrange(len(changed))] = rnd.choice(b"\x00\xff\n \"{}:,\xc30-9")
        return bytes(changed)
    elif kind == 5:
        return data.replace(b"\n", b"\r\n")
    elif kind == 6:
        changed = bytearray(data)
        digits = [i for i, c in enumerate(changed) if 48 <= c <= 57]
        for _ in range(3):
            if digits:
                changed[rnd.choice(digits)] = rnd.randrange(48, 58)
        return bytes(changed)
    elif kind == 7:
        def huge(m):
            return b"9" * rnd.choice([1, 11, 12, 19, 25, 40]) if rnd.random() < 0.3 else m.group(0)
        return re.sub(rb"\d{3,}", huge, data)
    elif kind == 8 and lines:
        i = rnd.randrange(len(lines))
        lines[i] = lines[i].replace(b"=", b"= ", 1)
    elif kind == 9:
        lines.insert(rnd.randrange(len(lines) + 1), rnd.choice(donor_lines))
    elif kind == 10 and lines:
        i = rnd.randrange(len(lines))
        lines[i] = lines[i] * rnd.choice([2, 50])
    elif kind == 11 and data:
        i = rnd.randrange(len(data))
        noise = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 20)))
        return data[:i] + noise + data[i:]
    return b"\n".join(lines)


if __name__ == "__main__":
    main()
