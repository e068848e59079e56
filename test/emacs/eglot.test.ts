/**
 * Emacs with eglot as a second independent LSP client of `toolpin lsp --stdio` (issue 26, "Every
 * editor"). The eglot block of docs/editors.md is extracted and loaded VERBATIM as the user's
 * configuration into Debian's Emacs (emacs-nox 28 with elpa-eglot, installed by
 * scripts/install-test-deps.sh), in `emacs --batch`, with `toolpin` on PATH through a shim that
 * runs the built dist/cli.js and with the documented `toolpin trust` run first (its record lives in
 * the test's own XDG_CONFIG_HOME).
 *
 * The project is what tripped eglot users before: a folder WITHOUT .git whose only server is in
 * .vscode/mcp.json, opened from a subfolder. The test checks the root eglot reports (the project
 * folder, from Toolpin's markers), the drift diagnostic on the pin, that no publication ever says
 * the server is unknown (TP406, the false report of a wrong root), and that the hover arrives as
 * plain text (eglot declares markdown only when markdown-mode is installed, which it is not here).
 *
 * This suite fails, never skips, when emacs or eglot is missing.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const observer = path.join(root, 'test', 'emacs', 'observe_eglot.el');

/** How long Emacs may wait for the drift after the file is opened (a loaded 2-core CI machine). */
const WINDOW_MS = 60_000;

interface Publication {
  readonly at_ms: number;
  readonly uri: string;
  readonly diagnostics: ReadonlyArray<{ readonly code: string; readonly message: string; readonly line: number }>;
}

interface Observation {
  readonly errors: readonly string[];
  readonly mode?: string;
  readonly connected?: boolean;
  readonly root?: string;
  readonly server_name?: string;
  readonly arrived?: boolean;
  readonly publications: readonly Publication[];
  readonly hover?: { readonly contents: { readonly kind: string; readonly value: string } | string };
  readonly capabilities_hover_format?: readonly string[];
}

