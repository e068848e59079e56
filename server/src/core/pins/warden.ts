/**
 * mcp-warden's hashes (its docs/WARDEN_LOCK_SCHEMA.md and docs/SPEC.md, "MCP Lock Format v1",
 * `schema_version: 3`), computed with Toolpin's own RFC 8785 and SHA-256 so that a `warden.lock`
 * Toolpin writes or verifies agrees byte for byte with the one mcp-warden writes:
 *
 * - every digest is `sha256:` + 64 lowercase hex digits of SHA-256 over the RFC 8785 form;
 * - `description_hash` hashes the description, `""` when absent or null; `input_schema_hash` the
 *   whole input schema, `{}` when absent or null (or not an object); `arguments_hash` a prompt's
 *   arguments, `[]` when absent;
 * - `capabilities`: the flags its tokenizer derives from the tool name and the top-level property
 *   names (its CHECKS.md §3 table, reproduced exactly);
 * - `schema_skeleton`: the structural facts of the input schema, one per dotted property path, with
 *   in-document `$ref` resolved (schema_version 3);
 * - `entry_digest`: the entry without its own digest; `command_digest`: `{command, args}` (or
 *   `{url}`); `overall_digest`: the schema version, the command digest and the entry digests.
 *
 * A few corners follow the reference implementation (Python) rather than JSON: enum values sort by
 * Python's type name and `json.dumps` text, and a number written with a fraction of zero (`1.0`)
 * reads here as an integer (JavaScript keeps no difference), which only changes the skeleton of an
 * enum mixing `1` and `1.0`.
 */
import { canonicalJson } from './canonicalJson';
import { sha256Hex } from './sha256';

/** The format level Toolpin writes and reads (mcp-warden's SCHEMA_VERSION). */
export const WARDEN_SCHEMA_VERSION = 3;

/** `hash(value)`: `sha256:` + hex SHA-256 of the RFC 8785 form. Throws CanonicalJsonError on values that are not JSON. */
export function wardenHash(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Compares by Unicode code point, as Python compares strings (not by UTF-16 code unit). */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index++) {
    const left = a.charCodeAt(index);
    const right = b.charCodeAt(index);
    if (left === right) continue;
    // Below the surrogates and above them code units order as code points; a surrogate (part of a
    // code point above U+FFFF) sorts after every code unit from U+E000 on.
    const leftHigh = left >= 0xd800 && left <= 0xdfff;
    const rightHigh = right >= 0xd800 && right <= 0xdfff;
    if (leftHigh !== rightHigh) return leftHigh ? 1 : -1;
    return left - right;
  }
  return a.length - b.length;
}

export function wardenDescriptionHash(description: unknown): string {
  return wardenHash(description ?? '');
}

export function wardenInputSchemaHash(inputSchema: unknown): string {
  return wardenHash(isObject(inputSchema) ? inputSchema : {});
}

export function wardenArgumentsHash(argumentsList: unknown): string {
  return wardenHash(Array.isArray(argumentsList) ? argumentsList : []);
}

// ---- capabilities (mcp-warden tokenizer.py, CHECKS.md §3) ----

const CAPABILITY_NAME_TOKENS: Readonly<Record<string, ReadonlySet<string>>> = {
  'shell-exec': new Set(['shell', 'exec', 'spawn', 'system', 'subprocess', 'sudo', 'bash', 'sh', 'cmd', 'powershell']),
  'fs-write': new Set(['write', 'save', 'create', 'delete', 'rm', 'unlink', 'mkdir', 'chmod', 'mv', 'rename']),
  'fs-read': new Set(['read', 'cat', 'open', 'load', 'get', 'list']),
  'http-request': new Set(['fetch', 'http', 'request', 'curl', 'download', 'webhook']),
  'sql-query': new Set(['sql', 'query', 'execute', 'db']),
};
const CAPABILITY_PROPERTY_TOKENS: Readonly<Record<string, ReadonlySet<string>>> = {
  'shell-exec': new Set(['command', 'cmd', 'script', 'shell']),
  'fs-write': new Set(['path', 'file', 'filename', 'dest', 'target']),
  'fs-read': new Set(['path', 'file', 'filename', 'src', 'source']),
  'http-request': new Set(['url', 'uri', 'endpoint', 'host', 'hostname']),
  'sql-query': new Set(['query', 'sql', 'statement']),
};
const FS_WRITE_CONTENT_TOKENS: ReadonlySet<string> = new Set(['content', 'data', 'body', 'text', 'bytes', 'payload']);

/** Delimiters, camelCase and acronym boundaries, as the reference's `_SEGMENT_SPLIT`. */
const SEGMENT_SPLIT = /[_\-.\s]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;

