#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs/CLI.md must equal what scripts/cli-doc prints from the current binary.
set -euo pipefail
memfail=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! diff -u "$root/docs/CLI.md" <(bash "$root/scripts/cli-doc" "$memfail"); then
  echo "FAIL: docs/CLI.md is out of date; run: scripts/cli-doc $memfail > docs/CLI.md" >&2
  exit 1
fi
echo "cli doc: up to date"
