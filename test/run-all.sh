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

# Tests that did not run, by step: a suite that cannot run must fail loudly, never shrink the total.
not_run=()

# count_node STEP LOG: adds the node test runner's totals from a spec-reporter log. Skipped, todo
# and cancelled tests count as failed (and fail the step): a test that did not run proves nothing,
# and dropping it would only make the total smaller. A log without totals (the runner itself
# failed) counts as one failure.
count_node() {
  local step=$1 log=$2 p f s t c
  p=$(grep -E '^ℹ pass [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
  f=$(grep -E '^ℹ fail [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
  s=$(grep -E '^ℹ skipped [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
  t=$(grep -E '^ℹ todo [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
  c=$(grep -E '^ℹ cancelled [0-9]+' "$log" | tail -n 1 | awk '{print $3}')
  if [ -z "$p" ] && [ -z "$f" ]; then
    echo "━━━ $step: the test runner printed no totals; counted as 1 failed"
    failed=$((failed + 1)); not_run+=("$step: no totals"); mark_failed "$step"
    return
  fi
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${s:-0} + ${t:-0} + ${c:-0}))
  if [ $((${s:-0} + ${t:-0} + ${c:-0})) -gt 0 ]; then
    echo "━━━ $step: ${s:-0} skipped, ${t:-0} todo, ${c:-0} cancelled, counted as failed:"
    # The spec reporter marks a skipped test with "﹣" and a todo test with "# TODO".
    grep -E '^[[:space:]]*﹣ |# TODO|cancelled' "$log" | grep -vE '^ℹ' | sed 's/^/    /' || true
    not_run+=("$step: ${s:-0} skipped, ${t:-0} todo, ${c:-0} cancelled")
    mark_failed "$step"
  fi
}

# mark_failed STEP: the step fails the run, once.
mark_failed() {
  if [[ " ${failed_steps[*]} " != *" $1 "* ]]; then failed_steps+=("$1"); fi
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

step node-tests node scripts/run-node-tests.mjs out/test/unit out/test/history out/test/mcp out/test/lsp out/test/cli out/test/nvim out/test/emacs out/test/store
count_node node-tests "$logs/node-tests.log"

step grammar npm run test:grammar
grammar_status=$?
g_pass=$(grep -cE '^✓' "$logs/grammar.log"); g_fail=$(grep -cE '^✖' "$logs/grammar.log")
passed=$((passed + g_pass)); failed=$((failed + g_fail))
# A runner that failed without naming a failing file still counts as one failure.
if [ "$grammar_status" -ne 0 ] && [ "$g_fail" -eq 0 ]; then failed=$((failed + 1)); fi

# count_host LOG: adds the launcher's `host: N passed, N failed` line. The suite's skipped tests
# are reported, not counted: each trust mode skips the other mode's tests by design, and both
# modes run here, so each skipped test ran in the other window.
host_skipped=()
count_host() {
  local line skipped
  line=$(grep -E '^host: [0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  passed=$((passed + $(echo "$line" | awk '{print $2}'))); failed=$((failed + $(echo "$line" | awk '{print $4}')))
  skipped=$(grep -oE 'suite: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$1" | tail -n 1 | awk '{print $6}')
  host_skipped+=("$(basename "$1" .log): ${skipped:-unknown} skipped")
}
step host npm run test:host
count_host "$logs/host.log"
step host-untrusted npm run test:host:untrusted
count_host "$logs/host-untrusted.log"
step package npm run package; [ $? -eq 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))
if [[ " ${failed_steps[*]} " != *" package "* ]]; then
  # What the Extensions view shows from the installed package: README images, icon, size.
  step vsix node scripts/run-node-tests.mjs out/test/package
  count_node vsix "$logs/vsix.log"
  step host-vsix npm run test:host:vsix
  count_host "$logs/host-vsix.log"
fi

# The same in-host suite in desktop VS Code, where one is installed (test/host/runTestElectron.ts);
# CI has none and runs the suite in code-server above.
if [ -n "${VSCODE_EXECUTABLE_PATH:-}" ]; then
  step electron npm run test:electron; [ $? -eq 0 ] && passed=$((passed + 1)) || failed=$((failed + 1))
else
  echo
  echo "━━━ electron: not run: VSCODE_EXECUTABLE_PATH is not set (the in-host suite ran in code-server above)"
fi

echo
if [ "${#host_skipped[@]}" -gt 0 ]; then
  echo "host suites, tests of the other trust mode skipped: ${host_skipped[*]}"
fi
if [ "${#not_run[@]}" -gt 0 ]; then
  echo "tests that did not run (counted as failed): ${not_run[*]}"
fi
if [ "${#failed_steps[@]}" -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "${passed} passed, ${failed} failed"
[ "${#failed_steps[@]}" -eq 0 ]
