#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Probes that need no memory, through the real binaries: `memfail run --system none` with an answer
# model (tools/fake-llm, scripted to know two Long-Hop answers outright) grades its answers though
# nothing is stored, yet counts none of them correct; `memfail report` flags the two probes as
# answerable without memory; `--exclude-leaky` leaves them out of verbatim's rates; without a `none`
# run it refuses loudly.
# Usage: leaky_probes.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$memfail" datasets generate long_hop -o "$work/d" > /dev/null
# The script: the right letter for two questions, "I don't know." for every other.
python3 - "$work/d/long_hop.jsonl" "$work/script.json" "$work/leaky.txt" <<'PY'
import json, sys
scenario = json.loads(open(sys.argv[1]).readline())
probes = [p for p in scenario["probes"] if p.get("kind") == "mcq"][:2]
assert len(probes) == 2, "long_hop has no multiple-choice probes"
rules = [{"match": {"last_user_contains": p["question"]}, "reply": p["correct_choice"]} for p in probes]
json.dump({"rules": rules, "default": {"reply": "I don't know."}}, open(sys.argv[2], "w"))
open(sys.argv[3], "w").write("\n".join(p["id"] for p in probes) + "\n")
PY

"$fake_llm" --script "$work/script.json" --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
export OPENAI_BASE_URL="http://127.0.0.1:$(cat "$work/port")/v1" OPENAI_API_KEY=unused

"$memfail" run --system none --answer-model taker --datasets "$work/d/long_hop.jsonl" --k 1,5 --out "$work/r.db" -q
"$memfail" run --system verbatim --answer-model taker --datasets "$work/d/long_hop.jsonl" --k 1,5 --out "$work/r.db" -q

# `none` graded the two answers right, kept their stage not_stored, and counts no probe correct.
python3 - "$work/r.db" "$work/leaky.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
leaky = open(sys.argv[2]).read().split()
rows = db.execute("select probe_id, stage, answer_correct, reasoning from probe_results where run_id = 1").fetchall()
right = sorted({p for (p, s, a, _) in rows if a == 1})
assert right == sorted(leaky), (right, leaky)
assert all(s == "not_stored" for (_, s, _, _) in rows), {s for (_, s, _, _) in rows}
assert all(r in ("correct without memory", "wrong without memory") for (_, _, _, r) in rows), {r for (*_, r) in rows}
PY

"$memfail" report "$work/r.db" > "$work/report.txt"
grep -q "Answerable without memory" "$work/report.txt" || fail "no leaky table: $(cat "$work/report.txt")"
"$memfail" report "$work/r.db" -f csv --table leaky > "$work/leaky.csv"
python3 - "$work/leaky.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1 and rows[0]["dataset"] == "long_hop", rows
assert rows[0]["right_without_memory"] == "2" and rows[0]["none_runs"] == "1", rows
assert int(rows[0]["asked"]) > 2, rows
PY

# --exclude-leaky: verbatim's probe counts drop by the two, at every k; `none` still counts 0 correct.
"$memfail" report "$work/r.db" -f csv > "$work/all.csv"
"$memfail" report "$work/r.db" -f csv --exclude-leaky > "$work/clean.csv"
python3 - "$work/all.csv" "$work/clean.csv" <<'PY'
import csv, sys
def read(path):
    return {(r["run"], r["k"]): r for r in csv.DictReader(open(path))}
full, clean = read(sys.argv[1]), read(sys.argv[2])
assert set(full) == set(clean) and len(full) == 4, (full.keys(), clean.keys())
for key in full:
    assert int(full[key]["probes"]) - int(clean[key]["probes"]) == 2, (key, full[key]["probes"], clean[key]["probes"])
    assert 0 <= int(clean[key]["correct"]) <= int(full[key]["correct"]), key
    assert float(clean[key]["rate"]) <= 1.0
    if full[key]["system"] == "none":
        assert full[key]["correct"] == "0", full[key]
PY
"$memfail" report "$work/r.db" --html "$work/r.html" 2> /dev/null
grep -q "<h3>Answerable without memory</h3>" "$work/r.html" || fail "the HTML report does not flag the probes"
"$memfail" report "$work/r.db" --exclude-leaky --html "$work/clean.html" 2> /dev/null
grep -q "probes answerable without memory left out" "$work/clean.html" || fail "the HTML report does not say it excluded"
"$memfail" report "$work/r.db" --exclude-leaky > "$work/clean.txt"
grep -q -- "--exclude-leaky: probes a \`none\` run answered right" "$work/clean.txt" || fail "no exclusion note: $(cat "$work/clean.txt")"

# Without a `none` run there is nothing to leave out, and the report says so instead of a table.
"$memfail" run --system verbatim --datasets "$work/d/long_hop.jsonl" --k 1 --out "$work/plain.db" -q
set +e
"$memfail" report "$work/plain.db" --exclude-leaky > "$work/plain.txt" 2>&1
code=$?
set -e
[ "$code" != 0 ] || fail "--exclude-leaky without a none run succeeded"
grep -q "needs a \`none\` run" "$work/plain.txt" || fail "refusal message: $(cat "$work/plain.txt")"
echo "ok"
