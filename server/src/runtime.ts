/**
 * What the language server needs from its host, injected so tests can control time and the file
 * system, and the version the bundles were built from.
 */
import type { WorkspaceFileSystem } from './engine/liveWorkspace';
import { nodeFileSystem } from './engine/nodeFileSystem';

/** The version of package.json the bundles were built from (in its own module so that the CLI's entry reads it without loading the engine). */
export { TOOLPIN_VERSION } from './version';

export interface ServerRuntime {
  setTimeout(callback: () => void, milliseconds: number): unknown;
  clearTimeout(handle: unknown): void;
  readonly fileSystem: WorkspaceFileSystem;
  readonly env: Readonly<Record<string, string | undefined>>;
  now(): number;
}

export const nodeRuntime: ServerRuntime = {
  setTimeout: (callback, milliseconds) => setTimeout(callback, milliseconds),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  fileSystem: nodeFileSystem,
  env: process.env,
  now: () => Date.now(),
};
