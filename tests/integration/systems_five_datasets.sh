#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every built-in system runs the five MemFail datasets end to end against an OpenAI-compatible
# endpoint: tools/fake-llm's extractive stand-in over HTTP is each model-backed system's internal
# model. Each run must finish with every dataset's probes recorded and no probe in error, memories
# stored for every dataset and most easy conditional facts kept (some found), the systems' own model calls
# accounted without errors, and the mixture must keep the multi-sentence
# rules of Conditional-Facts Hard that sentence-level fact extraction splits (docs/SYSTEMS.md).
# Usage: systems_five_datasets.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$fake_llm" --extractive --port-file "$work/port" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
base="http://127.0.0.1:$(cat "$work/port")/v1"

systems=(verbatim facts notes graph mixture)
for system in "${systems[@]}"; do
    start=$(date +%s)
    "$memfail" run --system "$system" --datasets all --k 5 --base-url "$base" --system-model stand-in \
        --out "$work/arch.db" -q > "$work/run-$system.txt" 2>&1 ||
        fail "$system: memfail run failed: $(tail -5 "$work/run-$system.txt")"
    echo "$system: five datasets in $(( $(date +%s) - start )) s"
done

"$memfail" report "$work/arch.db" --format json -o "$work/results.json"
python3 - "$work/results.json" "${systems[@]}" <<'PY'
import json, sys

results = json.load(open(sys.argv[1]))
wanted = sys.argv[2:]
datasets = ["conditional_facts_easy", "conditional_facts_hard", "coexisting_facts", "persona_retrieval", "long_hop"]
runs = {run["system"]: run for run in results["runs"]}
problems = []
assert sorted(runs) == sorted(wanted), f"runs recorded: {sorted(runs)}"
probes = {}
success = {}
for name in wanted:
    run = runs[name]
    if run["status"] != "finished":
        problems.append(f"{name}: status {run['status']} ({run.get('error')})")
    rows = {(row["dataset"], row["k"]): row for row in run["results"]}
    for dataset in datasets:
        row = rows.get((dataset, 5))
        if row is None:
            problems.append(f"{name}: no result for {dataset} at k=5")
            continue
        if row["stages"]["error"]:
            problems.append(f"{name}: {row['stages']['error']} probes of {dataset} in error")
        if row["probes"] == 0:
            problems.append(f"{name}: {dataset} has no probes")
        # Every system answers the same probes.
        if probes.setdefault(dataset, row["probes"]) != row["probes"]:
            problems.append(f"{name}: {row['probes']} probes of {dataset}, other systems {probes[dataset]}")
        success[(name, dataset)] = row["memory_success"]
    for dataset in run["datasets"]:
        if not dataset["memories"]:
            problems.append(f"{name}: stored no memory for {dataset['name']}")
    # A system that stores at all keeps most easy conditional facts (each rule is stated once, in
    # one sentence), retrieved or not; this catches a model whose replies the system could not use.
    # Retrieval is only required of some: a rule that says "he" needs the intro naming him too (the
    # fact's evidence lists both), and a system storing sentences apart may miss that intro at k=5,
    # which is the detached-fact failure the dataset exists to show, not a broken run.
    easy = rows.get(("conditional_facts_easy", 5))
    if easy:
        # A system storing sentences apart keeps a rule that says "he" away from the intro naming
        # him: not held verbatim under its person, so unverified for a judge (docs/TAXONOMY.md, the
        # evidence contract); about half of Easy rules name the person in the rule's own sentence.
        kept = easy["stages"]["retrieved"] + easy["stages"]["not_retrieved"]
        if kept * 5 < easy["probes"] * 2:
            problems.append(f"{name}: kept the evidence of only {kept} of {easy['probes']} easy probes "
                            f"(stages {easy['stages']})")
        if easy["memory_success"] * 10 < easy["probes"]:
            problems.append(f"{name}: found the evidence of only {easy['memory_success']} of {easy['probes']} easy probes")
    usage = {u["role"]: u for u in run["llm_usage"]}
    if name != "verbatim":
        system_calls = usage.get("system", {}).get("calls", 0)
        if system_calls == 0:
            problems.append(f"{name}: made no calls to its internal model")
        if usage.get("system", {}).get("errors", 0):
            problems.append(f"{name}: {usage['system']['errors']} internal model calls failed")
    elif usage.get("system", {}).get("calls", 0):
        problems.append("verbatim: called a model")
hard = "conditional_facts_hard"
if not success.get(("mixture", hard), 0) > success.get(("facts", hard), 0):
    problems.append(f"mixture should keep the hard rules whole: mixture {success.get(('mixture', hard))} "
                    f"vs facts {success.get(('facts', hard))}")
for problem in problems:
    print("FAIL:", problem, file=sys.stderr)
for name in wanted:
    print(name, " ".join(f"{d}={success.get((name, d))}/{probes.get(d)}" for d in datasets))
sys.exit(1 if problems else 0)
PY
