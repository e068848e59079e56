/**
 * The libraries only some runs need are bundles of their own in dist/lib/, which dist/commands.js
 * reads on first use (esbuild.mjs, DEFERRED_LIBRARIES; core/deferredLibraries.ts). Over the built
 * dist/, development or production build alike:
 * - dist/commands.js and dist/cli.js contain none of their code: a message or name each library
 *   has in its own code is in its lib file and in neither bundle (were the build's plugin removed,
 *   esbuild would inline them again and each marker would be found in dist/commands.js);
 * - requiring dist/commands.js reads no lib file, and every bundle is one byte per character;
 * - the bundles copied to a folder of their own, away from the repository, find their lib files
 *   beside them at run time: a check of a TypeScript module whose step arguments break a live
 *   schema's `pattern` reads the pin (Babel) and reports TP410 (Ajv and re2js), and it loaded
 *   exactly the three lib files from that folder; a check of blueprints only, offline, loads
 *   none, and runs the same with dist/lib/ absent.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const dist = path.join(root, 'dist');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

/** Each lib file, with text that only its libraries' own code contains (kept by minification: strings). */
const MARKERS: Record<string, Record<string, string>> = {
  'babel-parser.js': { '@babel/parser': 'This experimental syntax requires enabling' },
  'ajv.js': {
    ajv: 'must have required property',
    'ajv/dist/2020': 'must NOT have unevaluated properties',
    'ajv-formats': 'formatExclusiveMaximum',
    'fast-uri (Ajv\'s URI library)': 'urn:uuid',
  },
  're2js.js': { re2js: 'invalid nested repetition operator' },
  'pg.js': { pg: 'when the client is already executing a query', 'pg-copy-streams': 'CopyStreamQuery' },
};

/** A preload that writes, at exit, every module file the process loaded to the file $LOADED_MODULES names. */
const RECORD_LOADED = `process.on('exit', () => require('node:fs').writeFileSync(process.env.LOADED_MODULES, JSON.stringify(Object.keys(require.cache))));`;

