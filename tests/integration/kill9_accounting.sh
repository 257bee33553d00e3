#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run with LLM stages (test-taker and judge against tools/fake-llm with a fixed latency) is killed
# with SIGKILL at 25 random moments, resumed after each kill, and must end with exactly what an
# uninterrupted run records: the same probe results and the same LLM usage and cost (calls, cache
# hits, tokens, paid tokens, errors, retries per role and model). The kill moments come from a
# seeded generator (MEMFAIL_KILL_SEED, default 14), so a failure is reproducible.
# Usage: kill9_accounting.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
seed=${MEMFAIL_KILL_SEED:-14}
kills=${MEMFAIL_KILLS:-25}
script_src="$(cd "$(dirname "$0")/../.." && pwd)/examples/fake-llm/judge-passes.json"
work=$(mktemp -d)
server_pid=
run_pid=
cleanup() {
  [ -n "$run_pid" ] && kill -9 "$run_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Every reply takes 40 ms, so calls are in flight whenever the run is killed.
python3 - "$script_src" "$work/script.json" <<'PY'
import json, sys
script = json.load(open(sys.argv[1]))
for rule in script.get("rules", []):
    rule["delay_ms"] = 40
script.setdefault("default", {})["delay_ms"] = 40
json.dump(script, open(sys.argv[2], "w"))
PY
"$fake_llm" --script "$work/script.json" --port-file "$work/port" --threads 32 > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
base="http://127.0.0.1:$(cat "$work/port")/v1"

args=(--system verbatim --datasets conditional_facts_easy,long_hop,persona_retrieval --limit 12 --k 1,3
      --base-url "$base" --api-key-env MEMFAIL_KILL9_NO_KEY --answer-model scripted-taker
      --judge-model scripted-judge --grader both --concurrency 2 -q)

# The uninterrupted run, timed: the kills are spread over its length.
start=$(date +%s.%N)
"$memfail" run "${args[@]}" --out "$work/clean.db" > "$work/clean.txt" 2>&1 || fail "clean run: $(cat "$work/clean.txt")"
end=$(date +%s.%N)
duration=$(python3 -c "print(max(0.5, $end - $start))")

# Delays before each kill: uniform over (0.01, 0.07) x the clean run's length (about 6 s), so each
# segment gets a little further after its start-up and the kills spread over the whole run: some
# land during storage and the first answers, others deep in grading.
mapfile -t delays < <(python3 -c "
import random
r = random.Random($seed)
for _ in range($kills): print(round(r.uniform(0.01, 0.07) * $duration, 3))")

killed=0
finished_early=0
for i in $(seq 0 $((kills - 1))); do
  resume=()
  [ -e "$work/killed.db" ] && resume=(--resume)
  "$memfail" run "${args[@]}" "${resume[@]}" --out "$work/killed.db" > "$work/segment.txt" 2>&1 &
  run_pid=$!
  sleep "${delays[$i]}"
  if kill -9 "$run_pid" 2>/dev/null; then killed=$((killed + 1)); fi
  wait "$run_pid" 2>/dev/null || true
  run_pid=
  if grep -q "already finished" "$work/segment.txt"; then finished_early=1; break; fi
done
# Finish what the last kill left.
"$memfail" run "${args[@]}" --resume --out "$work/killed.db" > "$work/last.txt" 2>&1 || fail "final resume: $(cat "$work/last.txt")"
[ "$killed" = "$kills" ] || fail "only $killed of $kills kills landed while the run was working"

python3 - "$work/killed.db" "$work/clean.db" <<'PY'
import sqlite3, sys
def load(path):
    db = sqlite3.connect(path)
    runs = db.execute("select id, status from runs").fetchall()
    assert len(runs) == 1, f"{path}: runs {runs}, expected one"
    assert runs[0][1] == "finished", f"{path}: run is {runs[0][1]}"
    results = sorted(db.execute(
        "select scenario_id, probe_id, k, stage, memory_success, coalesce(answer, ''), answer_correct, "
        "coalesce(error, '') from probe_results"))
    usage = sorted(db.execute(
        "select role, model, stage, count(*), sum(cache_hit), sum(prompt_tokens), sum(completion_tokens), "
        "sum(case when cache_hit = 0 then prompt_tokens else 0 end), "
        "sum(case when cache_hit = 0 then completion_tokens else 0 end), "
        "sum(error_kind is not null), sum(max(attempts - 1, 0)), sum(attempts) "
        "from llm_calls group by role, model, stage"))
    return results, usage
(kr, ku), (cr, cu) = load(sys.argv[1]), load(sys.argv[2])
assert len(kr) == len(cr) and kr == cr, \
    f"probe results differ: {len(kr)} after kills, {len(cr)} uninterrupted; first difference " \
    f"{next(((a, b) for a, b in zip(kr, cr) if a != b), None)}"
if ku != cu:
    print("usage after kills (role, model, stage, calls, hits, prompt, completion, paid prompt, paid completion, errors, retries, attempts):", file=sys.stderr)
    for row in ku: print("  ", row, file=sys.stderr)
    print("uninterrupted:", file=sys.stderr)
    for row in cu: print("  ", row, file=sys.stderr)
    sys.exit("FAIL: the LLM usage after kill and resume differs from the uninterrupted run")
calls = sum(r[3] for r in cu)
assert calls > 100, f"only {calls} LLM calls: the run is too small to test anything"
print(f"{len(cr)} probe x k results and {calls} LLM calls ({sum(r[4] for r in cu)} cache hits) identical")
PY

# The user-facing tables agree too: usage (memfail report) and cost (--price).
"$memfail" report "$work/killed.db" --price scripted-taker=1.5/6 --price scripted-judge=2.5/10 > "$work/killed_report.txt"
"$memfail" report "$work/clean.db" --price scripted-taker=1.5/6 --price scripted-judge=2.5/10 > "$work/clean_report.txt"
python3 - "$work/killed_report.txt" "$work/clean_report.txt" <<'PY'
import re, sys
def section(path, title):
    text = open(path).read()
    at = text.find(title)
    assert at >= 0, f"{path}: no '{title}' table"
    lines = text[at:].split("\n\n")[0].splitlines()
    return lines
def usage(path):
    rows = []
    for line in section(path, "LLM calls"):
        cells = line.split()
        if cells and cells[0].isdigit() and len(cells) >= 11:
            rows.append(cells[1:9])  # role .. retries (p50/p95 latency left out)
    return rows
def cost(path):
    return [line for line in section(path, "LLM cost") if "$" in line or re.search(r"\d", line)]
ku, cu = usage(sys.argv[1]), usage(sys.argv[2])
assert ku and ku == cu, f"usage tables differ:\n{ku}\n{cu}"
kc, cc = cost(sys.argv[1]), cost(sys.argv[2])
assert kc == cc, "cost tables differ:\n" + "\n".join(kc) + "\n---\n" + "\n".join(cc)
PY
echo "ok: $killed kills, results, usage and cost identical to an uninterrupted run"
