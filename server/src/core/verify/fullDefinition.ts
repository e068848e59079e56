/**
 * Changes beyond the pinned fields (docs/diagnostics.md TP408, TP409). The pins hash what
 * the seeds fix (a schema pin `inputSchema`, a tool pin `{name, description, inputSchema}`), so a
 * server can flip a tool's `annotations` from read-only to destructive, or change its
 * `outputSchema` or `title`, without any pin drifting. Whenever Toolpin writes a store entry it
 * also writes the tool's whole definition as served, in a versioned entry found by the server and
 * the pin:
 *
 *   .toolpin/store/full-<server>-sha256-<tool pin hex>.json
 *   .toolpin/store/full-<server>-fnv1a64-<schema pin hex>-<first 16 hex of sha256(tool name)>.json
 *
 * (core/pins/storeLayout.ts) where <server> is `serverSlug`: two servers serving the same tool (one pin) keep their
 * own annotations, so one server's re-pin never gives the other a false (or masked) TP408 (issue
 * 25). A schema pin is shared by every tool with the same input schema, so the tool's name is part
 * of its key. The content is the canonical JSON of `{ "version": 1, "tool": <definition> }`.
 *
 * Stores written before issue 25 hold entries without the server (`full-sha256-<hex>.json`,
 * `legacyFullDefinitionPath`): such an entry is read as a fallback for any server that has
 * no entry of its own, and never written again; the next re-pin of a server writes its own entry.
 * Verification compares it with the live tool, on drifted and verified pins alike: TP408
 * (warning) for annotation flips that make a call riskier, TP409 (information) for the rest.
 * Neither pin algorithm changes; a store without the entry (older stores) reports nothing.
 */
import { canonicalJson, CanonicalJsonError } from '../pins/canonicalJson';
import { isRecord } from '../json/values';
import type { ListedTool } from './listing';
import type { PinAlgorithm } from '../pins/pins';
import { type Problem, problem, type Span } from '../problems';
import { fullDefinitionPath } from '../pins/storeLayout';

/** The version of full-definition entries this build writes and reads. */
export const FULL_DEFINITION_VERSION = 1;

// The entry names are the store layout's (core/pins/storeLayout.ts); re-exported, with
// fullDefinitionPath, for the callers that reach them through this module.
export { fullDefinitionPath };
export { fullDefinitionPinPart, legacyFullDefinitionPath, pinPartsOfEntryName, serverSlug } from '../pins/storeLayout';

/** The entry content for a tool as served (`ListedTool.raw`), or undefined when it is not plain JSON. */
export function fullDefinitionContent(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  try {
    return canonicalJson({ version: FULL_DEFINITION_VERSION, tool: raw });
  } catch (error) {
    if (error instanceof CanonicalJsonError) return undefined;
    throw error;
  }
}

/**
 * The stored definition of `tool` from an entry's text, or undefined when the entry is not one this
 * build reads (not JSON, another version, another tool's): such an entry reports nothing.
 */
export function readFullDefinition(text: string, tool: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || value.version !== FULL_DEFINITION_VERSION || !isRecord(value.tool)) return undefined;
  return value.tool.name === tool ? value.tool : undefined;
}

/** The MCP defaults of the behaviour hints (2025-06-18 `ToolAnnotations`). */
const HINT_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;
type Hint = keyof typeof HINT_DEFAULTS;

function hintOf(tool: Record<string, unknown>, hint: Hint): boolean {
  const annotations = tool.annotations;
  const value = isRecord(annotations) ? annotations[hint] : undefined;
  return typeof value === 'boolean' ? value : HINT_DEFAULTS[hint];
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a ?? null) === canonicalJson(b ?? null);
  } catch {
    return false;
  }
}

function titleOf(tool: Record<string, unknown>): unknown {
  const annotations = tool.annotations;
  return tool.title ?? (isRecord(annotations) ? annotations.title : undefined);
}

function shown(value: unknown): string {
  return value === undefined ? 'none' : JSON.stringify(value);
}

export interface OutsideThePinChanges {
  /** Flips that make a call riskier (TP408), e.g. `readOnlyHint true → false`. */
  readonly behaviour: string[];
  /** Other changes the pins do not cover (TP409), e.g. `outputSchema changed`. */
  readonly metadata: string[];
}

/**
 * What changed between a stored full definition and the live one outside the pinned fields.
 * Hints are compared with their MCP defaults filled in, so an annotation that disappears counts as
 * its default (a vanished `readOnlyHint: true` is a flip to false).
 */
