#!/usr/bin/env python3
"""Charges callgrind's instruction counts to the project's own functions, inlined or not.

`callgrind_annotate` charges an inlined helper's instructions to the function it was
inlined into, so a hot parser shows as one large function. This reads the per-instruction
counts of a run made with `--dump-instr=yes`, asks `addr2line -i` for each address's chain
of inlined frames, and charges each instruction to the innermost frame whose source is in
`src/` (the standard library's inlined code goes to the project function that called it).
A shared library's instructions (libc's `memcmp`, say) are charged to its own functions,
named with the library: callgrind gives their addresses relative to the library.
Run it from the project's directory, or give `--root`.

    python3 bench/callgrind_inline.py CG.OUT BINARY [--per N] [--lines FUNCTION]

`--per N` divides by N (calls, lines) for a count per unit; `--lines FUNCTION` breaks one
function's share down by source line, with the inlined callee each line's cost went to.
The binary must be exactly the one that ran: any rebuild (`bench/run.sh` builds too) moves
the addresses, and the answer is then nonsense. A release build has line tables here
(`debug = 1` in Cargo.toml).
"""
import argparse
import collections
import os
import re
import subprocess


def instruction_costs(path):
    """Instructions by address in the program that ran (the `cmd:` line's), and by function
    name in every other object (a shared library's addresses are its own, and would name
    the program's functions), from a callgrind output with `positions: instr line`."""
    costs, foreign = collections.Counter(), collections.Counter()
    last = [0, 0]
    after_call = False
    names = {"ob": {}, "fn": {}}
    current = {"ob": "", "fn": ""}
    program = None

    def position(token, i):
        if token.startswith("0x"):
            return int(token, 16)
        if token == "*":
            return last[i]
        if token[0] in "+-":
            return last[i] + int(token)
        return int(token)

    def named(kind, rest):
        """`(id) name` defines an id, `(id)` refers to one (callgrind's name compression)."""
        rest = rest.strip()
        if rest.startswith("("):
            ident, _, name = rest.partition(")")
            name = name.strip()
            if name:
                names[kind][ident] = name
            return names[kind].get(ident, name)
        return rest

    with open(path) as f:
        for line in f:
            if line.startswith("cmd:") and program is None:
                program = os.path.basename(line[4:].split()[0])
                continue
            if line.startswith(("ob=", "fn=")):
                kind = line[:2]
                current[kind] = named(kind, line[3:])
                continue
            if line.startswith(("cob=", "cfn=")):
                # Names the callee; compressed names defined here are used later too.
                named(line[1:3], line[4:])
                continue
            if line.startswith("calls="):
                # The next cost line is the call's inclusive cost, not this function's own.
                after_call = True
                continue
            if not line or not (line[0].isdigit() or line[0] in "+-*"):
                continue
            parts = line.split()
            address = position(parts[0], 0)
            if len(parts) > 2:
                last[1] = position(parts[1], 1)
            last[0] = address
            if after_call:
                after_call = False
                continue
            if os.path.basename(current["ob"]) == program:
                costs[address] += int(parts[-1])
            else:
                lib = os.path.basename(current["ob"])
                foreign[f"{current['fn'][:50]} [{lib}]"] += int(parts[-1])
    return costs, foreign


def inline_chains(binary, addresses):
    """Address -> [(function, file:line)], innermost first."""
    text = "".join(f"{hex(a)}\n" for a in addresses)
    out = subprocess.run(
        ["addr2line", "-e", binary, "-i", "-f", "-C", "-a"],
        input=text, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    chains, current, frames, i = {}, None, [], 0
    while i < len(out):
        if out[i].startswith("0x"):
            if current is not None:
                chains[current] = frames
            current, frames, i = int(out[i], 16), [], i + 1
        elif i + 1 < len(out):
            frames.append((out[i], out[i + 1]))
            i += 2
        else:
            i += 1
    if current is not None:
        chains[current] = frames
    return chains


def short(function):
    name = re.sub(r"<[^<>]*>", "", function.split("(")[0])
    parts = [p for p in name.split("::") if p]
    if parts and parts[-1] == "{{closure}}" and len(parts) > 1:
        return parts[-2] + "{closure}"
    return parts[-1] if parts else function


def ours(location, root):
    """A line of the project's own source: `src/...`, relative or under `root`."""
    return location.startswith("src/") or location.startswith(root + "/src/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("callgrind_out")
    ap.add_argument("binary")
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--lines", metavar="FUNCTION")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--root", default=os.getcwd(), help="the project's directory (default: here)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    costs, foreign = instruction_costs(args.callgrind_out)
    chains = inline_chains(args.binary, [a for a, c in costs.items() if c])
    total = sum(costs.values()) + sum(foreign.values())
    charged = collections.Counter() if args.lines else collections.Counter(foreign)
    for address, frames in chains.items():
        own = next(((j, f, loc) for j, (f, loc) in enumerate(frames) if ours(loc, root)), None)
        if own is None:
            key = (frames[0][0][:50] if frames else "?") + " [outside src/]"
            if args.lines:
                continue
        elif args.lines:
            j, function, location = own
            if short(function) != args.lines:
                continue
            inner = short(frames[0][0]) if j > 0 else ""
            key = f"{location.split('/')[-1].split(' ')[0]:<16} {inner}"
        else:
            key = short(own[1])
        charged[key] += costs[address]
    print(f"{total:,} instructions in all")
    for key, count in charged.most_common(args.top):
        print(f"{count:>13,} {100 * count / total:5.1f}% {count / args.per:9.1f}  {key}")


if __name__ == "__main__":
    main()
