/**
 * Fixes as text edits in offsets: re-pin a value, add or remove a `toolsSnapshot` entry, and the
 * pin-store entry that every re-pin writes (docs/formats.md §6). Pure: the language server turns
 * them into a WorkspaceEdit, `toolpin pin` applies them to files.
 *
 * Invariant: a fix changes only the bytes it must. A re-pin replaces the pin's string literal and
 * nothing else; entries are added and removed with jsonc-parser's `modify`, which keeps comments
 * and formatting around them.
 */
import { type EditResult, getNodePath, type JSONPath, modify } from 'jsonc-parser';
import type { ConnectorInstanceModel } from './connector';
import type { PinAlgorithm } from './pins';
import type { Span } from './problems';

export interface TextEdit {
  readonly offset: number;
  readonly length: number;
  readonly content: string;
}

/** Replaces the pin string literal at `span` (quotes included) with `newPin`. */
export function replacePinEdit(span: Span, newPin: string): TextEdit {
  return { offset: span.offset, length: span.length, content: JSON.stringify(newPin) };
}

/** Indentation used by a document, guessed from its first indented line (default two spaces). */
export function detectIndentation(text: string): { insertSpaces: boolean; tabSize: number } {
  const match = /\n([ \t]+)\S/.exec(text);
  if (!match) return { insertSpaces: true, tabSize: 2 };
  const indent = match[1]!;
  return indent.includes('\t') ? { insertSpaces: false, tabSize: 4 } : { insertSpaces: true, tabSize: Math.min(indent.length, 8) };
}

function toEdits(result: EditResult): TextEdit[] {
  return result.map((edit) => ({ offset: edit.offset, length: edit.length, content: edit.content }));
}

function instancePath(instance: ConnectorInstanceModel): JSONPath {
  return getNodePath(instance.node);
}

/** Adds (or replaces) `toolsSnapshot[tool] = pin` in a connector instance. */
export function setSnapshotEntryEdits(text: string, instance: ConnectorInstanceModel, tool: string, pin: string): TextEdit[] {
  return toEdits(modify(text, [...instancePath(instance), 'providerConfig', 'toolsSnapshot', tool], pin, { formattingOptions: detectIndentation(text) }));
}

/** Removes `toolsSnapshot[tool]` from a connector instance. */
export function removeSnapshotEntryEdits(text: string, instance: ConnectorInstanceModel, tool: string): TextEdit[] {
  return toEdits(modify(text, [...instancePath(instance), 'providerConfig', 'toolsSnapshot', tool], undefined, { formattingOptions: detectIndentation(text) }));
}

/** Applies edits (non-overlapping, any order) to a text. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.offset - a.offset)) {
    result = result.slice(0, edit.offset) + edit.content + result.slice(edit.offset + edit.length);
  }
  return result;
}

/** The folder of the pin store, relative to a workspace folder. */
export const PIN_STORE_FOLDER = '.toolpin/store';

/** A pin-store entry: where it goes (relative to the workspace folder) and its exact content. */
export interface StoreEntry {
  readonly relativePath: string;
  /** Exactly the canonical JSON that was hashed; its digest is the file name's. */
  readonly content: string;
}

/** The store entry of a pin whose hashed content is `canonicalContent`. */
export function storeEntry(algorithm: PinAlgorithm, hex: string, canonicalContent: string): StoreEntry {
  return { relativePath: `${PIN_STORE_FOLDER}/${algorithm}-${hex}.json`, content: canonicalContent };
}

/** The store-relative path where the pinned content of a pin may be found. */
export function storePathOf(algorithm: PinAlgorithm, hex: string): string {
  return `${PIN_STORE_FOLDER}/${algorithm}-${hex}.json`;
}
