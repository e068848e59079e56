/**
 * What the language server needs from its host, injected so tests can control time and the file
 * system, and the version the bundles were built from.
 */
import type { Timer, WorkspaceFileSystem } from './engine/liveWorkspace';
import type { ListingSource } from './engine/listingSource';
import { nodeFileSystem } from './engine/nodeFileSystem';
import type { InventoryOptions } from './mcp/inventory';

/** The version of package.json the bundles were built from (in its own module so that the CLI's entry reads it without loading the engine). */
export { TOOLPIN_VERSION } from './version';

export type { Timer };

export interface ServerRuntime {
  /**
   * Calls `callback` once after `milliseconds` unless the returned timer is disposed first. A
   * timer never keeps the process alive on its own: the connection does, and a server whose
   * client is gone must be free to exit with a debounce or a re-check pending.
   */
  setTimeout(callback: () => void, milliseconds: number): Timer;
  readonly fileSystem: WorkspaceFileSystem;
  readonly env: Readonly<Record<string, string | undefined>>;
  now(): number;
  /**
   * Makes the listing source the server verifies against. Absent in production (the MCP
   * inventory is used); the in-process LSP tests give one that answers from memory.
   */
  readonly createListingSource?: (options: InventoryOptions) => ListingSource;
}

export const nodeRuntime: ServerRuntime = {
  setTimeout: (callback, milliseconds) => {
    const handle = setTimeout(callback, milliseconds);
    handle.unref();
    return { dispose: () => clearTimeout(handle) };
  },
  fileSystem: nodeFileSystem,
  env: process.env,
  now: () => Date.now(),
};
