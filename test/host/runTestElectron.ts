/**
 * Runs the in-host suite (test/host/suite) in desktop VS Code through @vscode/test-electron.
 *
 * For machines with a desktop VS Code (a contributor's laptop). CI has none and runs the same
 * suite inside code-server (test/host/run-code-server.mjs); test/run-all.sh runs this launcher
 * only when VSCODE_EXECUTABLE_PATH is set. Without a VS Code to run, the launcher fails at once
 * with a message saying what to set; it never hangs and never reports success for a suite it did
 * not run.
 *
 *   npm run build && VSCODE_EXECUTABLE_PATH=<path of the code executable> npm run test:electron
 *   TOOLPIN_VSCODE_DOWNLOAD=1 npm run test:electron     (downloads VS Code; needs access to Microsoft's servers)
 *   TOOLPIN_VSCODE_DOWNLOAD=1 TOOLPIN_VSCODE_VERSION=stable npm run test:electron   (default: the version code-server embeds)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

/** The VS Code that code-server 4.139.1 embeds, so both launchers test against the same workbench. */
const DEFAULT_VSCODE_VERSION = '1.139.1';
/** Whole run, download included. */
const OVERALL_TIMEOUT_MS = 10 * 60_000;
/** Give up a download that receives no data for this long. */
const DOWNLOAD_IDLE_TIMEOUT_MS = 20_000;

/** Profile settings shared in spirit with run-code-server.mjs (see there for why each matters). */
const USER_SETTINGS = {
  'files.autoSave': 'off',
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  'chat.disableAIFeatures': true,
  'git.enabled': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'update.mode': 'none',
};

/**
 * Why this machine cannot run the suite in desktop VS Code, or undefined when it can: either
 * VSCODE_EXECUTABLE_PATH names an executable file, or TOOLPIN_VSCODE_DOWNLOAD=1 allows a download.
 */
function missingVsCode(env: NodeJS.ProcessEnv): string | undefined {
  const executable = env.VSCODE_EXECUTABLE_PATH;
  if (executable) {
    try {
      fs.accessSync(executable, fs.constants.X_OK);
      if (!fs.statSync(executable).isFile()) return `VSCODE_EXECUTABLE_PATH=${executable} is not a file`;
      return undefined;
    } catch {
      return `VSCODE_EXECUTABLE_PATH=${executable} is not an executable file`;
    }
  }
  if (env.TOOLPIN_VSCODE_DOWNLOAD === '1') return undefined;
  return 'no desktop VS Code to run: set VSCODE_EXECUTABLE_PATH to its executable (the `code` binary of a desktop install), or TOOLPIN_VSCODE_DOWNLOAD=1 to download one';
}

async function main(): Promise<number> {
  // out/test/host/runTestElectron.js → repository root.
  const root = path.resolve(__dirname, '..', '..', '..');
  const missing = missingVsCode(process.env);
  if (missing) {
    console.error(`test:electron: FAILED, the suite did not run: ${missing}.\ntest:electron: the same suite runs in code-server with: npm run test:host`);
    return 1;
  }
  const extensionTestsPath = path.join(root, 'out', 'test', 'host', 'suite', 'index.js');
  if (!fs.existsSync(extensionTestsPath) || !fs.existsSync(path.join(root, 'dist', 'client.js'))) {
    console.error('test:electron: out/test/host/suite/index.js or dist/client.js is missing; run "npm run build" first');
    return 1;
  }

  // A fresh run folder: the workspace is a copy, so tests never modify the committed fixture.
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const runsDir = path.join(root, '.cache', 'electron', 'runs');
  const runDir = path.join(runsDir, stamp);
  if (fs.existsSync(runsDir)) {
    const old = fs.readdirSync(runsDir).sort();
    for (const name of old.slice(0, Math.max(0, old.length - 4))) fs.rmSync(path.join(runsDir, name), { recursive: true, force: true });
  }
  const workspace = path.join(runDir, 'workspace');
  const userDataDir = path.join(runDir, 'user-data');
  const extensionsDir = path.join(runDir, 'extensions');
  fs.cpSync(path.join(root, 'test', 'host', 'workspace'), workspace, { recursive: true });
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.mkdirSync(extensionsDir, { recursive: true });
  fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'), JSON.stringify(USER_SETTINGS, null, 2));

  const version = process.env.TOOLPIN_VSCODE_VERSION || DEFAULT_VSCODE_VERSION;
  const vscodeExecutablePath = process.env.VSCODE_EXECUTABLE_PATH || undefined;
  console.log(`test:electron: ${vscodeExecutablePath ? `VS Code at ${vscodeExecutablePath}` : `VS Code ${version} (downloaded)`}, run folder ${path.relative(root, runDir)}`);

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result after ${OVERALL_TIMEOUT_MS / 1000} s`)), OVERALL_TIMEOUT_MS);
  });
  try {
    const code = await Promise.race([
      runTests({
        // With an executable, no download happens and `version` is not used.
        ...(vscodeExecutablePath ? { vscodeExecutablePath } : { version }),
        timeout: DOWNLOAD_IDLE_TIMEOUT_MS,
        cachePath: path.join(root, '.vscode-test'),
        extensionDevelopmentPath: root,
        extensionTestsPath,
        launchArgs: [
          workspace,
          '--disable-extensions',
          '--disable-workspace-trust',
          '--skip-welcome',
          '--skip-release-notes',
          '--disable-telemetry',
          `--user-data-dir=${userDataDir}`,
          `--extensions-dir=${extensionsDir}`,
        ],
        // Read by the suite: it then checks that the extension is loaded from this repository.
        extensionTestsEnv: {
          TOOLPIN_HOST_MODE: 'electron',
          TOOLPIN_HOST_EXTENSION_PATH: root,
          ...(process.env.TOOLPIN_HOST_GREP ? { TOOLPIN_HOST_GREP: process.env.TOOLPIN_HOST_GREP } : {}),
        },
      }),
      timeout,
    ]);
    return code;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/download|fetch|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT|getaddrinfo|socket|network|version/i.test(message)) {
      console.error(
        `test:electron: could not get VS Code ${version}: ${message}\n` +
          'test:electron: this launcher downloads desktop VS Code from Microsoft\'s servers. On a machine\n' +
          'test:electron: without that access, run the same suite in code-server: npm run test:host',
      );
    } else {
      console.error(`test:electron: failed: ${message}`);
    }
    return 1;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
