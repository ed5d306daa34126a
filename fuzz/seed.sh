#!/bin/sh
# Seeds each target's corpus with the fixtures of its format (cargo-fuzz reads
# fuzz/corpus/TARGET/). Run from the repository root: sh fuzz/seed.sh
# Each seed is named after its path (fixtures share file names: trace.log, export.csv).
set -e
seed() {
    mkdir -p "fuzz/corpus/$1"; target=$1; shift
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "fuzz/corpus/$target/$(echo "$f" | tr '/' '_')" || true
    done
}
seed parse_text    fixtures/*/*.log fixtures/hostile/*.log
seed parse_jsonl   fixtures/*/*.jsonl fixtures/hostile/*.jsonl
seed parse_csv     fixtures/*/*.csv fixtures/hostile/*.csv
seed parse_records fixtures/records*/*.csv
seed parse_otlp    fixtures/otlp*/*.json fixtures/otlp*/*.jsonl fixtures/otel*/*.jsonl
seed detect        fixtures/*/* fixtures/hostile/*
seed canonical     fixtures/*/*.json fixtures/*.expect.json fixtures/hostile/*.jsonl
