/**
 * Pins in TypeScript and JavaScript sources (server/src/core/documents/source): the calls are found by their
 * import, every literal has its exact UTF-16 range, what is computed at run time is reported
 * (TP110) and never checked as if it were known, a half-typed file still gives the pins of its
 * other statements, and re-pins change only the pin literals, in their own quotes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { analyzeDocument, blueprintOf, connectorOf, type DocumentAnalysis, documentKindOf } from '../../server/src/core/documents/documents';
import { applyTextEdits, lowercasePinEdit, replacePinEdit, stringLiteral } from '../../server/src/core/documents/fixes';
import type { Problem, Span } from '../../server/src/core/problems';
import { connectorServers } from '../../server/src/core/verify/registry';
import { analyzeSource } from '../../server/src/core/documents/source/analyzeSource';
import { mayHoldPins, readSource } from '../../server/src/core/documents/source/sourceReader';

const SCHEMA_A = 'fnv1a64:0123456789abcdef';
const SCHEMA_B = 'fnv1a64:fedcba9876543210';
const TOOL_A = `sha256:${'a'.repeat(64)}`;
const TOOL_B = `sha256:${'b'.repeat(64)}`;

/** A module shaped as users write them: several exports, mixed quotes, comments, a non-BMP character before the pins. */
const CONNECTORS = `// 🔧 Connectors of the workspace (the emoji is two UTF-16 units: offsets must count them so).
import { defineConnector } from '@objectstack/spec/integration';
import type { Connector } from '@objectstack/spec/integration';

/* A REST connector: not an MCP one. */
export const crm = defineConnector({ name: 'crm', provider: 'rest', providerConfig: { baseUrl: base('/v2') } });

export const github = defineConnector({
  name: "github_tools",
  label: \`GitHub\`,
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: 'node', args: ['server.mjs', "--stdio"] },
    include: ['open_issue', 'close_issue'],
    toolsSnapshot: {
      open_issue: '${TOOL_A}', // unquoted key, single quotes
      "close_issue": \`${TOOL_B}\`,
    },
  },
  auth: { type: 'bearer', credentialRef: 'GITHUB_TOKEN' },
}) satisfies Connector;

export const allConnectors = [crm, github];
`;

const STEPS = `import { mcpInvoke$ as invoke } from '@loom/plugin-mcp';
import * as mcp from '@loom/plugin-mcp';

export const hydrate = invoke("hydrate#3", { toolName: 'read_file', expectedSchemaHash: '${SCHEMA_A}', server: 'files' });
export const write = mcp.mcpInvoke$('write#4', { toolName: \`write_file\`, expectedSchemaHash: "${SCHEMA_B}", arguments: { path: 'a.txt' } });
`;

function textOf(text: string, span: Span | undefined): string | undefined {
  return span ? text.slice(span.offset, span.offset + span.length) : undefined;
}

function codes(problems: readonly Problem[]): string[] {
  return problems.map((found) => found.code);
}

function only(problems: readonly Problem[], code: string): Problem[] {
  return problems.filter((found) => found.code === code);
}

