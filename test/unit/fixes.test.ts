/**
 * The quick fixes' pure core, data-driven: each edit is applied to a real document text and the
 * result compared byte for byte, with comments, trailing commas and the first, last and only
 * element of a list around it; and the "did you mean …?" suggestions of TP406 and TP404 as the
 * verification reports them (message suffix and payload).
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';

import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { analyzeConnector, type ConnectorInstanceModel } from '../../server/src/core/documents/connector';
import { addIncludeEntryEdits, applyTextEdits, lowercasedPin, lowercasePinEdit, removeIncludeEntryEdits, removeSnapshotEntryEdits, replaceStringEdit } from '../../server/src/core/documents/fixes';
import type { CollectedListing, ListedTool } from '../../server/src/core/verify/listing';
import { isUnknownServerData, isUnservedIncludeData } from '../../server/src/core/verify/payloads';
import { readListedTool } from '../../server/src/core/verify/listing';
import type { Problem } from '../../server/src/core/problems';
import { connectorServers, type ServerDefinition, ServerRegistry } from '../../server/src/core/verify/registry';
import { closestName, typoLimit } from '../../server/src/core/verify/suggest';
import { type ServerListing, type VerificationContext, verifyBlueprint, verifyConnector } from '../../server/src/core/verify/verify';

const SCHEMA_HEX = '8465e642a9b1c0d3';
const TOOL_HEX = 'e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

function covers(text: string, found: Problem): string {
  return text.slice(found.span.offset, found.span.offset + found.span.length);
}

function onlyProblem(problems: readonly Problem[], code: string): Problem {
  const found = problems.filter((candidate) => candidate.code === code);
  assert.equal(found.length, 1, `exactly one ${code}; got ${problems.map((candidate) => `${candidate.code} ${candidate.message}`).join(' | ')}`);
  return found[0]!;
}

// ---------------------------------------------------------------------------------------------
// Lower-casing a pin (TP204, TP306)
// ---------------------------------------------------------------------------------------------

describe('lower-case the pin', () => {
  function blueprintWith(pin: string): string {
    return `{
  // a blueprint with a pin in uppercase hex
  "blueprint": "shout", "formatVersion": 1,
  "steps": [
    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "expectedSchemaHash": ${pin} /* pinned by hand */, } },
  ],
}
`;
  }

  test('TP204: an fnv1a64 pin in uppercase hex becomes lowercase, and nothing else changes', () => {
    const text = blueprintWith(`"fnv1a64:${SCHEMA_HEX.toUpperCase()}"`);
    const found = onlyProblem(analyzeBlueprint(text).problems, 'TP204');
    const edit = lowercasePinEdit(text, found.span, 'fnv1a64');
    assert.ok(edit, 'a lower-casing is offered');
    const result = applyTextEdits(text, [edit]);
    assert.equal(result, blueprintWith(`"fnv1a64:${SCHEMA_HEX}"`));
    assert.deepEqual(analyzeBlueprint(result).problems, [], 'the pin is then well formed');
  });

  test('TP204: an uppercase prefix and mixed case are lower-cased too, and an escape is written plainly', () => {
    for (const written of [`"FNV1A64:${SCHEMA_HEX.toUpperCase()}"`, `"Fnv1a64:8465E642a9B1c0D3"`, `"fnv1a64:\\u0038465E642A9B1C0D3"`]) {
      const text = blueprintWith(written);
      const found = onlyProblem(analyzeBlueprint(text).problems, 'TP204');
      const edit = lowercasePinEdit(text, found.span, 'fnv1a64');
      assert.equal(edit && applyTextEdits(text, [edit]), blueprintWith(`"fnv1a64:${SCHEMA_HEX}"`), written);
    }
  });

  test('TP204: not offered when lower-casing alone does not make a well-formed pin', () => {
    for (const written of [
      `"fnv1a64:8465E642"`, // too short
      `"fnv1a64:8465E642A9B1C0DZ"`, // not hex
      `"sha256:${TOOL_HEX.toUpperCase()}"`, // a tool pin in a blueprint
      `"8465E642A9B1C0D3"`, // no prefix: schema pins always have one
      `"fnv1a64:0000"`, // already lowercase, malformed for another reason
    ]) {
      const text = blueprintWith(written);
      const found = onlyProblem(analyzeBlueprint(text).problems, 'TP204');
      assert.equal(lowercasePinEdit(text, found.span, 'fnv1a64'), undefined, written);
    }
  });

  test('not offered at a span that is not a string literal (a stale range)', () => {
    const text = blueprintWith(`"fnv1a64:${SCHEMA_HEX.toUpperCase()}"`);
    const found = onlyProblem(analyzeBlueprint(text).problems, 'TP204');
    assert.equal(lowercasePinEdit(text, { offset: found.span.offset + 1, length: found.span.length - 1 }, 'fnv1a64'), undefined);
    assert.equal(lowercasePinEdit(text, { offset: 0, length: 1 }, 'fnv1a64'), undefined);
    assert.equal(lowercasePinEdit(text, { offset: text.length + 5, length: 3 }, 'fnv1a64'), undefined);
  });

  function connectorWith(pins: string): string {
    return `{
  "name": "github_tools", "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "node" },
    "toolsSnapshot": {
      ${pins}
    }
  }
}`;
  }

  test('TP306: prefixed and bare sha256 pins keep their style; the neighbours and comments stay', () => {
    for (const [written, expected] of [
      [`"sha256:${TOOL_HEX.toUpperCase()}"`, `"sha256:${TOOL_HEX}"`],
      [`"SHA256:${TOOL_HEX}"`, `"sha256:${TOOL_HEX}"`],
      [`"${TOOL_HEX.toUpperCase()}"`, `"${TOOL_HEX}"`],
    ] as const) {
      const pins = (pin: string): string => `"echo_upper": ${pin}, // the reviewed one\n      "add_numbers": "sha256:${'1'.repeat(64)}",`;
      const text = connectorWith(pins(written));
      const found = onlyProblem(analyzeConnector(text).problems, 'TP306');
      const edit = lowercasePinEdit(text, found.span, 'sha256');
      assert.equal(edit && applyTextEdits(text, [edit]), connectorWith(pins(expected)), written);
      assert.deepEqual(analyzeConnector(applyTextEdits(text, [edit!])).problems, []);
    }
  });

  test('lowercasedPin: only when the value changes and then parses', () => {
    assert.equal(lowercasedPin(`fnv1a64:${SCHEMA_HEX}`, 'fnv1a64'), undefined, 'already lowercase: nothing to do');
    assert.equal(lowercasedPin(`fnv1a64:${SCHEMA_HEX.toUpperCase()}`, 'sha256'), undefined, 'the wrong kind of pin');
    // Characters outside ASCII that lower-case to ASCII letters (KELVIN SIGN → k) never make hex.
    assert.equal(lowercasedPin(`fnv1a64:8465e642a9b1c0d\u212A`, 'fnv1a64'), undefined);
  });
});

