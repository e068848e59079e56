/**
 * The contract's reference vectors (docs/formats.md §2, "Reference vectors") and the fixture MCP
 * server's default tools (test/fixtures/servers/fixture-server.mjs), written once for every test.
 *
 * The pins here are the published expected values, not computed by Toolpin: a test that compares
 * Toolpin's hash with them checks the hashing against the contract. The tool objects are exactly
 * what the fixture server serves by default (the fixture is plain ESM and keeps its own copy;
 * test/mcp/fixtureServer.test.ts holds the two equal).
 *
 * Every export is frozen, so a test that spreads a tool to rewrite it cannot change the vector for
 * the tests after it.
 */

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

export interface ReferenceTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: { readonly type: 'object'; readonly properties: Readonly<Record<string, unknown>>; readonly required: readonly string[] };
}

/** The reference tool of the contract, as the fixture server serves it. */
export const ECHO_UPPER: ReferenceTool = deepFreeze({
  name: 'echo_upper',
  description: 'Upper-case the input text (deterministic showcase demo tool).',
  inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'Text to upper-case' } }, required: ['text'] },
});

/** `fnv1a64` of `canonicalJson(ECHO_UPPER.inputSchema)`: the contract's schema pin vector. */
export const ECHO_SCHEMA_PIN = 'fnv1a64:a76fe8d6d023fca0';

/** `sha256` of `canonicalJson({name, description, inputSchema})` of ECHO_UPPER: the tool pin vector. */
export const ECHO_TOOL_PIN = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

/** The 64 hex digits of ECHO_TOOL_PIN (store entry file names, bare pins). */
export const ECHO_TOOL_HEX = ECHO_TOOL_PIN.slice('sha256:'.length);

/** The fixture server's second default tool. */
export const ADD_NUMBERS: ReferenceTool = deepFreeze({
  name: 'add_numbers',
  description: 'Add two numbers (deterministic fixture tool).',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number', description: 'First addend' }, b: { type: 'number', description: 'Second addend' } },
    required: ['a', 'b'],
  },
});

/** The fixture server's third default tool. */
export const REVERSE_TEXT: ReferenceTool = deepFreeze({
  name: 'reverse_text',
  description: 'Reverse the input text (deterministic fixture tool).',
  inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'Text to reverse' } }, required: ['text'] },
});

/** What the fixture server lists when started without tool options, in its order. */
export const FIXTURE_DEFAULT_TOOLS: readonly ReferenceTool[] = Object.freeze([ECHO_UPPER, ADD_NUMBERS, REVERSE_TEXT]);
