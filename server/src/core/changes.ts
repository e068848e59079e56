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
 * Impact of a schema change, from the caller's side:
 * - `breaking`: a call that was valid before may now be rejected (required added, type narrowed,
 *   enum narrowed, tighter constraint, additional properties closed, a property removed where
 *   undeclared properties are not accepted, any keyword this module does not analyse);
 * - `widening`: every call valid before is still valid (optional property added, required removed,
 *   enum widened, looser constraint, …);
 * - `cosmetic`: validation is unchanged (descriptions, titles, examples, defaults, `$comment`, the
 *   declared `$schema` dialect).
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
import { canonicalJson } from './canonicalJson';
import { fnv1a64Hex } from './fnv1a64';
import type { ParsedPin } from './pins';
import { sha256Hex } from './sha256';

// ---------------------------------------------------------------------------------------------
// Types

export type ChangeImpact = 'breaking' | 'widening' | 'cosmetic';

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
    ...(value.description !== undefined ? { description: value.description as string } : {}),
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

const IMPACT_ORDER: readonly ChangeImpact[] = ['breaking', 'widening', 'cosmetic'];

/** The most severe impact of a list of changes (breaking > widening > cosmetic). */
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
  if (changes.length === 0) return 'no change';
  const worst = worstImpact(changes)!;
  const first = changes.find((change) => change.impact === worst)!;
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
    if (typeof value[key] === 'boolean') result[key] = value[key] as boolean;
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
 */
export function diffInputSchemas(before: unknown, after: unknown): SchemaChange[] {
  const out: SchemaChange[] = [];
  compareSchemas(before === undefined ? {} : before, after === undefined ? {} : after, ROOT, out);
  return out;
}