// ---------------------------------------------------------------------------------------------
// include entries: remove and add
// ---------------------------------------------------------------------------------------------

function connectorWithInclude(include: string): string {
  return `{
  "name": "github_tools",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "node" },
    "include": ${include}
  }
}`;
}

function onlyInstance(text: string): ConnectorInstanceModel {
  const analysis = analyzeConnector(text);
  assert.deepEqual(analysis.problems.filter((found) => found.code === 'TP100'), [], 'the test connector parses');
  assert.equal(analysis.model.instances.length, 1);
  return analysis.model.instances[0]!;
}

/** Removes the include entry spelled `needle` (its `index`-th occurrence) and returns the text. */
function removeEntry(include: string, needle: string, occurrence = 0): string {
  const text = connectorWithInclude(include);
  const instance = onlyInstance(text);
  const entries = (instance.include ?? []).filter((entry) => entry.value === needle);
  assert.ok(entries[occurrence], `the include lists ${needle}`);
  return applyTextEdits(text, removeIncludeEntryEdits(text, instance, entries[occurrence]!.span.offset));
}

describe('remove an include entry', () => {
  const inline: Array<[string, string, string, string]> = [
    ['the only entry', `["x"]`, 'x', `[]`],
    ['the only entry, with spaces', `[ "x" ]`, 'x', `[]`],
    ['the only entry, with a trailing comma', `["x",]`, 'x', `[]`],
    ['the first of two', `["x", "b"]`, 'x', `["b"]`],
    ['the first of two, with spaces', `[ "x", "b" ]`, 'x', `[ "b" ]`],
    ['a middle one', `["a", "x", "b"]`, 'x', `["a", "b"]`],
    ['the last of two', `["a", "x"]`, 'x', `["a"]`],
    ['the last, with a trailing comma', `["a", "x",]`, 'x', `["a",]`],
    ['the last, with a trailing comma and spaces', `[ "a", "x", ]`, 'x', `[ "a", ]`],
    ['before a block comment', `["a", "x" /* why */, "b"]`, 'x', `["a", /* why */ "b"]`],
    ['after a block comment', `["a", /* keep */ "x"]`, 'x', `["a" /* keep */]`],
  ];
  for (const [name, include, needle, expected] of inline) {
    test(`inline: ${name}`, () => {
      const result = removeEntry(include, needle);
      assert.equal(result, connectorWithInclude(expected));
      assert.deepEqual(analyzeConnector(result).problems, [], 'the result is a clean connector');
    });
  }

  const lines: Array<[string, string, string, string]> = [
    ['the only entry', `[\n      "x"\n    ]`, 'x', `[\n    ]`],
    ['the first', `[\n      "x",\n      "b"\n    ]`, 'x', `[\n      "b"\n    ]`],
    ['a middle one', `[\n      "a",\n      "x",\n      "b"\n    ]`, 'x', `[\n      "a",\n      "b"\n    ]`],
    ['the last', `[\n      "a",\n      "x"\n    ]`, 'x', `[\n      "a"\n    ]`],
    ['the last, with a trailing comma', `[\n      "a",\n      "x",\n    ]`, 'x', `[\n      "a",\n    ]`],
    [
      'the last, keeping the comment of the one before',
      `[\n      "a", // the one we use\n      "x"\n    ]`,
      'x',
      `[\n      "a" // the one we use\n    ]`,
    ],
    [
      'keeping a comment line above and the comment after it',
      `[\n      // selected tools\n      "x", // not served any more\n      "b"\n    ]`,
      'x',
      `[\n      // selected tools\n      // not served any more\n      "b"\n    ]`,
    ],
  ];
  for (const [name, include, needle, expected] of lines) {
    test(`one per line: ${name}`, () => {
      const result = removeEntry(include, needle);
      assert.equal(result, connectorWithInclude(expected));
      assert.deepEqual(analyzeConnector(result).problems, []);
    });
  }

  test('CRLF line breaks: the line goes with its CRLF', () => {
    const include = `[\r\n      "a",\r\n      "x",\r\n      "b"\r\n    ]`;
    assert.equal(removeEntry(include, 'x'), connectorWithInclude(`[\r\n      "a",\r\n      "b"\r\n    ]`));
  });

  test('of two equal entries, exactly the one at the offset goes (the duplicate of TP308)', () => {
    assert.equal(removeEntry(`["a", "x", "b", "x"]`, 'x', 1), connectorWithInclude(`["a", "x", "b"]`));
    assert.equal(removeEntry(`["a", "x", "b", "x"]`, 'x', 0), connectorWithInclude(`["a", "b", "x"]`));
  });

  test('nothing at an offset that is not an entry, or without an include', () => {
    const text = connectorWithInclude(`["a"]`);
    assert.deepEqual(removeIncludeEntryEdits(text, onlyInstance(text), 3), []);
    const without = `{ "name": "n", "provider": "mcp", "providerConfig": { "transport": { "kind": "stdio", "command": "node" } } }`;
    assert.deepEqual(removeIncludeEntryEdits(without, onlyInstance(without), 10), []);
  });

  test('the snapshot member removal shares the rules: inline neighbours keep one space', () => {
    const text = `{ "name": "n", "provider": "mcp", "providerConfig": { "transport": { "kind": "stdio", "command": "node" }, "toolsSnapshot": { "a": "sha256:${TOOL_HEX}", "x": "sha256:${TOOL_HEX}", "b": "sha256:${TOOL_HEX}" } } }`;
    const result = applyTextEdits(text, removeSnapshotEntryEdits(text, onlyInstance(text), 'x'));
    assert.equal(result, text.replace(`"x": "sha256:${TOOL_HEX}", `, ''));
  });
});

