#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmarks' own protocols through the real binary: LoCoMo and LongMemEval files in their
# published schemas (written by benchmark_protocols/make_inputs.py: 56 LoCoMo questions over the five
# categories, 56 LongMemEval questions over the six types, abstentions included), answered by
# tools/fake-llm with scripted edge-case replies and, for LongMemEval, scripted judge replies; run
# under --protocol locomo and --protocol longmemeval; the benchmark column memfail prints equals
# the authors' scoring rules applied by an independent script (benchmark_protocols/score.py, with
# NLTK's Porter stemmer and the `regex` module as the authors use) to the same replies. Also: a
# protocol refuses another benchmark's dataset, and the report names the protocol.
# Usage: benchmark_protocols.sh MEMFAIL FIXTURES_DIR (FAKE_LLM in the environment names the server).
set -euo pipefail
memfail=$1
fake_llm=${FAKE_LLM:?FAKE_LLM must name the fake-llm binary}
here="$(cd "$(dirname "$0")" && pwd)/benchmark_protocols"
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# Debian's python3 with python3-nltk and python3-regex (scripts/install-deps).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c "import nltk, regex" 2>/dev/null; then
  if [ "${MEMFAIL_REQUIRE_PEERS:-0}" = 1 ]; then fail "python3-nltk and python3-regex are not installed (MEMFAIL_REQUIRE_PEERS=1)"; fi
  echo "SKIP: python3-nltk or python3-regex is not installed (scripts/install-deps)" >&2
  exit 77
fi

"$py" "$here/make_inputs.py" "$work"
"$fake_llm" --script "$work/script.json" --port-file "$work/port" --log "$work/requests.jsonl" > "$work/server.txt" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || fail "fake-llm did not start: $(cat "$work/server.txt")"
export OPENAI_API_KEY=sk-protocols-test
llm=(--base-url "http://127.0.0.1:$(cat "$work/port")/v1" --answer-model bench-taker)

for b in locomo longmemeval; do
  "$memfail" datasets import --from "$b" "$work/$b.json" -o "$work/data" > "$work/import-$b.txt" 2>&1 ||
      fail "import $b: $(tail -5 "$work/import-$b.txt")"
done
# A protocol is its benchmark's own.
if "$memfail" run -q --system verbatim --datasets "$work/data/longmemeval.jsonl" --k 5 --protocol locomo "${llm[@]}" \
      --out "$work/refused.db" > "$work/refused.txt" 2>&1; then
  fail "--protocol locomo ran a LongMemEval dataset"
fi
grep -q "is not locomo" "$work/refused.txt" || fail "the refusal does not say why: $(cat "$work/refused.txt")"

"$memfail" run -q --system verbatim --datasets "$work/data/locomo.jsonl" --k 5 --protocol locomo "${llm[@]}" \
    --out "$work/r.db" > "$work/run-locomo.txt" 2>&1 || fail "locomo run: $(tail -5 "$work/run-locomo.txt")"
"$memfail" run -q --system verbatim --datasets "$work/data/longmemeval.jsonl" --k 5 --protocol longmemeval "${llm[@]}" \
    --judge-model bench-judge --out "$work/r.db" > "$work/run-lme.txt" 2>&1 || fail "longmemeval run: $(tail -5 "$work/run-lme.txt")"
"$memfail" report "$work/r.db" --format csv --table benchmark > "$work/benchmark.csv" || fail "report"
grep -q ",locomo,locomo," "$work/benchmark.csv" || fail "the table does not name the locomo protocol: $(head -3 "$work/benchmark.csv")"
grep -q ",longmemeval,longmemeval," "$work/benchmark.csv" || fail "the table does not name the longmemeval protocol"
"$py" "$here/score.py" "$work/expected.json" "$work/requests.jsonl" "$work/benchmark.csv" ||
    fail "the benchmark column differs from the authors' rules"
echo "ok: benchmark_protocols"
