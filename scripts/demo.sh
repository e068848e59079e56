#!/usr/bin/env bash
# The main job: build, then check the example workspace against real MCP servers (stdio servers
# from npm, a bundled server that has drifted, and an HTTP server that is down).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build --silent || exit 1
echo "toolpin check --workspace examples examples"
echo
node dist/cli.js check --workspace examples examples
status=$?
echo
case $status in
  0) echo "exit 0: every pin verified." ;;
  1) echo "exit 1: drift or a missing tool was found — the example workspace is built to show exactly that." ;;
  2) echo "exit 2: nothing drifted, but something could not be verified." ;;
  *) echo "exit $status: toolpin failed."; exit "$status" ;;
esac
echo "Machine-readable: node dist/cli.js check --workspace examples examples --format json (or sarif)"
echo
echo "toolpin history --workspace examples --stale    (which executions ran at a schema the server no longer serves)"
echo
node dist/cli.js history --workspace examples --stale
echo
# The demo succeeds when toolpin ran and reported; the example is meant to contain drift.
[ "$status" -le 2 ]