describe('add an include entry', () => {
  const cases: Array<[string, string, string]> = [
    ['to an empty include', `[]`, `[ "x" ]`],
    ['inline', `["a", "b"]`, `["a", "b", "x"]`],
    ['inline, with a trailing comma', `["a", "b",]`, `["a", "b", "x",]`],
    ['one per line', `[\n      "a",\n      "b"\n    ]`, `[\n      "a",\n      "b",\n      "x"\n    ]`],
    ['one per line, with a trailing comma', `[\n      "a",\n      "b",\n    ]`, `[\n      "a",\n      "b",\n      "x",\n    ]`],
    ['after the line comment of the last entry', `[\n      "a", // first\n      "b" // second\n    ]`, `[\n      "a", // first\n      "b", // second\n      "x"\n    ]`],
  ];
  for (const [name, include, expected] of cases) {
    test(name, () => {
      const text = connectorWithInclude(include);
      const result = applyTextEdits(text, addIncludeEntryEdits(text, onlyInstance(text), 'x'));
      assert.equal(result, connectorWithInclude(expected));
      assert.deepEqual(analyzeConnector(result).problems, []);
    });
  }

  test('nothing when the tool is listed already, or when there is no include', () => {
    const text = connectorWithInclude(`["x"]`);
    assert.deepEqual(addIncludeEntryEdits(text, onlyInstance(text), 'x'), []);
    const without = `{ "name": "n", "provider": "mcp", "providerConfig": { "transport": { "kind": "stdio", "command": "node" } } }`;
    assert.deepEqual(addIncludeEntryEdits(without, onlyInstance(without), 'x'), []);
  });

  test('TP305 either way: adding the pinned tool to include, or removing its pin, leaves a clean connector', () => {
    const text = `{
  "name": "github_tools", "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "stdio", "command": "node" },
    "include": ["a"],
    "toolsSnapshot": { "a": "sha256:${TOOL_HEX}", "x": "sha256:${TOOL_HEX}" }
  }
}`;
    const found = onlyProblem(analyzeConnector(text).problems, 'TP305');
    assert.equal(covers(text, found), '"x"');
    const added = applyTextEdits(text, addIncludeEntryEdits(text, onlyInstance(text), 'x'));
    assert.equal(added, text.replace(`["a"]`, `["a", "x"]`));
    assert.deepEqual(analyzeConnector(added).problems, []);
    const removed = applyTextEdits(text, removeSnapshotEntryEdits(text, onlyInstance(text), 'x'));
    assert.equal(removed, text.replace(`, "x": "sha256:${TOOL_HEX}"`, ''));
    assert.deepEqual(analyzeConnector(removed).problems, []);
  });
});

