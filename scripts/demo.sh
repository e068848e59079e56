#!/usr/bin/env bash
# The main job (the example is the project's own, so the run trusts it with --trust): build, then check the example workspace against real MCP servers (the npm servers
# server-everything and server-memory and a server that has drifted, which the build bundles into
# examples/servers/bundled/, and an HTTP server that is down). README.md "## The demo" shows this
# output, and test/cli/readmeSample.test.ts keeps it equal to what these commands print.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build --silent || exit 1
echo "toolpin check --trust --workspace examples examples"
echo
node dist/cli.js check --trust --workspace examples examples
status=$?
echo
case $status in
  0) echo "exit 0: every pin verified." ;;
  1) echo "exit 1: drift or a missing tool was found — the example workspace is built to show exactly that." ;;
  2) echo "exit 2: nothing drifted, but something could not be verified." ;;
  *) echo "exit $status: toolpin failed."; exit "$status" ;;
esac
echo "Machine-readable: node dist/cli.js check --trust --workspace examples examples --format json (or sarif)"
echo
echo "toolpin history --trust --workspace examples --stale    (which executions ran at a schema the server no longer serves)"
echo
node dist/cli.js history --trust --workspace examples --stale
echo
echo "The example runs from any folder (examples/README.md): cp -r examples /tmp/toolpin-example && node dist/cli.js check --trust --workspace /tmp/toolpin-example /tmp/toolpin-example"
# The demo succeeds when toolpin ran and reported; the example is meant to contain drift.
[ "$status" -le 2 ]
