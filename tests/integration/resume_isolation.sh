#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checkpoint isolation survives kills: every built-in system (their stores persist and are
# idempotent) and the example exec adapter declaring idempotent_store and not, run over HaluMem-shaped users with the judge and the systems' model served by
# tools/fake-llm with a delay (so rows are written well after the sessions that follow are stored),
# is killed with SIGKILL at random moments and resumed until it finishes; its results (every probe's
# stage and the texts it retrieved; every session check's verdict) equal an uninterrupted run's.
# A store left ahead of the first checkpoint still to grade must start again, or the resumed
# checkpoint's probes see sessions stored after it.
# Usage: resume_isolation.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fixtures=$2
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$memfail" datasets import --from halumem "$fixtures/halumem/halumem-medium-fixture.jsonl" -o "$work/data" > /dev/null 2>&1 ||
    fail "import"
# The judge passes what it is asked (HaluMem's operations and the staged judges); every reply waits
# 15 ms, and the memory systems' prompts are answered by the extractive stand-in.
python3 - "$fixtures/../../examples/fake-llm/judge-passes.json" "$work/script.json" <<'PY'
import json, sys
script = json.load(open(sys.argv[1]))
script["rules"] = [
    {"match": {"schema": "memfail_judge_halumem_integrity"}, "json": {"reasoning": "stated", "score": "1"}},
    {"match": {"schema": "memfail_judge_halumem_accuracy"},
     "json": {"reason": "supported", "accuracy_score": "2", "is_included_in_golden_memories": "false"}},
    {"match": {"schema": "memfail_judge_halumem_update"}, "json": {"reason": "kept", "evaluation_result": "Omission"}},
] + script["rules"]
for rule in script["rules"]:
    rule["delay_ms"] = 15
script["extractive"] = True
script["default"] = {"reply": "I don't know.", "delay_ms": 15}
json.dump(script, open(sys.argv[2], "w"))
PY
"$fake_llm" --script "$work/script.json" --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
export OPENAI_API_KEY=sk-fake-isolation
base="http://127.0.0.1:$(cat "$work/port")/v1"

status_of() {
    python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute('select status from runs').fetchone(); print(r[0] if r else 'none')" "$1" 2>/dev/null || echo none
}

compare() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sqlite3, sys
def rows(path):
    db = sqlite3.connect(path)
    (runs,) = db.execute("select count(*) from runs").fetchone()
    assert runs == 1, f"{path}: {runs} runs"
    total, distinct = db.execute(
        "select count(*), count(distinct scenario_id||'/'||probe_id||'/'||k) from probe_results").fetchone()
    assert total == distinct, f"{path}: {total - distinct} probe results doubled"
    probes = sorted((s, p, k, stage, tuple(sorted(h["text"] for h in json.loads(r))))
                    for s, p, k, stage, r in db.execute("select scenario_id, probe_id, k, stage, retrieved_json from probe_results"))
    checks = sorted(db.execute("select scenario_id, session_id, name, item, coalesce(score, -1), label from session_checks"))
    return probes, checks
(kp, kc), (cp, cc) = rows(sys.argv[1]), rows(sys.argv[2])
assert len(kp) == len(cp), f"{sys.argv[3]}: {len(kp)} probe results after resuming, {len(cp)} uninterrupted"
for a, b in zip(kp, cp):
    assert a == b, f"{sys.argv[3]}: {a[:4]} retrieved {len(a[4])} texts after resuming, {b[:4]} {len(b[4])} uninterrupted"
assert kc == cc, f"{sys.argv[3]}: session checks differ ({len(kc)} after resuming, {len(cc)} uninterrupted)"
print(f"{sys.argv[3]}: {len(cp)} probe x k and {len(cc)} session checks equal an uninterrupted run's")
PY
}

RANDOM=20261129
adapter="$fixtures/../../examples/adapters/python/memfail_adapter.py"
for system in verbatim facts notes graph ledger mixture "exec:cmd=python3 $adapter" \
              "exec:cmd=python3 $adapter --not-idempotent"; do
    name=$system
    case "$system" in
        *--not-idempotent) name=adapter-not-idempotent ;;
        exec:*) name=adapter-idempotent ;;
    esac
    args=(--system "$system" --datasets "$work/data/halumem.jsonl" --k 1,5 --base-url "$base" --judge-model judge
          --system-model stand-in --concurrency 2)
    t0=$(date +%s%N)
    "$memfail" run "${args[@]}" --out "$work/$name-clean.db" -q > /dev/null 2> "$work/$name-clean.txt" ||
        fail "$name, uninterrupted: $(tail -3 "$work/$name-clean.txt")"
    # Kills land at random moments within what an uninterrupted run takes (its wall time in ms).
    span=$(( ($(date +%s%N) - t0) / 1000000 ))
    kills=0
    for round in 1 2 3; do
    # A run that finished before any kill proves nothing: start over with earlier kills.
    [ "$round" -gt 1 ] && rm -rf "$work/$name.db" "$work/$name.db".* && span=$(( span / 2 ))
    for attempt in $(seq 1 12); do
        resume=()
        [ -e "$work/$name.db" ] && resume=(--resume)
        "$memfail" run "${args[@]}" --out "$work/$name.db" "${resume[@]}" -q > /dev/null 2> "$work/$name-$attempt.txt" &
        pid=$!
        wait_ms=$(( span * (RANDOM % 70 + 10) / 100 + 20 ))
        sleep "$(( wait_ms / 1000 )).$(printf '%03d' $(( wait_ms % 1000 )))"
        if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
        wait "$pid" 2>/dev/null || true
        [ "$(status_of "$work/$name.db")" = finished ] && break
    done
    [ "$kills" -gt 0 ] && break
    done
    if [ "$(status_of "$work/$name.db")" != finished ]; then
        "$memfail" run "${args[@]}" --out "$work/$name.db" --resume -q > /dev/null 2> "$work/$name-last.txt" ||
            fail "$name, last resume: $(tail -3 "$work/$name-last.txt")"
    fi
    [ "$kills" -gt 0 ] || fail "$name: no run was killed before it finished (the test proves nothing)"
    compare "$work/$name.db" "$work/$name-clean.db" "$name ($kills kills)" || fail "$name: resumed results differ (above)"
done
echo "resume isolation: ok"
