/**
 * Typed readers of values whose shape nothing guarantees: parsed JSON, a server's answer, a thrown
 * value. Each is a type guard, so code narrows by checking instead of asserting a type with a cast.
 */

/** A non-null object that is not an array (a JSON object, or any object read as one). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An array, with entries still to be checked (`Array.isArray` alone narrows to `any[]`). */
export function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

/** An array whose entries are all strings. */
export function isStringArray(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((entry) => typeof entry === 'string');
}

/** Whether `value` is one of `allowed` (narrows a string read from input to a union of literals). */
export function isOneOf<T extends string>(allowed: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && allowed.some((entry) => entry === value);
}

/**
 * The `code` of a thrown value, such as a Node system error's `'ENOENT'`, or undefined when it has
 * none (or is not an object).
 */
export function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/** The message of a thrown value: an Error's message, anything else as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
