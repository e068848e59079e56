/**
 * A pin's store entry (docs/formats.md §6): its file name and its text read back and checked
 * against the pin it is named after. Pure: no I/O.
 */
import { fnv1a64Hex } from '../pins/fnv1a64';
import type { ParsedPin } from '../pins/pins';
import { sha256Hex } from '../pins/sha256';
import { isRecord } from '../json/values';
import type { PinnedToolContent } from './changeTypes';

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