describe('source files: which files', () => {
  test('TypeScript and JavaScript modules are source documents; declaration files and dependencies are not', () => {
    for (const name of ['a.ts', 'a.tsx', 'a.mts', 'a.cts', 'a.js', 'a.jsx', 'a.mjs', 'a.cjs', 'src/Flow.TS']) assert.equal(documentKindOf(name), 'source', name);
    for (const name of ['a.d.ts', 'a.d.mts', 'a.d.cts', 'node_modules/x/index.ts', 'C:\\w\\node_modules\\x\\a.js', 'a.json', 'a.tsbuildinfo']) assert.equal(documentKindOf(name), undefined, name);
    assert.equal(documentKindOf('flow.blueprint.json'), 'blueprint');
  });

  test('the pre-filter: a module that names neither pin module is not parsed at all', () => {
    const big = 'export const x = defineConnector({ name: 1 });\n'.repeat(2000) + 'this is not even TypeScript (';
    assert.equal(mayHoldPins(big), false);
    const reading = readSource(big);
    assert.deepEqual([reading.connectors.length, reading.invocations.length, reading.unreadable.length], [0, 0, 0]);
    assert.deepEqual(analyzeSource(big).problems, []);
  });

  test('calls are recognised by their import only: a local function of the same name is not read', () => {
    const text = `import { something } from '@loom/plugin-mcp';\nconst mcpInvoke$ = (a: string, b: object) => b;\nmcpInvoke$('x', { toolName: 'a', expectedSchemaHash: 'bad' });\n`;
    const analysis = analyzeSource(text);
    assert.equal(analysis.model.blueprint.steps.length, 0);
    assert.deepEqual(analysis.problems, []);
  });

  test('a type-only import names no function', () => {
    const text = `import type { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'x', provider: 'mcp' });\n`;
    assert.equal(analyzeSource(text).model.connector.instances.length, 0);
  });

  test('CommonJS: const { defineConnector: define } = require(...) in a .cjs file', () => {
    const text = `const { defineConnector: define } = require('@objectstack/spec/integration');\nmodule.exports = define({ name: 'cjs_tools', provider: 'mcp', providerConfig: { transport: { kind: 'http', url: 'https://mcp.example.com/mcp' }, toolsSnapshot: { t: '${TOOL_A}' } } });\n`;
    const analysis = analyzeDocument('source', text, 'tools.cjs');
    const instance = connectorOf(analysis)!.instances[0]!;
    assert.equal(instance.name?.value, 'cjs_tools');
    assert.equal(textOf(text, instance.snapshot[0]!.pin.span), `'${TOOL_A}'`);
    assert.deepEqual(analysis.problems, []);
  });

  test('JSX in a .tsx file does not stop the reading', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nexport const step = mcpInvoke$('s', { toolName: 't', expectedSchemaHash: '${SCHEMA_A}' });\nexport const View = () => <div className="x">{step ? 'yes' : 'no'}</div>;\n`;
    const analysis = analyzeDocument('source', text, 'View.tsx');
    assert.equal(blueprintOf(analysis)!.steps[0]!.mcp?.pin?.hex, SCHEMA_A.slice(8));
    assert.deepEqual(analysis.problems, []);
  });
});

describe('source files: the models and their exact ranges', () => {
  test('defineConnector calls become connector instances; every literal has its exact UTF-16 range', () => {
    const analysis = analyzeDocument('source', CONNECTORS, 'connectors.ts');
    assert.equal(analysis.kind, 'source');
    assert.deepEqual(analysis.problems, [], 'a clean module has no problems (the REST connector\'s computed URL is not reported)');
    const instances = connectorOf(analysis)!.instances;
    assert.deepEqual(instances.map((instance) => instance.name?.value), ['crm', 'github_tools']);
    const github = instances[1]!;
    assert.equal(textOf(CONNECTORS, github.name?.span), '"github_tools"');
    assert.equal(textOf(CONNECTORS, github.provider?.span), "'mcp'");
    assert.deepEqual(github.include?.map((entry) => textOf(CONNECTORS, entry.span)), ["'open_issue'", "'close_issue'"]);
    assert.deepEqual(github.snapshot.map((entry) => [textOf(CONNECTORS, entry.tool.span), textOf(CONNECTORS, entry.pin.span), entry.parsed?.algorithm]), [
      ['open_issue', `'${TOOL_A}'`, 'sha256'],
      ['"close_issue"', `\`${TOOL_B}\``, 'sha256'],
    ]);
    assert.deepEqual(github.auth, { type: 'bearer', credentialRef: 'GITHUB_TOKEN' });
    assert.equal(github.transport?.kind, 'stdio');
    assert.deepEqual(github.transport?.kind === 'stdio' ? github.transport.args : [], ['server.mjs', '--stdio']);
    // The UTF-16 offset, counted by hand: the emoji before it is two code units.
    const expected = CONNECTORS.indexOf(`'${TOOL_A}'`);
    assert.equal(github.snapshot[0]!.pin.span.offset, expected);
    const servers = connectorServers('/w/connectors.ts', connectorOf(analysis)!, '/w');
    assert.deepEqual(servers.map((server) => [server.name, server.transport?.kind, server.unusable]), [['github_tools', 'stdio', undefined]]);
  });

  test('mcpInvoke$ calls become steps: minted ids, aliases and namespace imports, the optional server', () => {
    const analysis = analyzeDocument('source', STEPS, 'steps.ts');
    assert.deepEqual(analysis.problems, []);
    const steps = blueprintOf(analysis)!.steps;
    assert.deepEqual(steps.map((step) => [step.id?.value, step.effect?.value, step.mcp?.toolName?.value, step.mcp?.server?.value, step.mcp?.pin?.hex]), [
      ['hydrate#3', 'mcp.invoke', 'read_file', 'files', SCHEMA_A.slice(8)],
      ['write#4', 'mcp.invoke', 'write_file', undefined, SCHEMA_B.slice(8)],
    ]);
    assert.equal(textOf(STEPS, steps[0]!.id?.span), '"hydrate#3"');
    assert.equal(textOf(STEPS, steps[0]!.mcp?.expectedSchemaHash?.span), `'${SCHEMA_A}'`);
    assert.equal(textOf(STEPS, steps[1]!.mcp?.toolName?.span), '`write_file`');
    assert.equal(textOf(STEPS, steps[1]!.mcp?.expectedSchemaHash?.span), `"${SCHEMA_B}"`);
    assert.equal(textOf(STEPS, steps[1]!.effect?.span), 'mcp.mcpInvoke$');
  });

  test('a module may hold both connectors and steps', () => {
    const text = `${CONNECTORS}\n${STEPS}`;
    const analysis = analyzeDocument('source', text, 'both.ts');
    assert.equal(connectorOf(analysis)!.instances.length, 2);
    assert.equal(blueprintOf(analysis)!.steps.length, 2);
  });
});

