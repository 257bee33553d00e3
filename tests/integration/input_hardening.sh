#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Input that cannot escape or crash: hostile ids, deep nesting, huge numbers, a repeated --k, a
# mistyped --data-dir and an import that cannot finish. Usage: input_hardening.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$memfail" datasets generate --out "$work/gen" long_hop > /dev/null 2>&1

# An absolute id and "../../../victim" are refused with file:line: field, by validate and by run.
python3 - "$work/gen/long_hop.jsonl" "$work" <<'PY'
import json, sys
src, work = sys.argv[1], sys.argv[2]
s = json.loads(open(src).readline())
for name, sid in (("abs", work + "/victim-abs"), ("rel", "../../../victim")):
    s["id"] = sid
    open(f"{work}/{name}.jsonl", "w").write(json.dumps(s) + "\n")
deep = json.loads(open(src).readline())
line = json.dumps(deep)
open(f"{work}/deep.jsonl", "w").write(line[:-1] + ', "deep": ' + "[" * 60000 + "]" * 60000 + "}\n")
big = json.loads(open(src).readline())
big["probes"][2]["meta"]["hops"] = 0  # replaced textually below
line = json.dumps(big).replace('"hops": 0', '"hops": 1e999', 1)
open(f"{work}/huge.jsonl", "w").write(line + "\n")
PY
for name in abs rel; do
  set +e; "$memfail" datasets validate "$work/$name.jsonl" > "$work/v.txt" 2>&1; code=$?; set -e
  [ $code -eq 1 ] || { cat "$work/v.txt"; fail "validate accepted the $name id (exit $code)"; }
  grep -q "^$work/$name.jsonl:1: id: scenario id " "$work/v.txt" || { cat "$work/v.txt"; fail "no file:line: id for $name"; }
  set +e; "$memfail" run --system verbatim --quiet --out "$work/runs/$name.db" -d "$work/$name.jsonl" > "$work/r.txt" 2>&1; code=$?; set -e
  [ $code -ne 0 ] || fail "run accepted the $name id"
  grep -q "$name.jsonl:1: id:" "$work/r.txt" || { cat "$work/r.txt"; fail "run did not name file:line: id for $name"; }
done
test ! -e "$work/victim-abs.sqlite" || fail "an absolute id wrote outside the run folder"
test ! -e "$work/victim.sqlite" || fail "a relative id wrote outside the run folder"

# 60,000 levels of nesting: an error naming the line, no crash, from validate, show and run.
for cmd in "datasets validate" "datasets show" "run --system verbatim --quiet --out $work/runs/deep.db -d"; do
  set +e
  # shellcheck disable=SC2086
  "$memfail" $cmd "$work/deep.jsonl" > "$work/d.txt" 2>&1; code=$?
  set -e
  [ $code -ge 1 ] && [ $code -lt 64 ] || { cat "$work/d.txt"; fail "'$cmd' on deep nesting exited $code"; }
  grep -q "deep.jsonl:1: nesting deeper than 64" "$work/d.txt" || { cat "$work/d.txt"; fail "'$cmd': no nesting error"; }
done

# A number too large for a double: file:line: field, not "internal error".
set +e; "$memfail" datasets validate "$work/huge.jsonl" > "$work/h.txt" 2>&1; set -e
grep -q "huge.jsonl:1: probes\[2\].meta.hops: value out of range" "$work/h.txt" || { cat "$work/h.txt"; fail "huge number not reported with its field"; }
grep -qi "internal" "$work/h.txt" && fail "huge number gave an internal error"

# --k 5,5 is refused before a run is created.
set +e; "$memfail" run --system verbatim --quiet --k 5,5 --out "$work/k.db" -d long_hop > "$work/k.txt" 2>&1; code=$?; set -e
[ $code -ne 0 ] || fail "--k 5,5 was accepted"
grep -q -- "--k lists 5 twice" "$work/k.txt" || { cat "$work/k.txt"; fail "no clear --k message"; }
grep -qi "UNIQUE" "$work/k.txt" && fail "raw SQLite error for --k 5,5"
test ! -e "$work/k.db" || fail "--k 5,5 left a results file"

# A --data-dir that does not exist is an error, not freshly generated data.
set +e; "$memfail" run --system verbatim --quiet --data-dir "$work/typo" --out "$work/t.db" -d long_hop > "$work/t.txt" 2>&1; code=$?; set -e
[ $code -ne 0 ] || fail "--data-dir to a missing folder was accepted"
grep -q "typo: --data-dir names a folder that does not exist" "$work/t.txt" || { cat "$work/t.txt"; fail "no clear --data-dir message"; }
test ! -e "$work/t.db" || fail "a missing --data-dir left a results file"

# Imports are all or nothing: when one file cannot be put in place, the folder is left as it was
# (no new dataset file, no manifest) and no temporary folder remains.
mkdir -p "$work/imp"
echo keep > "$work/imp/other.txt"
mkdir "$work/imp/long_hop.jsonl"   # a folder where a dataset file must go
set +e; "$memfail" datasets import --from memfail-csv "$fixtures/memfail-csv" --out "$work/imp" > "$work/i.txt" 2>&1; code=$?; set -e
[ $code -ne 0 ] || { cat "$work/i.txt"; fail "the import reported success"; }
[ "$(cd "$work/imp" && ls -A | sort | tr '\n' ' ')" = "long_hop.jsonl other.txt " ] || { ls -la "$work/imp"; fail "a failed import changed the output folder"; }
ls -A "$work" | grep -q partial && fail "a failed import left its temporary folder"
# A fresh import appears whole, manifest included.
"$memfail" datasets import --from memfail-csv "$fixtures/memfail-csv" --out "$work/imp2" > /dev/null 2>&1 || fail "import failed"
test -f "$work/imp2/manifest.json" || fail "no manifest after import"
ls -A "$work" | grep -q partial && fail "a finished import left its temporary folder"

# A row with invalid UTF-8 is skipped with its file and row named; the rest imports.
cp -r "$fixtures/memfail-csv" "$work/csv"
f=$(ls "$work/csv"/*.csv | head -1)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")
lines[1] = lines[1].replace(b"a", b"\xff", 1)
open(p, "wb").write(b"\n".join(lines))
PY
# A skipped row makes the import exit 2 (the rest written, the count last); --allow-partial accepts it.
set +e; "$memfail" datasets import --from memfail-csv "$work/csv" --out "$work/imp3" > "$work/u.txt" 2>&1; code=$?; set -e
[ $code -eq 2 ] || { cat "$work/u.txt"; fail "import with one bad row exited $code, not 2"; }
tail -1 "$work/u.txt" | grep -q "the import is incomplete: skipped 1 row" || { cat "$work/u.txt"; fail "the skip count is not the last line"; }
set +e; "$memfail" datasets import --from memfail-csv "$work/csv" --out "$work/imp4" --allow-partial > "$work/v.txt" 2>&1; code=$?; set -e
[ $code -eq 0 ] || { cat "$work/v.txt"; fail "import with one bad row and --allow-partial exited $code"; }
grep -q "$(basename "$f").*not valid UTF-8" "$work/u.txt" || { cat "$work/u.txt"; fail "no file:row UTF-8 error"; }
grep -qi "internal error" "$work/u.txt" && fail "internal error on invalid UTF-8"
test -f "$work/imp3/manifest.json" || fail "no manifest after an import with a skipped row"
echo "input hardening: ok"
