/**
 * core/verify/verify.ts `prepareArgumentChecks`: as one server's listing arrives, the argument
 * validators its tools make needed are compiled, and verification then asks for exactly those and
 * compiles nothing more; the findings are the same as without preparing.
 *
 * Two servers, `alpha` and `beta`, serve `echo` with different schemas. Steps: one names alpha,
 * one names beta, one names no server (served by both: ambiguous, so never checked), one has no
 * arguments. Preparing for alpha compiles alpha's schema only, for beta then beta's; verifying
 * afterwards compiles nothing and finds what it finds unprepared.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { analyzeBlueprint } from '../../server/src/core/documents/blueprint';
import { ArgumentValidators, sharedArgumentValidators } from '../../server/src/core/verify/arguments';
import { type CollectedListing, readListedTool } from '../../server/src/core/verify/listing';
import { type ServerDefinition, ServerRegistry } from '../../server/src/core/verify/registry';
import { prepareArgumentChecks, type ServerListing, verifyBlueprint } from '../../server/src/core/verify/verify';
import { schemaPin } from '../../server/src/core/pins/pins';

const WORKSPACE = path.join(path.sep, 'workspace');

function definition(name: string): ServerDefinition {
  return { name, origin: { kind: 'mcp-json', file: path.join(WORKSPACE, '.mcp.json') }, transport: { kind: 'stdio', command: 'node', args: [`${name}.mjs`], env: {} }, auth: undefined, unusable: undefined, cwd: WORKSPACE };
}

function listed(inputSchema: unknown): ServerListing {
  const tool = readListedTool({ name: 'echo', description: 'Echoes.', inputSchema });
  assert.ok(typeof tool !== 'string');
  const listing: CollectedListing = { tools: [tool], malformedEntries: [], duplicateNames: [], pages: 1, incomplete: undefined, ttlMs: undefined };
  return { status: 'listed', listing, listedAt: 0 };
}

// Each has a keyword outside the subset core/verify/simpleSchema.ts reads, so it is compiled ahead.
const ALPHA_SCHEMA = { type: 'object', properties: { text: { type: 'string', pattern: '^.+$' } }, required: ['text'] };
const BETA_SCHEMA = { type: 'object', properties: { text: { type: 'number', multipleOf: 0.5 } }, required: ['text'] };
// The same without them: of the subset, so compiled only for arguments it does not accept.
const SUBSET_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

function blueprint(): string {
  const step = (id: string, server: string | undefined, schema: unknown, args: string | undefined): string =>
    `{ "id": "${id}", "effect": "mcp.invoke", "input": { "toolName": "echo"${server ? `, "server": "${server}"` : ''}, "expectedSchemaHash": "${schemaPin(schema)}"${args ? `, "arguments": ${args}` : ''} } }`;
  return `{ "blueprint": "b", "formatVersion": 1, "steps": [ ${[
    step('on-alpha', 'alpha', ALPHA_SCHEMA, '{ "text": 1 }'),
    step('on-beta', 'beta', BETA_SCHEMA, '{ "text": "x" }'),
    step('anywhere', undefined, ALPHA_SCHEMA, '{ "text": "y" }'),
    step('no-arguments', 'alpha', ALPHA_SCHEMA, undefined),
  ].join(', ')} ] }`;
}

describe('prepareArgumentChecks', () => {
  test('compiles as each listing arrives, and verification then compiles nothing more', () => {
    const alpha = definition('alpha');
    const beta = definition('beta');
    const registry = new ServerRegistry([alpha, beta]);
    const listings = new Map<ServerDefinition, ServerListing>([[alpha, listed(ALPHA_SCHEMA)], [beta, listed(BETA_SCHEMA)]]);
    const context = { registry, now: 0, listingFor: (defined: ServerDefinition) => listings.get(defined)! };
    const model = analyzeBlueprint(blueprint()).model;

    // Without preparing: what verification finds, and what it compiles.
    sharedArgumentValidators.clear();
    const start = sharedArgumentValidators.compileCount;
    const unprepared = verifyBlueprint(model, context);
    const compiledByVerification = sharedArgumentValidators.compileCount - start;
    assert.equal(compiledByVerification, 2, 'verification compiles the two schemas');

    // Prepared as the listings arrive: the same two, then nothing more, and the same findings.
    sharedArgumentValidators.clear();
    const before = sharedArgumentValidators.compileCount;
    assert.equal(prepareArgumentChecks(model, alpha, registry, listings.get(alpha)!), 1, 'alpha: its one schema');
    assert.equal(prepareArgumentChecks(model, alpha, registry, listings.get(alpha)!), 0, 'alpha again: cached');
    assert.equal(prepareArgumentChecks(model, beta, registry, listings.get(beta)!), 1, 'beta: its own schema');
    assert.equal(prepareArgumentChecks(model, beta, registry, { status: 'pending' }), 0, 'no listing, nothing to prepare');
    const afterPreparing = sharedArgumentValidators.compileCount;
    assert.equal(afterPreparing - before, 2);
    const prepared = verifyBlueprint(model, context);
    assert.equal(sharedArgumentValidators.compileCount, afterPreparing, 'verification compiled nothing more');
    assert.deepEqual(prepared, unprepared);
    // Not vacuous: the named steps' arguments are wrong for their servers' schemas.
    assert.deepEqual(
      prepared.problems.filter((found) => found.code === 'TP410').map((found) => found.message.slice(0, found.message.indexOf(':'))),
      ['step "on-alpha"', 'step "on-beta"'],
    );
  });

  test('a subset schema is not compiled ahead, and verification compiles it only for arguments it does not accept', () => {
    const alpha = definition('alpha');
    const registry = new ServerRegistry([alpha]);
    const listing = listed(SUBSET_SCHEMA);
    const context = { registry, now: 0, listingFor: () => listing };
    const stepOn = (id: string, args: string): string =>
      `{ "id": "${id}", "effect": "mcp.invoke", "input": { "toolName": "echo", "server": "alpha", "expectedSchemaHash": "${schemaPin(SUBSET_SCHEMA)}", "arguments": ${args} } }`;
    const accepted = analyzeBlueprint(`{ "blueprint": "b", "formatVersion": 1, "steps": [ ${stepOn('fits', '{ "text": "x" }')}, ${stepOn('placeholder', '{ "text": "{{event.text}}" }')} ] }`).model;
    sharedArgumentValidators.clear();
    const start = sharedArgumentValidators.compileCount;
    assert.equal(prepareArgumentChecks(accepted, alpha, registry, listing), 0, 'nothing compiled ahead');
    assert.deepEqual(verifyBlueprint(accepted, context).problems.filter((found) => found.code === 'TP410'), []);
    assert.equal(sharedArgumentValidators.compileCount, start, 'arguments the schema accepts compile nothing');

    const wrong = analyzeBlueprint(`{ "blueprint": "b", "formatVersion": 1, "steps": [ ${stepOn('wrong', '{ "text": 1 }')} ] }`).model;
    assert.deepEqual(
      verifyBlueprint(wrong, context).problems.filter((found) => found.code === 'TP410').map((found) => found.message.slice(0, found.message.indexOf(':'))),
      ['step "wrong"'],
    );
    assert.equal(sharedArgumentValidators.compileCount, start + 1, 'Ajv reads the arguments the schema does not accept');
  });

  test('a full cache is not warmed: preparing never evicts a validator', () => {
    const alpha = definition('alpha');
    const registry = new ServerRegistry([alpha]);
    const model = analyzeBlueprint(blueprint()).model;
    const tiny = new ArgumentValidators(1);
    tiny.get({ type: 'object' }, 'fnv1a64:0000000000000000');
    assert.equal(prepareArgumentChecks(model, alpha, registry, listed(ALPHA_SCHEMA), tiny), 0);
    assert.equal(tiny.size, 1);
  });
});
