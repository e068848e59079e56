/**
 * What changed between a pinned tool and the live one: a classification for hovers and drift
 * messages, and a readable line diff of the two canonical texts ("blind approve" is the failure
 * this exists to prevent: a reviewer must see what a re-pin accepts).
 *
 * Inputs come from the pin store (docs/formats.md §6): a schema pin's entry holds
 * canonicalJson(inputSchema), a tool pin's entry canonicalJson({name, description, inputSchema}).
 * {@link readStoreEntry} parses and checks one; {@link classifySchemaPinChange} and
 * {@link classifyToolPinChange} compare it with the live tool; {@link lineDiff} shows the lines.
 *
 * Impact of a schema change, from the caller's side. Each word is a claim that must be true:
 * - `breaking`: some call that was valid before is now rejected (required added, type narrowed,
 *   enum narrowed, tighter constraint, additional properties closed, a property removed where
 *   undeclared properties are not accepted);
 * - `may-break`: this module cannot decide, and a call that was valid may now be rejected (a
 *   keyword it does not analyse was added or changed, a narrowing inside one alternative of
 *   `anyOf`/`oneOf`, an optional property declared where undeclared properties were accepted: a
 *   call that passed that name with another shape is now rejected);
 * - `widening`: every call valid before is still valid (optional property added where undeclared
 *   properties were not accepted, required removed, enum widened, looser constraint, a schema
 *   wrapped into `anyOf` with new alternatives, …);
 * - `cosmetic`: validation is unchanged (descriptions, titles, examples, defaults, `$comment`, the
 *   declared `$schema` dialect, definitions nothing references, a `$ref` to an equal schema).
 * The schemas are compared normalised: local `$ref`s are inlined (a cyclic or non-local one is left
 * in place and its changes are `may-break`), and definitions are compared where they are used.
 * A tool's own description is never called cosmetic: it is what the model reads, the surface of a
 * rug pull, so a description-only rewrite is reported as its own kind and carries no impact.
 *
 * Annotations (`readOnlyHint`, `destructiveHint`, …) are not part of any pin, so the pinned side
 * never has them. The report carries the live tool's annotations as context; a "read-only →
 * destructive" change is only reported when the caller passes annotations from an earlier listing
 * (`previousAnnotations`), and the report says that they are not pinned content. Annotations are
 * hints from the server, not guarantees.
 *
 * Pure: no I/O. `diff` (jsdiff) is plain JavaScript and does the line diff.
 */
import { structuredPatch } from 'diff';
import { canonicalJson } from '../pins/canonicalJson';
import { fnv1a64Hex } from '../pins/fnv1a64';
import type { ParsedPin } from '../pins/pins';
import { isArray, isRecord, isStringArray } from '../json/values';
import { sha256Hex } from '../pins/sha256';

// ---------------------------------------------------------------------------------------------
// Types

/**
 * From the caller's side: `breaking` (some call that was valid is now rejected), `may-break` (this
 * module cannot decide; a call that was valid may be rejected), `widening` (every call that was
 * valid still is), `cosmetic` (exactly the same calls are valid).
 */
export type ChangeImpact = 'breaking' | 'may-break' | 'widening' | 'cosmetic';

export type SchemaChangeKind =
  | 'required-added'
  | 'required-removed'
  | 'property-added'
  | 'property-removed'
  | 'type-changed'
  | 'enum-narrowed'
  | 'enum-widened'
  | 'enum-changed'
  | 'additional-properties-tightened'
  | 'additional-properties-loosened'
  | 'description-changed'
  | 'annotation-changed'
  | 'constraint-changed'
  | 'dialect-changed'
  | 'alternatives-added'
  | 'alternatives-removed'
  | 'definition-changed'
  | 'other-changed';

