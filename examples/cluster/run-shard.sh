#!/bin/sh
# SPDX-License-Identifier: MIT
# One part of a memfail sweep (systems x answer models, every k in one run), for a scheduler's array
# job. The part number comes from the scheduler: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or
# SLURM_ARRAY_TASK_ID (a Slurm array), both counted from 0. Every run goes to this part's own
# results file, SWEEP_OUT/part-<I>-of-<N>.db; `merge.sh` joins the parts when all have finished.
# Rerunning a part (a pod or task that died) continues it: --resume skips what it recorded and does
# nothing for runs already finished.
#
#   SHARD_COUNT      number of parts (required; the array's size)
#   SWEEP_SYSTEMS    memory systems, space-separated (default: verbatim)
#   SWEEP_MODELS     answer models, space-separated (default: none, the memory side only; with
#                    models set OPENAI_BASE_URL and OPENAI_API_KEY in the environment)
#   SWEEP_KS         k values, comma-separated (default: 1,3,5,10)
#   SWEEP_DATASETS   datasets (default: all, the five MemFail datasets)
#   SWEEP_OUT        results folder, shared by every part (default: results)
#   MEMFAIL          the memfail binary (default: memfail on PATH)
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
mkdir -p "$out"
for system in ${SWEEP_SYSTEMS:-verbatim}; do
    for model in ${SWEEP_MODELS:--}; do
        set -- run --system "$system" --datasets "${SWEEP_DATASETS:-all}" --k "${SWEEP_KS:-1,3,5,10}" \
            --shard "$part/$count" --out "$out/part-$part-of-$count.db" --resume --quiet
        if [ "$model" != "-" ]; then set -- "$@" --answer-model "$model"; fi
        label="$system"
        if [ "$model" != "-" ]; then label="$system, answers by $model"; fi
        echo "part $part/$count: $label" >&2
        "$memfail" "$@"
    done
done
