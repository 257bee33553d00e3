#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `memfail conformance` on the Python adapter example (exec: transport) passes with a full table,
# a built-in system passes in-process, and failures and usage errors give their exit codes.
# Usage: conformance_python.sh MEMFAIL FIXTURES_DIR
set -euo pipefail
memfail=$1
fixtures=$2
root=$(cd "$fixtures/../.." && pwd)
adapter="$root/examples/adapters/python/memfail_adapter.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

test -f "$adapter" || fail "no adapter example at $adapter"
# Like the other peer checks: exit 77 (skip) without python3, a failure when CI requires peers.
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
  if [ "${MEMFAIL_REQUIRE_PEERS:-0}" = 1 ]; then fail "python3 >= 3.9 is not installed (MEMFAIL_REQUIRE_PEERS=1)"; fi
  echo "SKIP: python3 >= 3.9 is not installed" >&2
  exit 77
fi

# The example passes every check; the table lists each one.
"$memfail" conformance --system "exec:cmd=python3 \"$adapter\",timeout=20s" > "$work/table.txt" 2> "$work/err.txt" \
  || { cat "$work/table.txt" "$work/err.txt"; fail "the python example does not conform"; }
grep -q "system 'python-example'" "$work/table.txt" || fail "no system name in the title"
for check in "hello" "round trip (k=3)" "k=1 respected" "stable ids: all_memories" "sources echo message ids" \
             "optional op: history" "malformed: unknown op" "reset empties (end)"; do
  grep -F "$check" "$work/table.txt" | grep -q " pass " || { cat "$work/table.txt"; fail "check '$check' did not pass"; }
done
grep -q "^PASSED: 19 passed, 0 failed, 0 skipped" "$work/table.txt" || { cat "$work/table.txt"; fail "summary line"; }
# The adapter's stderr reaches memfail's stderr, prefixed.
grep -q "^\[adapter\] " "$work/err.txt" || fail "adapter stderr was not passed through with its prefix"

# JSON output for scripts.
"$memfail" conformance --system "exec:cmd=python3 \"$adapter\"" --format json > "$work/report.json" 2> /dev/null
python3 - "$work/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["passed"] is True, report
assert report["system"] == "python-example", report["system"]
assert len(report["checks"]) == 19, len(report["checks"])
assert all(c["status"] == "pass" for c in report["checks"]), report["checks"]
PY

# A built-in system is checked in-process and passes too.
"$memfail" conformance --system verbatim:retriever=hashed --format markdown > "$work/verbatim.md" \
  || { cat "$work/verbatim.md"; fail "verbatim does not conform"; }
grep -q "^| hello | pass |" "$work/verbatim.md" || fail "markdown table"

# A system that forgets everything fails, with exit code 1.
set +e
"$memfail" conformance --system none > "$work/none.txt" 2>&1
rc=$?
"$memfail" conformance --system 'exec:cmd=python3 -c "print(42)"' > "$work/garbage.txt" 2>&1
rc_garbage=$?
"$memfail" conformance --system verbatm > "$work/typo.txt" 2>&1
rc_typo=$?
"$memfail" conformance > "$work/missing.txt" 2>&1
rc_missing=$?
set -e
test "$rc" -eq 1 || fail "none: expected exit 1, got $rc"
grep -q "round trip (k=3) *fail" "$work/none.txt" || { cat "$work/none.txt"; fail "none: round trip should fail"; }
test "$rc_garbage" -eq 1 || fail "an adapter printing garbage: expected exit 1, got $rc_garbage"
grep -q "hello *fail" "$work/garbage.txt" || { cat "$work/garbage.txt"; fail "garbage: hello should fail"; }
test "$rc_typo" -eq 2 || fail "unknown system: expected exit 2, got $rc_typo"
grep -q "did you mean 'verbatim'" "$work/typo.txt" || fail "unknown system: no hint"
test "$rc_missing" -eq 2 || fail "missing --system: expected exit 2, got $rc_missing"

echo "conformance python: ok"
