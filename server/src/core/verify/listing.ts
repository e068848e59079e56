/**
 * Tool listings: how the pages of a `tools/list` conversation become one listing, with every way
 * a server can misbehave turned into a precise, non-fatal outcome.
 *
 * The pagination loop is here, in the core, with the page fetch injected: it decides when to stop
 * (no cursor, a repeated cursor, the page cap) and reads each page leniently, so Toolpin hashes
 * exactly what the server sent. An SDK's strict validation would reject a whole listing for one odd
 * tool; here each odd tool is reported on its own and the rest still verify.
 */
import { isRecord } from '../json/values';

/** One tool as served, with the fields the pins cover, and the raw object for display. */
export interface ListedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
  /** Set when the tool was served in a shape that cannot be pinned soundly; the reason why. */
  readonly unpinnable?: string;
  readonly raw: unknown;
}

/** What a fetch of one page returned: the JSON-RPC result object as received. */
export type FetchPage = (cursor: string | undefined) => Promise<unknown>;

export interface ListingLimits {
  /** Stop after this many pages and mark the listing incomplete. */
  readonly maxPages: number;
}

/** Why a listing could not be completed, as a short reason a user can act on. */
export interface IncompleteReason {
  readonly code: 'repeated-cursor' | 'page-cap' | 'malformed-page';
  readonly message: string;
}

export interface CollectedListing {
  readonly tools: ListedTool[];
  /** Entries of `tools` that are not tools at all (no name, not an object), by page and index. */
  readonly malformedEntries: string[];
  /** Names served more than once. */
  readonly duplicateNames: string[];
  readonly pages: number;
  readonly incomplete: IncompleteReason | undefined;
  /** The server's freshness hint (`ttlMs` on the result), the smallest over all pages. */
  readonly ttlMs: number | undefined;
}

/** Reads one tool entry leniently. Returns a string (why it is not a tool) for garbage. */
export function readListedTool(entry: unknown): ListedTool | string {
  if (!isRecord(entry)) return 'an entry that is not an object';
  if (typeof entry.name !== 'string' || entry.name.length === 0) return 'an entry without a string "name"';
  const name = entry.name;
  const tool: { -readonly [K in keyof ListedTool]: ListedTool[K] } = { name, raw: entry };
  if (entry.description !== undefined) {
    if (typeof entry.description === 'string') tool.description = entry.description;
    else tool.unpinnable = `its "description" is ${typeof entry.description}, not a string`;
  }
  if (entry.inputSchema !== undefined) {
    if (isRecord(entry.inputSchema)) tool.inputSchema = entry.inputSchema;
    else tool.unpinnable = `its "inputSchema" is not an object`;
  } else {
    // A tool without inputSchema still has a sound tool pin ({name, description}); one served in an
    // older shape does not, because its schema would silently drop out of the hash.
    const older = ['input_schema', 'parameters', 'inputschema'].find((key) => key in entry);
    if (older) {
      tool.unpinnable = `it is served in an older shape ("${older}" instead of "inputSchema"), so its pins cannot be compared soundly`;
    }
  }
  return tool;
}

/**
 * Follows `nextCursor` through every page. An empty-string cursor is still a cursor. A cursor seen
 * before, or more pages than the cap, ends the listing as incomplete. Errors thrown by `fetchPage`
 * (timeouts, transport failures) propagate to the caller, which knows what they mean.
 */
export async function collectListing(fetchPage: FetchPage, limits: ListingLimits): Promise<CollectedListing> {
  const tools: ListedTool[] = [];
  const malformedEntries: string[] = [];
  const seenNames = new Set<string>();
  const duplicateNames = new Set<string>();
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  let pages = 0;
  let ttlMs: number | undefined;
  let incomplete: IncompleteReason | undefined;

  for (;;) {
    if (pages >= limits.maxPages) {
      incomplete = { code: 'page-cap', message: `the server kept paginating past ${limits.maxPages} pages` };
      break;
    }
    const result = await fetchPage(cursor);
    pages++;
    if (!isRecord(result) || !Array.isArray(result.tools)) {
      const found = isRecord(result) ? (result.tools === undefined ? 'no "tools"' : `"tools" that is not an array`) : 'a result that is not an object';
      incomplete = { code: 'malformed-page', message: `page ${pages} of tools/list has ${found}` };
      break;
    }
    if (typeof result.ttlMs === 'number' && Number.isFinite(result.ttlMs) && result.ttlMs >= 0) {
      ttlMs = ttlMs === undefined ? result.ttlMs : Math.min(ttlMs, result.ttlMs);
    }
    result.tools.forEach((entry, index) => {
      const tool = readListedTool(entry);
      if (typeof tool === 'string') {
        malformedEntries.push(`page ${pages}, entry ${index}: ${tool}`);
        return;
      }
      if (seenNames.has(tool.name)) duplicateNames.add(tool.name);
      seenNames.add(tool.name);
      tools.push(tool);
    });
    const next = result.nextCursor;
    if (next === undefined || next === null) break;
    if (typeof next !== 'string') {
      // Not "no more pages": a cursor the client cannot send back. What follows is unknown.
      incomplete = { code: 'malformed-page', message: `page ${pages} of tools/list has a nextCursor that is ${typeof next}, not a string` };
      break;
    }
    if (seenCursors.has(next)) {
      incomplete = { code: 'repeated-cursor', message: `the server repeated a pagination cursor on page ${pages}, so the listing would never end` };
      break;
    }
    seenCursors.add(next);
    cursor = next;
  }
  return { tools, malformedEntries, duplicateNames: [...duplicateNames], pages, incomplete, ttlMs };
}
