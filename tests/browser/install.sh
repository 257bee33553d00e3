#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what the browser test needs: Debian's chromium (apt, when run as root or with sudo) and
# playwright-core (pinned in package-lock.json; it drives the installed Chromium and downloads no
# browser of its own). Needs node and npm; reaches only Debian's mirrors and the npm registry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
if ! command -v chromium >/dev/null; then
    sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
command -v node >/dev/null || { echo "install.sh: node is not installed" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is not installed" >&2; exit 1; }
# playwright-core never downloads browsers; say so anyway in case a later version changes its mind.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
npm ci --no-audit --no-fund
chromium --version
node -e 'import("playwright-core").then(() => console.log("playwright-core loads"))'
