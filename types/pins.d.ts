/**
 * Type declarations of `toolpin/pins` (docs/pins-library.md), shipped as dist/pins.d.ts.
 * Written by hand so that they are one self-contained file with no Node types;
 * test/unit/pinsDeclarations.ts holds them equal to server/src/pins/index.ts in both directions
 * (`npm run typecheck` fails when they part), and test/package/pinsPackage.test.ts compiles a
 * consumer against the packed copy.
 */

/** Why a value cannot be canonicalized. */
export type CanonicalJsonErrorKind =
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'non-finite-number'
  | 'non-plain-object'
  | 'lone-surrogate'
  | 'cycle';

/** Thrown for any value that is not plain JSON. `path` is a JSON Pointer to the offending value. */
export declare class CanonicalJsonError extends Error {
  readonly kind: CanonicalJsonErrorKind;
  readonly path: string;
  constructor(kind: CanonicalJsonErrorKind, path: string, detail: string);
}

/** The RFC 8785 (JSON Canonicalization Scheme) form of `value`. Throws CanonicalJsonError on anything not plain JSON. */
export declare function canonicalJson(value: unknown): string;

/** The fields of an MCP tool a tool pin covers; other fields are ignored. */
export interface PinnableTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
}

/** `fnv1a64:<16 hex>`: FNV-1a 64 of canonicalJson(inputSchema), a blueprint step's `expectedSchemaHash`. */
export declare function schemaPin(inputSchema: unknown): string;

/** `sha256:<64 hex>`: SHA-256 of canonicalJson({name, description, inputSchema}), a connector's `toolsSnapshot` entry. */
export declare function toolPin(tool: PinnableTool): string;

/** One entry of the `tools` array of a `tools/list` result. */
export interface ListedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
}

/** What a blueprint step pins: the tool it calls and the schema pin it expects. */
export interface SchemaPinExpectation {
  readonly toolName: string;
  readonly expectedSchemaHash: string;
}

/** The live tool's schema differs from the pin; `observedHash` is null when the live tool has no pinnable schema. */
export interface SchemaDrift {
  readonly channel: 'schemaDrift';
  readonly toolName: string;
  readonly expectedSchemaHash: string;
  readonly observedHash: string | null;
}

/** No live tool has the pinned name. */
export interface ToolNotFound {
  readonly channel: 'toolNotFound';
  readonly toolName: string;
}

/** A pinned tool whose live pin differs. */
export interface ChangedTool {
  readonly toolName: string;
  readonly expectedPin: string;
  readonly livePin: string | null;
}

/** The result of verifyToolsSnapshot; both lists empty means the snapshot holds. */
export interface ToolsSnapshotResult {
  readonly changed: ChangedTool[];
  readonly gone: string[];
}

/** undefined when the live tool has exactly the pinned schema; otherwise the channel to refuse on. */
export declare function verifySchemaPin(expectation: SchemaPinExpectation, tools: readonly ListedTool[]): SchemaDrift | ToolNotFound | undefined;

/** The pinned tools whose pin changed (with the live pin) and the pinned tools that are gone. */
export declare function verifyToolsSnapshot(snapshot: Readonly<Record<string, string>>, tools: readonly ListedTool[]): ToolsSnapshotResult;
