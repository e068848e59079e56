/**
 * The inventory: the live tool listings of every server the workspace names, with one session per
 * distinct server (by {@link serverKey}) however many files and names refer to it.
 *
 * - Listings are fetched with a concurrency limit; one slow server never delays the others, and
 *   every fetch ends within the overall timeout.
 * - A listing stays fresh for its TTL: the server's `ttlMs` hint when given, never below the
 *   user's minimum; `notifications/tools/list_changed` and manual refresh re-list at once.
 * - When a server goes away, its last good listing is kept with its age and reported as
 *   "cannot verify — last listed N min ago", never as verified.
 * - A server its folder's trust does not cover is never started, contacted or sent a credential;
 *   its listing is "cannot verify" with the trust decision's reason (core/trust.ts).
 */
import type { ServerDefinition } from '../core/verify/registry';
import { serverKey } from '../core/verify/registry';
import type { TrustVerdict } from '../core/trust';
import type { ServerListing, UnavailableReason } from '../core/verify/verify';
import type { CredentialResolver, Redactor } from './credentials';
import type { ListingSource } from '../engine/listingSource';
import { DEFAULT_CONCURRENCY, DEFAULT_REQUEST_TIMEOUT_MS, LIMIT_HINTS, overallTimeoutFor } from '../engine/timeouts';
import type { McpSession } from './session';
import { SessionError } from './sessionError';

/**
 * mcp/session.ts and the MCP SDK behind it, loaded when the first session opens: a language
 * server with verification off, or a workspace whose servers are never contacted, does not carry
 * the SDK and its schemas (about 10 MiB, issue 13). The same module object on every call.
 */
function sessions(): typeof import('./session') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose, as said above
  return require('./session');
}

export interface InventoryOptions {
  readonly credentials: CredentialResolver;
  readonly redactor: Redactor;
  readonly log: (line: string) => void;
  readonly clientVersion: string;
  /** Whether a server may be contacted (core/trust.ts); asked before every fetch of its listing. */
  readonly trust: (definition: ServerDefinition) => TrustVerdict;
  /** Keep sessions open after listing, to hear list_changed (the editor); the CLI closes them. */
  readonly keepAlive: boolean;
  readonly requestTimeoutMs?: number;
  /** A stdio server's start (spawn to its answer to initialize); engine/timeouts.ts by default. */
  readonly startTimeoutMs?: number;
  /** The bound on one whole listing; by default engine/timeouts.ts `overallTimeoutFor` the request timeout. */
  readonly overallTimeoutMs?: number;
  readonly maxPages?: number;
  readonly concurrency?: number;
  /** Freshness when the server gives no `ttlMs`. */
  readonly defaultTtlMs?: number;
  /** The user's minimum freshness: a smaller server hint is raised to this. */
  readonly minTtlMs?: number;
  /** Called after a listing changed because of list_changed, a refresh or a TTL expiry. */
  readonly onListingChanged?: (definitions: ServerDefinition[]) => void;
  readonly now?: () => number;
}

interface Entry {
  readonly key: string;
  readonly definitions: Set<ServerDefinition>;
  session: McpSession | undefined;
  listing: ServerListing | undefined;
  freshUntil: number;
  inflight: Promise<ServerListing> | undefined;
  lastGood: { listing: Extract<ServerListing, { status: 'listed' }>['listing']; listedAt: number } | undefined;
  /** Bumped by list_changed and refresh so a fetch that started earlier cannot win. */
  generation: number;
  /** True once the current fetch sent its first tools/list request. */
  listingStarted: boolean;
}

const RETRY_UNAVAILABLE_MS = 30_000;

export class Inventory implements ListingSource {
  private readonly entries = new Map<string, Entry>();
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private disposed = false;
  private readonly shutdown = new AbortController();
  /** How many sessions were opened in total (benchmarks and tests assert on it). */
  sessionsOpened = 0;

  private concurrency: number;

  constructor(private readonly options: InventoryOptions) {
    this.concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  }

