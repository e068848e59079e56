/**
 * Normalisation of an input schema before comparison: local `$ref`s inlined, definitions dropped
 * once nothing needs them, annotations stripped; and the root definitions nothing references.
 */
import { isArray, isRecord } from '../json/values';
import type { SchemaChange } from './changeTypes';
import { COSMETIC_KEYWORDS, type Schema, change, escapePointer, sameJson, verb } from './schemaWords';

/** Keywords whose value is one subschema. */
export const SCHEMA_VALUED = ['items', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties'];
/** Keywords whose value is a list of subschemas. */
export const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
/** Keywords whose value maps names to subschemas. */
export const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
/** Keywords that name a schema for `$ref`s: changing them may change what a reference means. */
export const IDENTITY_KEYWORDS = new Set(['$id', '$anchor', '$dynamicAnchor', '$ref', '$dynamicRef', '$recursiveRef']);
/** How many `$ref`s are inlined at most, so that a schema built to explode stays cheap. */
export const MAX_INLINED = 500;

/** A copy of a schema with `transform` applied to every subschema, bottom-up, by keyword position. */
export function mapSubschemas(node: unknown, transform: (schema: Schema) => Schema): unknown {
  return isRecord(node) ? mapSchema(node, transform) : node;
}

/** {@link mapSubschemas} of an object schema, which stays an object schema. */
export function mapSchema(node: Schema, transform: (schema: Schema) => Schema): Schema {
  const copy: Schema = { ...node };
  for (const key of SCHEMA_VALUED) if (copy[key] !== undefined && typeof copy[key] !== 'boolean') copy[key] = mapSubschemas(copy[key], transform);
  for (const key of SCHEMA_LISTS) {
    const list = copy[key];
    if (isArray(list)) copy[key] = list.map((entry) => mapSubschemas(entry, transform));
  }
  if (isArray(copy.items)) copy.items = copy.items.map((entry) => mapSubschemas(entry, transform));
  for (const key of SCHEMA_MAPS) {
    const map = copy[key];
    if (isRecord(map)) copy[key] = Object.fromEntries(Object.entries(map).map(([name, entry]) => [name, mapSubschemas(entry, transform)]));
  }
  return transform(copy);
}

/**
 * Inlines local `$ref`s (`#`, `#/$defs/x`, any JSON Pointer into the same document). A `$ref` whose
 * target is missing, outside the document, or already being inlined (a cycle) stays as it is, and
 * then the definitions stay too, since that `$ref` still needs them. `$ref` siblings that are not
 * annotations are kept next to the inlined schema in an `allOf` (2019-09 and later apply both).
 */
export function normalise(root: unknown): { schema: unknown; opaque: boolean } {
  let opaque = false;
  let inlined = 0;
  const inline = (node: unknown, stack: readonly string[]): unknown => {
    if (!isRecord(node)) return node;
    const ref = node.$ref;
    if (typeof ref === 'string') {
      const target = ref.startsWith('#') ? resolvePointer(root, ref.slice(1)) : undefined;
      if (target === undefined || stack.includes(ref) || ++inlined > MAX_INLINED) {
        opaque = true;
        return inlineChildren(node, stack);
      }
      const resolved = inline(target, [...stack, ref]);
      const rest: Schema = { ...node };
      delete rest.$ref;
      const siblings = inlineChildren(rest, stack);
      const validating = Object.keys(siblings).filter((key) => !COSMETIC_KEYWORDS.has(key) && key !== '$defs' && key !== 'definitions');
      if (validating.length === 0) return isRecord(resolved) ? { ...resolved, ...pickAnnotations(siblings) } : resolved;
      return { allOf: [resolved], ...siblings };
    }
    return inlineChildren(node, stack);
  };
  const inlineChildren = (node: Schema, stack: readonly string[]): Schema => {
    const copy: Schema = { ...node };
    for (const key of SCHEMA_VALUED) if (isRecord(copy[key])) copy[key] = inline(copy[key], stack);
    for (const key of [...SCHEMA_LISTS, 'items']) {
      const list = copy[key];
      if (isArray(list)) copy[key] = list.map((entry) => inline(entry, stack));
    }
    for (const key of SCHEMA_MAPS) {
      if (key === '$defs' || key === 'definitions') continue; // compared where they are used
      const map = copy[key];
      if (isRecord(map)) copy[key] = Object.fromEntries(Object.entries(map).map(([name, entry]) => [name, inline(entry, stack)]));
    }
    return copy;
  };
  const schema = inline(root, []);
  if (opaque) return { schema, opaque };
  return { schema: mapSubschemas(schema, (node) => dropDefinitions(node)), opaque };
}

export function dropDefinitions(node: Schema): Schema {
  if (node.$defs === undefined && node.definitions === undefined) return node;
  const rest: Schema = { ...node };
  delete rest.$defs;
  delete rest.definitions;
  return rest;
}

export function pickAnnotations(node: Schema): Schema {
  return Object.fromEntries(Object.entries(node).filter(([key]) => COSMETIC_KEYWORDS.has(key)));
}

/** The schema without annotations: what is left decides validation. */
export function stripAnnotations(node: unknown): unknown {
  return isRecord(node) ? stripSchemaAnnotations(node) : node;
}

export function stripSchemaAnnotations(schema: Schema): Schema {
  return mapSchema(schema, (node) => Object.fromEntries(Object.entries(node).filter(([key]) => !COSMETIC_KEYWORDS.has(key))));
}

/** RFC 6901 JSON Pointer (already without its leading `#`), URI-decoded. */
export function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(node) && /^\d+$/.test(segment)) node = node[Number(segment)];
    else if (isRecord(node) && Object.prototype.hasOwnProperty.call(node, segment)) node = node[segment];
    else return undefined;
  }
  return node;
}

