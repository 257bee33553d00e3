#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Mem0 adapter's one dependency (mem0ai, pinned in package-lock.json) into
# node_modules/ beside this script. Needs node >= 18.19 and npm; reaches only the npm registry.
# better-sqlite3 (Mem0's "memory" vector store) has no prebuilt binary it can fetch offline, so it
# compiles from source: a C++ compiler, make and python3 must be present. That takes ~2-3 minutes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
command -v node >/dev/null || { echo "install.sh: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is not installed" >&2; exit 1; }
# node-gyp otherwise downloads Node's headers; use the ones the distribution's nodejs ships.
if [ -z "${npm_config_nodedir:-}" ] && [ "$(npm config get nodedir 2>/dev/null)" = "undefined" ] \
   && [ -f /usr/include/node/node.h ]; then
    export npm_config_nodedir=/usr
fi
start=$(date +%s)
if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund
else
    npm install --no-audit --no-fund
fi
node -e 'import("mem0ai/oss").then(() => console.log("mem0ai loads"))'
echo "install.sh: done in $(( $(date +%s) - start )) s"