/** The lowercase segments of an identifier (`runShellCommand` → run, shell, command). */
export function wardenTokenize(identifier: string): string[] {
  if (identifier === '') return [];
  return identifier.split(SEGMENT_SPLIT).filter((part) => part !== '').map((part) => part.toLowerCase());
}

function hasToken(identifier: string, keywords: ReadonlySet<string>): boolean {
  return wardenTokenize(identifier).some((token) => keywords.has(token));
}

function hasProperty(propertyNames: readonly string[], keywords: ReadonlySet<string>): boolean {
  return propertyNames.some((name) => hasToken(name, keywords));
}

/** The sorted capability flags of a tool, from its name and its schema's top-level property names only. */
export function wardenCapabilities(name: string, inputSchema: unknown): string[] {
  const properties = isObject(inputSchema) && isObject(inputSchema.properties) ? Object.keys(inputSchema.properties) : [];
  const flags = new Set<string>();
  const tokens = (flag: string): ReadonlySet<string> => CAPABILITY_NAME_TOKENS[flag] ?? new Set();
  const propertyTokens = (flag: string): ReadonlySet<string> => CAPABILITY_PROPERTY_TOKENS[flag] ?? new Set();
  if (hasToken(name, tokens('shell-exec')) || hasProperty(properties, propertyTokens('shell-exec'))) flags.add('shell-exec');
  const pathProperty = hasProperty(properties, propertyTokens('fs-write'));
  if ((hasToken(name, tokens('fs-write')) && pathProperty) || (pathProperty && hasProperty(properties, FS_WRITE_CONTENT_TOKENS))) flags.add('fs-write');
  if (hasToken(name, tokens('fs-read')) && hasProperty(properties, propertyTokens('fs-read'))) flags.add('fs-read');
  if (hasToken(name, tokens('http-request')) || hasProperty(properties, propertyTokens('http-request'))) flags.add('http-request');
  if (hasToken(name, tokens('sql-query')) || hasProperty(properties, propertyTokens('sql-query'))) flags.add('sql-query');
  return [...flags].sort(compareCodePoints);
}

// ---- schema skeleton (mcp-warden schema_diff.py extract_skeleton) ----

/** One property path's facts, in the reference's member order. */
export interface WardenPropFacts {
  type: string[] | null;
  required: boolean;
  enum: unknown[] | null;
  constraints: Record<string, unknown>;
}
export interface WardenSkeleton {
  props: Record<string, WardenPropFacts>;
}

const MAX_DEPTH = 64;
const MAX_REFS = 256;
const ROOT_PATH = '$root';
const CONSTRAINT_KEYS = ['maxLength', 'minLength', 'minimum', 'maximum', 'pattern', 'format', 'additionalProperties'];

/** Python's `json.dumps(value, sort_keys=True, ensure_ascii=False)`, the enum sort key. */
function pythonJsonDumps(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return pythonNumber(value);
  if (typeof value === 'string') return pythonString(value);
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort(compareCodePoints);
    return `{${keys.map((key) => `${pythonString(key)}: ${pythonJsonDumps(value[key])}`).join(', ')}}`;
  }
  return 'null';
}

function pythonNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return String(value);
  // Python's float repr: exponent with at least two digits.
  return String(value).replace(/e([+-])(\d)$/, 'e$10$2');
}

function pythonString(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (char === '\b') out += '\\b';
    else if (char === '\f') out += '\\f';
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += char;
  }
  return `${out}"`;
}

/** Python's type name of a JSON value, the enum sort's first key. */
function pythonTypeName(value: unknown): string {
  if (value === null) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  return Array.isArray(value) ? 'list' : 'dict';
}

/** Python's `str()` of a `$ref` value that is not a string (a repr for containers). */
function pythonStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pythonNumber(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (isObject(value)) return `{${Object.keys(value).map((key) => `${pythonRepr(key)}: ${pythonRepr(value[key])}`).join(', ')}}`;
  return String(value);
}

function pythonRepr(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : pythonStr(value);
}

function normalizeType(raw: unknown): string[] | null {
  if (typeof raw === 'string') return [raw];
  if (!Array.isArray(raw)) return null;
  const names = [...new Set(raw.filter((item): item is string => typeof item === 'string'))].sort(compareCodePoints);
  return names.length > 0 ? names : null;
}

function normalizeEnum(raw: unknown): unknown[] | null {
  if (!Array.isArray(raw)) return null;
  const keyed = raw.map((value) => ({ value, type: pythonTypeName(value), key: pythonJsonDumps(value) }));
  keyed.sort((a, b) => compareCodePoints(a.type, b.type) || compareCodePoints(a.key, b.key));
  return keyed.map((entry) => entry.value);
}

