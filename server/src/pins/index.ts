/**
 * `toolpin/pins`: the pin implementation, as a library (docs/pins-library.md).
 *
 * This file is the package entry (package.json `exports["./pins"]`, built by esbuild.mjs into
 * dist/pins.mjs and dist/pins.cjs, declared by types/pins.d.ts). It re-exports the very modules
 * the CLI, the language server and the extension compute pins with, so there is one
 * implementation. Nothing it reaches imports a Node module or a dependency: it runs in Node, Deno,
 * Bun, a worker and a browser bundle (test/package/pinsPackage.test.ts).
 */
export { canonicalJson, CanonicalJsonError, type CanonicalJsonErrorKind } from '../core/pins/canonicalJson';
export { schemaPin, toolPin, type PinnableTool } from '../core/pins/pins';
export {
  verifySchemaPin,
  verifyToolsSnapshot,
  type ListedTool,
  type SchemaPinExpectation,
  type SchemaDrift,
  type ToolNotFound,
  type ChangedTool,
  type ToolsSnapshotResult,
} from '../core/pins/runtimeGuards';
