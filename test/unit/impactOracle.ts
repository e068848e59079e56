/**
 * An independent referee for the impact words of server/src/core/review/changes.ts: Ajv validates
 * argument objects generated from both schemas, and each word is checked for what it claims.
 * - `widening`: every generated value the old schema accepts, the new one accepts;
 * - `cosmetic`: old and new accept exactly the same generated values;
 * - `breaking`: some generated value the old schema accepts, the new one rejects (a witness);
 * - `may-break`: no claim, so nothing to check.
 * The values come from the schemas themselves (their property names from both sides, enum values,
 * bounds and one past them, each property left out, undeclared names) plus a fixed pool of
 * ordinary values, so a witness for a break is found by construction when there is a simple one.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import type { ChangeImpact } from '../../server/src/core/review/changes';

type Schema = Record<string, unknown>;

const BASE_POOL: unknown[] = [null, true, false, 0, 1, -1, 1.5, 2, 3, 5, 7, 9, 10, 20, 100, '', 'a', 'ab', 'abcd', 'zz', 'hello world', '/tmp/x', [], ['a'], [1], {}];

function isRecord(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Local `$ref` resolution for the sampler (JSON Pointer into the document). */
function resolve(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isRecord(node) ? node[segment] : Array.isArray(node) ? node[Number(segment)] : undefined;
  }
  return node;
}

/** Values found in the schemas: enum/const values, and numeric or length bounds with their neighbours. */
function harvest(node: unknown, pool: unknown[], names: Set<string>, depth = 0): void {
  if (depth > 12) return;
  if (Array.isArray(node)) {
    for (const entry of node) harvest(entry, pool, names, depth + 1);
    return;
  }
  if (!isRecord(node)) return;
  if (Array.isArray(node.enum)) pool.push(...node.enum);
  if ('const' in node) pool.push(node.const);
  for (const key of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
    const bound = node[key];
    if (typeof bound === 'number') pool.push(bound, bound - 1, bound + 1, bound - 0.5, bound + 0.5);
  }
  for (const key of ['minLength', 'maxLength']) {
    const bound = node[key];
    if (typeof bound === 'number' && bound < 64) for (const length of [bound - 1, bound, bound + 1]) if (length >= 0) pool.push('x'.repeat(length));
  }
  if (isRecord(node.properties)) for (const name of Object.keys(node.properties)) names.add(name);
  for (const value of Object.values(node)) harvest(value, pool, names, depth + 1);
}

/**
 * Candidate instances for a schema: sampled per keyword, up to `limit`. Objects start from one
 * value per required property and vary one property at a time.
 */