/** One concrete difference between two input schemas. */
export interface SchemaChange {
  readonly kind: SchemaChangeKind;
  readonly impact: ChangeImpact;
  /**
   * JSON Pointer into the schema where the change is: into the live schema for additions and
   * changes, into the pinned schema for removals. E.g. `/properties/locale`,
   * `/properties/edits/items/properties/oldText/type`, `/additionalProperties`.
   */
  readonly path: string;
  /** The argument it concerns, for people: `locale`, `options.unit`, `edits[].oldText`; `` for the arguments object. */
  readonly argument: string;
  /** One line for people, e.g. `required property "locale" added`. */
  readonly detail: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

/** What kind of change a pin's content went through. `name`: the stored content is for another tool name. */
export type ChangeKind = 'unchanged' | 'description-only' | 'input-schema' | 'both' | 'name';

export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** What the annotations say a call does, with the MCP defaults (readOnly false, destructive true). */
export type ToolBehaviour = 'read-only' | 'additive' | 'destructive';

export interface AnnotationChange {
  readonly before: ToolBehaviour;
  readonly after: ToolBehaviour;
  /** E.g. `read-only → destructive`. */
  readonly detail: string;
  /** Annotations are not pinned content: this compares with an earlier listing the caller had. */
  readonly source: 'earlier-listing';
}

export interface ChangeReport {
  readonly pin: 'schema' | 'tool';
  readonly kind: ChangeKind;
  /** Every schema difference, in schema order. Empty when the input schemas are equal. */
  readonly schemaChanges: readonly SchemaChange[];
  /** The most severe impact among {@link schemaChanges}; undefined when there are none. */
  readonly schemaImpact: ChangeImpact | undefined;
  /** Set for tool pins when the tool description differs. */
  readonly description?: { readonly before: string | undefined; readonly after: string | undefined };
  /** Set for tool pins when the name differs (the store entry was written for another tool). */
  readonly name?: { readonly before: string; readonly after: string };
  /** The live tool's annotations, as context; never part of a pin. */
  readonly liveAnnotations?: ToolAnnotations;
  readonly liveBehaviour?: ToolBehaviour;
  /** Only when `previousAnnotations` were given and say something different. */
  readonly annotationChange?: AnnotationChange;
  /** One line, e.g. `input schema: required property "locale" added (breaking)` or `description only`. */
  readonly summary: string;
}

/** The content of a tool pin's store entry. */
export interface PinnedToolContent {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
}

/** The live side: a `ListedTool` fits, and so does any `{ name, description?, inputSchema?, raw? }`. */
export interface LiveToolLike {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  /** The tool object as served; annotations are read from here. */
  readonly raw?: unknown;
}

export interface ClassifyOptions {
  /** Annotations from an earlier listing of the same tool (not pinned content), to report read-only → destructive. */
  readonly previousAnnotations?: ToolAnnotations;
}

// ---------------------------------------------------------------------------------------------
// The pin store

/** The file name of a pin's store entry: `fnv1a64-<hex>.json` or `sha256-<hex>.json`. */
export function storeEntryName(pin: ParsedPin): string {
  return `${pin.algorithm}-${pin.hex}.json`;
}

export type StoreEntry =
  | { readonly ok: true; readonly pin: 'schema'; readonly inputSchema: unknown; readonly text: string }
  | { readonly ok: true; readonly pin: 'tool'; readonly tool: PinnedToolContent; readonly text: string }
  | { readonly ok: false; readonly reason: string };

/**
 * Reads a store entry's text for a pin. Never throws. The text must hash to the pin (so a store
 * entry that was edited by hand, or saved under the wrong name, is not trusted), be JSON, and for a
 * tool pin hold `{name, description?, inputSchema?}`.
 */
export function readStoreEntry(pin: ParsedPin, text: string): StoreEntry {
  const hex = pin.algorithm === 'fnv1a64' ? fnv1a64Hex(text) : sha256Hex(text);
  if (hex !== pin.hex) {
    return { ok: false, reason: `the store entry ${storeEntryName(pin)} does not hash to its name (it hashes to ${hex}), so its content is not what was pinned` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: `the store entry ${storeEntryName(pin)} is not JSON` };
  }
  if (pin.algorithm === 'fnv1a64') return { ok: true, pin: 'schema', inputSchema: value, text };
  if (!isRecord(value) || typeof value.name !== 'string') {
    return { ok: false, reason: `the store entry ${storeEntryName(pin)} is not a tool's {name, description, inputSchema}` };
  }
  if (value.description !== undefined && typeof value.description !== 'string') {
    return { ok: false, reason: `the store entry ${storeEntryName(pin)} has a "description" that is not a string` };
  }
  const tool: PinnedToolContent = {
    name: value.name,
    ...(typeof value.description === 'string' ? { description: value.description } : {}),
    ...(value.inputSchema !== undefined ? { inputSchema: value.inputSchema } : {}),
  };
  return { ok: true, pin: 'tool', tool, text };
}

// ---------------------------------------------------------------------------------------------
// Classification

/**
 * Compares a schema pin's stored inputSchema with the live tool. The kind is `input-schema` or
 * `unchanged`: a schema pin does not cover the description, so a description rewrite is no
 * schema drift (docs/formats.md §2).
 */
export function classifySchemaPinChange(pinnedSchema: unknown, live: LiveToolLike, options: ClassifyOptions = {}): ChangeReport {
  const schemaChanges = diffInputSchemas(pinnedSchema, live.inputSchema);
  const kind: ChangeKind = schemaChanges.length > 0 ? 'input-schema' : 'unchanged';
  return finishReport('schema', kind, schemaChanges, {}, live, options);
}

/** Compares a tool pin's stored {name, description, inputSchema} with the live tool. */
export function classifyToolPinChange(pinned: PinnedToolContent, live: LiveToolLike, options: ClassifyOptions = {}): ChangeReport {
  const schemaChanges = diffInputSchemas(pinned.inputSchema, live.inputSchema);
  const descriptionChanged = pinned.description !== live.description;
  const nameChanged = pinned.name !== live.name;
  let kind: ChangeKind;
  if (nameChanged) kind = 'name';
  else if (descriptionChanged && schemaChanges.length > 0) kind = 'both';
  else if (descriptionChanged) kind = 'description-only';
  else if (schemaChanges.length > 0) kind = 'input-schema';
  else kind = 'unchanged';
  const extra: Partial<Pick<ChangeReport, 'description' | 'name'>> = {
    ...(descriptionChanged ? { description: { before: pinned.description, after: live.description } } : {}),
    ...(nameChanged ? { name: { before: pinned.name, after: live.name } } : {}),
  };
  return finishReport('tool', kind, schemaChanges, extra, live, options);
}

function finishReport(
  pin: 'schema' | 'tool',
  kind: ChangeKind,
  schemaChanges: SchemaChange[],
  extra: Partial<Pick<ChangeReport, 'description' | 'name'>>,
  live: LiveToolLike,
  options: ClassifyOptions,
): ChangeReport {
  const schemaImpact = worstImpact(schemaChanges);
  const liveAnnotations = readAnnotations(isRecord(live.raw) ? live.raw.annotations : undefined);
  const liveBehaviour = liveAnnotations ? behaviourOf(liveAnnotations) : undefined;
  let annotationChange: AnnotationChange | undefined;
  if (options.previousAnnotations && liveAnnotations) {
    const before = behaviourOf(options.previousAnnotations);
    const after = behaviourOf(liveAnnotations);
    if (before !== after) annotationChange = { before, after, detail: `${before} → ${after}`, source: 'earlier-listing' };
  }
  const report: ChangeReport = {
    pin,
    kind,
    schemaChanges,
    schemaImpact,
    ...extra,
    ...(liveAnnotations ? { liveAnnotations, liveBehaviour } : {}),
    ...(annotationChange ? { annotationChange } : {}),
    summary: '',
  };
  return { ...report, summary: summarize(report) };
}

const IMPACT_ORDER: readonly ChangeImpact[] = ['breaking', 'may-break', 'widening', 'cosmetic'];

/** The most severe impact of a list of changes (breaking > may-break > widening > cosmetic). */
export function worstImpact(changes: readonly SchemaChange[]): ChangeImpact | undefined {
  for (const impact of IMPACT_ORDER) if (changes.some((change) => change.impact === impact)) return impact;
  return undefined;
}

function summarize(report: ChangeReport): string {
  const parts: string[] = [];
  if (report.kind === 'name') {
    parts.push(`the pinned content is for tool "${report.name?.before}", not "${report.name?.after}"`);
  } else if (report.kind === 'unchanged') {
    parts.push('no change in the pinned content');
  } else if (report.kind === 'description-only') {
    parts.push('description only');
  } else {
    const label = report.kind === 'both' ? 'description and input schema' : 'input schema';
    parts.push(`${label}: ${describeSchemaChanges(report.schemaChanges)}`);
  }
  if (report.annotationChange) parts.push(`annotations ${report.annotationChange.detail} (since an earlier listing; annotations are not pinned)`);
  return parts.join('; ');
}

/** `required property "locale" added (breaking)`, plus `and N more (…)` when there are several. */
export function describeSchemaChanges(changes: readonly SchemaChange[]): string {
  const worst = worstImpact(changes);
  const first = changes.find((change) => change.impact === worst) ?? changes[0];
  if (first === undefined) return 'no change';
  const head = `${first.detail} (${first.impact})`;
  if (changes.length === 1) return head;
  const rest = changes.filter((change) => change !== first);
  const counts = IMPACT_ORDER.map((impact) => [impact, rest.filter((change) => change.impact === impact).length] as const)
    .filter(([, count]) => count > 0)
    .map(([impact, count]) => `${count} ${impact}`);
  return `${head} and ${rest.length} more change${rest.length === 1 ? '' : 's'} (${counts.join(', ')})`;
}

function readAnnotations(value: unknown): ToolAnnotations | undefined {
  if (!isRecord(value)) return undefined;
  const result: { -readonly [K in keyof ToolAnnotations]: ToolAnnotations[K] } = {};
  if (typeof value.title === 'string') result.title = value.title;
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    const hint = value[key];
    if (typeof hint === 'boolean') result[key] = hint;
  }
  return Object.keys(result).length > 0 ? result : undefined;
}