// ---------------------------------------------------------------------------------------------
// "Did you mean …?"
// ---------------------------------------------------------------------------------------------

describe('closestName', () => {
  const cases: Array<[string, string[], string | undefined, string]> = [
    ['memroy', ['everything', 'memory'], 'memory', 'a transposition in a 6-letter name (distance 2)'],
    ['memor', ['everything', 'memory'], 'memory', 'a missing letter'],
    ['Memory', ['memory'], 'memory', 'case alone'],
    ['evrything', ['everything', 'memory'], 'everything', 'a missing letter in a long name'],
    ['memroy', ['memory', 'memroyy'], 'memroyy', 'the nearer one wins (distance 1 against 2)'],
    ['mem', ['memory'], undefined, 'too far: 3 edits'],
    ['fs', ['gh'], undefined, 'short names: at most 1 edit, and these differ by 2'],
    ['fs', ['fx'], 'fx', 'short names: 1 edit'],
    ['memroy', ['memrow', 'memrox'], undefined, 'a tie is no suggestion'],
    ['memory', ['memory'], undefined, 'the name itself is never suggested'],
    ['xyzzy', [], undefined, 'no candidates'],
  ];
  for (const [name, candidates, expected, why] of cases) {
    test(`${name} among [${candidates.join(', ')}] → ${expected ?? 'none'} (${why})`, () => {
      assert.equal(closestName(name, candidates), expected);
    });
  }

  test('the limit: 1 edit up to 5 characters, 2 from 6 on', () => {
    assert.deepEqual([1, 2, 3, 5, 6, 8, 30].map(typoLimit), [1, 1, 1, 1, 2, 2, 2]);
  });
});

const WORKSPACE = path.join(path.sep, 'workspace');
const NOW = Date.UTC(2026, 7, 20, 10, 15, 0);

function definition(name: string): ServerDefinition {
  return { name, origin: { kind: 'mcp-json', file: path.join(WORKSPACE, '.mcp.json') }, transport: { kind: 'stdio', command: 'node', args: [], env: {} }, auth: undefined, unusable: undefined, cwd: WORKSPACE };
}

