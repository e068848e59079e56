/**
 * `toolpin check` and `toolpin pin` on code shaped like the real ObjectStack repository (issue 23)
 * and on modules the parser cannot read completely (issue 25), end to end with the fixture MCP
 * server, which has rewritten `reverse_text` since it was pinned. Each test failed before the
 * change it covers: a false error, a false pass (exit 0 with a drifted pin), or a guess.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const showcase = path.join(root, 'test', 'fixtures', 'objectstack', 'showcase');

const ECHO_TOOL = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
const REVERSE_TOOL_OLD = 'sha256:46647729c91fad347eb8e8bf645191936eb21fd63b262e367b12bfad14b0fd5f';
const REVERSE_SCHEMA_OLD = 'fnv1a64:3712870629e19d1d';

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The fixture server's transport, as a TypeScript literal. */
const TRANSPORT = `{ kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio', '--control-file', 'control.json'] }`;

let workspace: string;
before(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-objectstack-'));
  writeFileSync(
    path.join(workspace, 'control.json'),
    JSON.stringify({ version: 1, rewrite: { reverse_text: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, locale: { type: 'string' } }, required: ['text', 'locale'] } } } }),
  );
});
after(() => rmSync(workspace, { recursive: true, force: true }));

function write(relative: string, text: string): string {
  const file = path.join(workspace, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return relative;
}

describe('the real showcase module', () => {
  test('untouched: check --structure-only exits 0 with no error', () => {
    const copy = path.join(workspace, 'showcase');
    cpSync(showcase, copy, { recursive: true });
    const result = run(copy, 'check', '--structure-only', 'src/system/connectors/index.ts');
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.doesNotMatch(result.stdout, /error|warning/);
  });

  test('with one pin on its MCP connector and a real server: verified', () => {
    const original = readFileSync(path.join(showcase, 'src/system/connectors/index.ts'), 'utf8');
    const transport = "transport: { kind: 'stdio', command: 'node', args: ['./scripts/mcp-fixture.mjs'] },";
    assert.ok(original.includes(transport));
    const pinned = original.replace(transport, `transport: ${TRANSPORT},\n    toolsSnapshot: { echo_upper: '${ECHO_TOOL}' },`);
    const file = write('showcase-pinned/index.ts', pinned);
    const result = run(workspace, 'check', file);
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /verified\s+tool pin of echo_upper on showcase_mcp_tools/);
  });
});

describe('no false passes', () => {
  test('a connector imported from the package root with a drifted pin: drift, exit 1', () => {
    const file = write('root/connectors.ts', `import { defineConnector } from '@objectstack/spec';\nexport const c = defineConnector({ name: 'root_tools', label: 'R', type: 'api', provider: 'mcp', providerConfig: { transport: ${TRANSPORT}, toolsSnapshot: { reverse_text: '${REVERSE_TOOL_OLD}' } } });\n`);
    const result = run(workspace, 'check', file);
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /DRIFTED\s+tool pin of reverse_text on root_tools/);
  });

  test('a pin kept in a constant drifts like a literal; pin --yes rewrites the literal where the constant is defined, nothing else', () => {
    const text = `import { defineConnector } from '@objectstack/spec';
const PINS = {
  echo: '${ECHO_TOOL}',
  reverse: '${REVERSE_TOOL_OLD}',
} as const;
export const c = defineConnector({ name: 'const_tools', label: 'C', type: 'api', provider: 'mcp', providerConfig: { transport: ${TRANSPORT}, toolsSnapshot: { echo_upper: PINS.echo, reverse_text: PINS.reverse } } });
`;
    const file = write('constants/connectors.ts', text);
    const checked = run(workspace, 'check', file);
    assert.equal(checked.status, 1, `${checked.stdout}\n${checked.stderr}`);
    assert.match(checked.stdout, /constants\/connectors\.ts:4:\d+\s+DRIFTED\s+tool pin of reverse_text/);
    // --tool: the connector has no include, so its unpinned add_numbers would get a first pin too.
    const pinned = run(workspace, 'pin', '--yes', '--tool', 'reverse_text', file);
    assert.equal(pinned.status, 0, `${pinned.stdout}\n${pinned.stderr}`);
    const after = readFileSync(path.join(workspace, file), 'utf8');
    const changed = after.split('\n').filter((line, index) => line !== text.split('\n')[index]);
    assert.equal(changed.length, 1, after);
    assert.match(changed[0]!, /^ {2}reverse: 'sha256:[0-9a-f]{64}',$/);
    assert.equal(run(workspace, 'check', file).status, 0);
  });

  test('a module named explicitly that holds no pin site: "nothing to check", exit 2', () => {
    const file = write('plain/util.ts', `import { defineObject } from '@objectstack/spec';\nexport const o = defineObject({ name: 'x' });\n`);
    const result = run(workspace, 'check', '--structure-only', file);
    assert.equal(result.status, 2, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /plain\/util\.ts holds no defineConnector, defineStack connector or mcpInvoke\$ call Toolpin recognises; nothing to check/);
  });

  test('a computed server is "cannot verify" with what was computed, never checked against a guessed server', () => {
    const text = `import { defineConnector } from '@objectstack/spec';\nimport { mcpInvoke$ } from '@loom/plugin-mcp';\nexport const c = defineConnector({ name: 'guess_tools', label: 'G', type: 'api', provider: 'mcp', providerConfig: { transport: ${TRANSPORT} } });\nexport const s = mcpInvoke$('s', { toolName: 'reverse_text', server: pick('guess_tools'), expectedSchemaHash: '${REVERSE_SCHEMA_OLD}' });\n`;
    const file = write('computed/steps.ts', text);
    const result = run(workspace, 'check', file);
    assert.equal(result.status, 2, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /cannot verify\s+schema pin of reverse_text: cannot verify: the server is computed at run time \(pick\('guess_tools'\)\)/);
    assert.doesNotMatch(result.stdout, /DRIFTED/);
  });
});