/** MCP defaults: readOnlyHint false, destructiveHint true (meaningful only when not read-only). */
export function behaviourOf(annotations: ToolAnnotations): ToolBehaviour {
  if (annotations.readOnlyHint === true) return 'read-only';
  return annotations.destructiveHint === false ? 'additive' : 'destructive';
}

// ---------------------------------------------------------------------------------------------
// Schema comparison

type Schema = Record<string, unknown>;

interface Location {
  readonly pointer: string;
  readonly argument: string;
}

const ROOT: Location = { pointer: '', argument: '' };

/** Keywords that never change what validates. `$schema` is here too: the dialect is reported, and what it changes shows up in the other keywords. */
const COSMETIC_KEYWORDS = new Set(['description', 'title', 'examples', 'default', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$schema', 'markdownDescription']);
/** A larger value is tighter. */
const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']);
/** A smaller value is tighter. */
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']);
/** Present is tighter than absent; any other change cannot be ordered. */
const OTHER_CONSTRAINTS = new Set(['pattern', 'format', 'multipleOf', 'uniqueItems', 'contentEncoding', 'contentMediaType']);
/** Keywords this module compares itself (everything else that differs is `other-changed`). */
const HANDLED = new Set(['type', 'enum', 'const', 'required', 'properties', 'additionalProperties', 'items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', '$defs', 'definitions']);

/**
 * The concrete differences between two input schemas (`undefined` stands for "no inputSchema",
 * which accepts anything). Never throws; values that are not JSON compare by structure.
 *
 * Both sides are normalised first (local `$ref`s inlined, definitions dropped once nothing needs
 * them), so a definition nothing references, or a `$ref` replaced by an equal schema, changes
 * nothing that validates. When the normalised schemas validate alike (they are equal once the
 * annotations are dropped), every change is cosmetic; when only definitions or `$ref`s were
 * rewritten, one cosmetic change says so, so that a drifted pin never reads "no change".
 */
export function diffInputSchemas(before: unknown, after: unknown): SchemaChange[] {
  try {
    return diffNormalised(before, after);
  } catch {
    // Only a schema nested too deeply for the stack gets here: say so, and claim nothing.
    return [change('other-changed', 'may-break', '', '', 'the input schema changed, but it is nested too deeply to compare', undefined, undefined)];
  }
}

function diffNormalised(before: unknown, after: unknown): SchemaChange[] {
  const rawBefore = before === undefined ? {} : before;
  const rawAfter = after === undefined ? {} : after;
  if (sameJson(rawBefore, rawAfter)) return [];
  const a = normalise(rawBefore);
  const b = normalise(rawAfter);
  coverChecks = 0;
  const out: SchemaChange[] = [];
  compareSchemas(a.schema, b.schema, ROOT, out);
  out.push(...unreferencedDefinitionChanges(rawBefore, rawAfter));
  // Only when normalisation changed something: an enum that was merely reordered is no change.
  if (out.length === 0 && (!sameJson(rawBefore, a.schema) || !sameJson(rawAfter, b.schema))) {
    out.push(change('definition-changed', 'cosmetic', '', '', 'definitions or "$ref"s were rewritten without a change to what the arguments accept', undefined, undefined));
  }
  if (sameJson(stripAnnotations(a.schema), stripAnnotations(b.schema))) {
    return out.map((entry) => (entry.impact === 'cosmetic' ? entry : { ...entry, impact: 'cosmetic' }));
  }
  return out;
}

function compareSchemas(before: unknown, after: unknown, at: Location, out: SchemaChange[]): void {
  if (sameJson(before, after)) return;
  const a = asSchema(before);
  const b = asSchema(after);
  if (!a || !b) {
    // Boolean schemas, or something that is not a schema at all.
    const impact: ChangeImpact = isAcceptAll(after) ? 'widening' : before === false ? 'widening' : 'may-break';
    out.push(change('other-changed', impact, at.pointer, at.argument, `the schema of ${subject(at)} was replaced`, before, after));
    return;
  }
  if (compareWrapping(a, b, at, out)) return;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  // Cosmetic and constraint keywords, in key order; structure after, so the output reads top-down.
  for (const key of keys) {
    if (HANDLED.has(key)) continue;
    const had = Object.prototype.hasOwnProperty.call(a, key);
    const has = Object.prototype.hasOwnProperty.call(b, key);
    const x = had ? a[key] : undefined;
    const y = has ? b[key] : undefined;
    if (had && has && sameJson(x, y)) continue;
    const pointer = `${at.pointer}/${escapePointer(key)}`;
    if (COSMETIC_KEYWORDS.has(key)) {
      if (key === 'description') {
        const of = at.argument === '' ? 'the input schema' : `"${at.argument}"`;
        out.push(change('description-changed', 'cosmetic', pointer, at.argument, `description of ${of} ${verb(had, has)}`, x, y));
      }
      else if (key === '$schema') out.push(change('dialect-changed', 'cosmetic', pointer, at.argument, `$schema ${had && has ? `changed from ${short(x)} to ${short(y)}` : verb(had, has)}`, x, y));
      else out.push(change('annotation-changed', 'cosmetic', pointer, at.argument, `${key} of ${subject(at)} ${verb(had, has)}`, x, y));
    } else if (LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key) || OTHER_CONSTRAINTS.has(key)) {
      const impact = constraintImpact(key, had, has, x, y, a, b);
      const how = had && has ? `changed from ${short(x)} to ${short(y)}` : had ? `removed (was ${short(x)})` : `added (${short(y)})`;
      out.push(change('constraint-changed', impact, pointer, at.argument, `constraint ${key} of ${subject(at)} ${how}`, x, y));
    } else {
      // Keywords this module does not analyse ($ref left in place, not, if/then/else, contains, …):
      // removing one only drops a constraint, except patternProperties, whose members may then count
      // as undeclared; adding or changing one may reject a call that passed before, or may not.
      const impact: ChangeImpact = had && !has && key !== 'patternProperties' && !IDENTITY_KEYWORDS.has(key) ? 'widening' : 'may-break';
      out.push(change('other-changed', impact, pointer, at.argument, `keyword "${key}" of ${subject(at)} ${verb(had, has)} (not analysed further)`, x, y));
    }
  }
  compareTypes(a, b, at, out);
  compareAllowedValues(a, b, at, out);
  compareObjectShape(a, b, at, out);
  compareItems(a, b, at, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) compareBranches(key, a, b, at, out);
  for (const key of ['$defs', 'definitions'] as const) compareDefinitions(key, a, b, at, out);
}

/**
 * A schema wrapped into `anyOf`/`oneOf` (`{type: string}` → `{anyOf: [{type: string}, {type:
 * null}]}`), or unwrapped from one: one change, decided by subsumption. Wrapped: when an
 * alternative accepts everything the old schema accepted, every old call is still valid (for
 * `oneOf` only if no other alternative can also match an old value, checked by type). Returns
 * false when the pair is not such a wrapping.
 */
function compareWrapping(a: Schema, b: Schema, at: Location, out: SchemaChange[]): boolean {
  const aCore = stripSchemaAnnotations(a);
  const bCore = stripSchemaAnnotations(b);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const pointer = `${at.pointer}/${key}`;
    const aAlternatives = aCore[key];
    const bAlternatives = bCore[key];
    if (onlyKey(bCore, key) && !Object.prototype.hasOwnProperty.call(aCore, key) && isArray(bAlternatives)) {
      const alternatives = bAlternatives;
      const covering = alternatives.findIndex((alternative) => covers(alternative, aCore));
      if (covering < 0) return false;
      const others = alternatives.filter((_, index) => index !== covering);
      const impact: ChangeImpact = key === 'anyOf' || others.every((other) => typesDisjoint(other, aCore)) ? 'widening' : 'may-break';
      out.push(change('alternatives-added', impact, pointer, at.argument, `${subject(at)} now also accepts ${others.length} other alternative${others.length === 1 ? '' : 's'} (${key})`, a, b));
      return true;
    }
    if (onlyKey(aCore, key) && !Object.prototype.hasOwnProperty.call(bCore, key) && isArray(aAlternatives)) {
      const alternatives = aAlternatives;
      if (alternatives.every((alternative) => covers(bCore, alternative))) {
        out.push(change('alternatives-removed', 'widening', at.pointer, at.argument, `${subject(at)} is no longer a choice of alternatives (${key}); the new schema accepts every one of them`, a, b));
        return true;
      }
      const kept = alternatives.findIndex((alternative) => covers(bCore, alternative));
      if (kept < 0) return false;
      const others = alternatives.filter((_, index) => index !== kept);
      // Breaking for certain when a dropped alternative only accepts values of other types.
      const impact: ChangeImpact = key === 'anyOf' && others.some((other) => typesDisjoint(other, bCore) && !isAcceptAll(other)) ? 'breaking' : 'may-break';
      out.push(change('alternatives-removed', impact, pointer, at.argument, `${subject(at)} no longer accepts ${others.length} other alternative${others.length === 1 ? '' : 's'} (${key})`, a, b));
      return true;
    }
  }
  return false;
}

