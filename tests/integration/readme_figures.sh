#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's first screen shows what `make demo` prints: its table rows for verbatim (BM25) must be
# lines of the demo's own output, and its sentence-chunking figures ("N of 100 Easy", "Easy reads
# A% at k=1 and B% at k=10, Hard C%") must be the demo's. Runs scripts/demo as `make demo` does.
# Usage: readme_figures.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$(readlink -f "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "readme_figures: $*" >&2; exit 1; }
"$root/scripts/demo" "$memfail" "$work/demo" > "$work/demo.txt" 2> "$work/demo.err" || fail "the demo failed: $(tail -5 "$work/demo.err")"
python3 - "$root/README.md" "$work/demo.txt" <<'PY'
import re, sys
readme = open(sys.argv[1]).read()
demo = open(sys.argv[2]).read().splitlines()
problems = []
# The first code block that shows a run's table.
block = re.search(r"```\n(run 1: [^\n]*\n(?:.*\n)*?)```", readme)
if not block:
    sys.exit("README: no code block opening with 'run 1: ...'")
lines = [l for l in block.group(1).splitlines() if l.strip() and l.strip() != "..."]
run = lines[0]
if run not in demo:
    problems.append(f"README shows {run!r}, the demo prints no such run")
else:
    start = demo.index(run)
    end = next((i for i in range(start + 1, len(demo)) if demo[i].startswith("run ")), len(demo))
    table = demo[start:end]
    for l in lines[1:]:
        if l not in table:
            problems.append(f"README row not in the demo's {run!r} table:\n  {l}")
# The sentence-chunking figures: run 3 of the demo (verbatim:chunk=sentence,retriever=bm25).
def rows(label):
    start = next(i for i, l in enumerate(demo) if l.startswith("run ") and l.endswith(label))
    out = {}
    for l in demo[start + 3:]:
        if not l.strip() or l.startswith("run "):
            break
        f = l.split()
        out[(f[0], int(f[1]))] = f
    return out
sent = rows("verbatim:chunk=sentence,retriever=bm25")
m = re.search(r"Easy reads (\d+)% at k=1 and (\d+)% at k=10, Hard (\d+)%", readme)
if not m:
    problems.append("README: no 'Easy reads A% at k=1 and B% at k=10, Hard C%' sentence")
else:
    want = (round(float(sent[("conditional_facts_easy", 1)][4])), round(float(sent[("conditional_facts_easy", 10)][4])),
            round(float(sent[("conditional_facts_hard", 1)][4])))
    got = tuple(int(x) for x in m.groups())
    if got != want:
        problems.append(f"README says Easy {got[0]}%/{got[1]}%, Hard {got[2]}% for sentence chunks; the demo prints {want}")
m = re.search(r"those rules \((\d+) of 100 Easy", readme)
unverified = int(sent[("conditional_facts_easy", 10)][10])  # dataset k probes success rate [lo, hi] decided not_stored summary_error unverified
if not m or int(m.group(1)) != unverified:
    problems.append(f"README's 'those rules (N of 100 Easy' should say {unverified} (the demo's unverified Easy probes at k=10)")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"README: {len(lines) - 1} table rows and the sentence-chunking figures match the demo")
PY
