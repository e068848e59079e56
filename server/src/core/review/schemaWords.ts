/**
 * The words the schema comparison and the normalisation share: the keyword sets, where in a schema
 * a change is, and small helpers over JSON types, values and the one-line details of a change.
 */
import { canonicalJson } from '../pins/canonicalJson';
import { isRecord, isStringArray } from '../json/values';
import type { ChangeImpact, SchemaChange, SchemaChangeKind } from './changeTypes';

export type Schema = Record<string, unknown>;

export interface Location {
  readonly pointer: string;
  readonly argument: string;
}

export const ROOT: Location = { pointer: '', argument: '' };

/** Keywords that never change what validates. `$schema` is here too: the dialect is reported, and what it changes shows up in the other keywords. */
export const COSMETIC_KEYWORDS = new Set(['description', 'title', 'examples', 'default', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$schema', 'markdownDescription']);
/** A larger value is tighter. */
export const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']);
/** A smaller value is tighter. */
export const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']);
/** Present is tighter than absent; any other change cannot be ordered. */
export const OTHER_CONSTRAINTS = new Set(['pattern', 'format', 'multipleOf', 'uniqueItems', 'contentEncoding', 'contentMediaType']);
/** Keywords this module compares itself (everything else that differs is `other-changed`). */
export const HANDLED = new Set(['type', 'enum', 'const', 'required', 'properties', 'additionalProperties', 'items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', '$defs', 'definitions']);

export const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;

/** The set of JSON types a `type` keyword allows; absent (or unreadable) means any type. */
export function typeSet(type: unknown): Set<string> {
  if (typeof type === 'string') return new Set([type]);
  if (isStringArray(type)) return new Set(type);
  return new Set(JSON_TYPES);
}

/** True when every value of a type in `inner` is allowed by `outer` (integer ⊂ number). */
export function typesCover(outer: Set<string>, inner: Set<string>): boolean {
  return [...inner].every((type) => outer.has(type) || (type === 'integer' && outer.has('number')));
}

/** The JSON type of a value, as `type` names it (`integer` for whole numbers). */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

export function describeTypes(types: Set<string>): string {
  if (JSON_TYPES.every((type) => types.has(type))) return 'any type';
  return [...types].join(' or ');
}

export function allowedValues(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  if (Object.prototype.hasOwnProperty.call(schema, 'const')) return [schema.const];
  return undefined;
}

export function additionalMode(value: unknown): 'open' | 'closed' | 'schema' {
  if (value === undefined || value === true) return 'open';
  if (value === false) return 'closed';
  if (isRecord(value) && Object.keys(value).length === 0) return 'open';
  return 'schema';
}

export function asSchema(value: unknown): Schema | undefined {
  if (value === true) return {};
  return isRecord(value) ? value : undefined;
}

export function isAcceptAll(value: unknown): boolean {
  return value === true || (isRecord(value) && Object.keys(value).length === 0);
}

export function stringSet(value: unknown): Set<string> {
  return new Set(Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : []);
}

export function sameSet(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every((entry) => b.has(entry));
}

export function jsonKey(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch {
    return String(value);
  }
}

export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return jsonKey(a) === jsonKey(b);
}

export function short(value: unknown): string {
  const text = value === undefined ? 'nothing' : jsonKey(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, 6).map(short);
  return values.length > 6 ? `${shown.join(', ')} and ${values.length - 6} more` : shown.join(', ');
}

export function verb(had: boolean, has: boolean): string {
  return had && has ? 'changed' : had ? 'removed' : 'added';
}

export function subject(at: Location): string {
  return at.argument === '' ? 'the arguments' : `"${at.argument}"`;
}

export function joinArgument(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function change(kind: SchemaChangeKind, impact: ChangeImpact, path: string, argument: string, detail: string, before: unknown, after: unknown): SchemaChange {
  return {
    kind,
    impact,
    path,
    argument,
    detail,
    ...(before !== undefined ? { before } : {}),
    ...(after !== undefined ? { after } : {}),
  };
}