/** The first ```elisp block of docs/editors.md's "## Emacs with eglot" section. */
function documentedEglotBlock(): string {
  const doc = readFileSync(path.join(root, 'docs', 'editors.md'), 'utf8');
  const start = doc.indexOf('## Emacs with eglot');
  assert.notEqual(start, -1, 'docs/editors.md has no "## Emacs with eglot" section');
  const next = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, next === -1 ? undefined : next);
  const block = /^```elisp\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block, 'the eglot section of docs/editors.md has no elisp block');
  return block;
}

/** emacs on PATH, with eglot loadable the way a user's Emacs loads it (site-lisp, no init file). */
function emacsPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v emacs'], { encoding: 'utf8' });
  assert.equal(found.status, 0, 'emacs must be installed (scripts/install-test-deps.sh installs Debian\'s emacs-nox and elpa-eglot)');
  const emacs = found.stdout.trim();
  const eglot = spawnSync(emacs, ['--batch', '--eval', '(progn (require (quote eglot)) (princ (locate-library "eglot")))'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(eglot.status, 0, `eglot cannot be loaded (apt-get install elpa-eglot, or Emacs 29 and newer): ${eglot.stderr}`);
  return emacs;
}

/** A bin folder holding only a `toolpin` that runs the built CLI, as `npm install -g .` would. */
function toolpinShim(dir: string): string {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const shim = path.join(bin, 'toolpin');
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${path.join(root, 'dist', 'cli.js')}' "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}

/**
 * A project without .git: server "demo" is declared only in .vscode/mcp.json (the fixture server,
 * whose control file has already rewritten echo_upper's schema when it starts), and a blueprint in
 * flows/ pins echo_upper as it was before.
 */
function projectWithoutGit(): { workspace: string; blueprint: string } {
  const workspace = realpathSync(mkdtempSync(path.join(tmpdir(), 'toolpin-eglot-')));
  const control = path.join(workspace, 'control.json');
  writeFileSync(control, JSON.stringify({ version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } }, required: ['text', 'loud'] } } } }));
  mkdirSync(path.join(workspace, '.vscode'));
  writeFileSync(path.join(workspace, '.vscode', 'mcp.json'), JSON.stringify({ servers: { demo: { type: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', control] } } }, null, 2));
  mkdirSync(path.join(workspace, 'flows'));
  const blueprint = path.join(workspace, 'flows', 'shout.blueprint.jsonc');
  writeFileSync(blueprint, [
    '// Pinned before the server moved.',
    '{',
    '  "blueprint": "shout",',
    '  "formatVersion": 1,',
    '  "steps": [',
    '    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:a76fe8d6d023fca0" } }',
    '  ]',
    '}',
    '',
  ].join('\n'));
  return { workspace, blueprint };
}

test('eglot with the docs/editors.md block, in a project without .git, gets the right root, the drift, no unknown server and a plain-text hover', () => {
  const emacs = emacsPath();
  const { workspace, blueprint } = projectWithoutGit();
  const home = mkdtempSync(path.join(tmpdir(), 'toolpin-eglot-home-'));
  try {
    // No .git in the project or any folder above it: the root must come from Toolpin's markers.
    const vcs = spawnSync('git', ['-C', workspace, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' });
    assert.notEqual(vcs.status, 0, `the scratch project is inside a git repository (${vcs.stdout.trim()}): the test would not show the root comes from the markers`);
    const bin = toolpinShim(home);
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` };
    // docs/editors.md: "run `toolpin trust` once in the root folder before opening the project".
    const trusted = spawnSync('toolpin', ['trust'], { cwd: workspace, encoding: 'utf8', timeout: 30_000, env });
    assert.equal(trusted.status, 0, `toolpin trust failed: ${trusted.stdout}${trusted.stderr}`);
    assert.match(trusted.stdout, /^ {2}demo: .*fixture-server\.mjs --stdio --control-file /m);

    const init = path.join(home, 'toolpin-eglot.el');
    writeFileSync(init, documentedEglotBlock());
    const outFile = path.join(home, 'observation.json');
    // Started in flows/, as a user opening the file from there: the root is not Emacs's folder.
    const run = spawnSync(emacs, ['--batch', '-l', init, '-l', observer], {
      cwd: path.dirname(blueprint),
      encoding: 'utf8',
      timeout: WINDOW_MS + 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, TOOLPIN_FILE: blueprint, TOOLPIN_EMACS_OUT: outFile, TOOLPIN_WINDOW_MS: String(WINDOW_MS), TOOLPIN_STOP_TEXT: 'changed since it was pinned', TOOLPIN_HOVER_CODE: 'TP400' },
    });
    assert.equal(run.error, undefined, `emacs failed to run: ${String(run.error)}; stderr: ${run.stderr}`);
    assert.ok(existsSync(outFile), `Emacs wrote no observation (exit ${run.status}); stderr: ${run.stderr}`);
    const observation = JSON.parse(readFileSync(outFile, 'utf8')) as Observation;
    const seen = observation.publications.map((publication) => `${publication.at_ms} ms: ${publication.diagnostics.map((d) => `${d.code} ${d.message}`).join(' | ') || '(none)'}`).join('\n');

    assert.deepEqual(observation.errors, [], `Emacs signalled an error; stderr: ${run.stderr}`);
    assert.equal(observation.mode, 'toolpin-json-mode', 'the blueprint did not open in the mode the block gives blueprint files');
    assert.equal(observation.connected, true, `eglot did not connect to toolpin; stderr: ${run.stderr}`);
    assert.equal(observation.server_name, 'toolpin');
    assert.equal(observation.root, `${workspace}/`, 'eglot took the wrong project root');

    const unknown = observation.publications.flatMap((publication) => publication.diagnostics.filter((d) => d.code === 'TP406' || /no server named|no MCP server is configured/.test(d.message)));
    assert.deepEqual(unknown, [], `unknown-server diagnostics were published:\n${seen}`);
    assert.equal(observation.arrived, true, `no drift diagnostic arrived within ${WINDOW_MS} ms:\n${seen}\nstderr: ${run.stderr}`);
    const last = observation.publications.at(-1);
    assert.ok(last);
    const drift = last.diagnostics.filter((d) => d.code === 'TP400');
    assert.equal(drift.length, 1, seen);
    assert.equal(drift[0]?.line, 5);
    assert.match(drift[0]?.message ?? '', /tool "echo_upper" on server "demo" changed since it was pinned: pinned fnv1a64:a76fe8d6d023fca0, live fnv1a64:[0-9a-f]{16}/);

    // eglot without markdown-mode declares plain text only, and gets it.
    assert.deepEqual(observation.capabilities_hover_format, ['plaintext']);
    const contents = observation.hover?.contents;
    assert.ok(contents && typeof contents === 'object', `no hover (or a MarkedString) at the drift: ${JSON.stringify(observation.hover)}`);
    assert.equal(contents.kind, 'plaintext');
    assert.match(contents.value, /^✗ drifted · schema pin of echo_upper on demo$/m, contents.value);
    assert.match(contents.value, /^pinned: fnv1a64:a76fe8d6d023fca0$/m);
    assert.match(contents.value, /^live: fnv1a64:[0-9a-f]{16}$/m);
    assert.doesNotMatch(contents.value, /\*\*|\|---|```|`/, contents.value);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
});
