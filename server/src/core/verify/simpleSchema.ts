/**
 * A verdict on a step's arguments without compiling the live schema, for the schemas most tools
 * have: an object with typed properties, `required` and `additionalProperties`, enums and bounds.
 *
 * Contract: {@link acceptedWithoutAjv} returns true only when core/verify/arguments.ts
 * `checkArguments` would return no finding through Ajv: the schema is in a subset that both Ajv
 * dialects compile without error (see {@link isSimpleSchema}), and every error Ajv would report
 * for the value lies at or below an any-value placeholder, which `checkArguments` drops (its rule
 * 1). In every other case it returns false and Ajv decides, as before; it never reports anything
 * itself. test/unit/simpleSchema.property.test.ts holds it to this against Ajv.
 *
 * Why: compiling a validator costs about a millisecond a schema in a fresh process, plus Ajv's
 * own loading and its meta-schema, and a cold `toolpin check` compiled one per live tool its steps
 * call (issue 13: 150 schemas, the largest part of the CPU that verification adds). Steps whose
 * arguments are what the tool asks for, the common case, need no validator at all.
 */
/**
 * A value only known at run time, as core/verify/arguments.ts finds them (its `Placeholder`,
 * written out here so that the two modules do not import each other).
 */
interface Placeholder {
  readonly path: readonly string[];
  readonly kind: 'any' | 'string';
}

/** The JSON Schema type names, as Ajv reads them. */
const TYPE_NAMES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/**
 * Keywords whose value does not change a verdict, with the type the meta-schemas require of it
 * (undefined: any JSON). `format` is one: AJV_OPTIONS turn format validation off.
 */
const ANNOTATIONS: Readonly<Record<string, 'string' | undefined>> = { description: 'string', title: 'string', $comment: 'string', format: 'string', default: undefined };

/** Bounds on numbers: a finite number each (draft-07 and 2020-12 alike; draft-04's boolean exclusives are not read here). */
const NUMBER_BOUNDS: ReadonlySet<string> = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);
/** Bounds on lengths: a non-negative integer each. */
const LENGTH_BOUNDS: ReadonlySet<string> = new Set(['minLength', 'maxLength', 'minItems', 'maxItems']);

/** How deep a subset schema may nest; deeper ones go to Ajv (a hostile schema cannot exhaust the stack here). */
const MAX_SCHEMA_DEPTH = 32;

/** Schemas already classified: live listings are kept and their schemas asked about once per step. */
const simpleness = new WeakMap<object, boolean>();

/**
 * Whether a live input schema is in the subset read here: every keyword one of `type` (a type name
 * or a non-empty array of distinct ones), `properties` (an object of subset schemas), `required`
 * (an array of distinct strings), `additionalProperties` (a boolean or a subset schema), `items`
 * (one subset schema), `enum` (a non-empty array of strings, finite numbers, booleans and nulls),
 * `const` (one of those), `minimum` / `maximum` / `exclusiveMinimum` / `exclusiveMaximum` (finite
 * numbers), `minLength` / `maxLength` / `minItems` / `maxItems` (non-negative integers), the
 * annotations `description`, `title`, `$comment`, `format` (strings) and `default`, and, at the
 * root only, `$schema` (which `checkArguments` removes before Ajv compiles). No
 * property or required name may be a member of `Object.prototype` ("constructor", "__proto__"…):
 * Ajv reads `data.constructor` of an object without that key, and that is Ajv's to decide. Each
 * keyword value is what both dialects' meta-schemas require, so Ajv compiles every such schema.
 */
export function isSimpleSchema(schema: unknown): boolean {
  if (!isPlainObject(schema)) return false;
  const known = simpleness.get(schema);
  if (known !== undefined) return known;
  const simple = isSubsetSchema(schema, true, 0);
  simpleness.set(schema, simple);
  return simple;
}

