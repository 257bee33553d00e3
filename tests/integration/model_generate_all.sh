#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `memfail datasets generate all --model` end to end against tools/fake-llm's generative stand-in
# (--extractive) over HTTP: the five datasets are written at the paper's sizes (rows dropped after
# their attempts are topped up), every one passes `memfail datasets validate`, and a short
# `memfail run` over the five files finishes. Then the top-up bound: a dataset whose rows keep
# failing is written short, the command exits non-zero saying so, and the record counts it.
# Usage: model_generate_all.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# start_server PORT_FILE [fake-llm options...]: starts fake-llm and waits for its port.
start_server() {
    local port_file=$1
    shift
    "$fake_llm" --port-file "$port_file" "$@" > "$work/server.txt" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do [ -s "$port_file" ] && break; sleep 0.05; done
    [ -s "$port_file" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
}
stop_server() { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=; }

start_server "$work/port" --extractive
base="http://127.0.0.1:$(cat "$work/port")/v1"

# 1. The five datasets at full size.
start=$(date +%s)
"$memfail" datasets generate all --model fake --base-url "$base" -o "$work/gen" > "$work/gen.txt" 2> "$work/gen.err" ||
    fail "datasets generate all failed: $(tail -5 "$work/gen.err")"
echo "generate all: $(( $(date +%s) - start )) s"
grep -E '^  [a-z_]+ +rows ' "$work/gen.txt" || true
datasets=(conditional_facts_easy conditional_facts_hard coexisting_facts persona_retrieval long_hop)
files=()
for d in "${datasets[@]}"; do
    [ -s "$work/gen/$d.jsonl" ] || fail "no $d.jsonl written"
    [ -s "$work/gen/generation_config_$d.json" ] || fail "no generation_config_$d.json written"
    files+=("$work/gen/$d.jsonl")
done
grep -q "SHORT" "$work/gen.txt" "$work/gen.err" && fail "a dataset is short: $(grep SHORT "$work/gen.err")"

# Every dataset at its target, the counts adding up, Easy and Hard on the same rows.
python3 - "$work/gen" <<'PY'
import json, sys
out = sys.argv[1]
targets = {"conditional_facts_easy": 100, "conditional_facts_hard": 100, "coexisting_facts": 100,
           "persona_retrieval": 100, "long_hop": 92}
problems = []
records = {}
for name, target in targets.items():
    record = json.load(open(f"{out}/generation_config_{name}.json"))
    records[name] = record
    c = record["counts"]
    if c["target"] != target or c["kept"] != target:
        problems.append(f"{name}: kept {c['kept']} of target {c['target']} (expected {target})")
    if c["planned"] != c["kept"] + c["truncated"] + c["dropped"] + c.get("pair_dropped", 0):
        problems.append(f"{name}: planned {c['planned']} is not kept + truncated + dropped + pair_dropped: {c}")
    if c["planned"] > c["max_planned"]:
        problems.append(f"{name}: planned {c['planned']} beyond the bound {c['max_planned']}")
    if "short" in record:
        problems.append(f"{name}: record says short: {record['short']}")
    for b in record["buckets"]:
        if b["kept"] != b["target"]:
            problems.append(f"{name}: bucket {b['bucket']} kept {b['kept']} of {b['target']}")
    # The raw copy beside each CSV: every reply that passed its own checks, before deduplication.
    csv_names = {"conditional_facts_easy": "conditional_facts_dataset_easy", "conditional_facts_hard":
                 "conditional_facts_dataset_hard", "coexisting_facts": "coexisting_facts_dataset",
                 "persona_retrieval": "persona_dataset", "long_hop": "long_hop_chains"}
    import csv as csv_
    raw = list(csv_.DictReader(open(f"{out}/{csv_names[name]}_raw.csv", newline="")))
    kept = list(csv_.DictReader(open(f"{out}/{csv_names[name]}.csv", newline="")))
    if len(raw) != c["raw_rows"] or len(kept) != c["kept"]:
        problems.append(f"{name}: raw copy has {len(raw)} rows (record {c['raw_rows']}), CSV {len(kept)} (kept {c['kept']})")
    floor = c["kept"] + c["truncated"] + c["dedup_collisions"]
    if len(raw) < floor:
        problems.append(f"{name}: raw copy has {len(raw)} rows, fewer than kept + truncated + near-duplicates {floor}")
    if c["dropped"] > 5:
        problems.append(f"{name}: {c['dropped']} rows dropped; the stand-in should drop at most a few")
hops = {b["bucket"].split()[0]: 0 for b in records["long_hop"]["buckets"]}
for b in records["long_hop"]["buckets"]:
    hops[b["bucket"].split()[0]] += b["kept"]
if hops != {"K=1": 31, "K=2": 32, "K=3": 29}:
    problems.append(f"long_hop: hop buckets {hops}")
def rows(name):
    line = open(f"{out}/{name}.jsonl").readline()
    return [(p["meta"]["entity"], p["meta"]["behaviour"], p["meta"]["condition"]) for p in json.loads(line)["probes"]]
if rows("conditional_facts_easy") != rows("conditional_facts_hard"):
    problems.append("conditional_facts_easy and conditional_facts_hard do not keep the same rows")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY

# 2. validate: every construction rule and the size rules.
"$memfail" datasets validate "${files[@]}" > "$work/validate.txt" 2>&1 ||
    fail "datasets validate failed: $(tail -20 "$work/validate.txt")"
echo "validate: the five generated datasets pass"

# 3. A short run over the five files.
start=$(date +%s)
"$memfail" run --system verbatim --datasets "$(IFS=,; echo "${files[*]}")" --k 1 --base-url "$base" \
    --out "$work/run.db" -q > "$work/run.txt" 2>&1 || fail "memfail run failed: $(tail -5 "$work/run.txt")"
echo "run (verbatim, k=1): $(( $(date +%s) - start )) s"
"$memfail" report "$work/run.db" --format json -o "$work/results.json" > /dev/null
python3 - "$work/results.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 1 and runs[0]["status"] == "finished", [(r["status"], r.get("error")) for r in runs]
rows = {row["dataset"]: row for row in runs[0]["results"]}
want = {"conditional_facts_easy", "conditional_facts_hard", "coexisting_facts", "persona_retrieval", "long_hop"}
assert set(rows) == want, sorted(rows)
for name, row in rows.items():
    assert row["probes"] > 0 and row["stages"]["error"] == 0, (name, row["probes"], row["stages"])
PY
stop_server

# 4. The top-up bound: coexisting rows 2, 5 and 6 always have the wrong count; with --rows 4 and
# --max-planned 1.5 at most 6 rows are planned, so the dataset keeps 3 of its 4.
python3 - "$work/script.json" <<'PY'
import json, sys
bad = {"preferences": ["velvet kind"], "preference_facts": ["I reach for the velvet kind on some days."],
       "question": "What should I rotate through this month?", "ground_truth_answer": "velvet kind"}
rules = [{"match": {"schema": "memfail_gen_coexisting", "contains": f'"row":{row},'}, "json": bad} for row in (2, 5, 6)]
json.dump({"extractive": True, "rules": rules}, open(sys.argv[1], "w"))
PY
start_server "$work/port2" --script "$work/script.json"
base="http://127.0.0.1:$(cat "$work/port2")/v1"
set +e
"$memfail" datasets generate coexisting_facts --model fake --base-url "$base" --rows 4 --max-planned 1.5 \
    -o "$work/short" > "$work/short.txt" 2> "$work/short.err"
code=$?
set -e
[ "$code" -ne 0 ] || fail "a short dataset must make generate exit non-zero: $(cat "$work/short.txt")"
grep -q "SHORT: coexisting_facts has 3 of its 4 rows after planning 6 (the bound is 6)" "$work/short.err" ||
    fail "no SHORT error: $(cat "$work/short.err")"
grep -q "short of the target" "$work/short.err" || fail "no final error: $(tail -3 "$work/short.err")"
[ -s "$work/short/coexisting_facts.jsonl" ] || fail "the short dataset was not written"
python3 - "$work/short/generation_config_coexisting_facts.json" <<'PY'
import json, sys
record = json.load(open(sys.argv[1]))
c = record["counts"]
want = {"target": 4, "kept": 3, "planned": 6, "top_up": 2, "dropped": 3, "max_planned": 6}
got = {k: c[k] for k in want}
assert got == want, f"counts {got}, expected {want}"
assert record["short"]["rows"] == 1, record.get("short")
PY
echo "bound: the short dataset is written, reported and the exit code is $code"