/**
 * How many subsumption checks one diffInputSchemas call has made. Nested alternatives make the
 * checks multiply (each alternative against each), so past {@link MAX_COVER_CHECKS} a check answers
 * "not known", which only ever turns a verdict into may-break. Reset by diffInputSchemas, which is
 * synchronous, so no two calls share it.
 */
let coverChecks = 0;
const MAX_COVER_CHECKS = 2000;

/** True when `outer` is known to accept every value `inner` accepts (by this module's own diff). */
function covers(outer: unknown, inner: unknown): boolean {
  if (isAcceptAll(outer)) return true;
  if (++coverChecks > MAX_COVER_CHECKS) return false;
  const changes: SchemaChange[] = [];
  compareSchemas(inner, outer, ROOT, changes);
  return changes.every((entry) => entry.impact === 'widening' || entry.impact === 'cosmetic');
}

/** True when the two schemas declare types and no JSON value has a type both allow. */
function typesDisjoint(x: unknown, y: unknown): boolean {
  const a = asSchema(x);
  const b = asSchema(y);
  if (!a || !b || a.type === undefined || b.type === undefined) return false;
  const left = typeSet(a.type);
  const right = typeSet(b.type);
  const overlap = (p: string, q: string): boolean => p === q || (p === 'integer' && q === 'number') || (p === 'number' && q === 'integer');
  return ![...left].some((p) => [...right].some((q) => overlap(p, q)));
}

function onlyKey(schema: Schema, key: string): boolean {
  const keys = Object.keys(schema);
  return keys.length === 1 && keys[0] === key;
}

function compareTypes(a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  const before = typeSet(a.type);
  const after = typeSet(b.type);
  if (sameSet(before, after)) return;
  const pointer = `${at.pointer}/type`;
  let impact: ChangeImpact;
  const values = allowedValues(a);
  // The types the old schema can accept at all (its alternatives and enum count too).
  if (typesCover(after, effectiveTypes(a))) impact = 'widening';
  // With an enum, only the allowed values matter: breaking when one of them has a type no longer allowed.
  else if (values) impact = values.some((value) => !typesCover(after, new Set([jsonType(value)]))) ? 'breaking' : 'widening';
  else impact = 'breaking';
  out.push(change('type-changed', impact, pointer, at.argument, `type of ${subject(at)} changed from ${describeTypes(before)} to ${describeTypes(after)}`, a.type, b.type));
}

