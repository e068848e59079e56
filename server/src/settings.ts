/**
 * The language server's settings (the `toolpin` section of the client's configuration): their
 * type, their defaults and their bounds, and `SettingsStore`, which reads them, per workspace
 * folder for the settings package.json declares resource-scoped.
 *
 * Contract:
 * - any input gives settings: each ill-typed or missing value falls back to its own default, and
 *   the other values are kept (a section that is not an object is an empty one);
 * - the defaults are {@link parseSettings}' and package.json's `contributes.configuration` (a unit
 *   test compares the two);
 * - resource-scoped settings (`RESOURCE_SCOPED`) are read with the document's workspace folder as
 *   `scopeUri`, cached per folder until the configuration changes; every other setting has one
 *   value for the whole server.
 */
import { isRecord } from './core/json/values';
import { DEFAULT_CONCURRENCY, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_START_TIMEOUT_MS } from './engine/timeouts';
import { DEFAULT_MAX_SOURCE_BYTES } from './core/documents/source/sourceNames';
import { DEFAULT_LOG_GLOB } from './core/documents/kinds/eventLog';
import { pathToUri } from './util/uris';

export { overallTimeoutFor } from './engine/timeouts';

export interface ToolpinSettings {
  readonly trace: {
    /** Read by the client only: how much of the LSP traffic VS Code logs. */
    readonly server: 'off' | 'messages' | 'verbose';
  };
  readonly validate: {
    /** Check documents and publish problems (resource-scoped). */
    readonly enable: boolean;
    /** Milliseconds between the last change of a document and its check; at most 5 s. */
    readonly debounceMs: number;
  };
  readonly verify: {
    /** Query the live MCP servers (starts stdio servers, connects to HTTP servers). */
    readonly enable: boolean;
    /** Timeout of one request to a server; at least 100 ms. */
    readonly requestTimeoutMs: number;
    /** The shortest time a listing is reused, whatever a server's ttlMs hint says. */
    readonly minTtlSeconds: number;
    /** Freshness of a listing when the server gives no hint. */
    readonly ttlSeconds: number;
    /** Servers listed at the same time; at least 1. */
    readonly concurrency: number;
    /** A stdio server's start (spawn to its answer to initialize); at least 100 ms. */
    readonly startTimeoutMs: number;
  };
  readonly workspaceScan: {
    /** Check blueprint and connector files that are not open, too. */
    readonly enable: boolean;
    /** The most files scanned across all workspace folders. */
    readonly maxFiles: number;
    /** The most files and folders one walk of a workspace folder looks at (the scan, the log search). */
    readonly maxEntries: number;
    /** The longest one walk of a workspace folder runs, in milliseconds. */
    readonly timeBudgetMs: number;
  };
  /** User-level MCP servers, shaped like the `servers` of .vscode/mcp.json. */
  readonly servers: Readonly<Record<string, unknown>>;
  readonly history: {
    /** Globs (relative to each workspace folder) of dispatch-history logs; never in node_modules (resource-scoped). */
    readonly logGlobs: readonly string[];
    /**
     * The team store the tree view reads instead of the logs (`postgres://…`, docs/history-store.md);
     * '' for the workspace's logs. Never with a password: that comes from PGPASSWORD, `.pgpass` or
     * the editor's secret storage.
     */
    readonly store: string;
  };
  readonly sources: {
    /** Modules re-exporting `defineConnector` ("module" or "module#name"), besides the built-in one (resource-scoped). */
    readonly connectorFunctions: readonly string[];
    /** Modules re-exporting `mcpInvoke$` ("module" or "module#name"), besides the built-in one (resource-scoped). */
    readonly invokeFunctions: readonly string[];
    /** Modules larger than this many bytes are not read, and say so (resource-scoped). */
    readonly maxFileBytes: number;
  };
}

// The readers below are written out rather than made with zod, which the first version used: zod
// loaded only for these few values was several MiB of a language server with verification off
// (issue 13). test/unit/settings.test.ts holds them equal to that zod schema on arbitrary input.

/** An object's own values by name; anything else (null, an array, a scalar) reads as an empty section. */
function sectionOf(value: unknown): Readonly<Record<string, unknown>> {
  return isRecord(value) ? value : {};
}

function flag(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

/** A finite number at least 0, or the fallback. */
function count(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** An array of strings (each non-empty when `nonEmpty`), copied, or the fallback when any item is not. */
function strings(value: unknown, fallback: readonly string[], nonEmpty = false): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && (!nonEmpty || item.length > 0))) return [...fallback];
  return value.map(String);
}

