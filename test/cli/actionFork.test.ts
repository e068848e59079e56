/**
 * The GitHub Action's entry script (scripts/action-entry.mjs) on code from forks and on inputs
 * that look like options, end to end: the script runs the built CLI on a folder whose connector
 * starts the fixture server, which writes a marker file when it starts, so "nothing ran" is
 * checked on the disk. The event payloads are the ones GitHub writes to GITHUB_EVENT_PATH.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const entry = path.join(root, 'scripts', 'action-entry.mjs');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const SECRET = 'ghs_fork-must-never-see-this';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  summary: string;
}

describe('the Action on code from a fork', () => {
  let scratch: string;
  let folder: string;
  let config: string;
  let marker: string;

  /** A connector in `dir` whose stdio server writes `marker` when it starts. */
  const writeConnector = (dir: string): void => {
    writeFileSync(
      path.join(dir, 'notes.connector.jsonc'),
      JSON.stringify({
        name: 'notes',
        type: 'api',
        provider: 'mcp',
        providerConfig: {
          transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker] },
          include: ['echo_upper'],
          toolsSnapshot: { echo_upper: 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454' },
        },
        auth: { type: 'none' },
      }),
    );
  };

  before(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-action-fork-'));
    folder = path.join(scratch, 'checkout');
    config = path.join(scratch, 'config');
    marker = path.join(scratch, 'server-ran.pid');
    mkdirSync(folder);
    mkdirSync(config, { mode: 0o700 });
    writeConnector(folder);
    // A self-hosted runner that once trusted the checkout path: the record exists for this folder.
    const recorded = spawnSync(process.execPath, [cli, 'trust', folder], { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: config }, input: '' });
    assert.equal(recorded.status, 0, recorded.stderr);
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  const runAction = (event: { name: string; payload?: unknown }, inputs: Record<string, string>, name: string): Run => {
    rmSync(marker, { force: true });
    const summary = path.join(scratch, `${name}-summary.md`);
    const eventPath = path.join(scratch, `${name}-event.json`);
    if (event.payload !== undefined) writeFileSync(eventPath, JSON.stringify(event.payload));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_CONFIG_HOME: config,
      GITHUB_TOKEN: SECRET,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_EVENT_NAME: event.name,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_REPOSITORY: 'toolpin/toolpin',
      TOOLPIN_CLI: cli,
      INPUT_SARIF_FILE: path.join(scratch, `${name}.sarif`),
      ...inputs,
    };
    const result = spawnSync(process.execPath, [entry], { cwd: folder, encoding: 'utf8', timeout: 60_000, env });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, summary: existsSync(summary) ? readFileSync(summary, 'utf8') : '' };
  };

  const forkPullRequest = { pull_request: { head: { repo: { full_name: 'someone/toolpin', fork: true } }, base: { repo: { full_name: 'toolpin/toolpin' } } } };
  const ownPullRequest = { pull_request: { head: { repo: { full_name: 'toolpin/toolpin', fork: false } }, base: { repo: { full_name: 'toolpin/toolpin' } } } };

  const assertStructureOnly = (result: Run, why: RegExp): void => {
    assert.equal(existsSync(marker), false, `a fork's server ran:\n${result.stderr}`);
    assert.match(result.stderr, /checking structure only: no server is started and no credential is sent/);
    assert.match(result.stderr, why);
    assert.match(result.summary, /Toolpin checked structure only: code from a fork/);
    assert.match(result.summary, /Verify after merge/);
    assert.doesNotMatch(result.summary + result.stdout + result.stderr, new RegExp(SECRET));
    // Structure-only: the unverified pin does not make the status 2; the structure is fine.
    assert.equal(result.status, 0, result.stderr);
  };

  test('control: on push, the recorded trust of the checkout starts the server', () => {
    const result = runAction({ name: 'push', payload: {} }, { INPUT_PATHS: '.' }, 'push');
    assert.equal(existsSync(marker), true, `the recorded server did not run:\n${result.stdout}${result.stderr}`);
  });

  test("a fork's pull_request: nothing runs, whatever trust: true, TOOLPIN_TRUST or the recorded trust says", () => {
    const result = runAction({ name: 'pull_request', payload: forkPullRequest }, { INPUT_PATHS: '.', INPUT_TRUST: 'true', TOOLPIN_TRUST: '1' }, 'fork-pr');
    assertStructureOnly(result, /this is a pull request from someone\/toolpin/);
  });

  test('a pull_request whose head repository is marked a fork, even under the same name, runs nothing', () => {
    const payload = { pull_request: { head: { repo: { full_name: 'toolpin/toolpin', fork: true } }, base: { repo: { full_name: 'toolpin/toolpin' } } } };
    assertStructureOnly(runAction({ name: 'pull_request_target', payload }, { INPUT_PATHS: '.', INPUT_TRUST: 'true' }, 'fork-flag'), /pull request from toolpin\/toolpin/);
  });

  test('a workflow_run triggered by a fork\'s pull request runs nothing', () => {
    const payload = {
      workflow_run: { event: 'pull_request', head_repository: { full_name: 'someone/toolpin', fork: true }, repository: { full_name: 'toolpin/toolpin' } },
      repository: { full_name: 'toolpin/toolpin' },
    };
    assertStructureOnly(runAction({ name: 'workflow_run', payload }, { INPUT_PATHS: '.', INPUT_TRUST: 'true' }, 'workflow-run'), /workflow_run was triggered by a pull request from someone\/toolpin/);
  });

  test('an unreadable pull_request event counts as a fork', () => {
    assertStructureOnly(runAction({ name: 'pull_request' }, { INPUT_PATHS: '.', INPUT_TRUST: 'true' }, 'no-event'), /could not be read/);
  });

  test("the repository's own pull request keeps the recorded trust (only forks are held back)", () => {
    const result = runAction({ name: 'pull_request', payload: ownPullRequest }, { INPUT_PATHS: '.' }, 'own-pr');
    assert.equal(existsSync(marker), true, `the recorded server did not run:\n${result.stdout}${result.stderr}`);
    assert.doesNotMatch(result.summary, /structure only/);
  });

  test('a path named --trust is a path, never the option', () => {
    // The fork's folder named `--trust` holds a connector too; passed as a path, it is checked untrusted.
    const planted = path.join(folder, '--trust');
    mkdirSync(planted, { recursive: true });
    writeConnector(planted);
    const isolated = path.join(scratch, 'empty-config');
    mkdirSync(isolated, { recursive: true, mode: 0o700 });
    try {
      const result = runAction({ name: 'push', payload: {} }, { INPUT_PATHS: '--trust', XDG_CONFIG_HOME: isolated }, 'dash-path');
      assert.equal(existsSync(marker), false, `--trust was read as the option:\n${result.stdout}${result.stderr}`);
      assert.match(result.summary, /the folder is not trusted/);
      assert.equal(result.status, 2, result.stderr);
    } finally {
      rmSync(planted, { recursive: true, force: true });
    }
  });
});
