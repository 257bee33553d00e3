#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed memfail (the Debian package, or `make install` under a prefix) as a user meets it:
# the demo script runs from the installed binary with the installed tokenizer rank files, and the
# cluster example runs from where the package puts it, as shipped. CI runs it after
# `apt-get install ./memfail_<version>_<arch>.deb` (.ci/run).
#   tests/package/installed.sh [PREFIX]     (default /usr)
set -euo pipefail
prefix=${1:-/usr}
memfail=$prefix/bin/memfail
share=$prefix/share/memfail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "installed: $*" >&2; exit 1; }
[ -x "$memfail" ] || fail "no $memfail"
[ -x "$prefix/bin/fake-llm" ] || fail "no $prefix/bin/fake-llm"
"$memfail" --version > "$work/version.txt" || fail "memfail --version failed"
[ -f "$share/tokenizers/cl100k_base.json" ] || fail "no tokenizer rank files in $share/tokenizers"
[ -f "$prefix/share/doc/memfail/README.md" ] || fail "no docs in $prefix/share/doc/memfail"

# The demo, from the installed binary, in a folder of its own, with no source tree in reach.
(cd "$work" && env -u MEMFAIL_TOKENIZER_DIR "$share/demo" "$memfail" "$work/demo") > "$work/demo.txt" 2>&1 ||
    fail "the demo failed: $(tail -5 "$work/demo.txt")"
[ -s "$work/demo/report.html" ] || fail "the demo wrote no report"
# Token counts come from the installed rank files: the table's tok/probe column holds numbers.
awk '/^conditional_facts_easy +1 /{ if ($NF ~ /^[0-9]+$/) ok=1 } END { exit ok ? 0 : 1 }' "$work/demo.txt" ||
    fail "the demo's table has no token counts: $(grep -m3 conditional_facts_easy "$work/demo.txt")"

# The cluster example as the image runs it: two parts of the shipped sweep, then the merge.
for i in 0 1; do
    (cd "$work" && MEMFAIL=$memfail SHARD_COUNT=2 SWEEP_KS=1 SWEEP_OUT="$work/sweep" JOB_COMPLETION_INDEX=$i \
        "$share/examples/cluster/run-shard.sh") > "$work/part-$i.txt" 2>&1 || fail "run-shard.sh part $i failed: $(tail -3 "$work/part-$i.txt")"
done
(cd "$work" && MEMFAIL=$memfail SHARD_COUNT=2 SWEEP_OUT="$work/sweep" "$share/examples/cluster/merge.sh") > "$work/merge.txt" 2>&1 ||
    fail "merge.sh failed: $(tail -3 "$work/merge.txt")"
grep -q "run 2: verbatim:retriever=hashed" "$work/merge.txt" || fail "the merged sweep lacks a run: $(head -5 "$work/merge.txt")"
echo "installed: $(cat "$work/version.txt") from $prefix: demo, token counts and the cluster example work"
