#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cluster examples (examples/cluster) run here with the schedulers' index variables set: the
# Kubernetes Indexed Job's command with JOB_COMPLETION_INDEX 0..3 and the Slurm array script with
# SLURM_ARRAY_TASK_ID 0..3, each followed by its merge step. Both merged sweeps must report exactly
# what one process running the same sweep reports; a rerun part must change nothing; a merge with a
# part missing must fail and write nothing.
# Usage: cluster_examples.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
MEMFAIL=$(readlink -f "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
ex="$root/examples/cluster"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export MEMFAIL SHARD_COUNT=4 SWEEP_SYSTEMS="verbatim none" SWEEP_KS="1,5"
fail() { echo "cluster_examples: $*" >&2; exit 1; }

# The manifests say what the scripts expect: an Indexed Job of SHARD_COUNT pods running run-shard.sh,
# and an array of SHARD_COUNT tasks.
python3 - "$ex" <<'PY' || fail "the manifests do not match the scripts"
import re, sys
ex = sys.argv[1]
job = open(f"{ex}/k8s-indexed-job.yaml").read()
merge = open(f"{ex}/k8s-merge-job.yaml").read()
try:
    import yaml
    spec = yaml.safe_load(job)["spec"]
    container = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert spec["completionMode"] == "Indexed", "not an Indexed Job"
    assert spec["completions"] == int(env["SHARD_COUNT"]) == spec["parallelism"], "completions != SHARD_COUNT"
    assert container["command"][0].endswith("/run-shard.sh"), container["command"]
    mc = yaml.safe_load(merge)["spec"]["template"]["spec"]["containers"][0]
    assert mc["command"][0].endswith("/merge.sh"), mc["command"]
    assert {e["name"]: e.get("value") for e in mc["env"]}["SHARD_COUNT"] == env["SHARD_COUNT"]
except ImportError:  # no PyYAML: the same facts by pattern
    assert "completionMode: Indexed" in job and "run-shard.sh" in job and "merge.sh" in merge
    assert re.search(r"completions: (\d+)", job).group(1) == re.search(r'SHARD_COUNT\s*\n\s*value: "(\d+)"', job).group(1)
sweep = open(f"{ex}/slurm-sweep.sbatch").read()
lo, hi = map(int, re.search(r"#SBATCH --array=(\d+)-(\d+)", sweep).groups())
assert hi - lo + 1 == int(re.search(r"SHARD_COUNT:-(\d+)", sweep).group(1)), "array size != SHARD_COUNT"
PY

# Kubernetes: the container's command, once per index.
for i in 0 1 2 3; do
    SWEEP_OUT=k8s JOB_COMPLETION_INDEX=$i "$ex/run-shard.sh" > /dev/null 2>&1
done
# A pod that is retried after its part finished changes nothing.
SWEEP_OUT=k8s JOB_COMPLETION_INDEX=1 "$ex/run-shard.sh" > /dev/null 2>&1
SWEEP_OUT=k8s "$ex/merge.sh" > k8s.txt

# Slurm: the array script as each task runs it (a copy, from the submit directory), then the merge.
for i in 0 1 2 3; do
    (cd "$root" && SWEEP_OUT="$work/slurm" SLURM_ARRAY_TASK_ID=$i SLURM_SUBMIT_DIR="$root" \
        bash "$ex/slurm-sweep.sbatch" > /dev/null 2>&1)
done
(cd "$root" && SWEEP_OUT="$work/slurm" SLURM_SUBMIT_DIR="$root" bash "$ex/slurm-merge.sbatch") > slurm.txt

# The same sweep in one process.
for system in verbatim none; do
    "$MEMFAIL" run --system "$system" --datasets all --k 1,5 --out single.db --quiet > /dev/null
done
for db in k8s/sweep.db slurm/sweep.db single.db; do
    "$MEMFAIL" report "$db" -f csv --table success > "$(dirname "$db")/$(basename "$db" .db).csv"
done
[ -s single.csv ] || fail "no report of the single-process sweep"
[ "$(grep -c ',verbatim,\|,none,' single.csv || true)" -ge 10 ] || fail "the single-process report lacks runs: $(head -3 single.csv)"
cmp -s single.csv k8s/sweep.csv || { diff single.csv k8s/sweep.csv | head >&2; fail "the Kubernetes sweep differs from one process"; }
cmp -s single.csv slurm/sweep.csv || { diff single.csv slurm/sweep.csv | head >&2; fail "the Slurm sweep differs from one process"; }
grep -q "run 2: none" k8s.txt || fail "merge.sh did not print both runs: $(head -5 k8s.txt)"

# A part missing: the merge fails loudly and writes nothing.
mkdir -p partial && cp k8s/part-1-of-4.db k8s/part-2-of-4.db k8s/part-3-of-4.db partial/
if SWEEP_OUT=partial "$ex/merge.sh" > partial.txt 2> partial.err; then fail "merge succeeded with a part missing"; fi
grep -q "part-4-of-4.db: no such results file" partial.err || fail "merge did not name the missing part: $(cat partial.err)"
[ ! -e partial/sweep.db ] || fail "merge wrote a results file although it failed"
# No part number: the script says which variable to set.
if SHARD_COUNT=4 "$ex/run-shard.sh" 2> none.err; then fail "run-shard.sh ran without a part number"; fi
grep -q "JOB_COMPLETION_INDEX" none.err || fail "run-shard.sh did not say what to set"
echo "cluster examples: Kubernetes and Slurm sweeps of 4 parts merge to the single-process results"
