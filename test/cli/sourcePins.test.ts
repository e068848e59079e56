/**
 * `toolpin check` and `toolpin pin` on pins written in TypeScript and JavaScript, end to end with
 * the fixture MCP server, which has rewritten one tool since the pins were taken: each pin's state
 * in text, JSON and SARIF, exit codes as for the JSON kinds, a module without pins not counted, a
 * dry run that writes nothing, and `pin --yes` that changes only the drifted pin literals (in
 * their own quotes) so that `check` then exits 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

/** The fixture's pins as it serves its tools unchanged (reverse_text is rewritten by the control file). */
const ECHO_SCHEMA = 'fnv1a64:a76fe8d6d023fca0';
const REVERSE_SCHEMA_OLD = 'fnv1a64:3712870629e19d1d';
const ECHO_TOOL = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
const REVERSE_TOOL_OLD = 'sha256:46647729c91fad347eb8e8bf645191936eb21fd63b262e367b12bfad14b0fd5f';

function connectors(reverseTool: string): string {
  return `/* Connectors in code: a REST one Toolpin leaves alone, and the fixture server. */
import { defineConnector } from '@objectstack/spec/integration';

export const crm = defineConnector({ name: 'crm', provider: 'rest', providerConfig: { baseUrl: url('/v2') } });

export const demo = defineConnector({
  name: 'demo',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio', '--control-file', 'control.json'] },
    include: ['echo_upper', "reverse_text"],
    toolsSnapshot: {
      echo_upper: '${ECHO_TOOL}', // still served as pinned
      "reverse_text": \`${reverseTool}\`,
    },
  },
});

export const allConnectors = [crm, demo];
`;
}

function steps(reverseSchema: string): string {
  return `const { mcpInvoke$: invoke } = require('@loom/plugin-mcp');

module.exports = [
  invoke('shout#1', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: "${ECHO_SCHEMA}" }),
  invoke("flip#2", { toolName: 'reverse_text', server: 'demo', expectedSchemaHash: '${reverseSchema}', arguments: { text: 'abc', locale: 'en' } }),
];
`;
}

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('toolpin check and pin on TypeScript and JavaScript sources', () => {
  let workspace: string;
  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-source-cli-'));
    // reverse_text gained a required "locale" since both of its pins were taken.
    writeFileSync(
      path.join(workspace, 'control.json'),
      JSON.stringify({ version: 1, rewrite: { reverse_text: { inputSchema: { type: 'object', properties: { text: { type: 'string' }, locale: { type: 'string' } }, required: ['text', 'locale'] } } } }),
    );
    mkdirSync(path.join(workspace, 'src'));
    writeFileSync(path.join(workspace, 'src', 'connectors.ts'), connectors(REVERSE_TOOL_OLD));
    writeFileSync(path.join(workspace, 'src', 'steps.cjs'), steps(REVERSE_SCHEMA_OLD));
    writeFileSync(path.join(workspace, 'src', 'util.ts'), 'export const url = (path: string) => `https://crm.example.com${path}`;\n');
    writeFileSync(path.join(workspace, 'src', 'types.d.ts'), "declare module '@loom/plugin-mcp';\n");
  });

  after(() => rmSync(workspace, { recursive: true, force: true }));

  test('check: every pin has its state, in text, JSON and SARIF; modules without pins are not counted; exit 1', () => {
    const text = run(workspace, 'check', '.');
    assert.equal(text.status, 1, text.stderr);
    assert.match(text.stdout, /src\/connectors\.ts:13:19 +verified +tool pin of echo_upper on demo/);
    assert.match(text.stdout, /src\/connectors\.ts:14:23 +DRIFTED +tool pin of reverse_text on demo/);
    assert.match(text.stdout, /src\/steps\.cjs:4:83 +verified +schema pin of echo_upper on demo/);
    assert.match(text.stdout, /src\/steps\.cjs:5:84 +DRIFTED +schema pin of reverse_text on demo/);
    assert.match(text.stdout, /^2 file\(s\), 4 pin\(s\): 2 verified, 2 drifted, 0 missing, 0 ambiguous, 0 cannot verify; 2 problem\(s\)$/m);
    assert.doesNotMatch(text.stdout, /util\.ts|types\.d\.ts|TP110/, 'no module without pins, and the REST connector is not read');

    const json = run(workspace, 'check', '--format', 'json', '.');
    assert.equal(json.status, 1);
    const report = parseCheckReport(json.stdout) as { files: Array<{ path: string; pins: Array<{ tool: string; kind: string; state: string }> }> };
    assert.deepEqual(
      report.files.map((file) => [file.path, file.pins.map((pin) => `${pin.kind}:${pin.tool}:${pin.state}`)]),
      [
        ['src/connectors.ts', ['tool:echo_upper:verified', 'tool:reverse_text:drifted']],
        ['src/steps.cjs', ['schema:echo_upper:verified', 'schema:reverse_text:drifted']],
      ],
    );

    const sarif = run(workspace, 'check', '--format', 'sarif', '.');
    assert.equal(sarif.status, 1);
    const log = JSON.parse(sarif.stdout) as { runs: Array<{ results: Array<{ ruleId: string; locations: Array<{ physicalLocation: { artifactLocation: { uri: string } } }> }> }> };
    const results = log.runs[0]!.results.map((result) => `${result.ruleId}@${result.locations[0]!.physicalLocation.artifactLocation.uri}`).sort();
    assert.deepEqual(results, ['TP400@src/connectors.ts', 'TP400@src/steps.cjs']);
  });

  test('pin without --yes shows the re-pins, writes nothing and exits 1', () => {
    const result = run(workspace, 'pin', '.');
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /^ {2}- "reverse_text": `sha256:46647729[0-9a-f]{56}`,$/m);
    assert.match(result.stdout, /^ {2}\+ "reverse_text": `sha256:[0-9a-f]{64}`,$/m);
    assert.match(result.stdout, /^ {2}\+ .*expectedSchemaHash: 'fnv1a64:[0-9a-f]{16}', arguments/m);
    assert.equal(readFileSync(path.join(workspace, 'src', 'connectors.ts'), 'utf8'), connectors(REVERSE_TOOL_OLD));
    assert.equal(readFileSync(path.join(workspace, 'src', 'steps.cjs'), 'utf8'), steps(REVERSE_SCHEMA_OLD));
  });

  test('pin --yes changes only the drifted pin literals, in their own quotes; check then exits 0', () => {
    const result = run(workspace, 'pin', '--yes', '.');
    assert.equal(result.status, 0, result.stderr);
    const connectorText = readFileSync(path.join(workspace, 'src', 'connectors.ts'), 'utf8');
    const stepsText = readFileSync(path.join(workspace, 'src', 'steps.cjs'), 'utf8');
    const liveTool = /"reverse_text": `(sha256:[0-9a-f]{64})`/.exec(connectorText)?.[1];
    const liveSchema = /expectedSchemaHash: '(fnv1a64:[0-9a-f]{16})'/.exec(stepsText)?.[1];
    assert.ok(liveTool && liveTool !== REVERSE_TOOL_OLD, 'the tool pin was advanced, in backticks');
    assert.ok(liveSchema && liveSchema !== REVERSE_SCHEMA_OLD, 'the schema pin was advanced, in single quotes');
    assert.equal(connectorText, connectors(liveTool), 'byte for byte, only the pin changed');
    assert.equal(stepsText, steps(liveSchema), 'byte for byte, only the pin changed');

    const again = run(workspace, 'check', '.');
    assert.equal(again.status, 0, again.stdout);
    assert.match(again.stdout, /^2 file\(s\), 4 pin\(s\): 4 verified, 0 drifted/m);
  });
});

