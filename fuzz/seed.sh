#!/bin/sh
# Seeds each target's corpus with the fixtures of its format (cargo-fuzz reads
# fuzz/corpus/TARGET/). Run from the repository root: sh fuzz/seed.sh
set -e
seed() { mkdir -p "fuzz/corpus/$1"; shift; for f in "$@"; do [ -f "$f" ] && cp "$f" "fuzz/corpus/$target/" || true; done; }
target=parse_text;    seed $target fixtures/*/*.log fixtures/hostile/*.log
target=parse_jsonl;   seed $target fixtures/*/*.jsonl fixtures/hostile/*.jsonl
target=parse_csv;     seed $target fixtures/*/*.csv fixtures/hostile/*.csv
target=parse_records; seed $target fixtures/records*/*.csv
target=parse_otlp;    seed $target fixtures/otlp*/*.json fixtures/otlp*/*.jsonl
target=detect;        seed $target fixtures/*/* fixtures/hostile/*
target=canonical;     seed $target fixtures/*/*.json fixtures/*.expect.json fixtures/hostile/*.jsonl
