#!/usr/bin/env bash
# The shipped benchmark (issue 6): generates a seeded corpus, then times, alternating, several
# rounds each: `idem-audit scan --format json`, DuckDB running the equivalent duplicate-refund
# query over the same raw files (regexp_extract + a window function), and the floor (`cat`,
# `wc -l`). Prints median and spread, throughput, ratios and peak RSS (GNU time), and checks
# that idem-audit's duplicates equal the generator's truth.json.
#
#   bench/run.sh [SIZE] [ROUNDS]      SIZE: 10M, 100M (default), 1G...; ROUNDS: default 5
#   THREADS=2 bench/run.sh 1G 3       threads for idem-audit and DuckDB (default: all cores)
#   SHAPE=jsonl bench/run.sh 1G 3     the same month in another shape (bench/shapes.py: named,
#                                     shared, jsonl, jsonl-extra); idem-audit, cat and wc -l read
#                                     it, DuckDB's query (written for the text shape) the corpus
#   PGO=0 bench/run.sh 1G 3           the `dist` binary built without PGO
#
# Two idem-audit binaries are timed: `idem-audit`, the one to distribute
# (scripts/build-dist.sh: fat LTO and PGO; its first build takes about five minutes), which
# the targets are read against, and `idem-release`, a plain `cargo build --release`. Their
# reports must be byte-identical.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
SIZE=${1:-100M}
ROUNDS=${2:-5}
THREADS=${THREADS:-$(nproc)}
SEED=7
CORPUS=bench/corpus-$SIZE
VENV=bench/.venv
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench: needs GNU time at $TIME (Debian: apt-get install time)" >&2; exit 2; }

cargo build --release --quiet --bin idem-audit --example gen_corpus
scripts/build-dist.sh 2>&1 | { grep -v '^ *Compiling' || true; } >&2
BIN=target/pgo/idem-audit
if [ ! -f "$CORPUS/truth.json" ]; then
  target/release/examples/gen_corpus --out "$CORPUS" --size "$SIZE" --seed "$SEED"
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import duckdb' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet duckdb
fi
PY=$VENV/bin/python
DATA=$CORPUS
if [ -n "${SHAPE:-}" ]; then
  DATA=$CORPUS-$SHAPE
  if [ ! -d "$DATA" ]; then
    python3 bench/shapes.py "$CORPUS" "$DATA.partial" "$SHAPE"
    mv "$DATA.partial" "$DATA"
  fi
fi
FILES=("$DATA"/*.log "$DATA"/*.jsonl)
BYTES=$(cat "${FILES[@]}" | wc -c)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# name -> command (run by bash -c so that all are timed the same way)
declare -A CMD=(
  [idem-audit]="$BIN scan --format json --threads $THREADS --fail-on never --quiet -o $OUT/report.json $DATA"
  [idem-release]="target/release/idem-audit scan --format json --threads $THREADS --fail-on never --quiet -o $OUT/release.json $DATA"
  [duckdb]="$PY bench/duckdb_query.py $CORPUS $THREADS > $OUT/duckdb.txt"
  [cat]="cat ${FILES[*]} > /dev/null"
  [wc-l]="wc -l ${FILES[*]} > /dev/null"
)
NAMES=(idem-audit idem-release duckdb cat wc-l)

echo "corpus: $DATA, $BYTES bytes in ${#FILES[@]} files; $ROUNDS rounds; threads $THREADS"
[ "$DATA" = "$CORPUS" ] || echo "(DuckDB reads $CORPUS, the same month in the text shape its query is written for)"
cat "${FILES[@]}" > /dev/null # warm the page cache
for r in $(seq 1 "$ROUNDS"); do
  for n in "${NAMES[@]}"; do
    start=$(date +%s%N)
    "$TIME" -f %M -o "$OUT/rss" bash -c "${CMD[$n]}"
    end=$(date +%s%N)
    echo "$n $(( (end - start) / 1000 )) $(cat "$OUT/rss")" >> "$OUT/times"
  done
done

"$PY" - "$OUT/times" "$BYTES" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
size = int(sys.argv[2])
med = {}
print(f"{'':12} {'median s':>9} {'min s':>8} {'max s':>8} {'GB/s':>7} {'peak RSS MB':>12}")
for name in dict.fromkeys(r[0] for r in rows):
    secs = [int(r[1]) / 1e6 for r in rows if r[0] == name]
    rss = max(int(r[2]) for r in rows if r[0] == name) / 1024
    med[name] = statistics.median(secs)
    print(f"{name:12} {med[name]:9.3f} {min(secs):8.3f} {max(secs):8.3f} "
          f"{size / med[name] / 1e9:7.2f} {rss:12.0f}")
ia = med["idem-audit"]
print(f"idem-audit speed / DuckDB's: {med['duckdb'] / ia:.2f}x (target >= 4); "
      f"idem-audit time / wc -l's: {ia / med['wc-l']:.1f}x (target <= 6); / cat's: {ia / med['cat']:.1f}x")
ir = med["idem-release"]
print(f"idem-release (plain cargo build --release): {med['duckdb'] / ir:.2f}x DuckDB's speed, "
      f"{ir / med['wc-l']:.1f}x wc -l's time")
PY
cmp -s "$OUT/report.json" "$OUT/release.json" || { echo "bench: the two binaries' reports differ" >&2; exit 1; }
echo "duckdb: $(cat "$OUT/duckdb.txt")"
"$PY" bench/check_truth.py "$OUT/report.json" "$CORPUS/truth.json"
