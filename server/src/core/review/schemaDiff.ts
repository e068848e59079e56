/**
 * The concrete differences between two input schemas and the impact of each, from the caller's
 * side (changes.ts states what each impact word claims). Both sides are normalised first
 * (normalise.ts), then compared keyword by keyword.
 */
import { isArray, isRecord } from '../json/values';
import type { ChangeImpact, SchemaChange } from './changeTypes';
import { IDENTITY_KEYWORDS, isFalseSchema, normalise, stripAnnotations, stripSchemaAnnotations, unreferencedDefinitionChanges } from './normalise';
import { COSMETIC_KEYWORDS, HANDLED, JSON_TYPES, LOWER_BOUNDS, OTHER_CONSTRAINTS, ROOT, UPPER_BOUNDS, type Location, type Schema, additionalMode, allowedValues, asSchema, change, describeTypes, escapePointer, isAcceptAll, joinArgument, jsonKey, jsonType, listValues, sameJson, sameSet, short, stringSet, subject, typeSet, typesCover, verb } from './schemaWords';

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
    if (LOWER_BOUNDS.has(key) || UPPER_BOUNDS.has(key)) {
      const verdict = meetsBound(key, schema[key], value);
      if (verdict === false) return false;
      if (verdict === undefined) known = false;
    } else if (appliesTo(key) !== undefined && !typesCover(new Set([appliesTo(key)!]), new Set([jsonType(value)]))) {
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
