/**
 * The settings schema (server/src/settings.ts) against package.json, and its per-value fallbacks:
 * every contributed setting is in the schema with the same default, every setting of the schema
 * is contributed, the resource-scoped ones are exactly those package.json scopes to a resource,
 * and an ill-typed value falls back to its own default without touching its neighbours.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../server/src/engine/timeouts';
import { DEFAULT_SETTINGS, overallTimeoutFor, parseSettings, RESOURCE_SCOPED } from '../../server/src/settings';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest: unknown = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

interface Contributed {
  readonly default: unknown;
  readonly scope?: string;
  readonly minimum?: number;
  readonly maximum?: number;
}

function contributed(): Map<string, Contributed> {
  assert.ok(typeof manifest === 'object' && manifest !== null && 'contributes' in manifest);
  const properties: Record<string, Contributed> = JSON.parse(JSON.stringify(manifest)).contributes.configuration.properties;
  return new Map(Object.entries(properties).map(([key, value]) => [key.replace(/^toolpin\./, ''), value]));
}

/** The value at a dotted path of the defaults, or a marker when the path does not exist. */
const ABSENT = Symbol('absent');
function at(value: unknown, dotted: string): unknown {
  let current = value;
  for (const part of dotted.split('.')) {
    if (typeof current !== 'object' || current === null || !(part in current)) return ABSENT;
    current = Object.getOwnPropertyDescriptor(current, part)?.value;
  }
  return current;
}

/** The setting paths of the defaults: `servers` is one setting (an object of servers), the rest nest one level. */
function schemaPaths(): string[] {
  return Object.entries(DEFAULT_SETTINGS).flatMap(([key, value]) => (key === 'servers' ? [key] : Object.keys(value).map((inner) => `${key}.${inner}`)));
}

test('every setting package.json contributes is in the schema, with the same default', () => {
  const settings = contributed();
  assert.ok(settings.size >= 12, `package.json contributes ${settings.size} settings`);
  for (const [key, setting] of settings) {
    const value = at(DEFAULT_SETTINGS, key);
    assert.notEqual(value, ABSENT, `toolpin.${key} is in the settings schema`);
    assert.deepEqual(value, setting.default, `toolpin.${key}: the schema's default is package.json's`);
  }
});

test('every setting of the schema is contributed by package.json', () => {
  const settings = contributed();
  assert.deepEqual(schemaPaths().sort(), [...settings.keys()].sort());
});

test('the resource-scoped settings are exactly those package.json scopes to a resource', () => {
  const scoped = [...contributed()].filter(([, setting]) => setting.scope === 'resource').map(([key]) => key);
  assert.deepEqual([...RESOURCE_SCOPED].sort(), scoped.sort());
});

test('an ill-typed value falls back to its own default and keeps its neighbours', () => {
  const parsed = parseSettings({
    validate: { enable: 'yes', debounceMs: 50 },
    verify: { enable: false, requestTimeoutMs: Number.POSITIVE_INFINITY, minTtlSeconds: -1, ttlSeconds: 60, concurrency: '8' },
    workspaceScan: 'off',
    servers: ['not', 'an', 'object'],
    history: { logGlobs: ['logs/**/*.jsonl', 3] },
    sources: { connectorFunctions: ['@acme/platform', ''], invokeFunctions: ['@acme/platform#step'] },
  });
  assert.deepEqual(parsed.validate, { enable: true, debounceMs: 50 });
  assert.deepEqual(parsed.verify, { enable: false, requestTimeoutMs: 10_000, minTtlSeconds: 30, ttlSeconds: 60, concurrency: 4, startTimeoutMs: 60_000 });
  assert.deepEqual(parsed.workspaceScan, DEFAULT_SETTINGS.workspaceScan);
  assert.deepEqual(parsed.servers, {});
  assert.deepEqual(parsed.history.logGlobs, ['**/*.events.jsonl']);
  assert.deepEqual(parsed.sources, { connectorFunctions: [], invokeFunctions: ['@acme/platform#step'], maxFileBytes: 2 * 1024 * 1024 }, 'an empty module name is ill-typed');
  for (const garbage of [null, 42, 'toolpin', [], { validate: null }]) assert.deepEqual(parseSettings(garbage), DEFAULT_SETTINGS, JSON.stringify(garbage));
});

