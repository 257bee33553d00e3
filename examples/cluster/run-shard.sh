#!/bin/sh
# SPDX-License-Identifier: MIT
# One part of a memfail sweep (systems x answer models, every k in one run), for a scheduler's array
# job. The part number comes from the scheduler: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or
# SLURM_ARRAY_TASK_ID (a Slurm array), both counted from 0. Every run goes to this part's own
# results file, SWEEP_OUT/part-<I>-of-<N>.db; `merge.sh` joins the parts when all have finished.
# Rerunning a part (a pod or task that died) continues it: --resume skips what it recorded and does
# nothing for runs already finished.
#
#   SHARD_COUNT         number of parts (required; the array's size)
#   SWEEP_SYSTEMS       memory systems, space-separated (default: verbatim verbatim:retriever=hashed,
#                       which need no model; a system that summarises, such as mixture or notes,
#                       needs SWEEP_SYSTEM_MODEL)
#   SWEEP_SYSTEM_MODEL  the model the memory systems call (--system-model; default: none)
#   SWEEP_MODELS        answer models, space-separated (default: none, the memory side only)
#                       With either model set, put OPENAI_BASE_URL and OPENAI_API_KEY in the
#                       environment from the scheduler's secrets.
#   SWEEP_KS            k values, comma-separated (default: 1,3,5,10)
#   SWEEP_DATASETS      datasets (default: all, the five MemFail datasets)
#   SWEEP_OUT           results folder, shared by every part (default: results)
#   SWEEP_SCRATCH       a node-local folder to run in (default: none, run in SWEEP_OUT). SQLite's
#                       write-ahead log, which memfail always uses, needs shared memory that NFS,
#                       Lustre and GPFS do not give: on those, set this. The part's files are copied
#                       from SWEEP_OUT to it first (a rerun part resumes from its last copy) and back
#                       to SWEEP_OUT after every run and when the script exits, each file through a
#                       temporary name and a rename, so SWEEP_OUT never holds half a file.
#   MEMFAIL             the memfail binary (default: memfail on PATH)
set -eu
index="${JOB_COMPLETION_INDEX:-${SLURM_ARRAY_TASK_ID:-}}"
if [ -z "$index" ]; then
    echo "run-shard.sh: no part number: set JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm)" >&2
    exit 2
fi
count="${SHARD_COUNT:-}"
if [ -z "$count" ]; then
    echo "run-shard.sh: set SHARD_COUNT to the number of parts" >&2
    exit 2
fi
case "$index$count" in *[!0-9]*)
    echo "run-shard.sh: part number '$index' and SHARD_COUNT '$count' must be whole numbers" >&2
    exit 2 ;;
esac
part=$((index + 1))
memfail="${MEMFAIL:-memfail}"
out="${SWEEP_OUT:-results}"
name="part-$part-of-$count.db"
mkdir -p "$out"

# copy_part FROM TO: the part's results file, its reply cache and its memory stores, each through a
# temporary name and a rename.
copy_part() {
    for f in "$1/$name" "$1/$name.llm-cache.db"; do
        [ -f "$f" ] || continue
        cp "$f" "$2/$(basename "$f").copy.$$"
        mv -f "$2/$(basename "$f").copy.$$" "$2/$(basename "$f")"
    done
    if [ -d "$1/$name.memory" ]; then
        rm -rf "$2/$name.memory.copy.$$"
        cp -R "$1/$name.memory" "$2/$name.memory.copy.$$"
        rm -rf "$2/$name.memory"
        mv "$2/$name.memory.copy.$$" "$2/$name.memory"
    fi
}
work="$out"
if [ -n "${SWEEP_SCRATCH:-}" ]; then
    work="$SWEEP_SCRATCH/memfail-$name"
    mkdir -p "$work"
    copy_part "$out" "$work"
    trap 'copy_part "$work" "$out"' EXIT
fi

for system in ${SWEEP_SYSTEMS:-verbatim verbatim:retriever=hashed}; do
    for model in ${SWEEP_MODELS:--}; do
        set -- run --system "$system" --datasets "${SWEEP_DATASETS:-all}" --k "${SWEEP_KS:-1,3,5,10}" \
            --shard "$part/$count" --out "$work/$name" --resume --quiet
        if [ -n "${SWEEP_SYSTEM_MODEL:-}" ]; then set -- "$@" --system-model "$SWEEP_SYSTEM_MODEL"; fi
        if [ "$model" != "-" ]; then set -- "$@" --answer-model "$model"; fi
        label="$system"
        if [ "$model" != "-" ]; then label="$system, answers by $model"; fi
        echo "part $part/$count: $label" >&2
        "$memfail" "$@"
        if [ "$work" != "$out" ]; then copy_part "$work" "$out"; fi
    done
done
