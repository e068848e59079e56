/**
 * The version of package.json the bundles were built from, reported by `toolpin --version`, in
 * serverInfo and in SARIF. A module of its own, importing nothing, so that dist/cli.js can print it
 * without loading the engine (server/src/cli/main.ts).
 */

/** Replaced by esbuild (`define`) with package.json's version; see esbuild.mjs. */
declare const __TOOLPIN_VERSION__: string;

export const TOOLPIN_VERSION: string = typeof __TOOLPIN_VERSION__ === 'string' ? __TOOLPIN_VERSION__ : '0.0.0-unbuilt';