function extractConstraints(schema: Record<string, unknown>): Record<string, unknown> {
  const found: Array<[string, unknown]> = CONSTRAINT_KEYS.filter((key) => Object.hasOwn(schema, key)).map((key) => [key, schema[key]]);
  if (!Object.hasOwn(schema, 'additionalProperties')) found.push(['additionalProperties', true]);
  found.sort((a, b) => compareCodePoints(a[0], b[0]));
  return Object.fromEntries(found);
}

/** Python's `urllib.parse.unquote`: runs of %XX read as UTF-8, invalid bytes as U+FFFD. */
function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let index = 0; index < bytes.length; index++) bytes[index] = Number.parseInt(run.slice(index * 3 + 1, index * 3 + 3), 16);
    return new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  });
}

const OPAQUE = Symbol('opaque');
const CYCLE = Symbol('cycle');

function resolveInDocumentRef(ref: string, root: Record<string, unknown> | null, refPath: ReadonlySet<string>): Record<string, unknown> | typeof OPAQUE | typeof CYCLE {
  if (root === null || !ref.startsWith('#') || ref === '#') return OPAQUE;
  if (refPath.has(ref)) return CYCLE;
  if (refPath.size >= MAX_REFS) return OPAQUE;
  const fragment = percentDecode(ref.slice(1));
  if (fragment === '') return OPAQUE;
  const segments = fragment.split('/');
  if (segments[0] !== '') return OPAQUE;
  let current: unknown = root;
  for (const raw of segments.slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (isObject(current)) {
      if (!Object.hasOwn(current, segment)) return OPAQUE;
      current = current[segment];
    } else if (Array.isArray(current)) {
      if (!/^(?:0|[1-9][0-9]*)$/.test(segment) || Number(segment) >= current.length) return OPAQUE;
      current = current[Number(segment)];
    } else {
      return OPAQUE;
    }
  }
  return isObject(current) ? current : OPAQUE;
}

interface WalkState {
  readonly props: Map<string, WardenPropFacts>;
  readonly visited: Set<object>;
  readonly root: Record<string, unknown> | null;
}

function leaf(required: boolean, constraints: Record<string, unknown>): WardenPropFacts {
  return { type: null, required, enum: null, constraints };
}

function walk(schema: unknown, path: string, required: boolean, state: WalkState, depth: number, refPath: ReadonlySet<string>): void {
  const nodeKey = path === '' ? ROOT_PATH : path;
  if (!isObject(schema)) {
    if (path !== '') state.props.set(path, leaf(false, { additionalProperties: true }));
    return;
  }
  if (Object.hasOwn(schema, '$ref')) {
    const ref = schema.$ref;
    if (Object.keys(schema).length !== 1 || typeof ref !== 'string') {
      state.props.set(nodeKey, leaf(required, { $ref: pythonStr(ref) }));
      return;
    }
    const resolved = resolveInDocumentRef(ref, state.root, refPath);
    if (resolved === OPAQUE) state.props.set(nodeKey, leaf(required, { $ref: ref }));
    else if (resolved === CYCLE) state.props.set(nodeKey, leaf(required, { _truncated: true }));
    else walk(resolved, path, required, state, depth + 1, new Set([...refPath, ref]));
    return;
  }
  if (depth > MAX_DEPTH || state.visited.has(schema)) {
    state.props.set(nodeKey, leaf(required, { _truncated: true }));
    return;
  }
  state.visited.add(schema);
  state.props.set(nodeKey, {
    type: schema.type === null ? null : normalizeType(schema.type),
    required,
    enum: normalizeEnum(schema.enum),
    constraints: extractConstraints(schema),
  });
  const properties = schema.properties;
  if (isObject(properties)) {
    const requiredNames = new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
    for (const key of Object.keys(properties).sort(compareCodePoints)) {
      walk(properties[key], path === '' ? key : `${path}.${key}`, requiredNames.has(key), state, depth + 1, refPath);
    }
  }
  if (isObject(schema.items)) walk(schema.items, path === '' ? '[]' : `${path}[]`, false, state, depth + 1, refPath);
  // The reference passes `visited` down by value: a node is "visited" only on its own path.
  state.visited.delete(schema);
}