describe('source files: the same structure checks and codes as the JSON kinds', () => {
  const cases: Array<{ name: string; text: string; code: string; covers: string }> = [
    { name: 'malformed schema pin', text: `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a', { toolName: 't', expectedSchemaHash: 'fnv1a64:XYZ' });`, code: 'TP204', covers: "'fnv1a64:XYZ'" },
    { name: 'unpinned step', text: `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a', { toolName: 't' });`, code: 'TP206', covers: "'t'" },
    { name: 'no options at all', text: `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a');`, code: 'TP104', covers: 'mcpInvoke$' },
    { name: 'unknown key in the options', text: `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a', { toolName: 't', expectedSchemaHash: '${SCHEMA_A}', sever: 'x' });`, code: 'TP102', covers: 'sever' },
    { name: 'malformed tool pin', text: `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'x' }, toolsSnapshot: { t: 'sha256:ABC' } } });`, code: 'TP306', covers: "'sha256:ABC'" },
    { name: 'unknown transport kind', text: `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'websocket', url: 'ws://x' } } });`, code: 'TP301', covers: "'websocket'" },
    { name: 'pinned tool outside include', text: `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'x' }, include: ['a'], toolsSnapshot: { b: '${TOOL_A}' } } });`, code: 'TP305', covers: 'b' },
    { name: 'credential-looking literal', text: `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'http', url: 'https://x.example', headers: { Authorization: 'Bearer abc' } } } });`, code: 'TP205', covers: "'Bearer abc'" },
    { name: 'invalid connector name', text: `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'Bad-Name', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'x' } } });`, code: 'TP300', covers: "'Bad-Name'" },
  ];
  for (const entry of cases) {
    test(`${entry.code}: ${entry.name}`, () => {
      const analysis = analyzeSource(entry.text);
      const found = only(analysis.problems, entry.code);
      assert.equal(found.length, 1, `${entry.code} in ${JSON.stringify(codes(analysis.problems))}`);
      assert.equal(textOf(entry.text, found[0]!.span), entry.covers);
    });
  }
});

