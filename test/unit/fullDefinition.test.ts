/**
 * Changes beyond the pinned fields (core/verify/fullDefinition.ts): the full-definition store entry, its
 * reading (old or foreign entries report nothing), each annotation flip and metadata change, and
 * TP408/TP409 from a real verification of verified and drifted pins.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeConnector } from '../../server/src/core/documents/connector';
import { storeEntries } from '../../server/src/core/documents/fixes';
import { changesOutsideThePin, fullDefinitionContent, fullDefinitionPath, isOutsideThePinData, legacyFullDefinitionPath, pinPartsOfEntryName, readFullDefinition, serverSlug } from '../../server/src/core/verify/fullDefinition';
import { type ListedTool, readListedTool } from '../../server/src/core/verify/listing';
import { toolPin } from '../../server/src/core/pins/pins';
import { connectorServers, ServerRegistry } from '../../server/src/core/verify/registry';
import { verifyConnector } from '../../server/src/core/verify/verify';

const BASE = { name: 'add_numbers', description: 'Add two numbers.', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } };
const PIN = toolPin(BASE);
const HEX = PIN.slice('sha256:'.length);

const tool = (extra: Record<string, unknown>): Record<string, unknown> => ({ ...BASE, ...extra });

describe('the full-definition entry', () => {
  test('is the canonical {version, tool} of the tool as served, keyed by the server and the pin', () => {
    const served = tool({ annotations: { readOnlyHint: true }, title: 'Add' });
    const content = fullDefinitionContent(served)!;
    assert.equal(content, JSON.stringify({ tool: { annotations: { readOnlyHint: true }, description: 'Add two numbers.', inputSchema: { properties: { a: { type: 'number' } }, type: 'object' }, name: 'add_numbers', title: 'Add' }, version: 1 }));
    assert.match(fullDefinitionPath('sha256', HEX, 'add_numbers', 'notes_tools'), new RegExp(`^\\.toolpin/store/full-notes_tools-[0-9a-f]{8}-sha256-${HEX}\\.json$`));
    assert.match(fullDefinitionPath('fnv1a64', 'a76fe8d6d023fca0', 'echo_upper', 'notes'), /^\.toolpin\/store\/full-notes-[0-9a-f]{8}-fnv1a64-a76fe8d6d023fca0-[0-9a-f]{16}\.json$/);
    assert.notEqual(fullDefinitionPath('fnv1a64', 'a76fe8d6d023fca0', 'a', 's'), fullDefinitionPath('fnv1a64', 'a76fe8d6d023fca0', 'b', 's'), 'two tools sharing a schema pin keep two entries');
    assert.notEqual(fullDefinitionPath('sha256', HEX, 'add_numbers', 'one'), fullDefinitionPath('sha256', HEX, 'add_numbers', 'two'), 'two servers serving one tool keep two entries');
    assert.equal(fullDefinitionPath('sha256', HEX, 'add_numbers', undefined), `.toolpin/store/full-sha256-${HEX}.json`, 'a server that is not known: the entry without one');
    assert.equal(legacyFullDefinitionPath('sha256', HEX, 'add_numbers'), `.toolpin/store/full-sha256-${HEX}.json`);
    assert.deepEqual(readFullDefinition(content, 'add_numbers'), served);
  });

  test('a server\'s part of the name is a plain file name, and names that read alike never share it', () => {
    const names = ['notes', 'Notes', 'my server', 'my_server', 'x/../../etc', 'ünïcode ✓', '', 'a'.repeat(300), 'sha256'];
    const slugs = names.map(serverSlug);
    assert.equal(new Set(slugs.map((slug) => slug.toLowerCase())).size, names.length, 'distinct even on a case-insensitive disk');
    for (const slug of slugs) {
      assert.match(slug, /^[a-z0-9_.]{0,32}-[0-9a-f]{8}$/);
      const name = `full-${slug}-sha256-${HEX}.json`;
      assert.ok(pinPartsOfEntryName(name)!.includes(`sha256-${HEX}`), name);
    }
    assert.deepEqual(pinPartsOfEntryName(`full-sha256-${HEX}.json`), [`sha256-${HEX}`]);
    assert.equal(pinPartsOfEntryName(`sha256-${HEX}.json`), undefined);
  });

  test('storeEntries writes it beside the pinned content, and not when it is unknown', () => {
    const content = fullDefinitionContent(BASE)!;
    assert.deepEqual(storeEntries('sha256', HEX, '{"x":1}', { tool: 'add_numbers', server: 'notes', content }).map((entry) => entry.relativePath), [`.toolpin/store/sha256-${HEX}.json`, `.toolpin/store/full-${serverSlug('notes')}-sha256-${HEX}.json`]);
    assert.equal(storeEntries('sha256', HEX, '{"x":1}', { tool: 'add_numbers', server: 'notes', content: undefined }).length, 1);
    assert.equal(storeEntries('sha256', HEX, '{"x":1}').length, 1);
  });

  test('an entry this build does not read reports nothing: garbage, another version, another tool', () => {
    assert.equal(readFullDefinition('not json', 'add_numbers'), undefined);
    assert.equal(readFullDefinition(JSON.stringify({ version: 2, tool: BASE }), 'add_numbers'), undefined);
    assert.equal(readFullDefinition(JSON.stringify({ version: 1, tool: BASE }), 'echo_upper'), undefined);
    assert.equal(readFullDefinition(JSON.stringify({ version: 1, tool: [] }), 'add_numbers'), undefined);
    assert.equal(fullDefinitionContent([1]), undefined);
    assert.equal(fullDefinitionContent({ name: 'x', n: Number.NaN }), undefined, 'not plain JSON');
  });
});

describe('changes outside the pin', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, { behaviour: string[]; metadata: string[] }]> = [
    ['readOnlyHint true → false is a behaviour change', { annotations: { readOnlyHint: true } }, { annotations: { readOnlyHint: false } }, { behaviour: ['annotations.readOnlyHint true → false'], metadata: [] }],
    ['a vanished readOnlyHint: true is a flip to its default false', { annotations: { readOnlyHint: true, destructiveHint: false } }, {}, { behaviour: ['annotations.readOnlyHint true → false', 'annotations.destructiveHint false → true'], metadata: [] }],
    ['destructiveHint false → true is a behaviour change', { annotations: { destructiveHint: false } }, { annotations: { destructiveHint: true } }, { behaviour: ['annotations.destructiveHint false → true'], metadata: [] }],
    ['openWorldHint false → true is a behaviour change', { annotations: { openWorldHint: false } }, { annotations: { openWorldHint: true } }, { behaviour: ['annotations.openWorldHint false → true'], metadata: [] }],
    ['a safer flip is information', { annotations: { readOnlyHint: false } }, { annotations: { readOnlyHint: true } }, { behaviour: [], metadata: ['annotations.readOnlyHint false → true'] }],
    ['destructiveHint on a read-only tool is information', { annotations: { readOnlyHint: true, destructiveHint: false } }, { annotations: { readOnlyHint: true, destructiveHint: true } }, { behaviour: [], metadata: ['annotations.destructiveHint false → true'] }],
    ['idempotentHint true → false is information', { annotations: { idempotentHint: true } }, { annotations: {} }, { behaviour: [], metadata: ['annotations.idempotentHint true → false'] }],
    ['a title change is information', { title: 'Add' }, { title: 'Sum' }, { behaviour: [], metadata: ['title "Add" → "Sum"'] }],
    ['an annotations.title counts as the title', {}, { annotations: { title: 'Sum' } }, { behaviour: [], metadata: ['title none → "Sum"'] }],
    ['an outputSchema change is information', { outputSchema: { type: 'object' } }, { outputSchema: { type: 'object', properties: { sum: { type: 'number' } } } }, { behaviour: [], metadata: ['outputSchema changed'] }],
    ['an added outputSchema is information', {}, { outputSchema: { type: 'object' } }, { behaviour: [], metadata: ['outputSchema added'] }],
    ['explicit defaults equal absent hints', { annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true } }, {}, { behaviour: [], metadata: [] }],
    ['nothing outside the pin changed', { annotations: { readOnlyHint: true }, title: 'Add' }, { annotations: { readOnlyHint: true }, title: 'Add' }, { behaviour: [], metadata: [] }],
  ];
  for (const [name, before, after, expected] of cases) {
    test(name, () => assert.deepEqual(changesOutsideThePin(tool(before), tool(after)), expected));
  }
});

describe('TP408 and TP409 from verification', () => {
  function verify(pin: string, stored: Record<string, unknown> | undefined, live: Record<string, unknown>) {
    const text = JSON.stringify({ name: 'notes_tools', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { add_numbers: pin } } });
    const model = analyzeConnector(text).model;
    const definitions = connectorServers('/w/notes.connector.json', model, '/w');
    const storedText = stored ? fullDefinitionContent(stored) : undefined;
    return verifyConnector('/w/notes.connector.json', model, definitions, {
      registry: new ServerRegistry(definitions),
      now: 0,
      listingFor: () => ({ status: 'listed', listing: { tools: [readListedTool(live) as ListedTool], malformedEntries: [], duplicateNames: [], pages: 1, incomplete: undefined, ttlMs: undefined }, listedAt: 0 }),
      fullDefinition: (parsed, name) => (parsed.hex === pin.slice('sha256:'.length) && name === 'add_numbers' ? storedText : undefined),
    });
  }

  test('a verified pin whose tool stopped being read-only: TP408 warning, the verdict stays verified, and a fix records the live definition', () => {
    const live = tool({ annotations: { readOnlyHint: false }, title: 'Sum' });
    const result = verify(PIN, tool({ annotations: { readOnlyHint: true }, title: 'Add' }), live);
    assert.equal(result.verdicts[0]!.state, 'verified');
    assert.deepEqual(result.problems.map((found) => [found.code, found.severity]), [['TP408', 'warning'], ['TP409', 'information']]);
    assert.equal(result.problems[0]!.message, 'connector "notes_tools": tool "add_numbers" on server "notes_tools" changed how it behaves since it was pinned, which the pin does not cover: annotations.readOnlyHint true → false. Review what a call may now do.');
    assert.equal(result.problems[1]!.message, 'connector "notes_tools": tool "add_numbers" on server "notes_tools" changed outside the pinned fields since it was pinned: title "Add" → "Sum"');
    const data = result.problems[0]!.data;
    assert.ok(isOutsideThePinData(data));
    assert.deepEqual(data.entry, { relativePath: `.toolpin/store/full-${serverSlug('notes_tools')}-sha256-${HEX}.json`, content: fullDefinitionContent(live) });
  });

  test('a drifted pin reports the flip too, beside TP400, without an entry of its own (the re-pin writes one)', () => {
    const wrong = `sha256:${'0'.repeat(64)}`;
    const result = verify(wrong, tool({ annotations: { destructiveHint: false } }), tool({ description: 'Adds.', annotations: { destructiveHint: true } }));
    assert.equal(result.verdicts[0]!.state, 'drifted');
    assert.deepEqual(result.problems.map((found) => found.code), ['TP400', 'TP408']);
    assert.equal((result.problems[1]!.data as { entry?: unknown }).entry, undefined);
    assert.equal(typeof (result.problems[0]!.data as { liveDefinition?: unknown }).liveDefinition, 'string', 'the re-pin payload carries the full definition');
  });

  test('an old store without the entry reports nothing beyond the pin', () => {
    const result = verify(PIN, undefined, tool({ annotations: { readOnlyHint: false } }));
    assert.deepEqual(result.problems, []);
  });
});