  /** Changes how many servers are listed at the same time (applies to fetches not yet started). */
  setConcurrency(limit: number): void {
    this.concurrency = Math.max(1, limit);
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  private entryFor(definition: ServerDefinition): Entry {
    const key = serverKey(definition);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { key, definitions: new Set(), session: undefined, listing: undefined, freshUntil: 0, inflight: undefined, lastGood: undefined, generation: 0, listingStarted: false };
      this.entries.set(key, entry);
    }
    entry.definitions.add(definition);
    return entry;
  }

  /** The current listing of a definition, or undefined when it was never fetched. */
  listing(definition: ServerDefinition): ServerListing | undefined {
    return this.entries.get(serverKey(definition))?.listing;
  }

  /** Fetches every definition that has no fresh listing (all of them with `force`), in parallel. */
  async ensure(definitions: readonly ServerDefinition[], options: { force?: boolean } = {}): Promise<void> {
    const entries = new Set(definitions.map((definition) => this.entryFor(definition)));
    await Promise.all(
      [...entries].map((entry) => {
        if (!options.force && entry.listing && this.now < entry.freshUntil) return Promise.resolve(entry.listing);
        if (options.force) entry.generation++;
        return this.fetch(entry);
      }),
    );
  }

  /** Re-lists the named servers (all when no names are given) and reports the change. */
  async refresh(names?: readonly string[]): Promise<void> {
    const entries = [...this.entries.values()].filter((entry) => !names || [...entry.definitions].some((definition) => names.includes(definition.name)));
    for (const entry of entries) entry.generation++;
    await Promise.all(entries.map((entry) => this.fetch(entry)));
    this.options.onListingChanged?.(entries.flatMap((entry) => [...entry.definitions]));
  }

  /** Forgets every listing, including the last good ones ("clear cache"). */
  async clear(): Promise<void> {
    for (const entry of this.entries.values()) {
      entry.generation++;
      entry.listing = undefined;
      entry.lastGood = undefined;
      entry.freshUntil = 0;
      const session = entry.session;
      entry.session = undefined;
      await session?.close();
    }
  }

  /** Definitions whose listing is stale (TTL expired), for a background re-check. */
  stale(): ServerDefinition[] {
    const now = this.now;
    return [...this.entries.values()].filter((entry) => entry.listing && now >= entry.freshUntil).flatMap((entry) => [...entry.definitions]);
  }

  /** Whether one definition's listing is stale: what `stale()` says of it, in constant time. */
  isStale(definition: ServerDefinition): boolean {
    const entry = this.entries.get(serverKey(definition));
    return entry?.listing !== undefined && this.now >= entry.freshUntil;
  }

  /** Closes every session and ends every server process. */
  async dispose(): Promise<void> {
    this.disposed = true;
    this.shutdown.abort();
    const sessions = [...this.entries.values()].flatMap((entry) => (entry.session ? [entry.session] : []));
    for (const entry of this.entries.values()) entry.session = undefined;
    await Promise.all(sessions.map((session) => session.close()));
    await Promise.allSettled([...this.entries.values()].map((entry) => entry.inflight));
  }

  /** The pids of running stdio servers, for tests that assert no process is left behind. */
  pids(): number[] {
    return [...this.entries.values()].flatMap((entry) => (entry.session?.pid !== undefined ? [entry.session.pid] : []));
  }

