/**
 * Real drift: the input schemas of the same tools across published versions of three MCP servers
 * (test/fixtures/tool-lists/versions, recorded with `scripts/record-tool-lists.mjs --versions`, and
 * the current devDependency's listing in test/fixtures/tool-lists). Every schema that differs
 * between two versions is classified, and the verdict is checked against Ajv on values generated
 * from both schemas (test/unit/impactOracle.ts): 0 wrong, in both directions (an upgrade, and a
 * rollback to the older version).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { canonicalJson } from '../../server/src/core/pins/canonicalJson';
import { diffInputSchemas, worstImpact, type ChangeImpact } from '../../server/src/core/review/changes';
import { candidates, check } from './impactOracle';

const root = path.resolve(__dirname, '..', '..', '..');
const listsDir = path.join(root, 'test', 'fixtures', 'tool-lists');

interface Listing {
  readonly label: string;
  readonly tools: ReadonlyMap<string, unknown>;
}

function readListing(file: string, label: string): Listing {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { tools: Array<{ name: string; inputSchema?: unknown }> };
  return { label, tools: new Map(parsed.tools.map((tool) => [tool.name, tool.inputSchema])) };
}

/** Versions like 0.6.2 and 2025.4.8, compared number by number. */
function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let index = 0; index < Math.max(x.length, y.length); index++) if ((x[index] ?? 0) !== (y[index] ?? 0)) return (x[index] ?? 0) - (y[index] ?? 0);
  return 0;
}

/** Each server's listings, oldest first; the last is the current devDependency. */
function listingsByServer(): Map<string, Listing[]> {
  const byServer = new Map<string, Array<{ version: string; listing: Listing }>>();
  for (const file of readdirSync(path.join(listsDir, 'versions'))) {
    const match = /^(.+)@(.+)\.json$/.exec(file);
    if (!match) continue;
    const [, server, version] = match as unknown as [string, string, string];
    const entries = byServer.get(server) ?? [];
    entries.push({ version, listing: readListing(path.join(listsDir, 'versions', file), `${server}@${version}`) });
    byServer.set(server, entries);
  }
  const result = new Map<string, Listing[]>();
  for (const [server, entries] of byServer) {
    entries.sort((a, b) => compareVersions(a.version, b.version));
    const current = JSON.parse(readFileSync(path.join(listsDir, `${server}.json`), 'utf8')) as { package: string };
    result.set(server, [...entries.map((entry) => entry.listing), readListing(path.join(listsDir, `${server}.json`), current.package.replace(/^@modelcontextprotocol\/server-/, ''))]);
  }
  return result;
}

interface DriftCase {
  readonly where: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** Every (older, newer) pair of versions of a server, and every tool whose input schema differs. */
function driftCases(): DriftCase[] {
  const cases: DriftCase[] = [];
  const seen = new Set<string>();
  for (const listings of listingsByServer().values()) {
    for (let i = 0; i < listings.length; i++) {
      for (let j = i + 1; j < listings.length; j++) {
        for (const [name, before] of listings[i]!.tools) {
          if (!listings[j]!.tools.has(name)) continue;
          const after = listings[j]!.tools.get(name);
          const key = `${canonicalJson(before ?? {})}\n${canonicalJson(after ?? {})}`;
          if (canonicalJson(before ?? {}) === canonicalJson(after ?? {}) || seen.has(key)) continue;
          seen.add(key);
          cases.push({ where: `${name}: ${listings[i]!.label} → ${listings[j]!.label}`, before, after });
        }
      }
    }
  }
  return cases;
}

describe('changes: every real drifted schema between server versions is classified truthfully', () => {
  const cases = driftCases();
  test('the fixtures hold drift of at least two servers', () => {
    const servers = new Set(cases.map((entry) => entry.where.split(': ')[1]!.split('@')[0]));
    assert.ok(cases.length >= 20, `only ${cases.length} drifted schemas`);
    assert.ok(servers.size >= 2, [...servers].join(', '));
  });
  for (const direction of ['upgrade', 'rollback'] as const) {
    test(`${direction}: each verdict agrees with Ajv on generated arguments`, () => {
      const wrong: string[] = [];
      const tally = new Map<ChangeImpact | 'none', number>();
      for (const entry of cases) {
        const [before, after] = direction === 'upgrade' ? [entry.before, entry.after] : [entry.after, entry.before];
        const changes = diffInputSchemas(before, after);
        const impact = worstImpact(changes);
        tally.set(impact ?? 'none', (tally.get(impact ?? 'none') ?? 0) + 1);
        assert.ok(changes.length > 0, `${entry.where}: a schema that differs reports no change`);
        const verdict = check(impact, before, after, candidates(before, after));
        if (!verdict.ok) wrong.push(`${entry.where}: ${verdict.reason} [${changes.map((c) => `${c.detail} (${c.impact})`).join('; ')}]`);
        // The referee must have had something to judge: values the old schema accepts.
        assert.ok(verdict.oldValid > 0, `${entry.where}: no generated value is valid under the old schema`);
      }
      assert.deepEqual(wrong, [], `${wrong.length} of ${cases.length} wrong`);
      // Some verdicts are certain ones: the referee is not only ever asked about may-break.
      assert.ok((tally.get('breaking') ?? 0) > 0 && (tally.get('widening') ?? 0) + (tally.get('cosmetic') ?? 0) > 0, JSON.stringify([...tally]));
    });
  }
});
