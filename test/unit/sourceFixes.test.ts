/**
 * The structural fixes in TypeScript and JavaScript sources, byte for byte: pinning an unpinned
 * tool into a `defineConnector` call (an entry in its `toolsSnapshot`, or a new `toolsSnapshot`),
 * removing the pin of a tool that is gone, adding an `include` entry and replacing a mistyped name.
 * Each edit is applied to a module written for the test (several exports, mixed quotes, comments,
 * computed values) and the result compared with the whole expected text, so only the intended
 * characters change; the result reads back with Toolpin's own source reader.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeDocument, connectorOf } from '../../server/src/core/documents/documents';
import type { ConnectorInstanceModel } from '../../server/src/core/documents/connector';
import { addIncludeEntryEdits, applyTextEdits, removeSnapshotEntryEdits, replaceStringEdit, setSnapshotEntryEdits } from '../../server/src/core/documents/fixes';

const OLD = `sha256:${'a'.repeat(64)}`;
const NEW = `sha256:${'b'.repeat(64)}`;
const SOURCE = { source: true } as const;

function instanceNamed(text: string, name: string): ConnectorInstanceModel {
  const analysis = analyzeDocument('source', text, 'connectors.ts');
  const instance = connectorOf(analysis)?.instances.find((candidate) => candidate.name?.value === name);
  assert.ok(instance, `the module has a connector "${name}"`);
  return instance;
}

/** The snapshot a module's connector has after the edit, read back with the source reader. */
function snapshotOf(text: string, name: string): Record<string, string> {
  const analysis = analyzeDocument('source', text, 'connectors.ts');
  assert.deepEqual(analysis.problems.filter((found) => found.code === 'TP111'), [], 'the edited module still parses');
  return Object.fromEntries(instanceNamed(text, name).snapshot.map((entry) => [entry.tool.value, entry.pin.value]));
}

const MODULE = `/* Two connectors and a REST one, in one module. */
import { defineConnector } from '@objectstack/spec/integration';

export const crm = defineConnector({ name: 'crm', provider: 'rest', providerConfig: { baseUrl: url('/v2') } });

export const notes = defineConnector({
  name: 'notes',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'http', url: 'https://notes.example.com/mcp' },
    toolsSnapshot: {
      // read-only tools first
      search_notes: '${OLD}', // still served
      get_note: '${OLD}',
    },
  },
});

export const tickets = defineConnector({
  "name": "tickets",
  "provider": "mcp",
  "providerConfig": { "transport": { "kind": "http", "url": "https://tickets.example.com/mcp" }, "include": ["open_ticket", "close_ticket"], "toolsSnapshot": { "open_ticket": "${OLD}" } }
});

export const bare = defineConnector({
  name: 'bare',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'http', url: \`https://bare.example.com/mcp\` }, // no pins yet
  },
});

export const computed = defineConnector({ name: 'computed', provider: 'mcp', providerConfig: configFor('computed') });
export const spreadSnapshot = defineConnector({ name: 'spread', provider: 'mcp', providerConfig: { transport: { kind: 'http', url: 'https://s.example.com' }, toolsSnapshot: pinsOf('s') } });
`;

function edited(search: string, replacement: string): string {
  assert.ok(MODULE.includes(search), `the module holds ${JSON.stringify(search)}`);
  return MODULE.replace(search, replacement);
}

