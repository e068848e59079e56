/**
 * engine/workspaceCheck.ts: servers are asked for while the blueprints are still being analyzed,
 * one at a time as documents need them, and never one that no document needs.
 *
 * The workspace is real files in a temp folder (read through the same `CheckFileAccess` shape the
 * CLI gives); the listing source is the tests' FAKE (test/support/fakeListingSource.ts), which
 * answers from memory and records what it was asked, since what is under test is the order of the
 * asking, not MCP. Three servers are configured: the first blueprint needs `alpha`, the last one
 * `gamma`, and nothing needs `beta`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { schemaPin } from '../../server/src/core/pins/pins';
import type { ServerDefinition } from '../../server/src/core/verify/registry';
import { checkWorkspace } from '../../server/src/engine/workspaceCheck';
import { FakeListingSource, FakeServers } from '../support/fakeListingSource';

const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-workspace-check-'));
after(() => rmSync(folder, { recursive: true, force: true }));

const inputSchema = { type: 'object', properties: { text: { type: 'string' } } };
const toolsOf = (server: string): unknown[] => [{ name: `${server}_echo`, description: 'Echoes.', inputSchema }];
const BLUEPRINTS = 40;

writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: Object.fromEntries(['alpha', 'beta', 'gamma'].map((name) => [name, { command: 'node', args: [`${name}.js`] }])) }));
mkdirSync(path.join(folder, 'flows'));
for (let index = 0; index < BLUEPRINTS; index++) {
  // Zero-padded, so that the file order (sorted) is the index order.
  const server = index === 0 ? 'alpha' : index === BLUEPRINTS - 1 ? 'gamma' : undefined;
  const input = server ? { toolName: `${server}_echo`, server, expectedSchemaHash: schemaPin(inputSchema), arguments: { text: 'hi' } } : { toolName: 'local' };
  writeFileSync(path.join(folder, 'flows', `b${String(index).padStart(3, '0')}.blueprint.json`), JSON.stringify({ blueprint: `b${index}`, formatVersion: 1, steps: [{ id: 's', effect: server ? 'mcp.invoke' : 'notify.owner', input }] }));
}

describe('checkWorkspace asks for servers as documents need them', () => {
  test('one listing source, made for the first blueprint; alpha then gamma; never beta; every pin verified', async () => {
    const servers = new FakeServers({ alpha: toolsOf('alpha'), beta: toolsOf('beta'), gamma: toolsOf('gamma') });
    const made: string[][] = [];
    const ensured: string[][] = [];
    let source: FakeListingSource | undefined;
    const check = await checkWorkspace({
      roots: [folder],
      workspaceFolder: folder,
      files: {
        readFile: (file) => readFile(file, 'utf8'),
        readIfPresent: async (file) => {
          try {
            return readFileSync(file, 'utf8');
          } catch {
            return undefined;
          }
        },
        listFolder: async (dir) => {
          try {
            return readdirSync(dir);
          } catch {
            return undefined;
          }
        },
      },
      variables: { env: {} },
      offline: false,
      now: () => Date.now(),
      listingSource: async (needed) => {
        made.push(needed.map((definition) => definition.name));
        const fake = new FakeListingSource(servers, { trust: () => ({ trusted: true }) });
        const ensure = fake.ensure.bind(fake);
        fake.ensure = (definitions: readonly ServerDefinition[], options?: { force?: boolean }) => {
          ensured.push(definitions.map((definition) => definition.name));
          return ensure(definitions, options);
        };
        source = fake;
        return fake;
      },
    });
    assert.deepEqual(made, [['alpha']], 'the source is made once, when the first blueprint needs alpha');
    assert.deepEqual(ensured, [['alpha'], ['gamma']], 'each server is asked for once, in the order documents need them');
    assert.deepEqual(source?.contacted, ['alpha', 'gamma'], 'beta, which no document needs, is never contacted');
    assert.equal(source?.calls.dispose, 1, 'the source is disposed before the check returns');
    assert.equal(check.documents.length, BLUEPRINTS);
    assert.deepEqual(
      check.documents.map((document) => path.basename(document.path)),
      [...check.documents.map((document) => path.basename(document.path))].sort(),
      'documents keep the found (sorted) order',
    );
    const verdicts = [...check.results.values()].flatMap((result) => result.verdicts);
    assert.deepEqual(verdicts.map((verdict) => `${verdict.server}:${verdict.state}`), ['alpha:verified', 'gamma:verified']);
  });

  test('offline: the source is made once with nothing needed and asked for nothing', async () => {
    const servers = new FakeServers({});
    const made: string[][] = [];
    let source: FakeListingSource | undefined;
    const check = await checkWorkspace({
      roots: [folder],
      workspaceFolder: folder,
      files: { readFile: (file) => readFile(file, 'utf8'), readIfPresent: async () => undefined, listFolder: async () => undefined },
      variables: { env: {} },
      offline: true,
      now: () => Date.now(),
      listingSource: async (needed) => {
        made.push(needed.map((definition) => definition.name));
        return (source = new FakeListingSource(servers, { trust: () => ({ trusted: true }) }));
      },
    });
    assert.deepEqual(made, [[]]);
    assert.equal(source?.calls.ensure, 0);
    const states = [...check.results.values()].flatMap((result) => result.verdicts.map((verdict) => verdict.state));
    assert.deepEqual(states, ['cannot-verify', 'cannot-verify']);
  });
});
