/**
 * Dispatch history, live status: the schema pins blueprints write, the schema hashes servers serve
 * now (from their listings), and the status of a hash from both. Pure. See ./history.ts.
 */
import type { BlueprintModel } from '../documents/blueprint';
import type { CollectedListing } from '../verify/listing';
import { schemaPin } from '../pins/pins';

// ---------------------------------------------------------------------------------------------
// Pins and live hashes

/** A schema pin written in a blueprint step. `server` undefined: the pin holds on every server. */
export interface SchemaPinRef {
  readonly tool: string;
  readonly server: string | undefined;
  readonly hash: string;
  readonly blueprint: string | null;
  readonly step: string | null;
  /** The file that holds the blueprint, as the caller wants it shown. */
  readonly file: string | null;
}

/** The well-formed schema pins of blueprint steps (malformed ones are the blueprint checks' job). */
export function schemaPinsOf(blueprints: ReadonlyArray<{ readonly model: BlueprintModel; readonly file?: string }>): SchemaPinRef[] {
  const pins: SchemaPinRef[] = [];
  for (const { model, file } of blueprints) {
    for (const step of model.steps) {
      const mcp = step.mcp;
      if (!mcp?.toolName || !mcp.pin || !mcp.expectedSchemaHash) continue;
      pins.push({
        tool: mcp.toolName.value,
        server: mcp.server?.value,
        hash: mcp.expectedSchemaHash.value,
        blueprint: model.name?.value ?? null,
        step: step.id?.value ?? null,
        file: file ?? null,
      });
    }
  }
  return pins;
}

/**
 * What is known of one server's live tools:
 * - `listed`: `tools` maps each served tool to its schema pin (undefined when the tool is served
 *   but its schema cannot be pinned); `complete` is false when the listing cannot prove that a
 *   tool it lacks is not served (incomplete or with malformed entries);
 * - `unavailable`: not listed (not configured, not contacted, unreachable…), with the reason.
 * A server missing from a {@link LiveSchemas} map is unavailable ("not listed").
 */
export type LiveServer =
  | { readonly state: 'listed'; readonly tools: ReadonlyMap<string, string | undefined>; readonly complete: boolean }
  | { readonly state: 'unavailable'; readonly reason: string };

/** Live knowledge by server name. */
export type LiveSchemas = ReadonlyMap<string, LiveServer>;

/** The schema pins of a listing's tools (a tool served twice with different schemas: undefined). */
export function liveServerFromListing(listing: CollectedListing): LiveServer {
  const tools = new Map<string, string | undefined>();
  const seen = new Set<string>();
  for (const tool of listing.tools) {
    let pin: string | undefined;
    if (!tool.unpinnable && tool.inputSchema !== undefined) {
      try {
        pin = schemaPin(tool.inputSchema);
      } catch {
        pin = undefined; // not plain JSON: served, but not pinnable
      }
    }
    if (seen.has(tool.name) && tools.get(tool.name) !== pin) tools.set(tool.name, undefined);
    else tools.set(tool.name, pin);
    seen.add(tool.name);
  }
  return { state: 'listed', tools, complete: !listing.incomplete && listing.malformedEntries.length === 0 };
}

/** What the live listing says about one tool. */
export type LiveTool =
  | { readonly state: 'served'; readonly hash: string }
  | { readonly state: 'not-served' }
  | { readonly state: 'unknown'; readonly reason: string };

export function liveToolOf(live: LiveSchemas, server: string, tool: string): LiveTool {
  const known = live.get(server);
  if (!known) return { state: 'unknown', reason: `server "${server}" was not listed` };
  if (known.state === 'unavailable') return { state: 'unknown', reason: known.reason };
  if (known.tools.has(tool)) {
    const hash = known.tools.get(tool);
    return hash === undefined ? { state: 'unknown', reason: `"${tool}" is served without a schema that can be pinned` } : { state: 'served', hash };
  }
  return known.complete ? { state: 'not-served' } : { state: 'unknown', reason: `the listing of "${server}" is incomplete, so it cannot prove "${tool}" is gone` };
}

export type HashStatus = 'pinned+live' | 'live' | 'pinned' | 'stale' | 'unknown';

/**
 * The status of a hash (see the module comment). `live` is true (served with this schema), false
 * (a listing proves it is not) or null (no usable listing).
 */
export function hashStatus(pinned: boolean, live: boolean | null): HashStatus {
  if (live === true) return pinned ? 'pinned+live' : 'live';
  if (pinned) return 'pinned';
  return live === false ? 'stale' : 'unknown';
}

export function pinsFor(pins: readonly SchemaPinRef[], server: string, tool: string): SchemaPinRef[] {
  return pins.filter((pin) => pin.tool === tool && (pin.server === undefined || pin.server === server));
}

