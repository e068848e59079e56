/**
 * What a document kind is: the one shape every kind module in this folder declares, and that the
 * registry (./registry.ts) hands to discovery, the language server, the CLI, the VS Code client's
 * manifest and the docs. Nothing outside core/documents/ compares a kind by its name: it asks the
 * kind's declaration (a role, a flag, a hook) or an accessor of core/documents/documents.ts.
 *
 * Four roles:
 * - `pins`: a document Toolpin analyzes into models with pin sites (blueprint steps, connector
 *   instances), verifies and re-pins: blueprint and connector files, ObjectStack's compiled stack,
 *   TypeScript and JavaScript sources.
 * - `servers`: a file at a fixed place of a workspace folder that lists MCP servers for the
 *   registry (VS Code's `.vscode/mcp.json`, `.mcp.json`).
 * - `events`: the runtime's dispatch-history logs the history view and `toolpin history` read.
 * - `policy`: the repository's `.toolpin/policy.jsonc`.
 *
 * Pure: names are matched as text (either separator, any case), never through a file system.
 */
import type { BlueprintModel } from '../blueprint';
import type { ConnectorModel } from '../connector';
import type { Problem } from '../../problems';
import type { SourceModel } from '../source/analyzeSource';
import type { SourceNames } from '../source/sourceNames';
import type { ModuleAccess } from '../source/sourceModules';

/** The id of a registered kind (`blueprint`, `connector`, …; see ./registry.ts). */
export type DocumentKind = string;

/** The models a `pins` kind reads a document into; each has its own `kind` to tell them apart. */
export type KindModel = BlueprintModel | ConnectorModel | SourceModel;

/** A document's analysis: the kind it was read as, its model and its problems. */
export interface DocumentAnalysis {
  readonly kind: DocumentKind;
  readonly model: KindModel;
  readonly problems: readonly Problem[];
}

/** A VS Code document filter, as the client's document selector and package.json hold them. */
export interface ClientSelector {
  readonly language?: string;
  readonly scheme?: string;
  readonly pattern?: string;
}

/** What a kind's analysis may know beyond the text. */
export interface AnalysisContext {
  /** The file's name or path (a source file's reader tells JSX files by it). */
  readonly fileName?: string;
  /** Which imports a source file's pin calls come from (the `toolpin.sources.*` settings). */
  readonly sourceNames?: SourceNames;
  /** How a source file reads the modules it imports pins from (none: imported pins are not followed). */
  readonly modules?: ModuleAccess;
}

/** The bytes of a file as the content filter reads them (a Node Buffer is one). */
export interface FileBytes {
  includes(search: string): boolean;
  toString(encoding: 'utf8'): string;
}

/** What every kind declares. */
export interface KindBase {
  /** The kind's id: stable, camelCase, used in code and tests (never shown as a file name). */
  readonly id: DocumentKind;
  /** What the kind is, in a few words, for docs and help texts. */
  readonly title: string;
  /** The file names as people write them (`*.blueprint.json[c]`), for help texts and docs. */
  readonly patterns: readonly string[];
  /** Relative paths the kind recognises, for the docs and the tests that hold the tables together. */
  readonly examples: readonly string[];
  /** True when a file name, path or URI (either separator, any case) is of this kind. */
  recognises(fileNameOrUri: string): boolean;
  /** Globs of the files whose changes on disk the language server must hear of. */
  readonly watchedFiles: readonly string[];
  /** The VS Code client's document filters for the kind (package.json and the client hold them; a unit test compares). */
  readonly selectors: readonly ClientSelector[];
  /**
   * Language ids the extension contributes for the kind: package.json `contributes.languages` has
   * each with the kind's {@link patterns} as its `filenamePatterns` (a unit test compares).
   */
  readonly languages: readonly string[];
  /** The VS Code activation events the kind needs (package.json `activationEvents`). */
  readonly activationEvents: readonly string[];
  /** The JSON Schema VS Code's JSON support validates the kind with (package.json `jsonValidation`). */
  readonly jsonValidation?: { readonly fileMatch: readonly string[]; readonly url: string };
  /** The settings (without the `toolpin.` prefix) that change how the kind is found or read. */
  readonly settings: readonly string[];
}