function compareSchemas(before: unknown, after: unknown, at: Location, out: SchemaChange[]): void {
  if (sameJson(before, after)) return;
  const a = asSchema(before);
  const b = asSchema(after);
  if (!a || !b) {
    // Boolean schemas, or something that is not a schema at all.
    const impact: ChangeImpact = isAcceptAll(after) ? 'widening' : 'breaking';
    out.push(change('other-changed', impact, at.pointer, at.argument, `the schema of ${subject(at)} was replaced`, before, after));
    return;
  }
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
      const impact = constraintImpact(key, had, has, x, y);
      const how = had && has ? `changed from ${short(x)} to ${short(y)}` : had ? `removed (was ${short(x)})` : `added (${short(y)})`;
      out.push(change('constraint-changed', impact, pointer, at.argument, `constraint ${key} of ${subject(at)} ${how}`, x, y));
    } else {
      // Keywords this module does not analyse ($ref, not, if/then/else, contains, …): removing one
      // only drops a constraint, except patternProperties, whose members may then count as
      // undeclared; adding or changing one may reject a call that passed before.
      const impact: ChangeImpact = had && !has && key !== 'patternProperties' ? 'widening' : 'breaking';
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

function compareTypes(a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  const before = typeSet(a.type);
  const after = typeSet(b.type);
  if (sameSet(before, after)) return;
  const pointer = `${at.pointer}/type`;
  let impact: ChangeImpact;
  if (typesCover(after, before)) impact = 'widening';
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
  if (!before && after) {
    out.push(change('enum-narrowed', 'breaking', pointer, at.argument, `${subject(at)} is now limited to ${listValues(after)}`, beforeValue, afterValue));
    return;
  }
  if (before && !after) {
    out.push(change('enum-widened', 'widening', pointer, at.argument, `${subject(at)} is no longer limited to ${listValues(before)}`, beforeValue, afterValue));
    return;
  }
  const beforeKeys = new Map(before!.map((value) => [jsonKey(value), value]));
  const afterKeys = new Map(after!.map((value) => [jsonKey(value), value]));
  const removed = [...beforeKeys].filter(([key]) => !afterKeys.has(key)).map(([, value]) => value);
  const added = [...afterKeys].filter(([key]) => !beforeKeys.has(key)).map(([, value]) => value);
  if (removed.length === 0 && added.length === 0) return; // same set, other order: no change to what validates
  if (removed.length === 0) {
    out.push(change('enum-widened', 'widening', pointer, at.argument, `allowed values of ${subject(at)} widened: ${listValues(added)} added`, beforeValue, afterValue));
  } else if (added.length === 0) {
    out.push(change('enum-narrowed', 'breaking', pointer, at.argument, `allowed values of ${subject(at)} narrowed: ${listValues(removed)} removed`, beforeValue, afterValue));
  } else {
    out.push(change('enum-changed', 'breaking', pointer, at.argument, `allowed values of ${subject(at)} changed: ${listValues(removed)} removed, ${listValues(added)} added`, beforeValue, afterValue));
  }
}

function compareObjectShape(a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  const propsBefore = isRecord(a.properties) ? a.properties : {};
  const propsAfter = isRecord(b.properties) ? b.properties : {};
  const requiredBefore = stringSet(a.required);
  const requiredAfter = stringSet(b.required);
  const closedAfter = additionalMode(b.additionalProperties) !== 'open';
  const names = [...new Set([...Object.keys(propsBefore), ...Object.keys(propsAfter)])].sort();
  const reported = new Set<string>();
  for (const name of names) {
    const had = Object.prototype.hasOwnProperty.call(propsBefore, name);
    const has = Object.prototype.hasOwnProperty.call(propsAfter, name);
    const child: Location = { pointer: `${at.pointer}/properties/${escapePointer(name)}`, argument: joinArgument(at.argument, name) };
    const wasRequired = requiredBefore.has(name);
    const isRequired = requiredAfter.has(name);
    if (!had && has) {
      // A newly required new property is one change; otherwise a change of "required" is its own.
      if (isRequired && !wasRequired) {
        out.push(change('required-added', 'breaking', child.pointer, child.argument, `required property "${child.argument}" added`, undefined, propsAfter[name]));
      } else if (isRequired) {
        out.push(change('property-added', 'widening', child.pointer, child.argument, `property "${child.argument}" added (it was already required)`, undefined, propsAfter[name]));
      } else {
        out.push(change('property-added', 'widening', child.pointer, child.argument, `optional property "${child.argument}" added`, undefined, propsAfter[name]));
      }
      if (wasRequired === isRequired || isRequired) reported.add(name);
    } else if (had && !has) {
      // A required property that disappears with its requirement is one change.
      const note = wasRequired && !isRequired ? ' (it was required)' : wasRequired ? ' (it is still required)' : '';
      const detail = closedAfter
        ? `property "${child.argument}" removed${note}; calls that pass it may now be rejected`
        : `property "${child.argument}" removed${note}; calls that pass it are still accepted, but it is no longer declared`;
      out.push(change('property-removed', closedAfter ? 'breaking' : 'widening', child.pointer, child.argument, detail, propsBefore[name], undefined));
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

  const modeBefore = additionalMode(a.additionalProperties);
  const modeAfter = additionalMode(b.additionalProperties);
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
    out.push(change(tightened ? 'additional-properties-tightened' : 'additional-properties-loosened', tightened ? 'breaking' : 'widening', pointer, at.argument, detail, a.additionalProperties, b.additionalProperties));
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

function compareTuple(before: unknown[] | undefined, after: unknown[] | undefined, rawBefore: unknown, rawAfter: unknown, pointer: string, at: Location, out: SchemaChange[]): void {
  if (!before || !after || before.length !== after.length) {
    out.push(change('other-changed', 'breaking', pointer, at.argument, `the item schemas of ${subject(at)} changed shape (not analysed further)`, rawBefore, rawAfter));
    return;
  }
  before.forEach((item, index) => compareSchemas(item, after[index], { pointer: `${pointer}/${index}`, argument: `${at.argument}[${index}]` }, out));
}

function compareBranches(key: 'anyOf' | 'oneOf' | 'allOf', a: Schema, b: Schema, at: Location, out: SchemaChange[]): void {
  if (sameJson(a[key], b[key])) return;
  const before = Array.isArray(a[key]) ? (a[key] as unknown[]) : undefined;
  const after = Array.isArray(b[key]) ? (b[key] as unknown[]) : undefined;
  const pointer = `${at.pointer}/${key}`;
  if (before && after && before.length === after.length) {
    before.forEach((branch, index) => compareSchemas(branch, after[index], { pointer: `${pointer}/${index}`, argument: at.argument }, out));
    return;
  }
  // Branches added or removed: for anyOf, keeping every old branch only widens; for allOf,
  // dropping branches only widens; everything else may reject a call that passed before.
  const beforeKeys = new Set((before ?? []).map(jsonKey));
  const afterKeys = new Set((after ?? []).map(jsonKey));
  let impact: ChangeImpact = 'breaking';
  if (key === 'anyOf' && before && [...beforeKeys].every((branch) => afterKeys.has(branch))) impact = 'widening';
  if (key === 'anyOf' && !after) impact = 'widening';
  if (key === 'allOf' && [...afterKeys].every((branch) => beforeKeys.has(branch))) impact = 'widening';
  const counts = `${before?.length ?? 0} → ${after?.length ?? 0} alternatives`;
  out.push(change('other-changed', impact, pointer, at.argument, `${key} of ${subject(at)} changed (${counts})`, a[key], b[key]));
}

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
      compareSchemas(before[name], after[name], { pointer, argument: `(definition ${name})` }, out);
    } else {
      // An unreferenced definition changes nothing; a referenced one that disappears breaks the schema.
      out.push(change('other-changed', had ? 'breaking' : 'widening', pointer, at.argument, `definition "${name}" ${verb(had, has)}`, before[name], after[name]));
    }
  }
}

function constraintImpact(key: string, had: boolean, has: boolean, before: unknown, after: unknown): ChangeImpact {
  if (!had) return 'breaking';
  if (!has) return 'widening';
  if (key === 'uniqueItems') return after === true ? 'breaking' : 'widening';
  if (typeof before === 'number' && typeof after === 'number') {
    if (LOWER_BOUNDS.has(key)) return after > before ? 'breaking' : 'widening';
    if (UPPER_BOUNDS.has(key)) return after < before ? 'breaking' : 'widening';
    if (key === 'multipleOf') return Number.isInteger(after / before) ? 'breaking' : before % after === 0 ? 'widening' : 'breaking';
  }
  return 'breaking';
}

// ---------------------------------------------------------------------------------------------
// Small helpers

const JSON_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;

/** The set of JSON types a `type` keyword allows; absent (or unreadable) means any type. */
function typeSet(type: unknown): Set<string> {
  if (typeof type === 'string') return new Set([type]);
  if (Array.isArray(type) && type.every((entry) => typeof entry === 'string')) return new Set(type as string[]);
  return new Set(JSON_TYPES);
}

/** True when every value of a type in `inner` is allowed by `outer` (integer ⊂ number). */
function typesCover(outer: Set<string>, inner: Set<string>): boolean {
  return [...inner].every((type) => outer.has(type) || (type === 'integer' && outer.has('number')));
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
