/**
 * What the two peers' lockfiles (`mcp-pin.lock`, `warden.lock`) have in common once read: the
 * live surface they are verified against, the verdict per recorded entry, and the reader helpers
 * both parsers use (a member of an object, with its span, or a positioned TP120 saying what is
 * wrong). Pure: text and listings in, models and problems out.
 */
import { getProperty, type JsonNode, spanOf, valueOf } from '../../json/jsonDocument';
import { problem, type Problem, type Span } from '../../problems';
import { isRecord } from '../../json/values';

/**
 * What a server told a client, as sent: the definitions of its tools, prompts and resources and
 * its instructions. `prompts` and `resources` are `[]` for a server that does not declare the
 * capability and undefined when it declares it but its listing failed; `instructions` is null
 * when the server sent none.
 */
export interface LockSurface {
  readonly tools: readonly unknown[];
  readonly prompts?: readonly unknown[];
  readonly resources?: readonly unknown[];
  readonly instructions?: string | null;
}

export type LockEntryKind = 'tool' | 'prompt' | 'resource' | 'instructions';

/** A lock entry's state: the pin states of Toolpin's own kinds, plus `added` (served, not locked) and `tampered`. */
export type LockEntryState = 'verified' | 'drifted' | 'missing' | 'added' | 'tampered' | 'cannot-verify';

/** One recorded field that differs: its name in the lock, the locked and the live value. */
export interface LockFieldChange {
  readonly field: string;
  readonly locked: string | null;
  readonly live: string | null;
}

/** The verdict of one entry of a lock (or of one served entry the lock lacks). */
export interface LockEntryVerdict {
  readonly kind: LockEntryKind;
  /** The tool's or prompt's name, the resource's URI, or "instructions". */
  readonly name: string;
  /** The server: the lock's key for mcp-pin, the launch for warden. */
  readonly server: string;
  readonly state: LockEntryState;
  /** The entry's locked hash (mcp-pin `hash`, warden `entry_digest`), null for a served entry not locked. */
  readonly locked: string | null;
  /** The live hash by the same definition, null when not served. */
  readonly live: string | null;
  readonly changes: readonly LockFieldChange[];
  /** Where the entry is named in the lock (its name or URI), or the list a missing entry belongs in. */
  readonly span: Span;
  /** A complete sentence for a verdict other than verified. */
  readonly reason?: string;
}

export interface LockVerification {
  readonly verdicts: readonly LockEntryVerdict[];
  readonly problems: readonly Problem[];
}

/** The payload of a lock finding (Problem.data), for the editor's quick fix and the CLI. */
export interface LockProblemData extends Record<string, unknown> {
  readonly lockKind: 'mcp-pin' | 'warden';
  readonly server: string;
  readonly entry: string;
  readonly changes?: readonly LockFieldChange[];
}

/** A member of an object node; undefined when the node is not an object or the member is absent. */
export function member(node: JsonNode | undefined, key: string): JsonNode | undefined {
  return getProperty(node, key)?.valueNode;
}

/** The span of a member's key (for a missing value's report) or of the whole node. */
export function keySpan(node: JsonNode, key: string): Span {
  const found = getProperty(node, key);
  return found ? spanOf(found.keyNode) : { offset: node.offset, length: Math.min(node.length, 1) };
}

/** A string member, or a TP120 naming what was expected where. */
export function readString(node: JsonNode, key: string, where: string, problems: Problem[], options: { nullable?: boolean } = {}): { value: string | null; span: Span } | undefined {
  const value = member(node, key);
  if (value?.type === 'string') return { value: String(value.value), span: spanOf(value) };
  if (options.nullable && value?.type === 'null') return { value: null, span: spanOf(value) };
  problems.push(problem('TP120', value ? spanOf(value) : keySpan(node, key), `${where}: "${key}" must be a string${options.nullable ? ' or null' : ''}${value ? '' : ', and it is missing'}`));
  return undefined;
}

/** An array member's elements, or a TP120. */
export function readArray(node: JsonNode, key: string, where: string, problems: Problem[]): JsonNode[] | undefined {
  const value = member(node, key);
  if (value?.type === 'array') return value.children ?? [];
  problems.push(problem('TP120', value ? spanOf(value) : keySpan(node, key), `${where}: "${key}" must be an array${value ? '' : ', and it is missing'}`));
  return undefined;
}

/** The plain value of an object node, or undefined for any other node. */
export function objectValue(node: JsonNode | undefined): Record<string, unknown> | undefined {
  if (node?.type !== 'object') return undefined;
  const value = valueOf(node);
  return isRecord(value) ? value : undefined;
}

/**
 * The indentation a JSON file uses (the first indented line's leading spaces or tab), so that a
 * rewrite keeps it; two spaces when the file has none.
 */
export function detectIndent(text: string): string | number {
  const found = /\n([ \t]+)\S/.exec(text);
  if (!found) return 2;
  return found[1]!.startsWith('\t') ? '\t' : found[1]!.length;
}

/** The JSON text a peer writes: `value` with the file's indentation and one final line feed. */
export function serializeLock(value: unknown, indent: string | number): string {
  return `${JSON.stringify(value, null, indent)}\n`;
}

/** "a, b and c" for messages. */
export function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/** One changed field said in full: "input_schema_hash changed (locked sha256:…, live sha256:…)". */
export function describeChanges(changes: readonly LockFieldChange[]): string {
  return listWords(changes.map((change) => `${change.field} changed (locked ${change.locked ?? 'none'}, live ${change.live ?? 'none'})`));
}
