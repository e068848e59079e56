/**
 * "Open step" from the Dispatch History view (toolpin/locateStep): the step whose id literal matches
 * the event's step, in a blueprint file (by the blueprint's name) and in a TypeScript module, where
 * `mcpInvoke$` steps belong to no named blueprint and a minted id such as "hydrate#3" is matched as
 * written (issue 11).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { HistoryRequest, LocateStepRequest } from '../../../server/src/protocol';
import { pathToUri } from '../../../server/src/util/uris';
import { startInProcessServer, type InProcessServer } from '../../support/inProcessServer';

const SOURCE = `// Loom steps in code.
import { mcpInvoke$ } from '@loom/plugin-mcp';

export const first = mcpInvoke$("prepare", { toolName: 'echo', expectedSchemaHash: 'fnv1a64:0123456789abcdef' });
export const hydrate = mcpInvoke$('hydrate#3', { toolName: 'echo', expectedSchemaHash: 'fnv1a64:0123456789abcdef' });
`;
const BLUEPRINT = `{ "blueprint": "nightly", "formatVersion": 1, "steps": [ { "id": "hydrate#3", "effect": "mcp.invoke", "input": { "toolName": "echo", "expectedSchemaHash": "fnv1a64:0123456789abcdef" } } ] }\n`;

let folder: string;
let server: InProcessServer;
before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'toolpin-locate-step-'));
  writeFileSync(path.join(folder, 'steps.ts'), SOURCE);
  writeFileSync(path.join(folder, 'nightly.blueprint.jsonc'), BLUEPRINT);
  server = await startInProcessServer({ rootUri: pathToUri(folder) });
  // The history request waits for nothing; the scan runs after initialized. Ask until it is done.
  const until = Date.now() + 10_000;
  while (Date.now() < until && (await server.connection.sendRequest(LocateStepRequest, { blueprint: 'nightly', stepId: 'hydrate#3' })) === null) await new Promise((resolve) => setTimeout(resolve, 100));
  await server.connection.sendRequest(HistoryRequest, {});
});
after(async () => {
  await server.stop();
  rmSync(folder, { recursive: true, force: true });
});

test('a step of a TypeScript module is found by its id literal, whatever the event names as blueprint', async () => {
  const location = await server.connection.sendRequest(LocateStepRequest, { blueprint: 'checkout-flow', stepId: 'prepare' });
  assert.ok(location, 'found');
  assert.equal(location.uri, pathToUri(path.join(folder, 'steps.ts')));
  assert.deepStrictEqual(location.range, { start: { line: 3, character: 32 }, end: { line: 3, character: 41 } });
});

test('a blueprint file is matched by its name; a minted id in a module is matched as written', async () => {
  const inBlueprint = await server.connection.sendRequest(LocateStepRequest, { blueprint: 'nightly', stepId: 'hydrate#3' });
  assert.ok(inBlueprint);
  const inModule = await server.connection.sendRequest(LocateStepRequest, { blueprint: 'other', stepId: 'hydrate#3' });
  assert.equal(inModule?.uri, pathToUri(path.join(folder, 'steps.ts')));
  assert.equal(await server.connection.sendRequest(LocateStepRequest, { blueprint: 'other', stepId: 'no-such-step' }), null);
});
