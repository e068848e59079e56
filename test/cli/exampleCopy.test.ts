/**
 * The example workspace runs wherever its folder is: a copy of examples/ in a temporary folder,
 * with no Toolpin checkout (and no node_modules) above it, checks exactly as examples/ does in
 * place — same pins, same states, same servers, same problems, same exit status. This is what
 * "Open the Example Workspace" of the installed extension relies on (it opens such a copy).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run, as CI trusts its own branches (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const examples = path.join(root, 'examples');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-example-copy-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Runs `toolpin <args>` in `folder` (the workspace, named "." so reports do not name the folder). */
function run(folder: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: folder, encoding: 'utf8', timeout: 120_000, env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the example workspace from a copy', () => {
  test('a copy in a temporary folder checks exactly like examples/ in place', { timeout: 240_000 }, () => {
    const copy = path.join(scratch, 'my-example');
    fs.cpSync(examples, copy, { recursive: true });
    // Nothing above the copy can supply a package: the servers must come from the copy itself.
    assert.ok(!fs.existsSync(path.join(scratch, 'node_modules')) && !fs.existsSync(path.join(path.dirname(scratch), 'node_modules')));

    for (const format of ['json', 'text']) {
      const inPlace = run(examples, ['check', '--workspace', '.', '.', '--format', format]);
      const copied = run(copy, ['check', '--workspace', '.', '.', '--format', format]);
      assert.equal(inPlace.status, 1, inPlace.stdout + inPlace.stderr);
      assert.equal(copied.status, inPlace.status, copied.stdout + copied.stderr);
      assert.equal(copied.stdout, inPlace.stdout, `--format ${format}: the copy reports differently`);
    }
    const report = parseCheckReport(run(copy, ['check', '--workspace', '.', '.', '--format', 'json']).stdout) as { servers: Array<{ name: string; state: string; tools?: number }> };
    // Every stdio server of the example started from the copy; only the HTTP server is down.
    assert.deepEqual(
      report.servers.map((server) => [server.name, server.state]).sort(),
      [['everything', 'listed'], ['legacy_crm', 'unavailable'], ['memory', 'listed'], ['notes_code', 'listed'], ['notes_tools', 'listed']],
    );
  });

  test('a copy reads the dispatch log like the original, with nothing skipped', { timeout: 240_000 }, () => {
    const copy = path.join(scratch, 'history-example');
    fs.cpSync(examples, copy, { recursive: true });
    const inPlace = run(examples, ['history', '--workspace', '.', '--stale']);
    const copied = run(copy, ['history', '--workspace', '.', '--stale']);
    assert.equal(inPlace.status, 1, inPlace.stderr);
    assert.equal(copied.status, inPlace.status, copied.stderr);
    assert.equal(copied.stdout, inPlace.stdout);
    // The example's log is complete: no torn or malformed line to warn about.
    assert.equal(copied.stderr, '');
  });
});