function sample(schema: unknown, root: unknown, pool: readonly unknown[], names: ReadonlySet<string>, depth: number): unknown[] {
  if (depth > 4 || !isRecord(schema)) return [...pool];
  if (typeof schema.$ref === 'string') return sample(resolve(root, schema.$ref), root, pool, names, depth + 1);
  const out: unknown[] = [];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) for (const branch of schema[key] as unknown[]) out.push(...sample(branch, root, pool, names, depth + 1));
  }
  if (Array.isArray(schema.enum)) out.push(...schema.enum);
  if ('const' in schema) out.push(schema.const);
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type : [];
  const isObject = types.includes('object') || isRecord(schema.properties) || Array.isArray(schema.required);
  if (isObject) {
    const props = isRecord(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    const valuesOf = new Map<string, unknown[]>();
    for (const name of new Set([...Object.keys(props), ...required, ...names])) {
      valuesOf.set(name, name in props ? sample(props[name], root, pool, names, depth + 1) : [...pool]);
    }
    // The base takes, for each required property, the first sample its own schema accepts.
    const base: Schema = {};
    for (const name of required) {
      const values = valuesOf.get(name) ?? [];
      const accepts = name in props ? validatorFor(props[name], root) : undefined;
      base[name] = values.find((value) => accepts === undefined || accepts(value)) ?? values[0] ?? 'a';
    }
    out.push({ ...base });
    for (const name of required) {
      const without = { ...base };
      delete without[name];
      out.push(without);
    }
    for (const [name, values] of valuesOf) for (const value of values.slice(0, 40)) out.push({ ...base, [name]: value });
    for (const value of pool) out.push({ ...base, zz_undeclared: value });
    // Every property at once, the first value of each: a witness that needs two properties set.
    const full: Schema = { ...base };
    for (const [name, values] of valuesOf) if (values.length > 0) full[name] = values[0];
    out.push(full);
  }
  if (types.includes('array') || schema.items !== undefined) {
    const items = Array.isArray(schema.items) ? [] : sample(schema.items ?? {}, root, pool, names, depth + 1).slice(0, 20);
    out.push([]);
    for (const item of items) out.push([item], [item, item]);
    if (items.length > 1) out.push(items.slice(0, 3));
  }
  out.push(...pool);
  // Values of a declared type first, so that an object's base takes a plausible value for each property.
  if (types.length === 0) return out;
  const fits = (value: unknown): boolean => types.some((type) => type === typeOf(value) || (type === 'number' && typeOf(value) === 'integer'));
  return [...out.filter(fits), ...out.filter((value) => !fits(value))];
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Candidates for a pair of schemas: sampled from both sides, with the names and values of both. */
export function candidates(before: unknown, after: unknown): unknown[] {
  const pool = [...BASE_POOL];
  const names = new Set<string>();
  harvest(before, pool, names);
  harvest(after, pool, names);
  const found = [...sample(before, before, pool, names, 0), ...sample(after, after, pool, names, 0)];
  const unique = new Map<string, unknown>();
  for (const value of found) {
    const key = JSON.stringify(value);
    if (key !== undefined && !unique.has(key)) unique.set(key, value);
  }
  return [...unique.values()];
}

export interface Verdict {
  readonly ok: boolean;
  /** Why the word is wrong, with the value that shows it. */
  readonly reason?: string;
  readonly oldValid: number;
}

const ajv = new Ajv({ strict: false, logger: false, allErrors: false, validateFormats: false });

/** A validator for a subschema, with the root's definitions in reach of its `$ref`s; undefined if it does not compile. */
function validatorFor(schema: unknown, root: unknown): ValidateFunction | undefined {
  if (!isRecord(schema)) return undefined;
  const withDefinitions: Schema = { ...schema };
  if (isRecord(root)) for (const key of ['$defs', 'definitions']) if (root[key] !== undefined && withDefinitions[key] === undefined) withDefinitions[key] = root[key];
  try {
    return ajv.compile(withDefinitions);
  } catch {
    return undefined;
  }
}

export function compile(schema: unknown): ValidateFunction {
  const copy = structuredClone(isRecord(schema) ? schema : schema === undefined ? {} : schema) as Schema;
  if (isRecord(copy)) delete copy.$schema;
  return ajv.compile(copy);
}

/** Checks one impact word for a pair of schemas on the given values (see the module comment). */
export function check(impact: ChangeImpact | undefined, before: unknown, after: unknown, values: readonly unknown[]): Verdict {
  const wasValid = compile(before);
  const isValid = compile(after);
  let oldValid = 0;
  let witness: unknown;
  for (const value of values) {
    const was = wasValid(value) === true;
    const is = isValid(value) === true;
    if (was) oldValid++;
    if (was && !is && witness === undefined) witness = value;
    if ((impact === 'cosmetic' || impact === undefined) && was !== is) {
      return { ok: false, oldValid, reason: `called ${impact ?? 'no change'}, but ${JSON.stringify(value)} is ${was ? 'accepted before and rejected now' : 'rejected before and accepted now'}` };
    }
    if (impact === 'widening' && was && !is) return { ok: false, oldValid, reason: `called widening, but ${JSON.stringify(value)} was accepted and is rejected now` };
  }
  if (impact === 'breaking' && witness === undefined) return { ok: false, oldValid, reason: `called breaking, but none of ${values.length} values (${oldValid} accepted before) is rejected now` };
  return { ok: true, oldValid };
}