describe('pins kept in another module', () => {
  let workspace: string;
  let outside: string;
  const WRONG_SCHEMA = 'fnv1a64:0000000000000000';
  const WRONG_TOOL = `sha256:${'0'.repeat(64)}`;
  const stepsText = `import { mcpInvoke$ } from '@loom/plugin-mcp';
import { PINS } from './pins';
import * as all from './pins.js';

export const shout = mcpInvoke$('shout', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: PINS.echo });
export const again = mcpInvoke$('again', { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: all.PINS['echo'] });
`;
  const pinsText = (echo: string) => `// Every schema pin of the project, in one place.\nexport const PINS = {\n  echo: "${echo}", // echo_upper\n} as const;\n`;
  const connectorText = `import { defineConnector } from '@objectstack/spec';
import { SNAPSHOT as pinned } from './shared';

export const demo2 = defineConnector({
  name: 'demo2',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(fixtureServer)}, '--stdio'] },
    toolsSnapshot: pinned,
  },
});
`;
  const snapshotText = (echo: string) => `const ECHO = '${echo}';\nexport const SNAPSHOT = { echo_upper: ECHO };\n`;
  const sharedText = `export * from './snapshot';\n`;

  before(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'toolpin-source-imported-'));
    outside = mkdtempSync(path.join(tmpdir(), 'toolpin-source-outside-'));
    mkdirSync(path.join(workspace, '.vscode'));
    const server = { command: process.execPath, args: [fixtureServer, '--stdio'] };
    writeFileSync(path.join(workspace, '.vscode', 'mcp.json'), JSON.stringify({ servers: { demo: server } }));
    mkdirSync(path.join(workspace, 'src'));
    writeFileSync(path.join(workspace, 'src', 'steps.ts'), stepsText);
    writeFileSync(path.join(workspace, 'src', 'pins.ts'), pinsText(WRONG_SCHEMA));
    writeFileSync(path.join(workspace, 'src', 'connectors.ts'), connectorText);
    mkdirSync(path.join(workspace, 'src', 'shared'));
    writeFileSync(path.join(workspace, 'src', 'shared', 'index.ts'), sharedText);
    writeFileSync(path.join(workspace, 'src', 'shared', 'snapshot.ts'), snapshotText(WRONG_TOOL));
  });

  after(() => {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  test('an imported pin is read where it is written: drift reported at the use, pin --yes rewrites only the defining literal, check then exits 0', () => {
    const result = run(workspace, 'check', '.');
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /src\/steps\.ts:5:104 +DRIFTED +schema pin of echo_upper on demo/);
    assert.match(result.stdout, /src\/steps\.ts:6:104 +DRIFTED +schema pin of echo_upper on demo/);
    assert.match(result.stdout, /src\/connectors\.ts:9:20 +DRIFTED +tool pin of echo_upper on demo2/);
    assert.doesNotMatch(result.stdout, /TP110|cannot verify: it is/);

    // The SARIF fix of a drift rewrites the literal where it is written, not the use.
    const sarif = JSON.parse(run(workspace, 'check', '--format', 'sarif', '.').stdout) as { runs: Array<{ results: Array<{ ruleId: string; fixes?: Array<{ artifactChanges: Array<{ artifactLocation: { uri: string }; replacements: Array<{ deletedRegion: { startLine: number; startColumn: number }; insertedContent: { text: string } }> }> }> }> }> };
    const changes = sarif.runs[0]!.results.filter((entry) => entry.ruleId === 'TP400').map((entry) => entry.fixes![0]!.artifactChanges[0]!);
    assert.deepEqual(
      changes.map((change) => `${change.artifactLocation.uri}:${change.replacements[0]!.deletedRegion.startLine}:${change.replacements[0]!.deletedRegion.startColumn} ${change.replacements[0]!.insertedContent.text}`).sort(),
      [`src/pins.ts:3:9 "${ECHO_SCHEMA}"`, `src/pins.ts:3:9 "${ECHO_SCHEMA}"`, `src/shared/snapshot.ts:1:14 '${ECHO_TOOL}'`],
    );

    const dry = run(workspace, 'pin', '.');
    assert.equal(dry.status, 1, dry.stderr);
    assert.match(dry.stdout, /src\/pins\.ts:3:9 \(used at src\/steps\.ts:5:104\) +echo_upper on demo/);
    assert.match(dry.stdout, /^ {2}- echo: "fnv1a64:0{16}", \/\/ echo_upper$/m);
    assert.match(dry.stdout, /src\/shared\/snapshot\.ts:1:14 \(used at src\/connectors\.ts:9:20\) +echo_upper on demo2/);

    const pin = run(workspace, 'pin', '--yes', '.');
    assert.equal(pin.status, 0, pin.stdout + pin.stderr);
    assert.equal(readFileSync(path.join(workspace, 'src', 'steps.ts'), 'utf8'), stepsText, 'the importer is not touched');
    assert.equal(readFileSync(path.join(workspace, 'src', 'connectors.ts'), 'utf8'), connectorText, 'the importer is not touched');
    assert.equal(readFileSync(path.join(workspace, 'src', 'shared', 'index.ts'), 'utf8'), sharedText, 'the re-export is not touched');
    assert.equal(readFileSync(path.join(workspace, 'src', 'pins.ts'), 'utf8'), pinsText(ECHO_SCHEMA), 'only the literal, in its own quotes');
    assert.equal(readFileSync(path.join(workspace, 'src', 'shared', 'snapshot.ts'), 'utf8'), snapshotText(ECHO_TOOL), 'the constant the snapshot names');

    const after = run(workspace, 'check', '.');
    assert.equal(after.status, 0, after.stdout + after.stderr);
    assert.match(after.stdout, /3 pin\(s\): 3 verified, 0 drifted/);
  });

  test('a module behind a symbolic link leading out of the workspace is not followed: "cannot verify", exit 2', () => {
    writeFileSync(path.join(outside, 'pins.ts'), pinsText(ECHO_SCHEMA));
    symlinkSync(path.join(outside, 'pins.ts'), path.join(workspace, 'src', 'linked.ts'));
    writeFileSync(path.join(workspace, 'src', 'viaLink.ts'), stepsText.replace("from './pins';", "from './linked';").replace(/^import \* as all.*\n/m, '').replace(/^export const again.*\n/m, ''));
    try {
      const result = run(workspace, 'check', 'src/viaLink.ts');
      assert.equal(result.status, 2, result.stdout + result.stderr);
      assert.match(result.stdout, /src\/viaLink\.ts:4:104 +cannot verify +schema pin of echo_upper on demo: cannot verify: it is PINS\.echo, imported from '\.\/linked', and '\.\/linked' could not be read: .*symbolic link.*outside the workspace; Toolpin does not follow it/);
    } finally {
      rmSync(path.join(workspace, 'src', 'viaLink.ts'));
      rmSync(path.join(workspace, 'src', 'linked.ts'));
    }
  });
});
