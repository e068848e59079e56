/**
 * Where the engine gets tool listings from. The engine sees only this interface: `mcp/inventory.ts`
 * implements it over real MCP sessions, and the in-process LSP tests give a fake that answers from
 * memory. Nothing under engine/ imports the MCP layer.
 *
 * Contract:
 * - `listing(definition)` never waits: it is what is held now, or undefined when the server was
 *   never listed;
 * - `ensure` fetches what has no fresh listing and resolves when every fetch has settled (a failed
 *   fetch leaves an `unavailable` listing, it does not reject);
 * - every change of a held listing after its first arrival (list_changed, refresh, a TTL re-fetch)
 *   is reported once through the `onListingChanged` callback the source was created with.
 */
import type { ServerDefinition } from '../core/verify/registry';
import type { ServerListing } from '../core/verify/verify';

export interface ListingSource {
  listing(definition: ServerDefinition): ServerListing | undefined;
  ensure(definitions: readonly ServerDefinition[], options?: { force?: boolean }): Promise<void>;
  /** Re-lists the named servers (all when no names are given) and reports the change. */
  refresh(names?: readonly string[]): Promise<void>;
  /** Forgets every listing ("clear cache"). */
  clear(): Promise<void>;
  /** Definitions whose listing is stale (TTL expired). */
  stale(): ServerDefinition[];
  /** Whether one definition's listing is stale (TTL expired), without walking every server. */
  isStale(definition: ServerDefinition): boolean;
  /** Closes every session and ends every server process. */
  dispose(): Promise<void>;
}
