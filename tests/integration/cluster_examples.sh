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
export MEMFAIL
fail() { echo "cluster_examples: $*" >&2; exit 1; }
# As shipped: the Job's own settings (SHARD_COUNT, SWEEP_SYSTEMS, SWEEP_KS, SWEEP_SCRATCH), read from
# the manifest; only the folders are mapped here (/results, /scratch: mounts in the pod).
eval "$(python3 - "$ex/k8s-indexed-job.yaml" <<'PY'
import re, shlex, sys
text = open(sys.argv[1]).read()
for name in ("SHARD_COUNT", "SWEEP_SYSTEMS", "SWEEP_KS", "SWEEP_SCRATCH"):
    m = re.search(r"^\s*- name: %s\s*\n\s*value: \"?([^\"\n]*)\"?" % name, text, re.M)
    if not m:
        sys.exit(f"the manifest sets no {name}")
    print(f"JOB_{name}={shlex.quote(m.group(1))}")
PY
)"
[ "$JOB_SWEEP_SCRATCH" = /scratch ] || fail "the manifest's scratch folder is $JOB_SWEEP_SCRATCH, not the emptyDir /scratch"
mkdir -p scratch

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

# Kubernetes: the container's command, once per index, with the Job's environment (each pod has
# its own empty scratch folder).
k8s_part() {
    rm -rf "scratch/pod-$1" && mkdir -p "scratch/pod-$1"
    SHARD_COUNT=$JOB_SHARD_COUNT SWEEP_SYSTEMS=$JOB_SWEEP_SYSTEMS SWEEP_KS=$JOB_SWEEP_KS SWEEP_OUT=k8s \
        SWEEP_SCRATCH="$work/scratch/pod-$1" JOB_COMPLETION_INDEX=$1 "$ex/run-shard.sh" > "k8s-$1.log" 2>&1 ||
        fail "run-shard.sh as the Job runs it failed for index $1: $(tail -3 "k8s-$1.log")"
}
for i in $(seq 0 $((JOB_SHARD_COUNT - 1))); do k8s_part "$i"; done
# The parts are on the shared volume, whole, and nothing is left half-copied.
[ "$(ls k8s/part-*-of-"$JOB_SHARD_COUNT".db | wc -l)" -eq "$JOB_SHARD_COUNT" ] || fail "parts missing: $(ls k8s)"
! ls k8s | grep -q '\.copy\.' || fail "temporary copies left on the volume: $(ls k8s)"
# A pod that is retried after its part finished (a fresh pod: empty scratch) changes nothing.
k8s_part 1
SHARD_COUNT=$JOB_SHARD_COUNT SWEEP_OUT=k8s "$ex/merge.sh" > k8s.txt

# Slurm: the array script as shipped, as each task runs it (a copy, from the submit directory; the
# node-local TMPDIR as its scratch), then the merge.
mkdir -p tmp
for i in 0 1 2 3; do
    (cd "$root" && env -u SHARD_COUNT -u SWEEP_SYSTEMS -u SWEEP_KS -u SWEEP_SCRATCH TMPDIR="$work/tmp" \
        SWEEP_OUT="$work/slurm" SLURM_ARRAY_TASK_ID=$i SLURM_SUBMIT_DIR="$root" \
        bash "$ex/slurm-sweep.sbatch" > "$work/slurm-$i.log" 2>&1) || fail "the Slurm task $i failed: $(tail -3 "slurm-$i.log")"
done
(cd "$root" && SWEEP_OUT="$work/slurm" SLURM_SUBMIT_DIR="$root" bash "$ex/slurm-merge.sbatch") > slurm.txt

# The same sweep in one process: the shipped systems and k.
for system in $JOB_SWEEP_SYSTEMS; do
    "$MEMFAIL" run --system "$system" --datasets all --k "$JOB_SWEEP_KS" --out single.db --quiet > /dev/null
done
for db in k8s/sweep.db slurm/sweep.db single.db; do
    "$MEMFAIL" report "$db" -f csv --table success > "$(dirname "$db")/$(basename "$db" .db).csv"
done
[ -s single.csv ] || fail "no report of the single-process sweep"
[ "$(grep -c ',verbatim' single.csv || true)" -ge 20 ] || fail "the single-process report lacks runs: $(head -3 single.csv)"
cmp -s single.csv k8s/sweep.csv || { diff single.csv k8s/sweep.csv | head >&2; fail "the Kubernetes sweep differs from one process"; }
cmp -s single.csv slurm/sweep.csv || { diff single.csv slurm/sweep.csv | head >&2; fail "the Slurm sweep differs from one process"; }
grep -q "run 2: verbatim:retriever=hashed" k8s.txt || fail "merge.sh did not print both runs: $(head -5 k8s.txt)"

# A part missing: the merge fails loudly and writes nothing.
mkdir -p partial && cp k8s/part-1-of-4.db k8s/part-2-of-4.db k8s/part-3-of-4.db partial/
if SHARD_COUNT=4 SWEEP_OUT=partial "$ex/merge.sh" > partial.txt 2> partial.err; then fail "merge succeeded with a part missing"; fi
grep -q "part-4-of-4.db: no such results file" partial.err || fail "merge did not name the missing part: $(cat partial.err)"
[ ! -e partial/sweep.db ] || fail "merge wrote a results file although it failed"
# No part number: the script says which variable to set.
if SHARD_COUNT=4 "$ex/run-shard.sh" 2> none.err; then fail "run-shard.sh ran without a part number"; fi
grep -q "JOB_COMPLETION_INDEX" none.err || fail "run-shard.sh did not say what to set"
echo "cluster examples: Kubernetes and Slurm sweeps of 4 parts merge to the single-process results"
