#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HTML report in a real browser: runs two systems on the five datasets (verbatim at k 1 and 5,
# the oracle at k 5) into one results file and a named sentence-chunked verbatim into another,
# writes one report.html over both files, and has headless Chromium (through playwright-core)
# check that it loads with no network and no console error, shows every section with charts, that
# its probe browser filters and opens a probe, and that its screenshot is not blank. Then a small
# write-integrity run (writ, one scenario per category, native and oracle modes) gets its own
# report, whose "Write integrity" section and probe memory checks are checked the same way.
# Skips (exit 77) when chromium or playwright-core is missing: run tests/browser/install.sh first.
# Usage: report_in_browser.sh MEMFAIL [OUT_DIR]  (OUT_DIR keeps report.html and report.png)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
memfail=${1:?usage: report_in_browser.sh MEMFAIL [OUT_DIR]}
skip() {
    if [ "${MEMFAIL_REQUIRE_PEERS:-0}" = 1 ]; then echo "FAIL (MEMFAIL_REQUIRE_PEERS=1): $*" >&2; exit 1; fi
    echo "SKIP: $*" >&2
    exit 77
}
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || skip "$chromium is not installed (tests/browser/install.sh installs Debian's chromium)"
command -v node >/dev/null || skip "node is not installed"
[ -d "$here/node_modules/playwright-core" ] || skip "$here/node_modules is absent; run $here/install.sh first"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${2:-$work}
mkdir -p "$out"
"$memfail" datasets generate --out "$work/data" --seed 7 >/dev/null
"$memfail" run --system verbatim --datasets all --data-dir "$work/data" --k 1,5 --out "$work/r.db" >/dev/null 2>&1
"$memfail" run --system oracle --datasets all --data-dir "$work/data" --k 5 --out "$work/r.db" >/dev/null 2>&1
# A second results file, and a run with a --name: one report over both files.
"$memfail" run --system verbatim:chunk=sentence,retriever=hashed --name sentences --datasets all --data-dir "$work/data" \
    --k 5 --out "$work/s.db" >/dev/null 2>&1
"$memfail" report "$work/r.db" "$work/s.db" --html "$out/report.html" >/dev/null
[ -s "$out/report.html" ] || { echo "FAIL: no report written" >&2; exit 1; }
echo "report: $out/report.html ($(stat -c %s "$out/report.html") bytes)"
CHROMIUM="$chromium" node "$here/check_report.mjs" "$out/report.html" "$out/report.png"

"$memfail" datasets generate writ --scenarios 1 --out "$work/writ" >/dev/null 2>&1
"$memfail" run --system verbatim --datasets writ --data-dir "$work/writ" --modes native,oracle --k 1,5 \
    --out "$work/w.db" >/dev/null 2>&1
"$memfail" report "$work/w.db" --html "$out/writ.html" >/dev/null
[ -s "$out/writ.html" ] || { echo "FAIL: no write-integrity report written" >&2; exit 1; }
echo "write-integrity report: $out/writ.html ($(stat -c %s "$out/writ.html") bytes)"
CHROMIUM="$chromium" node "$here/check_integrity.mjs" "$out/writ.html" "$out/writ-integrity.png"
