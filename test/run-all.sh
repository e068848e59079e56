#!/usr/bin/env bash
# Every test suite, in pyramid order, after installing what they need. Each step runs even when
# an earlier one failed, so one run shows everything; the exit status is non-zero if any failed.
# The last line is the total in the plain "N passed, N failed" form.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh || { echo "install-test-deps failed"; echo "0 passed, 1 failed"; exit 1; }

logs=$(mktemp -d)
passed=0
failed=0
failed_steps=()

# count_node LOG: adds the node test runner's pass/fail totals from a spec-reporter log.
count_node() {
  local p f
  p=$(grep -E '^ℹ pass [0-9]+' "$1" | tail -n 1 | awk '{print $3}')
  f=$(grep -E '^ℹ fail [0-9]+' "$1" | tail -n 1 | awk '{print $3}')
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
}

step() {
  local name=$1; shift
  echo
  echo "━━━ $name: $*"
  local started=$SECONDS
  "$@" 2>&1 | tee "$logs/$name.log"
  local status=${PIPESTATUS[0]}
  echo "━━━ $name: exit $status in $((SECONDS - started)) s"
  if [ "$status" -ne 0 ]; then failed_steps+=("$name"); fi
  return "$status"
}

step build npm run build || { echo "build failed: nothing else can run"; echo "0 passed, 1 failed"; exit 1; }
step typecheck npm run typecheck; [ $? -eq 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))
step lint npm run lint; [ $? -eq 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))

step node-tests node scripts/run-node-tests.mjs out/test/unit out/test/history out/test/mcp out/test/lsp out/test/cli out/test/nvim
count_node "$logs/node-tests.log"

step grammar npm run test:grammar
grammar_status=$?
g_pass=$(grep -cE '^✓' "$logs/grammar.log"); g_fail=$(grep -cE '^✖' "$logs/grammar.log")
passed=$((passed + g_pass)); failed=$((failed + g_fail))
# A runner that failed without naming a failing file still counts as one failure.
if [ "$grammar_status" -ne 0 ] && [ "$g_fail" -eq 0 ]; then failed=$((failed + 1)); fi

count_host() {
  local line
  line=$(grep -E '^host: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  passed=$((passed + $(echo "$line" | awk '{print $2}'))); failed=$((failed + $(echo "$line" | awk '{print $4}')))
}
step host npm run test:host
count_host "$logs/host.log"
step host-untrusted npm run test:host:untrusted
count_host "$logs/host-untrusted.log"
step package npm run package; [ $? -eq 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))
if [[ " ${failed_steps[*]} " != *" package "* ]]; then
  # What the Extensions view shows from the installed package: README images, icon, size.
  step vsix node scripts/run-node-tests.mjs out/test/package
  count_node "$logs/vsix.log"
  step host-vsix npm run test:host:vsix
  count_host "$logs/host-vsix.log"
fi

echo
if [ "${#failed_steps[@]}" -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "${passed} passed, ${failed} failed"
[ "${#failed_steps[@]}" -eq 0 ]