test('values out of bounds are clamped to the bounds package.json declares', () => {
  const parsed = parseSettings({ validate: { debounceMs: 60_000 }, verify: { requestTimeoutMs: 5, concurrency: 0 } });
  assert.equal(parsed.validate.debounceMs, 5000);
  assert.equal(parsed.verify.requestTimeoutMs, 100);
  assert.equal(parsed.verify.concurrency, 1);
  const settings = contributed();
  assert.equal(settings.get('validate.debounceMs')?.maximum, 5000);
  assert.equal(settings.get('verify.requestTimeoutMs')?.minimum, 100);
  assert.equal(settings.get('verify.concurrency')?.minimum, 1);
});

test('a listing is bounded by three request timeouts, never under 30 s', () => {
  assert.equal(overallTimeoutFor(10_000), 30_000);
  assert.equal(overallTimeoutFor(1_000), 30_000);
  assert.equal(overallTimeoutFor(20_000), 60_000);
});

/**
 * The readers of settings.ts against the zod schema they replaced (zod is the reference here, not
 * in the language server, which no longer loads it for settings): on arbitrary JSON-like input,
 * with the settings' own names and values of every type, both give the same settings.
 */
const zodSection = <Shape extends z.ZodRawShape>(shape: Shape) => z.preprocess((value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}), z.object(shape));
const zodFlag = (fallback: boolean) => z.boolean().catch(fallback);
const zodCount = (fallback: number) => z.number().min(0).catch(fallback);
const zodSchema = zodSection({
  trace: zodSection({ server: z.enum(['off', 'messages', 'verbose']).catch('off') }),
  validate: zodSection({ enable: zodFlag(true), debounceMs: zodCount(200).transform((value) => Math.min(value, 5000)) }),
  verify: zodSection({
    enable: zodFlag(true),
    requestTimeoutMs: zodCount(DEFAULT_REQUEST_TIMEOUT_MS).transform((value) => Math.max(100, value)),
    minTtlSeconds: zodCount(30),
    ttlSeconds: zodCount(300),
    concurrency: zodCount(4).transform((value) => Math.max(1, value)),
    startTimeoutMs: zodCount(60_000).transform((value) => Math.max(100, value)),
  }),
  workspaceScan: zodSection({
    enable: zodFlag(true),
    maxFiles: zodCount(500),
    maxEntries: zodCount(100_000).transform((value) => Math.max(100, value)),
    timeBudgetMs: zodCount(4_000).transform((value) => Math.max(100, value)),
  }),
  servers: z.record(z.string(), z.unknown()).catch(() => ({})),
  history: zodSection({ logGlobs: z.array(z.string()).catch(() => ['**/*.events.jsonl']), store: z.string().transform((value) => value.trim()).catch('') }),
  sources: zodSection({
    connectorFunctions: z.array(z.string().min(1)).catch(() => []),
    invokeFunctions: z.array(z.string().min(1)).catch(() => []),
    maxFileBytes: zodCount(2 * 1024 * 1024).transform((value) => Math.max(1, Math.floor(value))),
  }),
});

test('settings read as the zod schema they replaced reads them, on arbitrary input', () => {
  const names = ['trace', 'server', 'validate', 'enable', 'debounceMs', 'verify', 'requestTimeoutMs', 'minTtlSeconds', 'ttlSeconds', 'concurrency', 'startTimeoutMs', 'workspaceScan', 'maxFiles', 'maxEntries', 'timeBudgetMs', 'servers', 'history', 'logGlobs', 'store', 'sources', 'connectorFunctions', 'invokeFunctions', 'maxFileBytes', 'other'];
  const leaf = fc.oneof(
    fc.constantFrom(null, true, false, 0, -0, -1, 0.5, 99_999, 1e300, '', 'off', 'messages', 'verbose', 'x', '**/*.log'),
    fc.double(),
    fc.string(),
  );
  const value = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(fc.oneof(fc.string(), leaf), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom(...names), tie('value'), { maxKeys: 6, noNullPrototype: true }),
    ),
  })).value;
  fc.assert(
    fc.property(value, (received) => {
      assert.deepEqual(parseSettings(received), zodSchema.parse(received), JSON.stringify(received));
    }),
    { numRuns: 3000 },
  );
});