describe('source files: computed values are reported, never guessed', () => {
  test('identifiers, calls, substitutions, spreads and shorthand are TP110 at their exact range', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';
import { defineConnector } from '@objectstack/spec/integration';
const common = { server: 'files' };
export const a = mcpInvoke$(stepId(), { toolName: name, expectedSchemaHash: \`fnv1a64:\${hash}\` });
export const b = mcpInvoke$('b', { ...common, toolName: 'read', expectedSchemaHash: '${SCHEMA_A}' });
export const c = mcpInvoke$('c', { toolName });
export const d = defineConnector({
  name: 'remote',
  provider: 'mcp',
  providerConfig: { transport: { kind: 'http', url: apiUrl('/mcp') }, toolsSnapshot: { t: '${TOOL_A}', ...more } },
  auth: { type: 'bearer', credentialRef: process.env.REF_NAME },
});
`;
    const analysis = analyzeSource(text);
    const computed = only(analysis.problems, 'TP110').map((found) => [textOf(text, found.span), found.severity]);
    assert.deepEqual(computed, [
      ['stepId()', 'information'],
      ['name', 'information'],
      ['`fnv1a64:${hash}`', 'information'],
      // `...common` is a same-module constant: read, not computed (sourceValues.ts).
      ['toolName', 'information'],
      ["apiUrl('/mcp')", 'information'],
      ['...more', 'information'],
      ['process.env.REF_NAME', 'information'],
    ]);
    assert.match(only(analysis.problems, 'TP110')[1]!.message, /^"toolName" of step #1 cannot be checked: computed at run time$/);
    // Nothing is guessed: no missing field, no bad credentialRef, no bad URL; a computed hash is not
    // a missing one. Step "c" has no hash at all, which is a finding of its own.
    const others = analysis.problems.filter((found) => found.code !== 'TP110');
    assert.deepEqual(others.map((found) => [found.code, textOf(text, found.span)]), [['TP206', "'c'"]]);
    const steps = analysis.model.blueprint.steps;
    assert.deepEqual(steps.map((step) => step.mcp?.expectedSchemaHash?.value), [undefined, SCHEMA_A, undefined]);
    const instance = analysis.model.connector.instances[0]!;
    assert.deepEqual(instance.computed, { transport: true, include: false, snapshot: true, credential: 'process.env.REF_NAME' });
    const [server] = connectorServers('/w/a.ts', analysis.model.connector, '/w');
    assert.equal(server?.transport, undefined, 'a computed transport is never started');
    assert.equal(server?.unusable, 'its transport is computed at run time');
  });

  test('a computed env value makes the stdio transport unusable rather than started without it', () => {
    const text = `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node', args: [entry], env: { LEVEL: level } } } });`;
    const analysis = analyzeSource(text);
    assert.deepEqual(only(analysis.problems, 'TP110').map((found) => textOf(text, found.span)), ['entry', 'level']);
    assert.equal(connectorServers('/w/a.ts', analysis.model.connector, '/w')[0]?.unusable, 'its transport is computed at run time');
  });
});

describe('source files: a half-typed file still gives its pins', () => {
  test('a file being typed, ending inside a call: the literals typed so far are read, nothing is left out', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';
export const one = mcpInvoke$('one', { toolName: 'a', expectedSchemaHash: '${SCHEMA_A}' });
export const two = mcpInvoke$('two', {
  toolName: 'b',
  expectedSchemaHash: '${SCHEMA_B}',
`;
    const analysis = analyzeSource(text);
    assert.deepEqual(analysis.model.blueprint.steps.map((step) => [step.id?.value, step.mcp?.expectedSchemaHash?.value]), [['one', SCHEMA_A], ['two', SCHEMA_B]]);
    assert.equal(textOf(text, analysis.model.blueprint.steps[1]!.mcp!.expectedSchemaHash!.span), `'${SCHEMA_B}'`);
    assert.deepEqual(analysis.problems, []);
  });

  test('an unfinished call before complete ones: only the unfinished statement is reported (TP112: it holds a pin, which cannot be verified)', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';
export const one = mcpInvoke$('one', { toolName: 'a', expectedSchemaHash: '${SCHEMA_A}',
export const two = mcpInvoke$('two', { toolName: 'b', expectedSchemaHash: '${SCHEMA_B}' });
export const three = mcpInvoke$('three', { toolName: 'c', expectedSchemaHash: '${SCHEMA_A}' });
`;
    const analysis = analyzeSource(text);
    assert.deepEqual(analysis.model.blueprint.steps.map((step) => step.id?.value), ['two', 'three']);
    assert.deepEqual(only(analysis.problems, 'TP111'), []);
    const unreadable = only(analysis.problems, 'TP112');
    assert.equal(unreadable.length, 1);
    assert.ok(textOf(text, unreadable[0]!.span)!.startsWith('export const one'));
    assert.equal(unreadable[0]!.severity, 'error');
    assert.match(unreadable[0]!.message, /^1 pin literal\(s\) in these lines cannot be verified: /);
    assert.deepEqual(analysis.model.unreadPins.map((pin) => pin.pin), [SCHEMA_A]);
  });

  test('a broken statement in the middle loses only itself', () => {
    const text = `import { defineConnector } from '@objectstack/spec/integration';
export const a = defineConnector({ name: 'a', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'x' }, toolsSnapshot: { t: '${TOOL_A}' } } });
export const broken = defineConnector({ name: 'b' provider: ;
export const c = defineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'x' }, toolsSnapshot: { t: '${TOOL_B}' } } });
`;
    const analysis = analyzeSource(text);
    assert.deepEqual(analysis.model.connector.instances.map((instance) => instance.name?.value), ['a', 'c']);
    assert.equal(only(analysis.problems, 'TP111').length, 1);
  });

  test('garbage never throws', () => {
    const inputs = ['', '@loom/plugin-mcp', "import { mcpInvoke$ } from '@loom/plugin-mcp'; mcpInvoke$(", "import { mcpInvoke$ } from '@loom/plugin-mcp';\n".repeat(3) + '}}}}((((', `import { defineConnector } from '@objectstack/spec/integration';\ndefineConnector(${'['.repeat(3000)}`];
    for (const input of inputs) {
      const analysis = analyzeSource(input);
      assert.ok(Array.isArray(analysis.problems));
    }
  });
});

describe('source files: re-pins change only the pin literal, in its own quotes', () => {
  function repinAll(analysis: DocumentAnalysis, text: string, newSchema: string, newTool: string): string {
    const edits = [
      ...(blueprintOf(analysis)?.steps ?? []).flatMap((step) => (step.mcp?.expectedSchemaHash ? [replacePinEdit(step.mcp.expectedSchemaHash.span, newSchema, text)] : [])),
      ...(connectorOf(analysis)?.instances ?? []).flatMap((instance) => instance.snapshot.map((entry) => replacePinEdit(entry.pin.span, newTool, text))),
    ];
    return applyTextEdits(text, edits);
  }

  test("single quotes stay single, double stay double, backticks stay backticks, and nothing else changes", () => {
    const text = `${CONNECTORS}\n${STEPS}`;
    const analysis = analyzeDocument('source', text, 'both.ts');
    const newSchema = 'fnv1a64:1111111111111111';
    const newTool = `sha256:${'c'.repeat(64)}`;
    const result = repinAll(analysis, text, newSchema, newTool);
    const expected = text
      .replace(`'${TOOL_A}'`, `'${newTool}'`)
      .replace(`\`${TOOL_B}\``, `\`${newTool}\``)
      .replace(`'${SCHEMA_A}'`, `'${newSchema}'`)
      .replace(`"${SCHEMA_B}"`, `"${newSchema}"`);
    assert.equal(result, expected, 'only the four pin literals changed, each in its own quotes');
    const again = analyzeDocument('source', result, 'both.ts');
    assert.deepEqual(again.problems, []);
    assert.deepEqual(blueprintOf(again)!.steps.map((step) => step.mcp?.expectedSchemaHash?.value), [newSchema, newSchema]);
  });

  test('a literal with escapes is replaced whole, and the new content is escaped for its quote', () => {
    const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a', { toolName: 't', expectedSchemaHash: 'fnv1a64:\\x30123456789abcdef' });\n`;
    const analysis = analyzeSource(text);
    const hash = analysis.model.blueprint.steps[0]!.mcp!.expectedSchemaHash!;
    assert.equal(hash.value, SCHEMA_A, 'the escape is read as the character it stands for');
    const result = applyTextEdits(text, [replacePinEdit(hash.span, SCHEMA_B, text)]);
    assert.equal(result, text.replace("'fnv1a64:\\x30123456789abcdef'", `'${SCHEMA_B}'`));
    assert.equal(stringLiteral(`it's "x"`, "'"), `'it\\'s "x"'`);
    assert.equal(stringLiteral('a`${b}', '`'), '`a\\`\\${b}`');
    assert.equal(stringLiteral('a"b', undefined), '"a\\"b"');
    assert.equal(stringLiteral('a"b', '"'), '"a\\"b"');
  });

  test('lower-casing a malformed pin keeps its quotes; a literal with an escape is not touched', () => {
    for (const quote of ["'", '`', '"']) {
      const text = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a', { toolName: 't', expectedSchemaHash: ${quote}FNV1A64:0123456789ABCDEF${quote} });\n`;
      const malformed = only(analyzeSource(text).problems, 'TP204')[0]!;
      const edit = lowercasePinEdit(text, malformed.span, 'fnv1a64')!;
      assert.equal(edit.content, `${quote}${SCHEMA_A}${quote}`);
      assert.deepEqual(analyzeSource(applyTextEdits(text, [edit])).problems, []);
    }
    const escaped = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nmcpInvoke$('a', { toolName: 't', expectedSchemaHash: 'FNV1A64:\\x30123456789ABCDEF' });\n`;
    const malformed = only(analyzeSource(escaped).problems, 'TP204')[0]!;
    assert.equal(lowercasePinEdit(escaped, malformed.span, 'fnv1a64'), undefined);
  });

  test('without the text (the JSON kinds), a re-pin writes JSON as before', () => {
    assert.equal(replacePinEdit({ offset: 3, length: 10 }, SCHEMA_A).content, JSON.stringify(SCHEMA_A));
  });
});