/** `enum` and `const` both list the allowed values (`const` is a one-value enum). */
function compareAllowedValues(a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  const before = allowedValues(a);
  const after = allowedValues(b);
  if (!before && !after) return;
  const keyword = b.enum !== undefined ? 'enum' : b.const !== undefined ? 'const' : a.enum !== undefined ? 'enum' : 'const';
  const pointer = `${at.pointer}/${keyword}`;
  const beforeValue = a.enum ?? a.const;
  const afterValue = b.enum ?? b.const;
  if (!before) {
    if (after) out.push(change('enum-narrowed', 'breaking', pointer, at.argument, `${subject(at)} is now limited to ${listValues(after)}`, beforeValue, afterValue));
    return;
  }
  if (!after) {
    out.push(change('enum-widened', 'widening', pointer, at.argument, `${subject(at)} is no longer limited to ${listValues(before)}`, beforeValue, afterValue));
    return;
  }
  const beforeKeys = new Map(before.map((value) => [jsonKey(value), value]));
  const afterKeys = new Map(after.map((value) => [jsonKey(value), value]));
  const removed = [...beforeKeys].filter(([key]) => !afterKeys.has(key)).map(([, value]) => value);
  const added = [...afterKeys].filter(([key]) => !beforeKeys.has(key)).map(([, value]) => value);
  if (removed.length === 0 && added.length === 0) return; // same set, other order: no change to what validates
  // A removed value is a certain break only if the old schema's other keywords let it through.
  const removedImpact: ChangeImpact = removed.some((value) => acceptedBesidesValues(a, value)) ? 'breaking' : removed.every((value) => acceptedBesidesValues(a, value) === false) ? 'widening' : 'may-break';
  if (removed.length === 0) {
    out.push(change('enum-widened', 'widening', pointer, at.argument, `allowed values of ${subject(at)} widened: ${listValues(added)} added`, beforeValue, afterValue));
  } else if (added.length === 0) {
    out.push(change('enum-narrowed', removedImpact, pointer, at.argument, `allowed values of ${subject(at)} narrowed: ${listValues(removed)} removed`, beforeValue, afterValue));
  } else {
    out.push(change('enum-changed', removedImpact, pointer, at.argument, `allowed values of ${subject(at)} changed: ${listValues(removed)} removed, ${listValues(added)} added`, beforeValue, afterValue));
  }
}

/**
 * Whether the schema's type and bound keywords accept a value (its enum aside): true, false, or
 * undefined when a keyword this module does not evaluate might reject it.
 */
function acceptedBesidesValues(schema: Schema, value: unknown): boolean | undefined {
  if (!typesCover(typeSet(schema.type), new Set([jsonType(value)]))) return false;
  let known = true;
  for (const key of Object.keys(schema)) {
    if (key === 'type' || key === 'enum' || key === 'const' || COSMETIC_KEYWORDS.has(key)) continue;
    const keywordType = appliesTo(key);
    if (LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key)) {
      const verdict = meetsBound(key, schema[key], value);
      if (verdict === false) return false;
      if (verdict === undefined) known = false;
    } else if (keywordType !== undefined && !typesCover(new Set([keywordType]), new Set([jsonType(value)]))) {
      continue; // a keyword for another type of value
    } else {
      known = false;
    }
  }
  return known ? true : undefined;
}

function compareObjectShape(a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  const propsBefore = isRecord(a.properties) ? a.properties : {};
  const propsAfter = isRecord(b.properties) ? b.properties : {};
  const requiredBefore = stringSet(a.required);
  const requiredAfter = stringSet(b.required);
  const modeBeforeShape = additionalMode(a.additionalProperties);
  const modeAfterShape = additionalMode(b.additionalProperties);
  // patternProperties decide for some undeclared names; this module does not match patterns.
  const patterns = a.patternProperties !== undefined || b.patternProperties !== undefined;
  const names = [...new Set([...Object.keys(propsBefore), ...Object.keys(propsAfter)])].sort();
  const reported = new Set<string>();
  for (const name of names) {
    const had = Object.prototype.hasOwnProperty.call(propsBefore, name);
    const has = Object.prototype.hasOwnProperty.call(propsAfter, name);
    const child: Location = { pointer: `${at.pointer}/properties/${escapePointer(name)}`, argument: joinArgument(at.argument, name) };
    const wasRequired = requiredBefore.has(name);
    const isRequired = requiredAfter.has(name);
    if (!had && has) {
      // Before, the name was an undeclared property: any value (open), one that matched the
      // additionalProperties schema, or none at all (closed). Declaring it widens only when its
      // new schema accepts whatever was accepted for it before.
      const undeclaredBefore: unknown = modeBeforeShape === 'open' ? {} : modeBeforeShape === 'closed' ? false : a.additionalProperties;
      const widens = !patterns && (undeclaredBefore === false || covers(propsAfter[name], undeclaredBefore));
      const addedImpact: ChangeImpact = widens ? 'widening' : 'may-break';
      const caveat = widens ? '' : `; a call that passed "${name}" as an undeclared property with another shape may now be rejected`;
      // A newly required new property is one change; otherwise a change of "required" is its own.
      if (isRequired && !wasRequired) {
        out.push(change('required-added', 'breaking', child.pointer, child.argument, `required property "${child.argument}" added`, undefined, propsAfter[name]));
      } else if (isRequired) {
        out.push(change('property-added', addedImpact, child.pointer, child.argument, `property "${child.argument}" added (it was already required)${caveat}`, undefined, propsAfter[name]));
      } else {
        out.push(change('property-added', addedImpact, child.pointer, child.argument, `optional property "${child.argument}" added${caveat}`, undefined, propsAfter[name]));
      }
      if (wasRequired === isRequired || isRequired) reported.add(name);
    } else if (had && !has) {
      // A required property that disappears with its requirement is one change. Its values are
      // then judged as an undeclared property's: rejected (closed), any (open), or by a schema.
      const note = wasRequired && !isRequired ? ' (it was required)' : wasRequired ? ' (it is still required)' : '';
      const undeclaredAfter: unknown = modeAfterShape === 'open' ? {} : modeAfterShape === 'closed' ? false : b.additionalProperties;
      let impact: ChangeImpact;
      if (patterns) impact = 'may-break';
      else if (undeclaredAfter === false) impact = isFalseSchema(propsBefore[name]) ? 'widening' : 'breaking';
      else impact = covers(undeclaredAfter, propsBefore[name]) ? 'widening' : 'may-break';
      const detail = impact === 'widening'
        ? `property "${child.argument}" removed${note}; calls that pass it are still accepted, but it is no longer declared`
        : `property "${child.argument}" removed${note}; calls that pass it may now be rejected`;
      out.push(change('property-removed', impact, child.pointer, child.argument, detail, propsBefore[name], undefined));
      if (wasRequired === isRequired || wasRequired) reported.add(name);
    } else {
      compareSchemas(propsBefore[name], propsAfter[name], child, out);
    }
  }
  const requiredNames = [...new Set([...requiredBefore, ...requiredAfter])].sort();
  for (const name of requiredNames) {
    if (reported.has(name)) continue;
    const argument = joinArgument(at.argument, name);
    const pointer = Object.prototype.hasOwnProperty.call(propsAfter, name) ? `${at.pointer}/properties/${escapePointer(name)}` : `${at.pointer}/required`;
    if (requiredAfter.has(name) && !requiredBefore.has(name)) {
      out.push(change('required-added', 'breaking', pointer, argument, `property "${argument}" is now required`, false, true));
    } else if (!requiredAfter.has(name) && requiredBefore.has(name)) {
      out.push(change('required-removed', 'widening', pointer, argument, `property "${argument}" is no longer required`, true, false));
    }
  }

  const modeBefore = modeBeforeShape;
  const modeAfter = modeAfterShape;
  const pointer = `${at.pointer}/additionalProperties`;
  const where = at.argument === '' ? 'the arguments' : `"${at.argument}"`;
  if (modeBefore === 'schema' && modeAfter === 'schema') {
    compareSchemas(a.additionalProperties, b.additionalProperties, { pointer, argument: joinArgument(at.argument, '*') }, out);
  } else if (modeBefore !== modeAfter) {
    const rank = { open: 2, schema: 1, closed: 0 } as const;
    const tightened = rank[modeAfter] < rank[modeBefore];
    const detail = modeAfter === 'closed'
      ? `${where} no longer accept undeclared properties`
      : modeAfter === 'open'
        ? `${where} now accept undeclared properties`
        : `undeclared properties of ${where} are now ${tightened ? 'constrained' : 'accepted when they match a schema'}`;
    // Tightened: an undeclared name that no pattern claims is now rejected; patterns may claim every name.
    const impact: ChangeImpact = !tightened ? 'widening' : patterns || b.propertyNames !== undefined || a.propertyNames !== undefined ? 'may-break' : 'breaking';
    out.push(change(tightened ? 'additional-properties-tightened' : 'additional-properties-loosened', impact, pointer, at.argument, detail, a.additionalProperties, b.additionalProperties));
  }
}