function listed(tools: readonly unknown[]): ServerListing {
  const listing: CollectedListing = {
    tools: tools.map((tool) => readListedTool(tool)).filter((tool): tool is ListedTool => typeof tool !== 'string'),
    malformedEntries: [],
    duplicateNames: [],
    pages: 1,
    incomplete: undefined,
    ttlMs: undefined,
  };
  return { status: 'listed', listing, listedAt: NOW };
}

function contextOf(entries: ReadonlyArray<[ServerDefinition, ServerListing]>): VerificationContext {
  const listings = new Map(entries);
  return {
    registry: new ServerRegistry(entries.map(([defined]) => defined)),
    now: NOW,
    checkArguments: false,
    listingFor: (defined) => listings.get(defined) ?? { status: 'pending' },
  };
}

const TOOL = { name: 'echo_upper', inputSchema: { type: 'object' } };

describe('TP406: a mistyped server name', () => {
  function verifyStep(server: string, servers: readonly string[]): { text: string; found: Problem } {
    const text = `{
  "blueprint": "b", "formatVersion": 1,
  "steps": [ { "id": "s", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "${server}", "expectedSchemaHash": "fnv1a64:${SCHEMA_HEX}" } } ]
}`;
    const result = verifyBlueprint(analyzeBlueprint(text).model, contextOf(servers.map((name) => [definition(name), listed([TOOL])])));
    return { text, found: onlyProblem(result.problems, 'TP406') };
  }

  test('suggests the one close name in the message and the payload; the fix replaces the value only', () => {
    const { text, found } = verifyStep('memroy', ['everything', 'memory']);
    assert.equal(found.message, 'step "s": no server named "memroy" is configured (known: everything, memory); did you mean "memory"?');
    assert.ok(isUnknownServerData(found.data));
    assert.deepEqual(found.data, { server: 'memroy', suggestion: 'memory' });
    assert.equal(covers(text, found), '"memroy"');
    const fixed = applyTextEdits(text, [replaceStringEdit(found.span, found.data.suggestion!)]);
    assert.equal(fixed, text.replace('"server": "memroy"', '"server": "memory"'));
  });

  test('no suggestion when none is close or two are equally close; the message is as before', () => {
    for (const [server, servers] of [
      ['nowhere', ['everything', 'memory']],
      ['memroy', ['memrow', 'memrox']],
    ] as const) {
      const { found } = verifyStep(server, servers);
      assert.equal(found.message, `step "s": no server named "${server}" is configured (known: ${servers.join(', ')})`);
      assert.deepEqual(found.data, { server });
    }
  });
});

describe('TP404: an include entry that is not served', () => {
  const SERVED = ['read_file', 'write_file', 'list_directory'].map((name) => ({ name, inputSchema: { type: 'object' } }));

  function verifyInclude(include: string[]): { text: string; problems: Problem[] } {
    const text = connectorWithInclude(JSON.stringify(include));
    const analysis = analyzeConnector(text);
    const definitions = connectorServers(path.join(WORKSPACE, 'fs.connector.jsonc'), analysis.model, WORKSPACE);
    const result = verifyConnector(path.join(WORKSPACE, 'fs.connector.jsonc'), analysis.model, definitions, contextOf([[definitions[0]!, listed(SERVED)]]));
    return { text, problems: result.problems.filter((found) => found.code === 'TP404') };
  }

  test('a typo of a served tool is suggested, in the message and the payload', () => {
    const { text, problems } = verifyInclude(['read_flie', 'write_file']);
    const found = onlyProblem(problems, 'TP404');
    assert.equal(found.message, 'connector "github_tools": include names "read_flie", which server "github_tools" does not serve; the runtime drops it silently; did you mean "read_file"?');
    assert.ok(isUnservedIncludeData(found.data));
    assert.deepEqual(found.data, { tool: 'read_flie', server: 'github_tools', suggestion: 'read_file' });
    assert.equal(applyTextEdits(text, [replaceStringEdit(found.span, 'read_file')]), connectorWithInclude(JSON.stringify(['read_file', 'write_file'])));
  });

  test('a tool already included is not suggested (that would make a duplicate), nor a far one', () => {
    for (const include of [
      ['read_file', 'read_flie'],
      ['delete_everything'],
    ]) {
      const found = onlyProblem(verifyInclude(include).problems, 'TP404');
      assert.doesNotMatch(found.message, /did you mean/);
      assert.equal(isUnservedIncludeData(found.data) && found.data.suggestion, undefined);
    }
  });
});
