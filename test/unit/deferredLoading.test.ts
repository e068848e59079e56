/**
 * The libraries only some documents or commands need load on first use (core/deferredLibraries.ts,
 * the MCP session in mcp/inventory.ts, the language server in cli/commands.ts), so that a language server or CLI run that does not need them
 * does not carry them (issue 13: they were about 10 MiB of a language server before it read a
 * file).
 *
 * Each case runs in a fresh Node process (a module, once loaded, stays loaded) over the
 * transpiled modules in out/, and reports which of the four libraries were loaded:
 * - loading every command (cli/commands.ts, whose language server loads only for `toolpin lsp`)
 *   and analyzing a blueprint loads none of them, nor the LSP libraries or zod (the language
 *   server's settings);
 * - analyzing a TypeScript module loads Babel, and only Babel;
 * - checking arguments against a schema with a `pattern` loads Ajv and re2js, not the SDK.
 * A static import of any of them anywhere on those paths fails the matching case.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, test } from 'node:test';

const OUT = path.resolve(__dirname, '..', '..');

const LIBRARIES = {
  babel: `${path.sep}@babel${path.sep}parser${path.sep}`,
  ajv: `${path.sep}ajv${path.sep}`,
  re2js: `${path.sep}re2js${path.sep}`,
  sdk: `${path.sep}@modelcontextprotocol${path.sep}sdk${path.sep}`,
  languageServer: `${path.sep}vscode-languageserver${path.sep}`,
  zod: `${path.sep}zod${path.sep}`,
};

/** Runs `body` after loading every command module; returns which libraries ended up loaded. */
function loadedAfter(body: string): string[] {
  const script = `
    const path = require('node:path');
    require(path.join(${JSON.stringify(OUT)}, 'server', 'src', 'cli', 'commands.js'));
    const documents = require(path.join(${JSON.stringify(OUT)}, 'server', 'src', 'core', 'documents', 'documents.js'));
    const argumentsModule = require(path.join(${JSON.stringify(OUT)}, 'server', 'src', 'core', 'verify', 'arguments.js'));
    ${body}
    const libraries = ${JSON.stringify(LIBRARIES)};
    const loaded = Object.keys(libraries).filter((name) => Object.keys(require.cache).some((file) => file.includes(libraries[name])));
    process.stdout.write(JSON.stringify(loaded));
  `;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const loaded: unknown = JSON.parse(run.stdout);
  assert.ok(Array.isArray(loaded));
  return loaded.map(String).sort();
}

describe('libraries load on first use', () => {
  test('the commands and a blueprint analysis load none of them, nor the language server', () => {
    const loaded = loadedAfter(`
      const analysis = documents.analyzeDocument('blueprint', JSON.stringify({ blueprint: 'b', formatVersion: 1, steps: [{ id: 'a', effect: 'mcp.invoke', input: { toolName: 'echo', arguments: { text: 'x' } } }] }));
      if (analysis.model.steps.length !== 1) throw new Error('the blueprint was not read');
    `);
    assert.deepEqual(loaded, []);
  });

  test('a TypeScript module loads Babel only', () => {
    const loaded = loadedAfter(`
      const analysis = documents.analyzeDocument('source', "import { mcpInvoke$ } from '@loom/plugin-mcp';\\nmcpInvoke$('s', { toolName: 'echo' });\\n", 'a.ts');
      if (analysis.model.blueprint.steps.length !== 1) throw new Error('the module was not read');
    `);
    assert.deepEqual(loaded, ['babel']);
  });

  test('the language server and its settings load the LSP libraries only, not zod nor the SDK', () => {
    // A language server with verification off never opens a session: zod (once its settings
    // schema) and the SDK stay unloaded until one does.
    const loaded = loadedAfter(`
      const server = require(path.join(${JSON.stringify(OUT)}, 'server', 'src', 'server.js'));
      const settings = require(path.join(${JSON.stringify(OUT)}, 'server', 'src', 'settings.js'));
      if (typeof server.startServer !== 'function') throw new Error('no language server');
      if (settings.parseSettings({ verify: { enable: false } }).verify.enable !== false) throw new Error('the settings were not read');
    `);
    assert.deepEqual(loaded, ['languageServer']);
  });

  test('checking arguments against a pattern loads Ajv and re2js, not the SDK', () => {
    const loaded = loadedAfter(`
      const analysis = documents.analyzeDocument('blueprint', JSON.stringify({ blueprint: 'b', formatVersion: 1, steps: [{ id: 'a', effect: 'mcp.invoke', input: { toolName: 'echo', arguments: { code: 'ab' } } }] }));
      const step = analysis.model.steps[0];
      const problems = argumentsModule.checkStepArguments(step, { type: 'object', properties: { code: { type: 'string', pattern: '^[0-9]+$' } } });
      if (problems.length !== 1 || problems[0].code !== 'TP410') throw new Error('the pattern was not checked: ' + JSON.stringify(problems));
    `);
    assert.deepEqual(loaded, ['ajv', 're2js']);
  });
});
