#!/usr/bin/env bash
# Builds the binary to distribute (and the one the benchmark times): Cargo profile `dist` (fat
# LTO, one codegen unit) optimised with a profile of its own runs (PGO). The compiler then
# lays out the hot paths of the parsers and the correlation the way real scans take them.
#
#   scripts/build-dist.sh            -> target/pgo/idem-audit
#   PGO=0 scripts/build-dist.sh      -> the `dist` profile without PGO, same place
#
# The training runs read every input shape, so no shape is laid out as cold: a generated
# month (seed 11; the benchmark's is 7) as text, in the JSON Lines and named shapes of
# bench/shapes.py, and as OTLP (bench/otlp_copies.py over the real framework traces), plus
# every fixture, each in the JSON, table and CSV reports. Needs python3 and llvm-profdata
# (rustup component llvm-tools, added here if missing); without llvm-profdata it builds the
# `dist` profile without PGO and says so. Takes about five minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=target/pgo
RAW=$OUT/raw
TRAIN=$OUT/train
mkdir -p "$OUT"

profdata() {
  local sysroot host
  sysroot=$(rustc --print sysroot)
  host=$(rustc -vV | sed -n 's/^host: //p')
  local tool=$sysroot/lib/rustlib/$host/bin/llvm-profdata
  if [ ! -x "$tool" ] && command -v rustup >/dev/null; then
    rustup component add llvm-tools >&2 || true
  fi
  [ -x "$tool" ] && echo "$tool"
}

plain_dist() {
  cargo build --locked --profile dist --bin idem-audit
  cp target/dist/idem-audit "$OUT/idem-audit"
  echo "$2" >"$OUT/mode"
  echo "built $OUT/idem-audit ($1)" >&2
}

MODE=pgo
[ "${PGO:-1}" = 0 ] && MODE=plain
# Nothing to do when the binary is newer than every source and was built the same way (the
# profile-guided build would otherwise start again: the merged profile is written anew).
if [ -x "$OUT/idem-audit" ] && [ "$(cat "$OUT/mode" 2>/dev/null)" = "$MODE" ] &&
  [ -z "$(find src examples Cargo.toml Cargo.lock -newer "$OUT/idem-audit" | head -1)" ]; then
  echo "$OUT/idem-audit is up to date ($MODE)" >&2
  exit 0
fi
rm -f "$OUT/mode"

if [ "$MODE" = plain ]; then
  plain_dist "profile dist, PGO=0" plain
  exit 0
fi
if ! PROFDATA=$(profdata); then
  echo "build-dist: llvm-profdata not found (rustup component add llvm-tools); building without PGO" >&2
  plain_dist "profile dist, no PGO: llvm-profdata missing" nopgo
  exit 0
fi

# The training inputs, made once.
if [ ! -f "$TRAIN/done" ]; then
  rm -rf "$TRAIN"
  cargo build --locked --release --quiet --example gen_corpus
  target/release/examples/gen_corpus --out "$TRAIN/text" --size 100M --seed 11
  python3 bench/shapes.py "$TRAIN/text" "$TRAIN/jsonl" jsonl
  python3 bench/shapes.py "$TRAIN/text" "$TRAIN/named" named
  python3 bench/otlp_copies.py 30 "$TRAIN/otlp" >/dev/null
  touch "$TRAIN/done"
fi

# Instrumented build in a target directory of its own: its flags would otherwise make Cargo
# rebuild the ordinary one.
RUSTFLAGS="-Cprofile-generate=$PWD/$RAW" CARGO_TARGET_DIR=$OUT/gen \
  cargo build --locked --profile dist --bin idem-audit
rm -rf "$RAW" # what the build's own proc macros wrote
GEN=$OUT/gen/dist/idem-audit
scan() { "$GEN" scan --fail-on never --quiet "$@" >/dev/null 2>&1 || true; }
scan --format json "$TRAIN/text"
scan --format json --threads 1 "$TRAIN/text"
scan --format json --keep-idle-calls "$TRAIN/text"
scan --format json "$TRAIN/jsonl"
scan --format json "$TRAIN/named"
scan --format json "$TRAIN/otlp"
for fixture in fixtures/*/; do
  for format in json table csv; do
    scan --format "$format" "$fixture"
  done
done

"$PROFDATA" merge -o "$OUT/merged.profdata" "$RAW"
RUSTFLAGS="-Cprofile-use=$PWD/$OUT/merged.profdata" CARGO_TARGET_DIR=$OUT/use \
  cargo build --locked --profile dist --bin idem-audit
cp "$OUT/use/dist/idem-audit" "$OUT/idem-audit"
echo pgo >"$OUT/mode"
echo "built $OUT/idem-audit (profile dist, PGO)" >&2
