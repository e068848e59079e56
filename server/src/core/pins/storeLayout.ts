/**
 * The one description of the pin store's layout (docs/formats.md §6): its folder, the names of its
 * entries, and the names of the full-definition entries with their fallback for older stores.
 * Every reader and writer of the store (core/documents/fixes.ts, core/verify/fullDefinition.ts,
 * core/review/changes.ts, engine/pinStore.ts, the CLI's `pin`) builds names here, so that a change
 * of layout is one change. Pure: paths are `/`-separated and relative to a workspace folder;
 * {@link PIN_STORE_SEGMENTS} joins them with the platform's separator where a caller needs that.
 *
 *   .toolpin/store/<algorithm>-<hex>.json                  the pinned content (what was hashed)
 *   .toolpin/store/full-<server>-sha256-<hex>.json         a tool's whole definition, by tool pin
 *   .toolpin/store/full-<server>-fnv1a64-<hex>-<16 hex of sha256(tool name)>.json   … by schema pin
 *   .toolpin/store/full-<pin part>.json                    the same, in stores written before issue 25
 */
import type { PinAlgorithm } from './pins';
import { sha256Hex } from './sha256';

/** The store folder's path from a workspace folder, by segments. */
export const PIN_STORE_SEGMENTS: readonly string[] = ['.toolpin', 'store'];

/** The store folder, relative to a workspace folder, `/`-separated. */
export const PIN_STORE_FOLDER = PIN_STORE_SEGMENTS.join('/');

/** The prefix of every full-definition entry's name. */
export const FULL_ENTRY_PREFIX = 'full-';

/** The file name of a pin's content entry: `fnv1a64-<hex>.json` or `sha256-<hex>.json`. */
export function entryName(algorithm: PinAlgorithm, hex: string): string {
  return `${algorithm}-${hex}.json`;
}

/** The path of a pin's content entry, relative to the workspace folder. */
export function entryPath(algorithm: PinAlgorithm, hex: string): string {
  return `${PIN_STORE_FOLDER}/${entryName(algorithm, hex)}`;
}

/**
 * A server's part of an entry name: its name lower-cased with every character but letters,
 * digits, `_` and `.` made `_` (at most 32 of them, for a reader of the store), then `-` and the
 * first 8 hex of the SHA-256 of the exact name, so that names that read alike ("Memory",
 * "memory", "my server", "my_server") never share an entry, on case-insensitive disks too.
 * The result holds only letters, digits, `.`, `_` and one `-`: a plain file name.
 */
export function serverSlug(server: string): string {
  const readable = server.toLowerCase().replace(/[^a-z0-9_.]/g, '_').slice(0, 32);
  return `${readable}-${sha256Hex(server).slice(0, 8)}`;
}

/** The pin's part of a full-definition entry name: `sha256-<hex>`, or `fnv1a64-<hex>-<16 hex of the tool name>`. */
export function fullDefinitionPinPart(algorithm: PinAlgorithm, hex: string, tool: string): string {
  return algorithm === 'sha256' ? `sha256-${hex}` : `fnv1a64-${hex}-${sha256Hex(tool).slice(0, 16)}`;
}

/**
 * Where the full definition of a pinned tool on `server` is kept, relative to the workspace
 * folder. Without a server (a step whose server is not known) it is the entry without one.
 */
export function fullDefinitionPath(algorithm: PinAlgorithm, hex: string, tool: string, server: string | undefined): string {
  if (server === undefined) return legacyFullDefinitionPath(algorithm, hex, tool);
  return `${PIN_STORE_FOLDER}/${FULL_ENTRY_PREFIX}${serverSlug(server)}-${fullDefinitionPinPart(algorithm, hex, tool)}.json`;
}

/** The entry of stores written before issue 25 (no server in the name), read as a fallback. */
export function legacyFullDefinitionPath(algorithm: PinAlgorithm, hex: string, tool: string): string {
  return `${PIN_STORE_FOLDER}/${FULL_ENTRY_PREFIX}${fullDefinitionPinPart(algorithm, hex, tool)}.json`;
}

/** True when a store file name is a full-definition entry's (either form). */
export function isFullDefinitionEntryName(name: string): boolean {
  return name.startsWith(FULL_ENTRY_PREFIX);
}

/**
 * The pin parts an entry's file name may be for: the legacy `full-<pin part>.json` and the
 * server-keyed `full-<readable>-<8 hex>-<pin part>.json` (both are tried, since a readable part
 * may itself look like a pin part). Undefined for a name that is no full-definition entry.
 */
export function pinPartsOfEntryName(name: string): string[] | undefined {
  if (!name.startsWith(FULL_ENTRY_PREFIX) || !name.endsWith('.json')) return undefined;
  const rest = name.slice(FULL_ENTRY_PREFIX.length, -'.json'.length);
  const keyed = /^[a-z0-9_.]*-[0-9a-f]{8}-(.+)$/.exec(rest);
  if (!keyed) return [rest];
  const part = keyed[1];
  return part === undefined ? [rest] : [rest, part];
}
