#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HaluMem through the real binary: HaluMem-shaped files (tests/fixtures/halumem, the schema the
# authors' scripts write) imported with `datasets import --from halumem`, valid, run offline with
# verbatim: the report slices memfail's stages by HaluMem's question types, its Memory Boundary
# questions are to be declined, and no probe whose evidence is only placed in a session is ever a
# success without a judge. A file with a broken line imports the other users, says so, and exits 2.
# Usage: halumem_offline.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$memfail" datasets import --from halumem "$fixtures/halumem/halumem-medium-fixture.jsonl" -o "$work/med" > "$work/import.txt" 2>&1 ||
    fail "import: $(tail -5 "$work/import.txt")"
grep -q "imported 2 scenario(s), 11 probe(s)" "$work/import.txt" || fail "import summary: $(grep imported "$work/import.txt")"
grep -q "no memory point of this session or an earlier one" "$work/import.txt" || fail "the unresolved evidence is not noted"
"$memfail" datasets import --from halumem "$fixtures/halumem/halumem-long-fixture.jsonl" -o "$work/long" > "$work/import-long.txt" 2>&1 ||
    fail "import long: $(tail -5 "$work/import-long.txt")"
"$memfail" datasets validate "$work/med/halumem.jsonl" "$work/long/halumem.jsonl" > "$work/validate.txt" 2>&1 ||
    fail "validate: $(head -5 "$work/validate.txt")"
[ "$(grep -c ', 0 violation(s)' "$work/validate.txt")" = 2 ] || fail "violations: $(cat "$work/validate.txt")"

"$memfail" run --system verbatim --datasets "$work/med/halumem.jsonl" --k 1,20 --out "$work/r.db" -q > "$work/run.txt" 2>&1 ||
    fail "verbatim offline: $(tail -5 "$work/run.txt")"
"$memfail" report "$work/r.db" > "$work/report.txt" 2>&1 || fail "report: $(tail -3 "$work/report.txt")"
for type in "Basic Fact Recall" "Dynamic Update" "Multi-hop Inference" "Memory Conflict" "Generalization & Application"; do
    grep -Eq "halumem +20 +question type +$type " "$work/report.txt" ||
        fail "no slice row for '$type' at k=20: $(grep -A14 '^Slices, run' "$work/report.txt")"
done
# At k=20: of the four probes whose facts are placed in one message, three are retrieved and one is
# not (its question shares no word with the message: lexical retrieval never ranks it); the four
# whose facts are placed only among their sessions' messages are the judge's (unverified), never
# a success; no probe is an error.
grep -Eq "^halumem +20 +8 +3 +37\.5 " "$work/report.txt" || fail "k=20 success row: $(grep -E '^halumem' "$work/report.txt")"
grep -Eq "^halumem +20 +8 +3 .* 0 +0 +4 +1 +0 +3 " "$work/report.txt" || fail "k=20 stages: $(grep -E '^halumem' "$work/report.txt")"

# A file with a broken line: the other users are imported and written, the import says what it
# skipped and exits 2.
{ head -1 "$fixtures/halumem/halumem-medium-fixture.jsonl"; echo '{"uuid": "broken", "sessions": ['; tail -1 "$fixtures/halumem/halumem-medium-fixture.jsonl"; } > "$work/broken.jsonl"
rc=0
"$memfail" datasets import --from halumem "$work/broken.jsonl" -o "$work/broken" > "$work/broken.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "an import that skipped a user exited $rc, not 2: $(tail -3 "$work/broken.txt")"
grep -q "skipped 1 element(s)" "$work/broken.txt" || fail "the skipped user is not counted: $(cat "$work/broken.txt")"
grep -q "line 2: not imported" "$work/broken.txt" || fail "the skipped line is not named: $(cat "$work/broken.txt")"
[ "$(wc -l < "$work/broken/halumem.jsonl")" = 2 ] || fail "the importable users were not written"
grep -q '"elements_skipped": 1' "$work/broken/manifest.json" || fail "the manifest does not count the skipped user"
echo "halumem offline: ok"