describe('source: pin an unpinned tool', () => {
  test('one entry per line with a trailing comma: a new line with the same indentation, quotes and comma; comments stay', () => {
    const result = applyTextEdits(MODULE, setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'notes'), 'create_note', NEW, SOURCE));
    assert.equal(result, edited(`      get_note: '${OLD}',\n`, `      get_note: '${OLD}',\n      create_note: '${NEW}',\n`));
    assert.deepEqual(snapshotOf(result, 'notes'), { search_notes: OLD, get_note: OLD, create_note: NEW });
  });

  test('a name that is not an identifier is quoted in the call’s own quote', () => {
    const result = applyTextEdits(MODULE, setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'notes'), 'get-note.v2', NEW, SOURCE));
    assert.equal(result, edited(`      get_note: '${OLD}',\n`, `      get_note: '${OLD}',\n      'get-note.v2': '${NEW}',\n`));
  });

  test('inline, quoted keys, double quotes, no trailing comma: the entry follows inline in the same style', () => {
    const result = applyTextEdits(MODULE, setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'tickets'), 'close_ticket', NEW, SOURCE));
    assert.equal(result, edited(`"toolsSnapshot": { "open_ticket": "${OLD}" }`, `"toolsSnapshot": { "open_ticket": "${OLD}", "close_ticket": "${NEW}" }`));
    assert.deepEqual(snapshotOf(result, 'tickets'), { open_ticket: OLD, close_ticket: NEW });
  });

  test('an existing entry gets only its value replaced, in its own quotes', () => {
    const result = applyTextEdits(MODULE, setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'notes'), 'get_note', NEW, SOURCE));
    assert.equal(result, edited(`      get_note: '${OLD}',`, `      get_note: '${NEW}',`));
  });

  test('no toolsSnapshot yet: one is added to providerConfig on its own line, after the line comment, with the trailing comma', () => {
    const result = applyTextEdits(MODULE, setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'bare'), 'list', NEW, SOURCE));
    assert.equal(
      result,
      edited("url: `https://bare.example.com/mcp` }, // no pins yet\n", `url: \`https://bare.example.com/mcp\` }, // no pins yet\n    toolsSnapshot: { list: '${NEW}' },\n`),
    );
    assert.deepEqual(snapshotOf(result, 'bare'), { list: NEW });
  });

  test('nothing when providerConfig or toolsSnapshot is computed: a guess would override what the run time builds', () => {
    assert.deepEqual(setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'computed'), 'list', NEW, SOURCE), []);
    assert.deepEqual(setSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'spread'), 'list', NEW, SOURCE), []);
  });
});

describe('source: remove a gone tool’s pin', () => {
  test('an entry goes with its comma; the comments above and after it stay', () => {
    const result = applyTextEdits(MODULE, removeSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'notes'), 'search_notes'));
    assert.equal(result, edited(`      search_notes: '${OLD}', // still served\n`, '      // still served\n'));
    assert.deepEqual(snapshotOf(result, 'notes'), { get_note: OLD });
  });

  test('the last entry with its trailing comma', () => {
    const result = applyTextEdits(MODULE, removeSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'notes'), 'get_note'));
    assert.equal(result, edited(`      get_note: '${OLD}',\n`, ''));
  });

  test('the only inline entry leaves an empty object', () => {
    const result = applyTextEdits(MODULE, removeSnapshotEntryEdits(MODULE, instanceNamed(MODULE, 'tickets'), 'open_ticket'));
    assert.equal(result, edited(`"toolsSnapshot": { "open_ticket": "${OLD}" }`, '"toolsSnapshot": {}'));
  });
});

describe('source: include entries and names', () => {
  test('an include entry is added in the call’s quotes', () => {
    const text = edited("toolsSnapshot: {\n      // read-only tools first", "include: ['search_notes'],\n    toolsSnapshot: {\n      // read-only tools first");
    const result = applyTextEdits(text, addIncludeEntryEdits(text, instanceNamed(text, 'notes'), 'get_note', SOURCE));
    assert.equal(result, text.replace("include: ['search_notes'],", "include: ['search_notes', 'get_note'],"));
  });

  test('a replaced name keeps the literal’s quote; an unquoted key stays unquoted when it can', () => {
    const instance = instanceNamed(MODULE, 'notes');
    const key = instance.snapshot.find((entry) => entry.tool.value === 'get_note')!.tool.span;
    assert.equal(applyTextEdits(MODULE, [replaceStringEdit(key, 'read_note', MODULE)]), edited(`      get_note: '${OLD}',`, `      read_note: '${OLD}',`));
    assert.equal(applyTextEdits(MODULE, [replaceStringEdit(key, 'read-note', MODULE)]), edited(`      get_note: '${OLD}',`, `      'read-note': '${OLD}',`));
    const name = instance.name!.span;
    assert.equal(applyTextEdits(MODULE, [replaceStringEdit(name, "it's", MODULE)]), edited("  name: 'notes',", "  name: 'it\\'s',"));
  });
});
