/**
 * A FAKE listing source for the in-process LSP tests (test/support/inProcessServer.ts): it answers
 * `tools/list` from tool lists held in memory instead of starting MCP servers.
 *
 * Why a fake: feature tests (diagnostics, hover, code actions, completion, code lenses) are about
 * what the language server makes of a listing, not about MCP. Answering from memory makes them
 * fast (no process, no handshake) and deterministic (a listing changes exactly when the test says
 * so). The outer layer stays real: test/lsp/*.test.ts files that use test/support/lspClient.ts run
 * the built bundle over stdio against real MCP servers, and test/mcp tests the inventory itself.
 *
 * It keeps the contract of server/src/engine/listingSource.ts:
 * - `listing(definition)` never waits: what is held now, or undefined before the first fetch;
 * - `ensure` fetches what is not held (everything with `force`) and never rejects: a server the
 *   test did not define, or made unavailable, gives an `unavailable` listing, with the last good
 *   listing kept as the inventory keeps it;
 * - every change of a held listing after its first arrival (`setTools`, `setUnavailable`, a
 *   refresh) is reported once through the `onListingChanged` callback the source was created with;
 * - the trust decision is asked before every fetch, as the inventory asks it, so an untrusted
 *   server is "cannot verify" here too.
 * The listing is read with the one tool reader (`collectListing`), so a fake tool list is read
 * exactly as a served one would be. Not modelled: TTLs (`stale()` is always empty), pagination,
 * timeouts and sessions.
 *
 * Servers are looked up by definition name (the `mcpServers` key, the connector's `name`), which is
 * all a fixture workspace needs; the inventory keys sessions by transport instead.
 */
import { type CollectedListing, collectListing } from '../../server/src/core/verify/listing';
import type { ServerDefinition } from '../../server/src/core/verify/registry';
import type { ServerListing, UnavailableReason } from '../../server/src/core/verify/verify';
import type { ListingSource } from '../../server/src/engine/listingSource';
import type { InventoryOptions } from '../../server/src/mcp/inventory';

/** What one fake server does: serve `tools` (read as a `tools/list` result would be), or fail. */
export type FakeServer =
  | { readonly tools: readonly unknown[]; readonly ttlMs?: number }
  | { readonly unavailable: { readonly reason: UnavailableReason; readonly message: string } };

/** A tool list is shorthand for `{ tools }`. */
export type FakeServerSpec = readonly unknown[] | FakeServer;

export type ListingSourceMethod = 'listing' | 'ensure' | 'refresh' | 'clear' | 'stale' | 'isStale' | 'dispose';

function normalize(spec: FakeServerSpec): FakeServer {
  return Array.isArray(spec) ? { tools: spec } : (spec as FakeServer);
}

/**
 * The fake servers of one test server, by name, and every listing source the language server made
 * from them (it makes a new one when the verify settings change). Tests change a server here; the
 * change reaches every source that is not disposed, as a `list_changed` would.
 */
export class FakeServers {
  private readonly servers = new Map<string, FakeServer>();
  /** Every source created, oldest first. */
  readonly sources: FakeListingSource[] = [];

  constructor(initial: Readonly<Record<string, FakeServerSpec>> = {}) {
    for (const [name, spec] of Object.entries(initial)) this.servers.set(name, normalize(spec));
  }

  /** The runtime's `createListingSource`: hand this to `startServer`. */
  readonly createListingSource = (options: InventoryOptions): ListingSource => {
    const source = new FakeListingSource(this, options);
    this.sources.push(source);
    return source;
  };

  /** The source the language server verifies against now (the last one it created). */
  get current(): FakeListingSource {
    const source = this.sources.at(-1);
    if (!source) throw new Error('the language server has not created a listing source yet (startServer was not called?)');
    return source;
  }

  server(name: string): FakeServer | undefined {
    return this.servers.get(name);
  }

  /** Serves `tools` from `name` from now on; resolves once every source has re-listed and reported it. */
  setTools(name: string, tools: readonly unknown[]): Promise<void> {
    return this.set(name, { tools });
  }

  /** Makes `name` fail to list from now on (its last good listing is kept, as the inventory keeps it). */
  setUnavailable(name: string, reason: UnavailableReason, message: string): Promise<void> {
    return this.set(name, { unavailable: { reason, message } });
  }

  private async set(name: string, server: FakeServer): Promise<void> {
    this.servers.set(name, server);
    await Promise.all(this.sources.map((source) => source.serverChanged(name)));
  }
}

