/**
 * Canonical JSON per RFC 8785 (JSON Canonicalization Scheme), strictly.
 *
 * Contract (docs/formats.md §1):
 * - no whitespace; `null`, `true`, `false` literal; arrays keep their order;
 * - object keys sorted recursively by UTF-16 code units, which is the order of a plain
 *   `Array.prototype.sort()` on strings; the output is built as a string, never by re-building an
 *   object (integer-like keys such as "10" and "2" would otherwise be reordered by the engine);
 * - strings escaped exactly as ECMAScript `JSON.stringify` does; numbers as
 *   `Number.prototype.toString` (so `1e+21`, `1e-7`, and `-0` becomes `0`);
 * - anything that is not plain JSON throws a {@link CanonicalJsonError} naming where it was found.
 */

/** Why a value cannot be canonicalized. Stable strings: tests and messages rely on them. */
export type CanonicalJsonErrorKind =
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'non-finite-number'
  | 'non-plain-object'
  | 'lone-surrogate'
  | 'cycle';

/** Thrown for any value that is not plain JSON. `path` is a JSON Pointer to the offending value. */
export class CanonicalJsonError extends Error {
  readonly kind: CanonicalJsonErrorKind;
  readonly path: string;

  constructor(kind: CanonicalJsonErrorKind, path: string, detail: string) {
    super(`cannot canonicalize ${detail} at ${path === '' ? 'the root' : path}`);
    this.name = 'CanonicalJsonError';
    this.kind = kind;
    this.path = path;
  }
}

// A lone surrogate is a high surrogate not followed by a low one, or a low one not preceded by a
// high one. JSON.stringify escapes these (well-formed JSON.stringify), but RFC 8785 requires
// strings to be valid Unicode, so they are rejected instead of escaped.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function serializeString(value: string, path: string, escapeLoneSurrogates = false): string {
  if (!escapeLoneSurrogates && LONE_SURROGATE.test(value)) {
    throw new CanonicalJsonError('lone-surrogate', path, 'a string with a lone surrogate');
  }
  // JSON.stringify of a string escapes exactly as RFC 8785 §3.2.2.2 prescribes.
  return JSON.stringify(value);
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function constructorName(value: object): string {
  return 'constructor' in value && typeof value.constructor === 'function' ? value.constructor.name : 'unknown';
}

// Thrown inside the fast path when a value needs the careful path (to produce a precise error, or
// to detect a cycle). It never escapes this module.
const NEEDS_CAREFUL_PATH = Symbol('needs careful path');
// Characters that JSON.stringify escapes, and surrogates (which may be lone).
// eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPING_OR_CHECK = /[\u0000-\u001f"\\\ud800-\udfff]/;
const SURROGATE = /[\ud800-\udfff]/;
// Deeper values go to the careful path, which tracks ancestors and so reports cycles.
const FAST_PATH_MAX_DEPTH = 64;

function fastString(value: string): string {
  if (!NEEDS_ESCAPING_OR_CHECK.test(value)) return `"${value}"`;
  // Only strings that hold a surrogate pay for the lookbehind test.
  if (SURROGATE.test(value) && LONE_SURROGATE.test(value)) throw NEEDS_CAREFUL_PATH;
  return JSON.stringify(value);
}

/**
 * Member names recur across schemas ("type", "description", "properties"…), so the fast path keeps
 * each short one's serialized form with its colon (`"type":`). Bounded: past the bound, or for a
 * long name, the name is serialized on the spot (the same text). A name that needs the careful
 * path is never stored.
 */
const KEY_CACHE_LIMIT = 4096;
const KEY_CACHE_MAX_LENGTH = 64;
const keyTexts = new Map<string, string>();

function fastKey(key: string): string {
  const known = keyTexts.get(key);
  if (known !== undefined) return known;
  const text = `${fastString(key)}:`;
  if (key.length <= KEY_CACHE_MAX_LENGTH && keyTexts.size < KEY_CACHE_LIMIT) keyTexts.set(key, text);
  return text;
}

/**
 * Short string values recur too ("string", "object", "integer"…): their serialized forms are kept
 * the same way (bounded; never one that needs the careful path). A lookup costs less than the
 * escaping test.
 */
const VALUE_CACHE_MAX_LENGTH = 16;
const valueTexts = new Map<string, string>();

function fastValueString(value: string): string {
  if (value.length > VALUE_CACHE_MAX_LENGTH) return fastString(value);
  const known = valueTexts.get(value);
  if (known !== undefined) return known;
  const text = fastString(value);
  if (valueTexts.size < KEY_CACHE_LIMIT) valueTexts.set(value, text);
  return text;
}

/** Above this many members an object's names are sorted by `Array.prototype.sort`, below by insertion. */
const INSERTION_SORT_MAX = 16;

/**
 * Sorts member names in place by UTF-16 code units (`<` on strings compares code units, as the
 * default `sort()` does), for the few names of a typical schema object: an insertion sort, which
 * costs one comparison per name when they are already in order.
 */
