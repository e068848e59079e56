/**
 * Renames (TP401): a pinned tool that is gone while exactly one served tool that no pin names has
 * its input schema (or its description, or is the same tool under a new name) is reported as
 * "gone; NEW looks like its rename", with the rename in the payload for the quick fix. Verified
 * against listings given as data, as the core receives them.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { analyzeConnector } from '../../server/src/core/documents/connector';
import { applyTextEdits, replacePinEdit, replaceStringEdit } from '../../server/src/core/documents/fixes';
import { readListedTool, type ListedTool } from '../../server/src/core/verify/listing';
import { renameOf } from '../../server/src/core/verify/payloads';
import { isParsedPin, parsePin, schemaPin, schemaPinContent, toolPin, toolPinContent } from '../../server/src/core/pins/pins';
import { connectorServers, type ServerDefinition, ServerRegistry } from '../../server/src/core/verify/registry';
import { type ServerListing, type VerificationContext, verifyBlueprint, verifyConnector } from '../../server/src/core/verify/verify';

const WORKSPACE = path.resolve('/workspace');
const SCHEMA = { type: 'object', properties: { path: { type: 'string', description: 'The file to read' } }, required: ['path'] };
const READ_FILE = { name: 'read_file', description: 'Read a file.', inputSchema: SCHEMA };
const READ_TEXT_FILE = { name: 'read_text_file', description: 'Read a file as text.', inputSchema: SCHEMA };
const WRITE_FILE = { name: 'write_file', description: 'Write a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } };

function listed(tools: readonly unknown[]): ServerListing {
  const read = tools.map((tool) => readListedTool(tool)).filter((tool): tool is ListedTool => typeof tool !== 'string');
  return { status: 'listed', listing: { tools: read, malformedEntries: [], duplicateNames: [], pages: 1, incomplete: undefined, ttlMs: undefined }, listedAt: 0 };
}

function context(entries: ReadonlyArray<[ServerDefinition, ServerListing]>, store: Record<string, string> = {}): VerificationContext {
  const listings = new Map(entries);
  return {
    registry: new ServerRegistry(entries.map(([definition]) => definition)),
    now: 0,
    checkArguments: false,
    listingFor: (definition) => listings.get(definition) ?? { status: 'pending' },
    pinnedContent: (pin) => store[`${pin.algorithm}:${pin.hex}`],
  };
}

const fs: ServerDefinition = {
  name: 'fs',
  origin: { kind: 'mcp-json', file: path.join(WORKSPACE, '.mcp.json') },
  transport: { type: 'stdio', command: 'node', args: [], env: {} } as unknown as ServerDefinition['transport'],
  auth: undefined,
  unusable: undefined,
  cwd: WORKSPACE,
};

function blueprint(tool: string, pin: string, extra = ''): string {
  return `{\n  "blueprint": "renames", "formatVersion": 1,\n  "steps": [\n    { "id": "read", "effect": "mcp.invoke", "input": { "toolName": "${tool}", "expectedSchemaHash": "${pin}", "server": "fs" } }${extra}\n  ]\n}`;
}

describe('renames of blueprint steps (schema pins)', () => {
  test('read_file became read_text_file with the same input schema: TP401 says so and carries the rename', () => {
    const text = blueprint('read_file', schemaPin(SCHEMA));
    const { problems } = verifyBlueprint(analyzeBlueprint(text).model, context([[fs, listed([READ_TEXT_FILE, WRITE_FILE])]]));
    assert.deepEqual(problems.map((found) => found.code), ['TP401']);
    assert.match(problems[0]!.message, /tool "read_file" is not served by server "fs" \(toolNotFound\); "read_text_file" looks like its rename \(the same input schema\)$/);
    assert.deepEqual(renameOf(problems[0]!.data), { tool: 'read_text_file', server: 'fs', match: 'input schema', live: schemaPin(SCHEMA), liveContent: schemaPinContent(SCHEMA) });
    // The fix the editor offers: rename toolName; the schema pin is the same, so the pin stays.
    const model = analyzeBlueprint(text).model;
    const fixed = applyTextEdits(text, [replaceStringEdit(model.steps[0]!.mcp!.toolName!.span, 'read_text_file')]);
    const again = verifyBlueprint(analyzeBlueprint(fixed).model, context([[fs, listed([READ_TEXT_FILE, WRITE_FILE])]]));
    assert.deepEqual(again.problems, []);
    assert.deepEqual(again.verdicts.map((verdict) => verdict.state), ['verified']);
  });

  test('no rename is guessed when two served tools have the schema, or the only match is already a step', () => {
    const two = verifyBlueprint(analyzeBlueprint(blueprint('read_file', schemaPin(SCHEMA))).model, context([[fs, listed([READ_TEXT_FILE, { ...READ_TEXT_FILE, name: 'read_media_file' }])]]));
    assert.equal(renameOf(two.problems[0]!.data), undefined);
    assert.doesNotMatch(two.problems[0]!.message, /looks like its rename/);
    const used = `,\n    { "id": "text", "effect": "mcp.invoke", "input": { "toolName": "read_text_file", "expectedSchemaHash": "${schemaPin(SCHEMA)}", "server": "fs" } }`;
    const taken = verifyBlueprint(analyzeBlueprint(blueprint('read_file', schemaPin(SCHEMA), used)).model, context([[fs, listed([READ_TEXT_FILE])]]));
    assert.deepEqual(taken.problems.map((found) => found.code), ['TP401']);
    assert.equal(renameOf(taken.problems[0]!.data), undefined);
  });

  test('a different schema is no rename', () => {
    const { problems } = verifyBlueprint(analyzeBlueprint(blueprint('read_file', schemaPin(SCHEMA))).model, context([[fs, listed([WRITE_FILE])]]));
    assert.equal(renameOf(problems[0]!.data), undefined);
  });
});

function connector(snapshot: Record<string, string>, include?: string[]): string {
  return JSON.stringify({ name: 'fs', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node', args: ['./server.mjs'] }, ...(include ? { include } : {}), toolsSnapshot: snapshot } }, null, 2);
}

function verifyConnectorText(text: string, tools: readonly unknown[], store: Record<string, string> = {}) {
  const file = path.join(WORKSPACE, 'fs.connector.json');
  const analysis = analyzeConnector(text);
  const definitions = connectorServers(file, analysis.model, WORKSPACE);
  return { analysis, result: verifyConnector(file, analysis.model, definitions, context([[definitions[0]!, listed(tools)]], store)) };
}

describe('renames of connector snapshot entries (tool pins)', () => {
  test('the same tool under a new name is found without the store', () => {
    const renamed = { ...READ_FILE, name: 'read_text_file' };
    const { result } = verifyConnectorText(connector({ read_file: toolPin(READ_FILE) }), [renamed, WRITE_FILE]);
    // Without include every served tool is selected, so the two unpinned ones are TP405 too.
    assert.deepEqual(result.problems.map((found) => found.code), ['TP401', 'TP405', 'TP405']);
    assert.match(result.problems[0]!.message, /pinned tool "read_file" is no longer served by server "fs"; "read_text_file" looks like its rename \(the same tool under a new name\)$/);
    assert.deepEqual(renameOf(result.problems[0]!.data), { tool: 'read_text_file', server: 'fs', match: 'content', live: toolPin(renamed), liveContent: toolPinContent(renamed) });
  });

  test('with the pinned content in the store: the same input schema (the description changed too)', () => {
    const pin = toolPin(READ_FILE);
    const store = { [pin]: toolPinContent(READ_FILE) };
    const { analysis, result } = verifyConnectorText(connector({ read_file: pin, write_file: toolPin(WRITE_FILE) }, ['read_file', 'write_file']), [READ_TEXT_FILE, WRITE_FILE], store);
    const rename = renameOf(result.problems[0]!.data);
    assert.deepEqual(rename, { tool: 'read_text_file', server: 'fs', match: 'input schema', live: toolPin(READ_TEXT_FILE), liveContent: toolPinContent(READ_TEXT_FILE) });
    // The quick fix's edits (features/codeActions.ts): the key, the include entry and the pin.
    const text = connector({ read_file: pin, write_file: toolPin(WRITE_FILE) }, ['read_file', 'write_file']);
    const instance = analysis.model.instances[0]!;
    const entry = instance.snapshot.find((candidate) => candidate.tool.value === 'read_file')!;
    const included = instance.include!.find((candidate) => candidate.value === 'read_file')!;
    const fixed = applyTextEdits(text, [replaceStringEdit(entry.tool.span, rename!.tool), replaceStringEdit(included.span, rename!.tool), replacePinEdit(entry.pin.span, rename!.live)]);
    const again = verifyConnectorText(fixed, [READ_TEXT_FILE, WRITE_FILE]);
    assert.deepEqual(again.result.problems.map((found) => found.code), []);
    assert.deepEqual(again.result.verdicts.map((verdict) => `${verdict.tool} ${verdict.state}`), ['read_text_file verified', 'write_file verified']);
  });

  test('without the store and with a rewritten description, nothing is guessed', () => {
    const { result } = verifyConnectorText(connector({ read_file: toolPin(READ_FILE) }), [READ_TEXT_FILE]);
    assert.deepEqual(result.problems.map((found) => found.code), ['TP401', 'TP405']);
    assert.equal(renameOf(result.problems[0]!.data), undefined);
  });

  test('a bare pin gets its rename in the bare style', () => {
    const renamed = { ...READ_FILE, name: 'read_text_file' };
    const { result } = verifyConnectorText(connector({ read_file: toolPin(READ_FILE).slice('sha256:'.length) }), [renamed]);
    const rename = renameOf(result.problems[0]!.data)!;
    assert.equal(rename.live, toolPin(renamed).slice('sha256:'.length));
    const parsed = parsePin(rename.live, 'sha256');
    assert.ok(isParsedPin(parsed));
  });
});