function compareItems(a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  if (!sameJson(a.items, b.items)) {
    const pointer = `${at.pointer}/items`;
    if (Array.isArray(a.items) || Array.isArray(b.items)) {
      compareTuple(Array.isArray(a.items) ? a.items : undefined, Array.isArray(b.items) ? b.items : undefined, a.items, b.items, pointer, at, out);
    } else {
      compareSchemas(a.items === undefined ? {} : a.items, b.items === undefined ? {} : b.items, { pointer, argument: `${at.argument}[]` }, out);
    }
  }
  if (!sameJson(a.prefixItems, b.prefixItems)) {
    compareTuple(Array.isArray(a.prefixItems) ? a.prefixItems : [], Array.isArray(b.prefixItems) ? b.prefixItems : [], a.prefixItems, b.prefixItems, `${at.pointer}/prefixItems`, at, out);
  }
}

function compareTuple(before: readonly unknown[] | undefined, after: readonly unknown[] | undefined, rawBefore: unknown, rawAfter: unknown, pointer: string, at: Location, out: SchemaChange[]): void {
  if (!before || !after || before.length !== after.length) {
    out.push(change('other-changed', 'may-break', pointer, at.argument, `the item schemas of ${subject(at)} changed shape (not analysed further)`, rawBefore, rawAfter));
    return;
  }
  before.forEach((item, index) => compareSchemas(item, after[index], { pointer: `${pointer}/${index}`, argument: `${at.argument}[${index}]` }, out));
}

function compareBranches(key: 'anyOf' | 'oneOf' | 'allOf', a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  if (sameJson(a[key], b[key])) return;
  const rawBefore = a[key];
  const rawAfter = b[key];
  const before = isArray(rawBefore) ? rawBefore : undefined;
  const after = isArray(rawAfter) ? rawAfter : undefined;
  const pointer = `${at.pointer}/${key}`;
  if (before && after && before.length === after.length) {
    // Inside one alternative a narrowing is only certain to break if no other alternative takes
    // the value; in oneOf a widening may make two alternatives match. Those become may-break.
    const inner: SchemaChange[] = [];
    before.forEach((branch, index) => compareSchemas(branch, after[index], { pointer: `${pointer}/${index}`, argument: at.argument }, inner));
    for (const entry of inner) {
      let impact = entry.impact;
      if (impact === 'breaking' && key !== 'allOf') impact = 'may-break';
      if (impact === 'widening' && key === 'oneOf') impact = 'may-break';
      out.push(impact === entry.impact ? entry : { ...entry, impact });
    }
    return;
  }
  // Alternatives added or removed: for anyOf, covering every old alternative only widens; for
  // allOf, dropping conditions only widens; anything else cannot be decided here.
  let impact: ChangeImpact = 'may-break';
  if (key === 'anyOf' && !after) impact = 'widening';
  if (key === 'anyOf' && before && after && before.every((branch) => after.some((candidate) => covers(candidate, branch)))) impact = 'widening';
  if (key === 'allOf' && (after ?? []).every((branch) => (before ?? []).some((candidate) => sameJson(candidate, branch)))) impact = 'widening';
  const counts = `${before?.length ?? 0} → ${after?.length ?? 0} alternatives`;
  out.push(change('other-changed', impact, pointer, at.argument, `${key} of ${subject(at)} changed (${counts})`, a[key], b[key]));
}

/**
 * Definitions that are still present after normalisation: only when a `$ref` could not be inlined
 * (a cycle, or a reference this module does not resolve). What changes in them is used through
 * that `$ref`, so no narrowing there is certain to break.
 */
function compareDefinitions(key: '$defs' | 'definitions', a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  if (sameJson(a[key], b[key])) return;
  const before = isRecord(a[key]) ? a[key] : {};
  const after = isRecord(b[key]) ? b[key] : {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const name of names) {
    const pointer = `${at.pointer}/${key}/${escapePointer(name)}`;
    const had = Object.prototype.hasOwnProperty.call(before, name);
    const has = Object.prototype.hasOwnProperty.call(after, name);
    if (had && has) {
      const inner: SchemaChange[] = [];
      compareSchemas(before[name], after[name], { pointer, argument: `(definition ${name})` }, inner);
      for (const entry of inner) out.push(entry.impact === 'breaking' ? { ...entry, impact: 'may-break' } : entry);
    } else {
      out.push(change('definition-changed', 'may-break', pointer, at.argument, `definition "${name}" ${verb(had, has)}`, before[name], after[name]));
    }
  }
}

/** Which type of value a constraint keyword applies to; other values pass it whatever it says. */
function appliesTo(key: string): string | undefined {
  if (['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum', 'multipleOf'].includes(key)) return 'number';
  if (['minLength', 'maxLength', 'pattern', 'format', 'contentEncoding', 'contentMediaType'].includes(key)) return 'string';
  if (['minItems', 'maxItems', 'uniqueItems', 'minContains', 'maxContains'].includes(key)) return 'array';
  if (['minProperties', 'maxProperties'].includes(key)) return 'object';
  return undefined;
}