function sortKeys(keys: string[]): string[] {
  const count = keys.length;
  if (count > INSERTION_SORT_MAX) return keys.sort();
  for (let index = 1; index < count; index++) {
    const key = keys[index];
    const previous = keys[index - 1];
    if (key === undefined || previous === undefined || previous < key) continue;
    let at = index - 1;
    while (at >= 0) {
      const other = keys[at];
      if (other === undefined || other <= key) break;
      keys[at + 1] = other;
      at--;
    }
    keys[at + 1] = key;
  }
  return keys;
}

function fastCanonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return fastValueString(value);
    case 'number':
      if (!Number.isFinite(value)) throw NEEDS_CAREFUL_PATH;
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw NEEDS_CAREFUL_PATH;
  }
  if (value === null) return 'null';
  if (depth === FAST_PATH_MAX_DEPTH) throw NEEDS_CAREFUL_PATH;
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) throw NEEDS_CAREFUL_PATH;
      if (index > 0) out += ',';
      out += fastCanonical(value[index], depth + 1);
    }
    return `${out}]`;
  }
  if (!isPlainObject(value) || Object.getOwnPropertySymbols(value).length > 0) throw NEEDS_CAREFUL_PATH;
  const keys = sortKeys(Object.keys(value));
  let out = '{';
  let separator = '';
  for (const key of keys) {
    out += separator + fastKey(key) + fastCanonical(value[key], depth + 1);
    separator = ',';
  }
  return `${out}}`;
}

/**
 * Returns the RFC 8785 canonical form of `value`.
 *
 * Two paths give the same output: a fast one that keeps no bookkeeping, and a careful one that
 * tracks JSON Pointer paths and ancestors. The fast path hands over to the careful one on anything
 * unusual (non-JSON values, lone surrogates, very deep nesting), so errors always carry their path.
 * @throws CanonicalJsonError when `value` contains anything that is not plain JSON.
 */
export function canonicalJson(value: unknown): string {
  try {
    return fastCanonical(value, 0);
  } catch (error) {
    if (error !== NEEDS_CAREFUL_PATH) throw error;
    return carefulCanonicalJson(value);
  }
}

/**
 * The careful path: the same output, with exact error paths and cycle detection. Exported for tests,
 * and for mcp-pin's definition hash (core/pins/mcpPin.ts), whose version 1 writes a lone surrogate
 * as the lowercase `\u` escape of `JSON.stringify` instead of refusing it (`escapeLoneSurrogates`).
 */
export function carefulCanonicalJson(value: unknown, escapeLoneSurrogates = false): string {
  const parts: string[] = [];
  const ancestors = new Set<object>();

  const write = (current: unknown, path: string): void => {
    switch (typeof current) {
      case 'string':
        parts.push(serializeString(current, path, escapeLoneSurrogates));
        return;
      case 'number':
        if (!Number.isFinite(current)) {
          throw new CanonicalJsonError('non-finite-number', path, `the number ${String(current)}`);
        }
        // Number.prototype.toString is the ECMAScript serialization RFC 8785 adopts; -0 prints "0".
        parts.push(String(current));
        return;
      case 'boolean':
        parts.push(current ? 'true' : 'false');
        return;
      case 'undefined':
        throw new CanonicalJsonError('undefined', path, 'undefined');
      case 'function':
        throw new CanonicalJsonError('function', path, 'a function');
      case 'symbol':
        throw new CanonicalJsonError('symbol', path, 'a symbol');
      case 'bigint':
        throw new CanonicalJsonError('bigint', path, 'a BigInt');
      case 'object':
        break;
    }
    if (current === null) {
      parts.push('null');
      return;
    }
    const object = current;
    if (ancestors.has(object)) {
      throw new CanonicalJsonError('cycle', path, 'a cyclic reference');
    }
    ancestors.add(object);
    if (Array.isArray(object)) {
      parts.push('[');
      for (let index = 0; index < object.length; index++) {
        if (index > 0) parts.push(',');
        if (!(index in object)) {
          throw new CanonicalJsonError('undefined', `${path}/${index}`, 'an array hole');
        }
        write(object[index], `${path}/${index}`);
      }
      parts.push(']');
    } else {
      if (!isPlainObject(object)) {
        throw new CanonicalJsonError('non-plain-object', path, `a non-plain object (${constructorName(object)})`);
      }
      if (Object.getOwnPropertySymbols(object).length > 0) {
        throw new CanonicalJsonError('symbol', path, 'an object with symbol keys');
      }
      const record = object;
      // Default sort compares UTF-16 code units, which is exactly RFC 8785 §3.2.3's order.
      const keys = Object.keys(record).sort();
      parts.push('{');
      let separator = false;
      for (const key of keys) {
        const childPath = `${path}/${escapePointerToken(key)}`;
        if (separator) parts.push(',');
        separator = true;
        parts.push(serializeString(key, childPath, escapeLoneSurrogates));
        parts.push(':');
        write(record[key], childPath);
      }
      parts.push('}');
    }
    ancestors.delete(object);
  };

  write(value, '');
  return parts.join('');
}