function isSubsetSchema(schema: unknown, root: boolean, depth: number): boolean {
  if (!isPlainObject(schema) || depth > MAX_SCHEMA_DEPTH) return false;
  for (const keyword of Object.keys(schema)) {
    const value = schema[keyword];
    switch (keyword) {
      case 'type':
        if (typeof value === 'string') {
          if (!TYPE_NAMES.has(value)) return false;
        } else if (!Array.isArray(value) || value.length === 0 || new Set(value).size !== value.length || !value.every((name) => typeof name === 'string' && TYPE_NAMES.has(name))) {
          return false;
        }
        break;
      case 'properties':
        if (!isPlainObject(value)) return false;
        for (const name of Object.keys(value)) {
          if (name in Object.prototype || !isSubsetSchema(value[name], false, depth + 1)) return false;
        }
        break;
      case 'required':
        if (!Array.isArray(value) || new Set(value).size !== value.length || !value.every((name) => typeof name === 'string' && !(name in Object.prototype))) return false;
        break;
      case 'additionalProperties':
        if (typeof value !== 'boolean' && !isSubsetSchema(value, false, depth + 1)) return false;
        break;
      case 'items':
        if (!isSubsetSchema(value, false, depth + 1)) return false;
        break;
      case '$schema':
        if (!root) return false;
        break;
      case 'enum':
        // Primitives only: Ajv compares them with ===, as `holds` does (objects it compares deeply).
        if (!Array.isArray(value) || value.length === 0 || !value.every(isPrimitive)) return false;
        break;
      case 'const':
        if (!isPrimitive(value)) return false;
        break;
      default:
        if (NUMBER_BOUNDS.has(keyword)) {
          if (typeof value !== 'number' || !Number.isFinite(value)) return false;
        } else if (LENGTH_BOUNDS.has(keyword)) {
          if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return false;
        } else {
          if (!Object.hasOwn(ANNOTATIONS, keyword)) return false;
          if (ANNOTATIONS[keyword] === 'string' && typeof value !== 'string') return false;
        }
    }
  }
  return true;
}

/**
 * True when `value` (the plain value of a step's arguments, placeholders as written) meets the
 * subset schema `schema` everywhere outside its any-value placeholders; see the contract above.
 * False when it does not, or when the schema is not in the subset: then Ajv decides.
 */
export function acceptedWithoutAjv(schema: unknown, value: unknown, placeholders: readonly Placeholder[]): boolean {
  if (!isSimpleSchema(schema)) return false;
  const anyValues = placeholders.filter((placeholder) => placeholder.kind === 'any').map((placeholder) => placeholder.path);
  return holds(schema as Record<string, unknown>, value, [], anyValues);
}

function holds(schema: Record<string, unknown>, value: unknown, path: string[], anyValues: readonly (readonly string[])[]): boolean {
  // Whatever Ajv says at or below an any-value placeholder is dropped.
  if (anyValues.some((placeholder) => samePath(placeholder, path))) return true;
  // Ajv's own number checks differ from JSON's at infinities; leave those to it.
  if (typeof value === 'number' && !Number.isFinite(value)) return false;
  const type = schema.type;
  if (type !== undefined && !(Array.isArray(type) ? type.some((name) => hasType(value, name as string)) : hasType(value, type as string))) return false;
  if (schema.enum !== undefined && !(schema.enum as readonly unknown[]).some((allowed) => allowed === value)) return false;
  if (schema.const !== undefined && schema.const !== value) return false;
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return false;
    if (typeof schema.maximum === 'number' && value > schema.maximum) return false;
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) return false;
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) return false;
  } else if (typeof value === 'string' && (schema.minLength !== undefined || schema.maxLength !== undefined)) {
    const length = codePointLength(value);
    if (typeof schema.minLength === 'number' && length < schema.minLength) return false;
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) return false;
  } else if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return false;
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) return false;
  }
  if (isPlainObject(value)) {
    const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
    const required = schema.required as readonly string[] | undefined;
    for (const name of required ?? []) if (value[name] === undefined) return false;
    for (const key of Object.keys(value)) {
      const declared = properties !== undefined && Object.hasOwn(properties, key);
      const subschema = declared ? properties[key] : schema.additionalProperties;
      if (subschema === undefined || subschema === true) continue;
      path.push(key);
      const ok = subschema !== false && holds(subschema as Record<string, unknown>, value[key], path, anyValues);
      path.pop();
      // An undeclared key where additionalProperties is false fails even when its value is an
      // any-value placeholder: Ajv reports it at the object, which is not below the placeholder.
      if (!ok) return false;
    }
  } else if (Array.isArray(value) && isPlainObject(schema.items)) {
    for (let index = 0; index < value.length; index++) {
      path.push(String(index));
      const ok = holds(schema.items, value[index], path, anyValues);
      path.pop();
      if (!ok) return false;
    }
  }
  return true;
}

/** Ajv's type checks (strictNumbers off, as `strict: false` makes it); infinities never reach here. */
function hasType(value: unknown, name: string): boolean {
  switch (name) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    default:
      return typeof value === name;
  }
}

/** A string's length as Ajv counts it (its `ucs2length`): a surrogate pair is one character, a lone surrogate one too. */
function codePointLength(text: string): number {
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00) index++;
    length++;
  }
  return length;
}

/** A string, a finite number, a boolean or null. */
function isPrimitive(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function samePath(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index++) if (left[index] !== right[index]) return false;
  return true;
}