/** The skeleton of an input schema (any value: a non-object gives an empty skeleton). Never throws. */
export function wardenSchemaSkeleton(inputSchema: unknown): WardenSkeleton {
  const state: WalkState = { props: new Map(), visited: new Set(), root: isObject(inputSchema) ? inputSchema : null };
  try {
    walk(inputSchema, '', false, state, 0, new Set());
  } catch {
    // As the reference: extraction never fails; what was gathered stays.
  }
  const paths = [...state.props.keys()].sort(compareCodePoints);
  const props: Record<string, WardenPropFacts> = {};
  for (const path of paths) props[path] = state.props.get(path)!;
  return { props };
}

// ---- entries and digests ----

/** A tool as `tools/list` lists it (only these members are hashed). */
export interface WardenToolInput {
  readonly name: string;
  readonly description?: unknown;
  readonly inputSchema?: unknown;
}

/** A tool entry in the lock's member order. `inspection` is kept from the lock when re-pinning. */
export type WardenToolEntry = {
  name: string;
  description_hash: string;
  input_schema_hash: string;
  capabilities: string[];
  inspection?: Record<string, unknown>;
  schema_skeleton: WardenSkeleton;
  entry_digest: string;
};

/** The tool's entry; an `inspection` block (kept from a lock) is part of the digest. */
export function wardenToolEntry(tool: WardenToolInput, inspection?: Record<string, unknown>): WardenToolEntry {
  const schema = isObject(tool.inputSchema) ? tool.inputSchema : undefined;
  const body: Omit<WardenToolEntry, 'entry_digest'> = {
    name: tool.name,
    description_hash: wardenDescriptionHash(tool.description),
    input_schema_hash: wardenInputSchemaHash(schema),
    capabilities: wardenCapabilities(tool.name, schema),
    ...(inspection === undefined ? {} : { inspection }),
    schema_skeleton: wardenSchemaSkeleton(tool.inputSchema),
  };
  return { ...body, entry_digest: wardenHash(body) };
}

export type WardenResourceEntry = {
  uri: string;
  name: string | null;
  description_hash: string;
  mime_type: string | null;
  entry_digest: string;
};

export function wardenResourceEntry(resource: { readonly uri: string; readonly name?: unknown; readonly description?: unknown; readonly mimeType?: unknown }): WardenResourceEntry {
  const body = {
    uri: resource.uri,
    name: typeof resource.name === 'string' ? resource.name : null,
    description_hash: wardenDescriptionHash(resource.description),
    mime_type: typeof resource.mimeType === 'string' ? resource.mimeType : null,
  };
  return { ...body, entry_digest: wardenHash(body) };
}

export type WardenPromptEntry = {
  name: string;
  description_hash: string;
  arguments_hash: string;
  entry_digest: string;
};

/**
 * A prompt argument as the reference hashes it: the MCP SDK's model of it dumped, so `name`,
 * `description` and `required` are always present (null when the server left them out) and any
 * other member the server sent is kept (the model allows extra members). Checked against the
 * prompts of mcp-warden's server-everything example lock.
 */
export function wardenPromptArgument(argument: unknown): Record<string, unknown> {
  const source = isObject(argument) ? argument : {};
  return { ...source, name: source.name ?? null, description: source.description ?? null, required: source.required ?? null };
}

export function wardenPromptEntry(prompt: { readonly name: string; readonly description?: unknown; readonly arguments?: unknown }): WardenPromptEntry {
  const body = {
    name: prompt.name,
    description_hash: wardenDescriptionHash(prompt.description),
    arguments_hash: wardenArgumentsHash(Array.isArray(prompt.arguments) ? prompt.arguments.map(wardenPromptArgument) : undefined),
  };
  return { ...body, entry_digest: wardenHash(body) };
}

/** `command_digest` of a stdio launch, or of a URL for HTTP servers. */
export function wardenCommandDigest(server: { readonly command?: string; readonly args?: readonly string[]; readonly url?: string | null }): string {
  if (typeof server.url === 'string' && server.url !== '') return wardenHash({ url: server.url });
  return wardenHash({ command: server.command ?? '', args: server.args ?? [] });
}

/** `overall_digest` over the schema version, the command digest and the entry digests in the lock's order. */
export function wardenOverallDigest(parts: {
  readonly schemaVersion: number;
  readonly commandDigest: string;
  readonly tools: readonly string[];
  readonly resources: readonly string[];
  readonly prompts: readonly string[];
}): string {
  return wardenHash({
    schema_version: parts.schemaVersion,
    server: { command_digest: parts.commandDigest },
    tools: parts.tools,
    resources: parts.resources,
    prompts: parts.prompts,
  });
}

/** An entry's own digest: the entry without `entry_digest` (any other member included). */
export function wardenStoredEntryDigest(entry: Readonly<Record<string, unknown>>): string {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) if (key !== 'entry_digest') body[key] = value;
  return wardenHash(body);
}