  private fetch(entry: Entry): Promise<ServerListing> {
    if (entry.inflight) return entry.inflight;
    const generation = entry.generation;
    const inflight = this.withSlot(() => this.fetchNow(entry)).then((listing): ServerListing | Promise<ServerListing> => {
      entry.inflight = undefined;
      // A list_changed or refresh arrived while this fetch ran: its answer may predate the change,
      // so list again rather than keep it.
      if (entry.generation !== generation && !this.disposed) return this.fetch(entry);
      entry.listing = listing;
      const defaultTtl = this.options.defaultTtlMs ?? 300_000;
      const ttl =
        listing.status === 'listed'
          ? Math.max(this.options.minTtlMs ?? 30_000, listing.listing.ttlMs ?? defaultTtl)
          : Math.min(RETRY_UNAVAILABLE_MS, defaultTtl);
      entry.freshUntil = this.now + ttl;
      return listing;
    });
    entry.inflight = inflight;
    return inflight;
  }

  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    const limit = this.concurrency;
    if (this.running >= limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private unavailable(entry: Entry, reason: UnavailableReason, message: string): ServerListing {
    return { status: 'unavailable', reason, message, ...(entry.lastGood ? { lastGood: entry.lastGood } : {}) };
  }

  private async fetchNow(entry: Entry): Promise<ServerListing> {
    const definition = [...entry.definitions][0]!;
    entry.listingStarted = false;
    if (this.disposed) return this.unavailable(entry, 'unreachable', 'Toolpin is shutting down');
    // Every definition sharing this session must be trusted: one connection serves them all.
    for (const candidate of entry.definitions) {
      const verdict = this.options.trust(candidate);
      if (!verdict.trusted) return this.unavailable(entry, 'untrusted-workspace', verdict.reason);
    }
    const overallMs = this.options.overallTimeoutMs ?? overallTimeoutFor(this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    let armOverall = (): void => undefined;
    const timeout = new Promise<never>((_, reject) => {
      armOverall = () => {
        timer ??= setTimeout(() => reject(new SessionError('timeout', `listing did not finish within ${overallMs} ms; ${LIMIT_HINTS.request}`)), overallMs);
      };
    });
    // A stdio server's start has its own, longer bound (the session's start timeout), so the bound
    // on the whole listing starts once it has started; an HTTP server's connection counts against it.
    if (definition.transport?.kind !== 'stdio') armOverall();
    try {
      const listing = await Promise.race([this.openAndList(entry, definition, armOverall), timeout]);
      const listedAt = this.now;
      entry.lastGood = { listing, listedAt };
      return { status: 'listed', listing, listedAt };
    } catch (error) {
      const session = entry.session;
      entry.session = undefined;
      await session?.close();
      const failure = error instanceof SessionError ? error : sessions().McpSession.classify(error, definition, {});
      this.options.log(`[${definition.name}] cannot list tools: ${this.options.redactor.redact(failure.message)}`);
      return this.unavailable(entry, failure.reason, this.options.redactor.redact(failure.message));
    } finally {
      clearTimeout(timer);
    }
  }

  private async openAndList(entry: Entry, definition: ServerDefinition, opened: () => void): Promise<Awaited<ReturnType<McpSession['listTools']>>> {
    if (!entry.session) {
      // Declared before open: the server may exit (and onClosed fire) while open is still running.
      let opened: McpSession | undefined;
      const session = (opened = await sessions().McpSession.open(definition, {
        credentials: this.options.credentials,
        redactor: this.options.redactor,
        requestTimeoutMs: this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
        ...(this.options.startTimeoutMs !== undefined ? { startTimeoutMs: this.options.startTimeoutMs } : {}),
        maxPages: this.options.maxPages ?? 100,
        clientVersion: this.options.clientVersion,
        log: this.options.log,
        signal: this.shutdown.signal,
        onToolsChanged: () => this.onToolsChanged(entry),
        onClosed: () => {
          if (opened !== undefined && entry.session === opened) entry.session = undefined;
        },
      }));
      this.sessionsOpened++;
      if (this.disposed) {
        await session.close();
        throw new SessionError('unreachable', 'Toolpin is shutting down');
      }
      entry.session = session;
    }
    const session = entry.session;
    opened();
    entry.listingStarted = true;
    try {
      return await session.listTools(definition);
    } finally {
      if (!this.options.keepAlive && entry.session === session) {
        entry.session = undefined;
        await session.close();
      }
    }
  }

  private onToolsChanged(entry: Entry): void {
    // A change announced before this fetch asked for the list is already in the answer it will
    // get (servers like server-everything announce one right after initialization).
    if (entry.inflight && !entry.listingStarted) return;
    // Without keep-alive (the CLI) every listing is a one-shot session: re-listing would open a new
    // session, and a server that announces a change at every start would loop forever.
    if (!this.options.keepAlive) return;
    entry.generation++;
    entry.freshUntil = 0;
    this.options.log(`[${[...entry.definitions][0]!.name}] the server says its tool list changed; listing again`);
    void this.fetch(entry).then(() => this.options.onListingChanged?.([...entry.definitions]));
  }
}