describe('the deferred libraries are bundles of their own', () => {
  test('dist/commands.js and dist/cli.js contain none of their code; each lib file contains its own', () => {
    assert.deepEqual(readdirSync(path.join(dist, 'lib')).filter((name) => name.endsWith('.js')).sort(), Object.keys(MARKERS).sort());
    const bundles = ['commands.js', 'cli.js'].map((name) => ({ name, text: readFileSync(path.join(dist, name), 'utf8') }));
    for (const [file, markers] of Object.entries(MARKERS)) {
      const lib = readFileSync(path.join(dist, 'lib', file), 'utf8');
      for (const [library, marker] of Object.entries(markers)) {
        assert.ok(lib.includes(marker), `dist/lib/${file} lacks ${library}'s "${marker}"`);
        for (const bundle of bundles) assert.ok(!bundle.text.includes(marker), `dist/${bundle.name} contains ${library}'s code ("${marker}")`);
      }
    }
  });

  test('every shipped bundle is one byte per character, so V8 holds its source as a one-byte string', () => {
    // A single character above U+00FF (a dash in a comment) made the 2.25 MB dist/commands.js a
    // 4.5 MB two-byte string in every process (esbuild.mjs keepOneByteSource).
    const bundles = [...readdirSync(dist).filter((name) => name.endsWith('.js')), ...readdirSync(path.join(dist, 'lib')).filter((name) => name.endsWith('.js')).map((name) => `lib/${name}`)];
    assert.ok(bundles.includes('commands.js') && bundles.includes('lib/ajv.js'), bundles.join(', '));
    for (const bundle of bundles) {
      const text = readFileSync(path.join(dist, bundle), 'utf8');
      const wide = [...text].filter((char) => char.codePointAt(0)! > 0xff);
      assert.deepEqual(wide, [], `${bundle} holds characters above U+00FF`);
    }
  });

  test('requiring dist/commands.js reads no lib file', () => {
    const run = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.join(dist, 'commands.js'))}); process.stdout.write(JSON.stringify(Object.keys(require.cache)));`], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const loaded = (JSON.parse(run.stdout) as string[]).map((file) => path.relative(dist, file));
    assert.deepEqual(loaded, ['commands.js']);
  });

  describe('installed elsewhere, the bundles find their lib files beside them', () => {
    let scratch: string;
    /** The two bundles and their lib files, as a package installs them. */
    let install: string;
    /** The two bundles alone. */
    let installWithoutLibs: string;
    let preload: string;
    before(() => {
      scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-bundles-'));
      install = path.join(scratch, 'install', 'dist');
      installWithoutLibs = path.join(scratch, 'install-without-libs', 'dist');
      mkdirSync(path.join(install, 'lib'), { recursive: true });
      mkdirSync(installWithoutLibs, { recursive: true });
      for (const name of ['cli.js', 'commands.js']) {
        copyFileSync(path.join(dist, name), path.join(install, name));
        copyFileSync(path.join(dist, name), path.join(installWithoutLibs, name));
      }
      for (const name of Object.keys(MARKERS)) copyFileSync(path.join(dist, 'lib', name), path.join(install, 'lib', name));
      preload = path.join(scratch, 'record-loaded.js');
      writeFileSync(preload, RECORD_LOADED);
    });
    after(() => rmSync(scratch, { recursive: true, force: true }));

    /** Runs the CLI installed in `from` in `cwd`; returns its result and the lib files it loaded, relative to `from`. */
    function run(from: string, cwd: string, args: string[]): { status: number | null; stdout: string; stderr: string; libs: string[] } {
      const loadedFile = path.join(scratch, 'loaded.json');
      rmSync(loadedFile, { force: true });
      const result = spawnSync(process.execPath, ['--require', preload, path.join(from, 'cli.js'), ...args], {
        cwd,
        encoding: 'utf8',
        timeout: 60_000,
        input: '',
        env: { ...process.env, TOOLPIN_TRUST: '1', LOADED_MODULES: loadedFile },
      });
      const loaded = JSON.parse(readFileSync(loadedFile, 'utf8')) as string[];
      const libs = loaded.filter((file) => file.startsWith(path.join(from, 'lib') + path.sep)).map((file) => path.relative(from, file).split(path.sep).join('/'));
      return { status: result.status, stdout: result.stdout, stderr: result.stderr, libs: libs.sort() };
    }

    test('a TypeScript module with a pattern-breaking argument: the pin is read, TP410 reported, the three lib files loaded', () => {
      const workspace = path.join(scratch, 'sources');
      mkdirSync(path.join(workspace, 'src'), { recursive: true });
      writeFileSync(
        path.join(workspace, '.mcp.json'),
        JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', 'control.json'] } } }),
      );
      // The live echo_upper takes lower-case text only; the step passes upper case.
      writeFileSync(
        path.join(workspace, 'control.json'),
        JSON.stringify({ version: 1, rewrite: { echo_upper: { inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^[a-z]+$' } }, required: ['text'] } } } }),
      );
      writeFileSync(
        path.join(workspace, 'src', 'steps.ts'),
        "import { mcpInvoke$ } from '@loom/plugin-mcp';\n\nexport const shout = mcpInvoke$('shout', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: 'fnv1a64:0000000000000000', arguments: { text: 'ABC' } });\n",
      );
      const result = run(install, workspace, ['check', '--format', 'json', '.']);
      assert.equal(result.status, 1, result.stderr);
      const report = parseCheckReport(result.stdout) as { files: Array<{ path: string; pins: Array<{ tool: string; state: string }>; problems: Array<{ code: string; message: string }> }> };
      assert.deepEqual(report.files.map((file) => [file.path, file.pins.map((pin) => `${pin.tool}:${pin.state}`)]), [['src/steps.ts', ['echo_upper:drifted']]]);
      const tp410 = report.files[0]!.problems.filter((problem) => problem.code === 'TP410');
      assert.equal(tp410.length, 1, JSON.stringify(report.files[0]!.problems));
      assert.match(tp410[0]!.message, /must match pattern "\^\[a-z\]\+\$"/);
      assert.deepEqual(result.libs, ['lib/ajv.js', 'lib/babel-parser.js', 'lib/re2js.js']);
    });

    test('a TypeScript module with its parser missing fails the run loudly, never reads as a module without pins', () => {
      // A broken install (dist/lib/ left out): the check must not pass with 0 pins found.
      const workspace = path.join(scratch, 'broken-install');
      mkdirSync(path.join(workspace, 'src'), { recursive: true });
      writeFileSync(
        path.join(workspace, 'src', 'steps.ts'),
        "import { mcpInvoke$ } from '@loom/plugin-mcp';\n\nexport const shout = mcpInvoke$('shout', { toolName: 'echo_upper', expectedSchemaHash: 'fnv1a64:0000000000000000' });\n",
      );
      const result = run(installWithoutLibs, workspace, ['check', '--offline', '--format', 'json', '.']);
      assert.notEqual(result.status, 0, result.stdout);
      assert.notEqual(result.status, 2, result.stdout);
      assert.match(result.stderr, /babel-parser/);
    });

    test('blueprints only, offline: no lib file is loaded, and the check runs the same without dist/lib/', () => {
      const workspace = path.join(scratch, 'blueprints');
      mkdirSync(workspace);
      copyFileSync(path.join(root, 'test', 'fixtures', 'cli-workspace', 'good.blueprint.jsonc'), path.join(workspace, 'good.blueprint.jsonc'));
      const withLibs = run(install, workspace, ['check', '--offline', '--format', 'json', '.']);
      assert.equal(withLibs.status, 2, withLibs.stderr);
      assert.match(withLibs.stdout, /"state": "cannot-verify"/);
      assert.deepEqual(withLibs.libs, []);
      const withoutLibs = run(installWithoutLibs, workspace, ['check', '--offline', '--format', 'json', '.']);
      assert.deepEqual([withoutLibs.status, withoutLibs.stdout, withoutLibs.stderr], [withLibs.status, withLibs.stdout, withLibs.stderr]);
    });
  });
});
