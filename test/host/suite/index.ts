/**
 * The in-host test suite's entry: VS Code loads this module (as `extensionTestsPath`) inside the
 * extension host and calls `run()`. The same entry serves both launchers:
 *   - test/host/run-code-server.mjs (code-server + headless Chromium; what CI runs here), and
 *   - test/host/runTestElectron.ts (@vscode/test-electron; desktop VS Code where it can be downloaded).
 *
 * Console output in the extension host reaches the launcher (code-server forwards it to the page's
 * `codeAutomationLog`), so mocha's spec reporter is the log, and the RESULT_MARKER line carries the
 * counts the launcher prints as `host: N passed, N failed`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';

/** A line the launcher looks for; followed by JSON `{ passed, failed, pending }`. */
export const RESULT_MARKER = 'toolpin-host-result:';
/** Printed the moment a test fails, followed by its title: the launcher takes a screenshot then. */
export const FAIL_MARKER = 'toolpin-host-fail:';

export function run(): Promise<void> {
  // Mocha's reporters log printf-style (`console.log('%s%s', indent, title)`). The workbench
  // forwards console arguments joined with commas, unformatted: format here, log one string.
  Mocha.reporters.Base.consoleLog = (...data: unknown[]) => console.log(format(...data));
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    // Per test: the first test waits for the extension to activate and its server to start.
    timeout: 30_000,
    // A test can be slow to start on a loaded 2-core machine; do not flag it as slow.
    slow: 10_000,
  });
  // Lets a developer run part of the suite: TOOLPIN_HOST_GREP="diagnostic" npm run test:host.
  const grep = process.env.TOOLPIN_HOST_GREP;
  if (grep) mocha.grep(grep);

  // One workspace and one language server serve every file, and some files change what later
  // ones see (drift.test moves the fixture server on): a fixed order, then any other file by name.
  // history.test runs after the files that move the server and re-pin (it reads the live hash from
  // the control file) and before untrusted.test, whose last test checks no server was ever started.
  // agreement.test re-pins its own fixture only; it runs after the files that move the server.
  const order = ['extension.test.js', 'drift.test.js', 'commands.test.js', 'agreement.test.js', 'history.test.js', 'untrusted.test.js'];
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  // The first-open test needs a fresh window on its own folder: run-code-server.mjs opens one with
  // TOOLPIN_HOST_SUITE=first-open, which loads that file alone; every other window never loads it.
  const firstOpen = 'firstOpen.test.js';
  const wanted = (name: string) => (process.env.TOOLPIN_HOST_SUITE === 'first-open' ? name === firstOpen : name !== firstOpen);
  const files = fs
    .readdirSync(__dirname)
    .filter((name) => name.endsWith('.test.js') && wanted(name))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  for (const name of files) mocha.addFile(path.join(__dirname, name));

  return new Promise<void>((resolve, reject) => {
    if (files.length === 0) {
      reject(new Error(`no *.test.js files in ${__dirname}; run "npm run build" first`));
      return;
    }
    try {
      const runner = mocha.run((failures) => {
        const stats = runner.stats ?? { passes: 0, failures, pending: 0 };
        const summary = { passed: stats.passes, failed: failures, pending: stats.pending };
        console.log(`${RESULT_MARKER} ${JSON.stringify(summary)}`);
        if (failures > 0) reject(new Error(`${failures} host test(s) failed`));
        else resolve();
      });
      runner.on('fail', (test) => console.log(`${FAIL_MARKER} ${test.fullTitle()}`));
    } catch (error) {
      // A test file that throws while loading lands here: count it as a failed run.
      console.error(error);
      console.log(`${RESULT_MARKER} ${JSON.stringify({ passed: 0, failed: 1, pending: 0 })}`);
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
