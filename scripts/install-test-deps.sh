#!/usr/bin/env bash
# Installs what the test suites need beyond npm packages, idempotently:
#   Debian: neovim and emacs-nox with elpa-eglot (independent LSP clients), chromium (drives code-server), libkrb5-dev (builds
#   code-server's native modules), postgresql (the history store tests start a throwaway cluster,
#   test/support/postgres.ts); then Node 24 + code-server in .cache/host via setup-host.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for package in neovim emacs-nox elpa-eglot chromium libkrb5-dev postgresql; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-test-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -d node_modules ]; then
  echo "install-test-deps: npm ci"
  npm ci --no-audit --no-fund
fi

bash scripts/setup-host.sh