/** Whether a value meets one bound keyword (true also when the keyword does not apply to it); undefined if unreadable. */
function meetsBound(key: string, bound: unknown, value: unknown): boolean | undefined {
  if (typeof bound !== 'number') return undefined;
  let measure: number | undefined;
  const target = appliesTo(key);
  if (target === 'number' && typeof value === 'number') measure = value;
  else if (target === 'string' && typeof value === 'string') measure = [...value].length;
  else if (target === 'array' && Array.isArray(value)) measure = key.endsWith('Contains') ? undefined : value.length;
  else if (target === 'object' && isRecord(value)) measure = Object.keys(value).length;
  else return true;
  if (measure === undefined) return undefined;
  if (key === 'exclusiveMinimum') return measure > bound;
  if (key === 'exclusiveMaximum') return measure < bound;
  return LOWER_BOUNDS.has(key) ? measure >= bound : measure <= bound;
}

function constraintImpact(key: string, had: boolean, has: boolean, before: unknown, after: unknown, a: Schema, b: Schema): ChangeImpact {
  // A constraint only judges values of its type: if the old schema accepts none, no old call is
  // affected (cosmetic when the new one accepts none either).
  const target = appliesTo(key);
  if (target !== undefined && !typesMeet(effectiveTypes(a), target)) return typesMeet(effectiveTypes(b), target) ? 'widening' : 'cosmetic';
  const values = allowedValues(a);
  if (values) {
    // With an enum, decide on its values where the bound can be evaluated.
    if (!(LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key)) || (has && typeof after !== 'number')) return 'may-break';
    const rejected = values.some((value) => acceptedBesidesValues(a, value) === true && has && meetsBound(key, after, value) === false);
    if (rejected) return 'breaking';
    return values.every((value) => acceptedBesidesValues(a, value) !== undefined) ? 'widening' : 'may-break';
  }
  if (!had) {
    if (key === 'format') return 'may-break'; // validators differ on whether format asserts
    if (key === 'pattern' && (after === '' || after === '.*' || after === '^.*')) return 'widening';
    if (key === 'uniqueItems' && after === false) return 'cosmetic';
    if (key === 'minimum' || key === 'minLength' || key === 'minItems' || key === 'minProperties') {
      if (after === 0 && key !== 'minimum') return 'cosmetic';
    }
    return OTHER_CONSTRAINTS.has(key) && key !== 'pattern' && key !== 'uniqueItems' && key !== 'multipleOf' ? 'may-break' : 'breaking';
  }
  if (!has) return 'widening';
  if (key === 'uniqueItems') return after === true ? 'breaking' : 'widening';
  if (typeof before === 'number' && typeof after === 'number') {
    if (LOWER_BOUNDS.has(key)) return after > before ? 'breaking' : 'widening';
    if (UPPER_BOUNDS.has(key)) return after < before ? 'breaking' : 'widening';
    if (key === 'multipleOf') return Number.isInteger(after / before) ? 'breaking' : before % after === 0 ? 'widening' : 'may-break';
  }
  return 'may-break';
}

/**
 * The JSON types a schema can accept at all: its `type`, narrowed by its enum's values and by its
 * `anyOf`/`oneOf` alternatives (their union) and `allOf` members (their intersection).
 */
function effectiveTypes(schema: Schema, depth = 0): Set<string> {
  let types = typeSet(schema.type);
  const narrow = (allowed: Set<string>): void => {
    types = new Set([...types].filter((type) => allowed.has(type) || (type === 'number' && allowed.has('integer')) || (type === 'integer' && allowed.has('number'))));
    if (allowed.has('integer') && !allowed.has('number') && types.has('number')) {
      types.delete('number');
      types.add('integer');
    }
  };
  const values = allowedValues(schema);
  if (values) narrow(new Set(values.map(jsonType)));
  if (depth > 8) return types;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alternatives = schema[key];
    if (!Array.isArray(alternatives)) continue;
    const union = new Set<string>();
    for (const alternative of alternatives) {
      const inner = asSchema(alternative);
      for (const type of inner ? effectiveTypes(inner, depth + 1) : JSON_TYPES) union.add(type);
    }
    narrow(union);
  }
  if (Array.isArray(schema.allOf)) {
    for (const member of schema.allOf) {
      const inner = asSchema(member);
      if (inner) narrow(effectiveTypes(inner, depth + 1));
    }
  }
  return types;
}

/** True when some value of one of `types` has the JSON type `target` (`number` includes integers). */
function typesMeet(types: Set<string>, target: string): boolean {
  if (target === 'number') return types.has('number') || types.has('integer');
  return types.has(target);
}

// ---------------------------------------------------------------------------------------------
// Normalisation: local `$ref`s inlined, definitions dropped, annotations stripped

/** Keywords whose value is one subschema. */
const SCHEMA_VALUED = ['items', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'unevaluatedItems', 'unevaluatedProperties'];
/** Keywords whose value is a list of subschemas. */
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
/** Keywords that name a schema for `$ref`s: changing them may change what a reference means. */
const IDENTITY_KEYWORDS = new Set(['$id', '$anchor', '$dynamicAnchor', '$ref', '$dynamicRef', '$recursiveRef']);
/** How many `$ref`s are inlined at most, so that a schema built to explode stays cheap. */
const MAX_INLINED = 500;

/** A copy of a schema with `transform` applied to every subschema, bottom-up, by keyword position. */
function mapSubschemas(node: unknown, transform: (schema: Schema) => Schema): unknown {
  return isRecord(node) ? mapSchema(node, transform) : node;
}