/** A document with pin sites: analyzed, verified, re-pinned. */
export interface PinKind extends KindBase {
  readonly role: 'pins';
  /** Reads a text into the kind's model and problems. Never throws. */
  analyze(text: string, context: AnalysisContext): Pick<DocumentAnalysis, 'model' | 'problems'>;
  /**
   * The analysis of an edited text reusing the previous one (consumed), or undefined to analyze the
   * whole text (core/documents/incremental.ts holds the contract).
   */
  reanalyze?(previous: { readonly text: string; readonly analysis: DocumentAnalysis }, text: string): Pick<DocumentAnalysis, 'model' | 'problems'> | undefined;
  /**
   * Whether documents of the kind declare MCP servers (connector instances) for their folder's
   * registry: every one of them (`declares`), those that hold instances (`may-declare`: a module
   * with `defineConnector` calls), or none.
   */
  readonly servers: 'declares' | 'may-declare' | 'none';
  /**
   * A file of the kind inside a folder the walk skips (a build output: `dist/objectstack.json`),
   * looked up there directly. Every `pins` kind is also found by its name while walking.
   */
  readonly buildOutput?: { readonly folder: string; readonly file: string };
  /**
   * A cheap test of a file's bytes, for kinds whose names match far more files than are documents
   * (TypeScript modules): false when the file is certainly not a document of the kind.
   */
  mayBeDocument?(bytes: FileBytes, names: SourceNames): boolean;
  /** How a re-pin is written: `json` literals and keys, or a source file's own quote and key style (`source-style`). */
  readonly pinEdits: 'json' | 'source-style';
  /** Whether `toolpin pin` writes re-pins into the kind (`build-output`: never; the pin belongs in its source). */
  readonly repins: 'write' | 'build-output';
}

/** A file at a fixed place of a workspace folder that lists MCP servers (docs/formats.md §5). */
export interface ServerListKind extends KindBase {
  readonly role: 'servers';
  /** The file's path from the workspace folder, by segments. */
  readonly location: readonly string[];
  /** The key of the object that holds the servers (`servers`, `mcpServers`). */
  readonly serversKey: 'servers' | 'mcpServers';
  /** The origin its definitions carry (core/verify/registry.ts `ServerSourceKind`). */
  readonly origin: 'vscode-mcp-json' | 'mcp-json';
}

/** The runtime's dispatch-history logs (JSON Lines); which files are logs is a setting's globs. */
export interface EventLogKind extends KindBase {
  readonly role: 'events';
}

/** The repository's policy file. */
export interface PolicyKind extends KindBase {
  readonly role: 'policy';
}

export type KindDeclaration = PinKind | ServerListKind | EventLogKind | PolicyKind;

/** True when a name, path or URI ends in `suffix` (any case). */
export function endsWithName(fileNameOrUri: string, suffix: string): boolean {
  return fileNameOrUri.toLowerCase().endsWith(suffix.toLowerCase());
}

/**
 * True when a name, path or URI ends in the path `segments` (either separator), whole segments
 * only: `['.vscode', 'mcp.json']` matches `w/.vscode/mcp.json`, not `w/x.vscode/mcp.json`. Case
 * counts unless `ignoreCase`.
 */
export function endsWithSegments(fileNameOrUri: string, segments: readonly string[], ignoreCase = false): boolean {
  const fold = (text: string): string => (ignoreCase ? text.toLowerCase() : text);
  const parts = fold(fileNameOrUri).split(/[\\/]/);
  if (parts.length < segments.length) return false;
  return segments.every((segment, index) => parts[parts.length - segments.length + index] === fold(segment));
}
