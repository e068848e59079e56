/**
 * What the language server needs from its host, injected so tests can control time and the file
 * system, and the version the bundles were built from.
 */
import type { WorkspaceFileSystem } from './engine/liveWorkspace';
import type { ListingSource } from './engine/listingSource';
import { nodeFileSystem } from './engine/nodeFileSystem';
import type { InventoryOptions } from './mcp/inventory';

/** The version of package.json the bundles were built from (in its own module so that the CLI's entry reads it without loading the engine). */
export { TOOLPIN_VERSION } from './version';

export interface ServerRuntime {
  setTimeout(callback: () => void, milliseconds: number): unknown;
  clearTimeout(handle: unknown): void;
  readonly fileSystem: WorkspaceFileSystem;
  readonly env: Readonly<Record<string, string | undefined>>;
  now(): number;
  /**
   * Makes the listing source the server verifies against. Absent in production (the MCP
   * inventory is used); the in-process LSP tests give one that answers from memory.
   */
  readonly createListingSource?: (options: InventoryOptions) => ListingSource;
}

/**
 * Whether a handle is a Node timer, as nodeRuntime.setTimeout gives out. Anything else is not a
 * timer of this runtime, and Node's clearTimeout would ignore it too.
 */
function isNodeTimeout(handle: unknown): handle is NodeJS.Timeout {
  return typeof handle === 'object' && handle !== null && 'hasRef' in handle && 'refresh' in handle;
}

export const nodeRuntime: ServerRuntime = {
  setTimeout: (callback, milliseconds) => setTimeout(callback, milliseconds),
  clearTimeout: (handle) => {
    if (isNodeTimeout(handle)) clearTimeout(handle);
  },
  fileSystem: nodeFileSystem,
  env: process.env,
  now: () => Date.now(),
};