interface Held {
  readonly definitions: Set<ServerDefinition>;
  listing: ServerListing | undefined;
  lastGood: { listing: CollectedListing; listedAt: number } | undefined;
}

export class FakeListingSource implements ListingSource {
  /** How many times each method was called, so tests can say "one refresh, one fetch". */
  readonly calls: Record<ListingSourceMethod, number> = { listing: 0, ensure: 0, refresh: 0, clear: 0, stale: 0, isStale: 0, dispose: 0 };
  /** The name of every server fetched, in order, one entry per fetch (trusted or not). */
  readonly fetched: string[] = [];
  /** The name of every server that was contacted (its trust allowed the fetch), one entry per fetch. */
  readonly contacted: string[] = [];
  private readonly held = new Map<string, Held>();
  private disposed = false;

  constructor(
    private readonly servers: FakeServers,
    private readonly options: Pick<InventoryOptions, 'trust' | 'onListingChanged' | 'now'>,
  ) {}

  get isDisposed(): boolean {
    return this.disposed;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private entryFor(definition: ServerDefinition): Held {
    let entry = this.held.get(definition.name);
    if (!entry) {
      entry = { definitions: new Set(), listing: undefined, lastGood: undefined };
      this.held.set(definition.name, entry);
    }
    entry.definitions.add(definition);
    return entry;
  }

  listing(definition: ServerDefinition): ServerListing | undefined {
    this.calls.listing++;
    return this.held.get(definition.name)?.listing;
  }

  async ensure(definitions: readonly ServerDefinition[], options: { force?: boolean } = {}): Promise<void> {
    this.calls.ensure++;
    const fetches: Array<Promise<void>> = [];
    for (const definition of definitions) {
      const entry = this.entryFor(definition);
      if (entry.listing && !options.force) continue;
      fetches.push(this.fetch(definition.name, entry));
    }
    await Promise.all(fetches);
  }

  async refresh(names?: readonly string[]): Promise<void> {
    this.calls.refresh++;
    const entries = [...this.held.entries()].filter(([name]) => !names || names.includes(name));
    await Promise.all(entries.map(([name, entry]) => this.fetch(name, entry)));
    this.options.onListingChanged?.(entries.flatMap(([, entry]) => [...entry.definitions]));
  }

  async clear(): Promise<void> {
    this.calls.clear++;
    this.held.clear();
  }

  stale(): ServerDefinition[] {
    this.calls.stale++;
    // TTLs are not modelled: a fake listing stays fresh until the test changes it.
    return [];
  }

  isStale(): boolean {
    this.calls.isStale++;
    return false;
  }

  async dispose(): Promise<void> {
    this.calls.dispose++;
    this.disposed = true;
  }

  /** A fake server changed: re-list it if this source holds it, and report the change once. */
  async serverChanged(name: string): Promise<void> {
    const entry = this.held.get(name);
    if (this.disposed || !entry?.listing) return;
    await this.fetch(name, entry);
    this.options.onListingChanged?.([...entry.definitions]);
  }

  private unavailable(entry: Held, reason: UnavailableReason, message: string): ServerListing {
    return { status: 'unavailable', reason, message, ...(entry.lastGood ? { lastGood: entry.lastGood } : {}) };
  }

  private async fetch(name: string, entry: Held): Promise<void> {
    this.fetched.push(name);
    // A fetch is asynchronous in production; resolving in a later microtask keeps callers honest.
    await Promise.resolve();
    entry.listing = await this.read(name, entry);
  }

  private async read(name: string, entry: Held): Promise<ServerListing> {
    if (this.disposed) return this.unavailable(entry, 'unreachable', 'Toolpin is shutting down');
    for (const definition of entry.definitions) {
      const verdict = this.options.trust(definition);
      if (!verdict.trusted) return this.unavailable(entry, 'untrusted-workspace', verdict.reason);
    }
    this.contacted.push(name);
    const server = this.servers.server(name);
    if (!server) return this.unavailable(entry, 'unreachable', `the test defines no fake server named "${name}"`);
    if ('unavailable' in server) return this.unavailable(entry, server.unavailable.reason, server.unavailable.message);
    const listing = await collectListing(async () => ({ tools: server.tools, ...(server.ttlMs !== undefined ? { ttlMs: server.ttlMs } : {}) }), { maxPages: 1 });
    const listedAt = this.now();
    entry.lastGood = { listing, listedAt };
    return { status: 'listed', listing, listedAt };
  }
}
