/**
 * What the language server needs from its host, injected so tests can control time and the file
 * system, and the version the bundles were built from.
 */
import type { WorkspaceFileSystem } from './engine/liveWorkspace';
import { nodeFileSystem } from './engine/nodeFileSystem';

/** Replaced by esbuild (`define`) with package.json's version; see esbuild.mjs. */
declare const __TOOLPIN_VERSION__: string;

/** The version of package.json the bundles were built from, reported in serverInfo and SARIF. */
export const TOOLPIN_VERSION: string = typeof __TOOLPIN_VERSION__ === 'string' ? __TOOLPIN_VERSION__ : '0.0.0-unbuilt';

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
