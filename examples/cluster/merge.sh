#!/bin/sh
# SPDX-License-Identifier: MIT
# Joins the parts of a sweep (run-shard.sh) into SWEEP_OUT/sweep.db, one run per system and model,
# equal to running the whole sweep in one process; then prints the report. memfail merge refuses a
# part that is missing, unfinished or of another configuration, and writes nothing then: rerun that
# part (same command, it resumes) and merge again.
set -eu
count="${SHARD_COUNT:?set SHARD_COUNT to the number of parts}"
memfail="${MEMFAIL:-memfail}"
out="${SWEEP_OUT:-results}"
parts=""
i=1
while [ "$i" -le "$count" ]; do
    parts="$parts $out/part-$i-of-$count.db"
    i=$((i + 1))
done
# shellcheck disable=SC2086 # the part paths are built above, without spaces unless SWEEP_OUT has them
"$memfail" merge "$out/sweep.db" $parts
"$memfail" report "$out/sweep.db"