/**
 * Root definitions (`$defs`, `definitions`) that changed and that no `$ref` reachable from the
 * schema uses, on either side: cosmetic, since nothing validates against them.
 */
export function unreferencedDefinitionChanges(before: unknown, after: unknown): SchemaChange[] {
  const out: SchemaChange[] = [];
  const usedBefore = reachableRefs(before);
  const usedAfter = reachableRefs(after);
  for (const key of ['$defs', 'definitions'] as const) {
    const a = isRecord(before) && isRecord(before[key]) ? before[key] : {};
    const b = isRecord(after) && isRecord(after[key]) ? after[key] : {};
    for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const had = Object.prototype.hasOwnProperty.call(a, name);
      const has = Object.prototype.hasOwnProperty.call(b, name);
      if (had && has && sameJson(a[name], b[name])) continue;
      const prefix = `#/${key}/${escapePointer(name)}`;
      const used = (refs: Set<string>): boolean => [...refs].some((ref) => ref === prefix || ref.startsWith(`${prefix}/`));
      if (used(usedBefore) || used(usedAfter)) continue;
      out.push(change('definition-changed', 'cosmetic', `/${key}/${escapePointer(name)}`, '', `definition "${name}" ${verb(had, has)}; nothing references it`, a[name], b[name]));
    }
  }
  return out;
}

/** Every `$ref` string reachable from the schema's root, following local references into definitions. */
export function reachableRefs(root: unknown): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown, skipDefinitions: boolean): void => {
    mapSubschemas(skipDefinitions && isRecord(node) ? dropDefinitions(node) : node, (schema) => {
      if (typeof schema.$ref === 'string' && !found.has(schema.$ref)) {
        found.add(schema.$ref);
        if (schema.$ref.startsWith('#')) visit(resolvePointer(root, schema.$ref.slice(1)), false);
      }
      return schema;
    });
  };
  visit(root, true);
  return found;
}

export function isFalseSchema(value: unknown): boolean {
  return value === false;
}
