#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --shard and merge on the published benchmarks' shapes: the LongMemEval-shaped fixture (one
# scenario per question) and the LoCoMo-shaped one, run offline with verbatim in one process and as
# 4 parts, merged: every report table (success, slices per question type and category, the
# benchmark metric) equals the single process's. A part run twice changes nothing.
# Usage: shard_benchmarks.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$memfail" datasets import --from longmemeval "$fixtures/longmemeval/longmemeval-fixture.json" -o "$work/lme" > /dev/null 2>&1 ||
    fail "import longmemeval"
"$memfail" datasets import --from locomo "$fixtures/locomo/locomo10-fixture.json" -o "$work/loc" > /dev/null 2>&1 ||
    fail "import locomo"
data=("$work/lme/longmemeval.jsonl" "$work/loc/locomo.jsonl")
scenarios=$(grep -c . "$work/lme/longmemeval.jsonl")
[ "$scenarios" -ge 6 ] || fail "the LongMemEval fixture gave only $scenarios scenarios"

run=("$memfail" run --system verbatim --datasets "${data[@]}" --k 1,5 --quiet)
"${run[@]}" --out "$work/single.db" > /dev/null
for i in 1 2 3 4; do
    "${run[@]}" --shard "$i/4" --out "$work/part$i.db" > /dev/null
done
"${run[@]}" --shard 2/4 --out "$work/part2.db" --resume > /dev/null  # a rerun part: already finished
"$memfail" merge "$work/merged.db" "$work"/part{1,2,3,4}.db > "$work/merge.txt" || fail "merge: $(cat "$work/merge.txt")"
grep -q "4 part(s)" "$work/merge.txt" || fail "merge did not join 4 parts: $(cat "$work/merge.txt")"

for table in success slices benchmark; do
    "$memfail" report "$work/single.db" -f csv --table "$table" > "$work/single-$table.csv"
    "$memfail" report "$work/merged.db" -f csv --table "$table" > "$work/merged-$table.csv"
    [ -s "$work/single-$table.csv" ] || fail "empty $table table"
    cmp -s "$work/single-$table.csv" "$work/merged-$table.csv" ||
        { diff "$work/single-$table.csv" "$work/merged-$table.csv" | head >&2; fail "the merged $table table differs"; }
done
grep -q "longmemeval" "$work/single-slices.csv" || fail "no LongMemEval slices"
grep -q "locomo" "$work/single-slices.csv" || fail "no LoCoMo slices"
echo "shard_benchmarks: 4 parts of LongMemEval- and LoCoMo-shaped runs merge to the single-process tables"