/** {@link mapSubschemas} of an object schema, which stays an object schema. */
function mapSchema(node: Schema, transform: (schema: Schema) => Schema): Schema {
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
function normalise(root: unknown): { schema: unknown; opaque: boolean } {
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

function dropDefinitions(node: Schema): Schema {
  if (node.$defs === undefined && node.definitions === undefined) return node;
  const rest: Schema = { ...node };
  delete rest.$defs;
  delete rest.definitions;
  return rest;
}

function pickAnnotations(node: Schema): Schema {
  return Object.fromEntries(Object.entries(node).filter(([key]) => COSMETIC_KEYWORDS.has(key)));
}

/** The schema without annotations: what is left decides validation. */
function stripAnnotations(node: unknown): unknown {
  return isRecord(node) ? stripSchemaAnnotations(node) : node;
}

function stripSchemaAnnotations(schema: Schema): Schema {
  return mapSchema(schema, (node) => Object.fromEntries(Object.entries(node).filter(([key]) => !COSMETIC_KEYWORDS.has(key))));
}

/** RFC 6901 JSON Pointer (already without its leading `#`), URI-decoded. */
function resolvePointer(root: unknown, pointer: string): unknown {
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
function unreferencedDefinitionChanges(before: unknown, after: unknown): SchemaChange[] {
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
function reachableRefs(root: unknown): Set<string> {
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

function isFalseSchema(value: unknown): boolean {
  return value === false;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;

/** The set of JSON types a `type` keyword allows; absent (or unreadable) means any type. */
function typeSet(type: unknown): Set<string> {
  if (typeof type === 'string') return new Set([type]);
  if (isStringArray(type)) return new Set(type);
  return new Set(JSON_TYPES);
}

/** True when every value of a type in `inner` is allowed by `outer` (integer ⊂ number). */
function typesCover(outer: Set<string>, inner: Set<string>): boolean {
  return [...inner].every((type) => outer.has(type) || (type === 'integer' && outer.has('number')));
}

/** The JSON type of a value, as `type` names it (`integer` for whole numbers). */
function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

function describeTypes(types: Set<string>): string {
  if (JSON_TYPES.every((type) => types.has(type))) return 'any type';
  return [...types].join(' or ');
}

function allowedValues(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum;
  if (Object.prototype.hasOwnProperty.call(schema, 'const')) return [schema.const];
  return undefined;
}

function additionalMode(value: unknown): 'open' | 'closed' | 'schema' {
  if (value === undefined || value === true) return 'open';
  if (value === false) return 'closed';
  if (isRecord(value) && Object.keys(value).length === 0) return 'open';
  return 'schema';
}

function asSchema(value: unknown): Schema | undefined {
  if (value === true) return {};
  return isRecord(value) ? value : undefined;
}

function isAcceptAll(value: unknown): boolean {
  return value === true || (isRecord(value) && Object.keys(value).length === 0);
}

function stringSet(value: unknown): Set<string> {
  return new Set(Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : []);
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every((entry) => b.has(entry));
}

function jsonKey(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch {
    return String(value);
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return jsonKey(a) === jsonKey(b);
}

function short(value: unknown): string {
  const text = value === undefined ? 'nothing' : jsonKey(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function listValues(values: readonly unknown[]): string {
  const shown = values.slice(0, 6).map(short);
  return values.length > 6 ? `${shown.join(', ')} and ${values.length - 6} more` : shown.join(', ');
}

function verb(had: boolean, has: boolean): string {
  return had && has ? 'changed' : had ? 'removed' : 'added';
}

function subject(at: Location): string {
  return at.argument === '' ? 'the arguments' : `"${at.argument}"`;
}

function joinArgument(parent: string, name: string): string {
  return parent === '' ? name : `${parent}.${name}`;
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function change(kind: SchemaChangeKind, impact: ChangeImpact, path: string, argument: string, detail: string, before: unknown, after: unknown): SchemaChange {
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

// ---------------------------------------------------------------------------------------------
// Readable line diff

/**
 * Pretty-prints JSON with 2-space indentation and keys sorted as canonical JSON sorts them
 * (UTF-16 code units). Built as a string, like canonicalJson, so integer-like keys keep that order;
 * scalars are written exactly as canonicalJson writes them. Throws CanonicalJsonError on non-JSON.
 */
export function prettyCanonicalJson(value: unknown): string {
  return pretty(value, '');
}

function pretty(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((entry) => `${inner}${pretty(entry, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    if (keys.length === 0) return '{}';
    return `{\n${keys.map((key) => `${inner}${JSON.stringify(key)}: ${pretty(value[key], inner)}`).join(',\n')}\n${indent}}`;
  }
  return canonicalJson(value);
}

export interface DiffLine {
  readonly kind: 'context' | 'added' | 'removed';
  /** The line without its `+`/`-`/space marker. */
  readonly text: string;
}

export interface DiffHunk {
  /** `@@ -3,7 +3,8 @@` */
  readonly header: string;
  readonly lines: readonly DiffLine[];
}

export interface LineDiff {
  /** The pinned side, pretty-printed. */
  readonly before: string;
  /** The live side, pretty-printed. */
  readonly after: string;
  readonly hunks: readonly DiffHunk[];
  readonly added: number;
  readonly removed: number;
  /** A unified diff (`--- pinned`, `+++ live`, hunks); empty when there is no difference. */
  readonly unified: string;
}

export interface LineDiffOptions {
  /** Lines of context around each change; 3 by default. */
  readonly context?: number;
  readonly beforeLabel?: string;
  readonly afterLabel?: string;
}

/**
 * A unified-style line diff of two canonical JSON texts (a store entry and the live content, as
 * `schemaPinContent` / `toolPinContent` give it). Both are pretty-printed first so each member is
 * on its own line; a text that is not JSON is diffed as it is. Never throws.
 */
export function lineDiff(beforeCanonical: string, afterCanonical: string, options: LineDiffOptions = {}): LineDiff {
  const before = prettyText(beforeCanonical);
  const after = prettyText(afterCanonical);
  const beforeLabel = options.beforeLabel ?? 'pinned';
  const afterLabel = options.afterLabel ?? 'live';
  const patch = structuredPatch(beforeLabel, afterLabel, `${before}\n`, `${after}\n`, undefined, undefined, { context: options.context ?? 3 });
  let added = 0;
  let removed = 0;
  const hunks: DiffHunk[] = patch.hunks.map((hunk) => {
    const lines: DiffLine[] = [];
    for (const line of hunk.lines) {
      const marker = line[0];
      if (marker === '+') {
        added++;
        lines.push({ kind: 'added', text: line.slice(1) });
      } else if (marker === '-') {
        removed++;
        lines.push({ kind: 'removed', text: line.slice(1) });
      } else if (marker === ' ') {
        lines.push({ kind: 'context', text: line.slice(1) });
      }
      // "\ No newline at end of file" cannot occur: both sides end with a newline.
    }
    return { header: `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, lines };
  });
  const unified = hunks.length === 0
    ? ''
    : [`--- ${beforeLabel}`, `+++ ${afterLabel}`, ...hunks.flatMap((hunk) => [hunk.header, ...hunk.lines.map(markLine)])].join('\n') + '\n';
  return { before, after, hunks, added, removed, unified };
}

function markLine(line: DiffLine): string {
  return `${line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' '}${line.text}`;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

function prettyText(text: string): string {
  try {
    return prettyCanonicalJson(JSON.parse(text));
  } catch {
    return text;
  }
}
