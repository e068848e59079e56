/**
 * The language server's settings (the `toolpin` section of the client's configuration): one zod
 * schema gives their type, their defaults and their bounds, and `SettingsStore` reads them, per
 * workspace folder for the settings package.json declares resource-scoped.
 *
 * Contract:
 * - any input gives settings: each ill-typed or missing value falls back to its own default, and
 *   the other values are kept (a section that is not an object is an empty one);
 * - the defaults are the schema's and package.json's `contributes.configuration` (a unit test
 *   compares the two);
 * - resource-scoped settings (`RESOURCE_SCOPED`) are read with the document's workspace folder as
 *   `scopeUri`, cached per folder until the configuration changes; every other setting has one
 *   value for the whole server.
 */
import { z } from 'zod';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './engine/timeouts';
import { pathToUri } from './util/uris';

export { overallTimeoutFor } from './engine/timeouts';

/** A section that is not an object reads as an empty one, so each of its values gets its default. */
const section = <Shape extends z.ZodRawShape>(shape: Shape) => z.preprocess((value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}), z.object(shape));
const flag = (fallback: boolean) => z.boolean().catch(fallback);
/** A finite number at least 0. */
const count = (fallback: number) => z.number().min(0).catch(fallback);

export const settingsSchema = section({
  trace: section({
    /** Read by the client only: how much of the LSP traffic VS Code logs. */
    server: z.enum(['off', 'messages', 'verbose']).catch('off'),
  }),
  validate: section({
    /** Check documents and publish problems (resource-scoped). */
    enable: flag(true),
    /** Milliseconds between the last change of a document and its check; at most 5 s. */
    debounceMs: count(200).transform((value) => Math.min(value, 5000)),
  }),
  verify: section({
    /** Query the live MCP servers (starts stdio servers, connects to HTTP servers). */
    enable: flag(true),
    /** Timeout of one request to a server; at least 100 ms. */
    requestTimeoutMs: count(DEFAULT_REQUEST_TIMEOUT_MS).transform((value) => Math.max(100, value)),
    /** The shortest time a listing is reused, whatever a server's ttlMs hint says. */
    minTtlSeconds: count(30),
    /** Freshness of a listing when the server gives no hint. */
    ttlSeconds: count(300),
    /** Servers listed at the same time; at least 1. */
    concurrency: count(4).transform((value) => Math.max(1, value)),
  }),
  workspaceScan: section({
    /** Check blueprint and connector files that are not open, too. */
    enable: flag(true),
    /** The most files scanned across all workspace folders. */
    maxFiles: count(500),
  }),
  /** User-level MCP servers, shaped like the `servers` of .vscode/mcp.json. */
  servers: z.record(z.string(), z.unknown()).catch(() => ({})),
  history: section({
    /** Globs (relative to each workspace folder) of dispatch-history logs; never in node_modules (resource-scoped). */
    logGlobs: z.array(z.string()).catch(() => ['**/*.events.jsonl']),
  }),
  sources: section({
    /** Modules re-exporting `defineConnector` ("module" or "module#name"), besides the built-in one (resource-scoped). */
    connectorFunctions: z.array(z.string().min(1)).catch(() => []),
    /** Modules re-exporting `mcpInvoke$` ("module" or "module#name"), besides the built-in one (resource-scoped). */
    invokeFunctions: z.array(z.string().min(1)).catch(() => []),
  }),
});

export type ToolpinSettings = z.output<typeof settingsSchema>;

/** Reads a received `toolpin` section (any value) into settings, value by value. */
export function parseSettings(received: unknown): ToolpinSettings {
  return settingsSchema.parse(received);
}

export const DEFAULT_SETTINGS: ToolpinSettings = parseSettings(undefined);

/** The settings package.json declares `"scope": "resource"`: read per workspace folder. */
export const RESOURCE_SCOPED = ['validate.enable', 'history.logGlobs', 'sources.connectorFunctions', 'sources.invokeFunctions'] as const;

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