/** A plain object's own enumerable members, copied (a user-level servers map), or an empty map. */
function members(value: unknown): Record<string, unknown> {
  if (!isRecord(value)) return {};
  const copy: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    // A member named __proto__ is a member like any other (an assignment would set the prototype).
    Object.defineProperty(copy, name, { value: member, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

function traceLevel(value: unknown): ToolpinSettings['trace']['server'] {
  return value === 'off' || value === 'messages' || value === 'verbose' ? value : 'off';
}

/**
 * Reads a received `toolpin` section (any value) into settings, value by value: each ill-typed or
 * missing value gets its own default and the others are kept; unknown names are dropped.
 */
export function parseSettings(received: unknown): ToolpinSettings {
  const root = sectionOf(received);
  const trace = sectionOf(root.trace);
  const validate = sectionOf(root.validate);
  const verify = sectionOf(root.verify);
  const workspaceScan = sectionOf(root.workspaceScan);
  const history = sectionOf(root.history);
  const sources = sectionOf(root.sources);
  return {
    trace: { server: traceLevel(trace.server) },
    validate: { enable: flag(validate.enable, true), debounceMs: Math.min(count(validate.debounceMs, 200), 5000) },
    verify: {
      enable: flag(verify.enable, true),
      requestTimeoutMs: Math.max(100, count(verify.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS)),
      minTtlSeconds: count(verify.minTtlSeconds, 30),
      ttlSeconds: count(verify.ttlSeconds, 300),
      concurrency: Math.max(1, count(verify.concurrency, DEFAULT_CONCURRENCY)),
      startTimeoutMs: Math.max(100, count(verify.startTimeoutMs, DEFAULT_START_TIMEOUT_MS)),
    },
    workspaceScan: {
      enable: flag(workspaceScan.enable, true),
      maxFiles: count(workspaceScan.maxFiles, 500),
      maxEntries: Math.max(100, count(workspaceScan.maxEntries, DEFAULT_SCAN_MAX_ENTRIES)),
      timeBudgetMs: Math.max(100, count(workspaceScan.timeBudgetMs, DEFAULT_SCAN_TIME_BUDGET_MS)),
    },
    servers: members(root.servers),
    history: { logGlobs: strings(history.logGlobs, [DEFAULT_LOG_GLOB]), store: typeof history.store === 'string' ? history.store.trim() : '' },
    sources: { connectorFunctions: strings(sources.connectorFunctions, [], true), invokeFunctions: strings(sources.invokeFunctions, [], true), maxFileBytes: Math.max(1, Math.floor(count(sources.maxFileBytes, DEFAULT_MAX_SOURCE_BYTES))) },
  };
}

/**
 * The bounds of one walk of a workspace folder in the editor. A client that names the disk root
 * (`file:///`) as its folder would otherwise be walked for ever; a real repository (objectstack:
 * 6,444 files) is far inside both. Two walks run at start (documents, then history logs), so that
 * their time budgets together keep the first seconds of a server bounded.
 */
export const DEFAULT_SCAN_MAX_ENTRIES = 100_000;
export const DEFAULT_SCAN_TIME_BUDGET_MS = 4_000;

export const DEFAULT_SETTINGS: ToolpinSettings = parseSettings(undefined);

/** The budget of one walk of a workspace folder, from the settings. */
export function scanBudgetOf(settings: ToolpinSettings): { readonly maxEntries: number; readonly maxMs: number } {
  return { maxEntries: settings.workspaceScan.maxEntries, maxMs: settings.workspaceScan.timeBudgetMs };
}

/** The settings package.json declares `"scope": "resource"`: read per workspace folder. */
export const RESOURCE_SCOPED = ['validate.enable', 'history.logGlobs', 'sources.connectorFunctions', 'sources.invokeFunctions', 'sources.maxFileBytes'] as const;

/** The resource-scoped values of `folder` over the server-wide `global` ones. */
function withResourceValues(global: ToolpinSettings, folder: ToolpinSettings): ToolpinSettings {
  return {
    ...global,
    validate: { ...global.validate, enable: folder.validate.enable },
    history: { ...global.history, logGlobs: folder.history.logGlobs },
    sources: folder.sources,
  };
}

/** What the settings features read: the server-wide values, and a folder's resource-scoped ones. */
export interface SettingsView {
  current(): ToolpinSettings;
  /** The settings for documents of `folder` (its resource-scoped values over the rest). */
  forFolder(folder: string): Promise<ToolpinSettings>;
}

/**
 * Where settings come from: `pull` asks the client (`workspace/configuration`, with a scope or
 * without); absent when the client cannot be asked, and then pushed settings are all there is.
 */
export class SettingsStore implements SettingsView {
  private global: ToolpinSettings = DEFAULT_SETTINGS;
  private readonly folders = new Map<string, Promise<ToolpinSettings>>();
  private pull: ((scopeUri: string | undefined) => Promise<unknown>) | undefined;

  constructor(private readonly warn: (message: string) => void) {}

  /** The client can be asked (it announced `workspace.configuration`). */
  setPull(pull: (scopeUri: string | undefined) => Promise<unknown>): void {
    this.pull = pull;
  }

  current(): ToolpinSettings {
    return this.global;
  }

  /** Settings the client sent (initialization options, a didChangeConfiguration that carries them). */
  pushed(received: unknown): void {
    this.global = parseSettings(received);
    this.folders.clear();
  }

  /** Asks the client for the server-wide settings again and forgets every folder's. */
  async reload(): Promise<void> {
    this.folders.clear();
    if (!this.pull) return;
    try {
      this.global = parseSettings(await this.pull(undefined));
    } catch (error) {
      this.warn(`toolpin: could not read settings, using defaults: ${String(error)}`);
    }
  }

  forFolder(folder: string): Promise<ToolpinSettings> {
    const pull = this.pull;
    if (!pull) return Promise.resolve(this.global);
    let found = this.folders.get(folder);
    if (!found) {
      found = pull(pathToUri(folder)).then(
        // A client that knows no value for the folder answers null: the server-wide values hold.
        (received) => (typeof received === 'object' && received !== null ? withResourceValues(this.global, parseSettings(received)) : this.global),
        (error: unknown) => {
          this.warn(`toolpin: could not read the settings of ${folder}, using the workspace's: ${String(error)}`);
          return this.global;
        },
      );
      this.folders.set(folder, found);
    }
    return found;
  }
}