export function changesOutsideThePin(stored: Record<string, unknown>, live: unknown): OutsideThePinChanges {
  const current = isRecord(live) ? live : {};
  const behaviour: string[] = [];
  const metadata: string[] = [];
  const flip = (hint: Hint, risky: boolean): void => {
    const before = hintOf(stored, hint);
    const after = hintOf(current, hint);
    if (before === after) return;
    const text = `annotations.${hint} ${before} → ${after}`;
    if (before !== risky && after === risky) behaviour.push(text);
    else metadata.push(text);
  };
  flip('readOnlyHint', false);
  // Whether a call is destructive matters only when it is not read-only (MCP says the same).
  if (!hintOf(current, 'readOnlyHint')) flip('destructiveHint', true);
  else if (hintOf(stored, 'destructiveHint') !== hintOf(current, 'destructiveHint')) metadata.push(`annotations.destructiveHint ${hintOf(stored, 'destructiveHint')} → ${hintOf(current, 'destructiveHint')}`);
  flip('openWorldHint', true);
  // Whether a repeated call has more effect is worth knowing, but it does not widen what one call may do.
  if (hintOf(stored, 'idempotentHint') !== hintOf(current, 'idempotentHint')) metadata.push(`annotations.idempotentHint ${hintOf(stored, 'idempotentHint')} → ${hintOf(current, 'idempotentHint')}`);
  if (!sameJson(titleOf(stored), titleOf(current))) metadata.push(`title ${shown(titleOf(stored))} → ${shown(titleOf(current))}`);
  if (!sameJson(stored.outputSchema, current.outputSchema)) {
    metadata.push(stored.outputSchema === undefined ? 'outputSchema added' : current.outputSchema === undefined ? 'outputSchema removed' : 'outputSchema changed');
  }
  return { behaviour, metadata };
}

/** Payload of TP408 and TP409: what changed, and the entry that records the live definition. */
export type OutsideThePinData = {
  readonly tool: string;
  readonly server: string | undefined;
  readonly changes: readonly string[];
  /** Where the full definition is kept and the live content to keep there, when it can be written. */
  readonly entry?: { readonly relativePath: string; readonly content: string };
};

/** Guard for a received TP408/TP409 payload (a client sends `data` back as untyped JSON). */
export function isOutsideThePinData(data: unknown): data is OutsideThePinData & { entry: { relativePath: string; content: string } } {
  if (!isRecord(data) || typeof data.tool !== 'string' || !Array.isArray(data.changes) || !isRecord(data.entry)) return false;
  const entry = data.entry;
  return typeof entry.relativePath === 'string' && /^\.toolpin\/store\/full-[a-z0-9_.-]+\.json$/.test(entry.relativePath) && typeof entry.content === 'string';
}

/**
 * TP408/TP409 for one pin: the stored full definition (the entry's text, when the store has it)
 * against the live tool. `label` names the step or connector for the message.
 */
export function outsideThePinProblems(
  span: Span,
  label: string,
  pin: { readonly algorithm: PinAlgorithm; readonly hex: string },
  server: string | undefined,
  live: ListedTool,
  storedText: string | undefined,
  /** True when the pin verified: then accepting the change means recording the live definition under the same pin. */
  verified: boolean,
): Problem[] {
  if (storedText === undefined) return [];
  const stored = readFullDefinition(storedText, live.name);
  if (!stored) return [];
  const { behaviour, metadata } = changesOutsideThePin(stored, live.raw);
  if (behaviour.length === 0 && metadata.length === 0) return [];
  const content = fullDefinitionContent(live.raw);
  // A drifted pin gets its new entry with its re-pin (under the new pin); only a verified one
  // offers to record the live definition under the pin it has.
  const entry = content === undefined || !verified ? undefined : { relativePath: fullDefinitionPath(pin.algorithm, pin.hex, live.name, server), content };
  const where = `tool "${live.name}"${server ? ` on server "${server}"` : ''}`;
  const problems: Problem[] = [];
  const data = (changes: string[]): OutsideThePinData => ({ tool: live.name, server, changes, ...(entry ? { entry } : {}) });
  if (behaviour.length > 0) {
    problems.push(problem('TP408', span, `${label}: ${where} changed how it behaves since it was pinned, which the pin does not cover: ${behaviour.join('; ')}. Review what a call may now do.`, { data: data(behaviour) }));
  }
  if (metadata.length > 0) {
    problems.push(problem('TP409', span, `${label}: ${where} changed outside the pinned fields since it was pinned: ${metadata.join('; ')}`, { data: data(metadata) }));
  }
  return problems;
}