describe('modules the parser cannot read completely (issue 25)', () => {
  function drifted(name: string, before: string): string {
    return `import { defineConnector } from '@objectstack/spec';\n${before}\nexport const c = defineConnector({ name: '${name}', label: 'D', type: 'api', provider: 'mcp', providerConfig: { transport: ${TRANSPORT}, toolsSnapshot: { reverse_text: '${REVERSE_TOOL_OLD}' } } });\n`;
  }

  test('a 400-deep array literal elsewhere in the module: the drifted pin is still drift, exit 1', () => {
    const file = write('deep/array.ts', drifted('deep_tools', `export const nested = ${'['.repeat(400)}${']'.repeat(400)};`));
    const result = run(workspace, 'check', file);
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /DRIFTED\s+tool pin of reverse_text on deep_tools/);
    assert.match(result.stdout, /deep\/array\.ts:2:1\s+warning\s+TP111 .*nested too deeply/);
  });

  test('100,000 nested parentheses elsewhere: the drifted pin is still drift, exit 1', () => {
    const file = write('deep/parens.ts', drifted('paren_tools', `export const nested = ${'('.repeat(100_000)}1${')'.repeat(100_000)};`));
    const result = run(workspace, 'check', file);
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /DRIFTED\s+tool pin of reverse_text on paren_tools/);
  });

  test('a pin inside the part that cannot be read: TP112 at its position, the pin "cannot verify", never exit 0', () => {
    const deep = `${'['.repeat(400)}'${ECHO_TOOL}'${']'.repeat(400)}`;
    const file = write('deep/pinned.ts', `import { defineConnector } from '@objectstack/spec';\nexport const c = defineConnector({ name: 'x', provider: 'mcp', providerConfig: { transport: ${TRANSPORT}, toolsSnapshot: { echo_upper: ${deep}[0] } } });\n`);
    const result = run(workspace, 'check', '--structure-only', file);
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /deep\/pinned\.ts:2:1\s+error\s+TP112 1 pin literal\(s\) in these lines cannot be verified: the code is nested too deeply for the parser/);
    assert.match(result.stdout, /1 pin\(s\): 0 verified, 0 drifted, 0 missing, 0 ambiguous, 1 cannot verify/);
  });

  test('17 unrecoverable statements: every readable pin is kept and checked, exit 1 on the drift among them', () => {
    const broken = Array.from({ length: 17 }, (_, index) => `export const b${index} = defineConnector({ name: 'b${index}' provider: ;`).join('\n');
    const file = write('broken/many.ts', drifted('after_broken', broken));
    const result = run(workspace, 'check', file);
    assert.equal(result.status, 1, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /DRIFTED\s+tool pin of reverse_text on after_broken/);
    assert.equal(result.stdout.match(/TP111/g)?.length, 17);
  });

  test('a module over the size limit: a positioned warning without pins, an error with one; the setting raises the limit', () => {
    const filler = `// ${'x'.repeat(1000)}\n`.repeat(2200);
    const quiet = write('large/quiet.ts', `import { defineConnector } from '@objectstack/spec';\n${filler}`);
    const withPin = write('large/pinned.ts', `${drifted('large_tools', '')}${filler}`);
    const warned = run(workspace, 'check', '--structure-only', quiet);
    assert.equal(warned.status, 2, 'nothing to check in it either');
    assert.match(warned.stdout, /large\/quiet\.ts:1:1\s+warning\s+TP113 the module is 2,2\d\d,\d\d\d characters long, over the limit of 2,097,152 bytes/);
    const refused = run(workspace, 'check', '--structure-only', withPin);
    assert.equal(refused.status, 1, `${refused.stdout}\n${refused.stderr}`);
    assert.match(refused.stdout, /large\/pinned\.ts:1:1\s+error\s+TP112 1 pin literal\(s\) in this module cannot be verified/);
    write('.toolpin/sources.jsonc', '{ "maxFileBytes": 4194304 }');
    try {
      const read = run(workspace, 'check', withPin);
      assert.equal(read.status, 1, `${read.stdout}\n${read.stderr}`);
      assert.match(read.stdout, /DRIFTED\s+tool pin of reverse_text on large_tools/);
    } finally {
      rmSync(path.join(workspace, '.toolpin', 'sources.jsonc'));
    }
  });
});

describe('the compiled stack is a build output', () => {
  test('pin --yes never edits dist/objectstack.json: it names the source module to re-pin', () => {
    const folder = path.join(workspace, 'compiled');
    const instance = { name: 'built_tools', label: 'B', type: 'api', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', path.join(workspace, 'control.json')] }, toolsSnapshot: { reverse_text: REVERSE_TOOL_OLD } } };
    const compiled = `${JSON.stringify({ manifest: { id: 'app' }, connectors: [instance] }, null, 2)}\n`;
    mkdirSync(path.join(folder, 'dist'), { recursive: true });
    writeFileSync(path.join(folder, 'dist', 'objectstack.json'), compiled);
    const refused = run(folder, 'pin', '--yes', 'dist/objectstack.json');
    assert.equal(refused.status, 1, `${refused.stdout}\n${refused.stderr}`);
    assert.match(refused.stdout, /not written: dist\/objectstack\.json is a build output of os compile; no module of this workspace defines connector "built_tools"/);
    assert.equal(readFileSync(path.join(folder, 'dist', 'objectstack.json'), 'utf8'), compiled);
  });
});
