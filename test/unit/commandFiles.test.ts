/**
 * Which workspace files a stdio command line runs (server/src/io/commandFiles.ts): what a trust
 * record binds by digest besides the command line itself.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { commandFileDigests, namedCommandFiles } from '../../server/src/io/commandFiles';
import type { ServerDefinition } from '../../server/src/core/verify/registry';

const cwd = path.join(path.sep, 'project');

const cases: Array<[string, string, string[], string[]]> = [
  ['an interpreter and its script', 'node', ['srv.mjs', '--stdio'], ['srv.mjs']],
  ['options before the script, one taking a value', 'node', ['--inspect', '--title', 'x', 'lib/srv.js', 'other.js'], ['lib/srv.js', 'other.js']],
  ['--require and --import files', 'node', ['--require', './t.cjs', '--import=./hook.mjs', 'srv.mjs'], ['t.cjs', 'hook.mjs', 'srv.mjs']],
  ['a versioned python with -m', 'python3.12', ['-m', 'pkg.tool', '--port', '1'], [path.join('pkg', 'tool.py'), path.join('pkg', 'tool', '__main__.py')]],
  ['-e names no file', 'node', ['-e', 'console.log(1)'], []],
  ['a relative executable', './bin/server', ['--stdio'], [path.join('bin', 'server')]],
  ['an absolute interpreter path outside the folder, script inside', '/usr/bin/node', [path.join(cwd, 'srv.mjs')], ['srv.mjs']],
  ['a script outside the folder is not the repository\'s', 'node', ['../elsewhere/srv.mjs'], []],
  ['a package runner with a script argument', 'npx', ['-y', 'tsx', 'src/server.ts'], [path.join('src', 'server.ts')]],
  ['a package by name names no file', 'npx', ['-y', '@scope/server', '--port', '3000'], []],
  ['data files are not scripts', 'node', ['srv.mjs', '--control-file', 'control.json'], ['srv.mjs']],
];

for (const [name, command, args, expected] of cases) {
  test(`namedCommandFiles: ${name}`, () => {
    assert.deepEqual(namedCommandFiles(command, args, cwd), expected);
  });
}

test('commandFileDigests: a digest per named file, "absent" for a missing one, a link out of the folder named with its target', () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-command-files-'));
  // Its real path: the key names where the link leads, links resolved (macOS's /tmp is one).
  const outside = realpathSync(mkdtempSync(path.join(tmpdir(), 'toolpin-command-files-out-')));
  try {
    writeFileSync(path.join(folder, 'srv.mjs'), 'export {};\n');
    writeFileSync(path.join(outside, 'real.cjs'), '// elsewhere\n');
    mkdirSync(path.join(folder, 'lib'));
    symlinkSync(path.join(outside, 'real.cjs'), path.join(folder, 'lib', 'hook.cjs'));
    const definition: ServerDefinition = {
      name: 'x',
      origin: { kind: 'mcp-json', file: path.join(folder, '.mcp.json') },
      transport: { kind: 'stdio', command: 'node', args: ['--require', './lib/hook.cjs', 'srv.mjs', 'missing.py'], env: {} },
      auth: undefined,
      unusable: undefined,
      cwd: folder,
    };
    const digests = commandFileDigests(definition);
    assert.deepEqual(Object.keys(digests).sort(), [`${path.join('lib', 'hook.cjs')} -> ${path.join(outside, 'real.cjs')}`, 'missing.py', 'srv.mjs'].sort());
    assert.equal(digests['srv.mjs'], `sha256:${createHash('sha256').update('export {};\n').digest('hex')}`);
    assert.equal(digests[`${path.join('lib', 'hook.cjs')} -> ${path.join(outside, 'real.cjs')}`], `sha256:${createHash('sha256').update('// elsewhere\n').digest('hex')}`);
    assert.equal(digests['missing.py'], 'absent');
  } finally {
    rmSync(folder, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});
