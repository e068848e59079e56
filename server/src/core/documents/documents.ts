/**
 * Which kind of Toolpin document a file is, by its name, and one entry point that analyzes any of
 * them. The CLI, the language server and the tests all go through {@link analyzeDocument}. The
 * kinds themselves are declared one module each in ./kinds/ and listed in ./kinds/registry.ts.
 *
 * A document's model is a blueprint model (steps), a connector model (instances) or a source
 * model, which carries both (the `mcpInvoke$` steps and the `defineConnector` instances). Code that
 * needs one of them asks {@link blueprintOf}, {@link connectorOf} or the other accessors here
 * instead of comparing kinds by name.
 */
import type { BlueprintModel } from './blueprint';
import type { ConnectorModel } from './connector';
import { capProblems } from '../problems';
import type { ComputedPin, SourceModel } from './source/analyzeSource';
import type { UnreadPin } from './source/sourceReader';
import type { SourceNames } from './source/sourceNames';
import type { DocumentAnalysis, DocumentKind, PinKind } from './kinds/kind';
import { pinKind, pinKindOfFile } from './kinds/registry';
import type { ModuleAccess } from './source/sourceModules';

export type { ModuleAccess, SourceModel, SourceNames };
export type { DocumentAnalysis, DocumentKind, PinKind };

/** The id of the kind with pin sites a file is, from its name or URI, or undefined when Toolpin does not analyze it. */
export function documentKindOf(fileNameOrUri: string): DocumentKind | undefined {
  return pinKindOfFile(fileNameOrUri)?.id;
}

/** True when a file name or URI names a build output Toolpin checks but never re-pins (ObjectStack's compiled stack). */
export function isBuildOutput(fileNameOrUri: string): boolean {
  return pinKindOfFile(fileNameOrUri)?.repins === 'build-output';
}

/** The part of an analysis the model accessors need. */
export type DocumentModel = Pick<DocumentAnalysis, 'kind' | 'model'>;

/** The steps of a document: a blueprint file's, or a source file's `mcpInvoke$` calls; else undefined. */
export function blueprintOf(document: DocumentModel): BlueprintModel | undefined {
  if (document.model.kind === 'blueprint') return document.model;
  if (document.model.kind === 'source') return document.model.blueprint;
  return undefined;
}

/** The connector instances of a document: a connector file's, or a source file's `defineConnector` calls; else undefined. */
export function connectorOf(document: DocumentModel): ConnectorModel | undefined {
  if (document.model.kind === 'connector') return document.model;
  if (document.model.kind === 'source') return document.model.connector;
  return undefined;
}

/**
 * Analyzes a document of a known kind. `fileName` lets a source file's reader know JSX files
 * (`.tsx`, `.jsx`); `sourceNames` says which imports a source file's pin calls come from (the
 * `toolpin.sources.*` settings; by default the built-in ones, or the CLI run's). Never throws. At
 * most {@link capProblems}' limit of problems. `modules` lets a source file's pins imported from
 * another module of the workspace be read there (core/documents/source/sourceModules.ts).
 */
export function analyzeDocument(kind: DocumentKind, text: string, fileName?: string, sourceNames?: SourceNames, modules?: ModuleAccess): DocumentAnalysis {
  const analysis = pinKind(kind).analyze(text, { fileName, sourceNames, modules });
  return { kind, model: analysis.model, problems: capProblems(analysis.problems) };
}

/**
 * Analyzes the new text of a document the caller analyzed before, reusing what the edit did not
 * touch where its kind can and that gives the same result (a blueprint edit inside one step:
 * core/documents/incremental.ts), and analyzing the whole text otherwise. The previous analysis is
 * consumed: the caller must not use it afterwards.
 */
export function reanalyzeDocument(
  kind: DocumentKind,
  previous: { readonly text: string; readonly analysis: DocumentAnalysis },
  text: string,
  fileName?: string,
  sourceNames?: SourceNames,
  modules?: ModuleAccess,
): DocumentAnalysis {
  const again = previous.analysis.kind === kind ? pinKind(kind).reanalyze?.(previous, text) : undefined;
  if (again) return { kind, model: again.model, problems: capProblems(again.problems) };
  return analyzeDocument(kind, text, fileName, sourceNames, modules);
}

/** The source model of a TypeScript or JavaScript document, else undefined. */
export function sourceOf(document: DocumentModel): SourceModel | undefined {
  return document.model.kind === 'source' ? document.model : undefined;
}

/** The steps of a blueprint file (not of a source file's calls), else undefined: what stands on a blueprint's own name. */
export function blueprintFileOf(document: DocumentModel): BlueprintModel | undefined {
  return document.model.kind === 'blueprint' ? document.model : undefined;
}

/** Pins in parts of a source file that could not be read (TP112); none for other documents. */
export function unreadPinsOf(document: DocumentModel): readonly UnreadPin[] {
  return sourceOf(document)?.unreadPins ?? [];
}

/** Pins whose value a source file computes or imports (TP110); none for other documents. */
export function computedPinsOf(document: DocumentModel): readonly ComputedPin[] {
  return sourceOf(document)?.computedPins ?? [];
}

/**
 * True when a document defines servers for its folder's registry now: every document of a kind
 * made of connector instances, and a source file with `defineConnector` calls. A source file
 * without them (most TypeScript files) never makes the registry be built again.
 */
export function definesServers(document: DocumentModel | undefined): boolean {
  if (!document) return false;
  if (document.model.kind === 'connector') return true;
  return (connectorOf(document)?.instances.length ?? 0) > 0;
}

/**
 * True when an edit of `file` may change its folder's servers: a file of a kind that always declares
 * servers (connector files, compiled stacks), or a module that defined connector instances at its
 * last analysis (`previous`).
 */
export function editMayChangeServers(file: string, previous: DocumentModel | undefined): boolean {
  const servers = pinKindOfFile(file)?.servers;
  return servers === 'declares' || (servers === 'may-declare' && previous !== undefined && (connectorOf(previous)?.instances.length ?? 0) > 0);
}

/**
 * True when a document is worth keeping unopened: a file of Toolpin's own kinds always, a source
 * file only when it has a step, a connector instance or a problem to show (a watcher reports
 * every module a build writes, and none of them is a document).
 */
export function holdsAnything(analysis: DocumentAnalysis): boolean {
  const source = sourceOf(analysis);
  if (!source) return true;
  return source.blueprint.steps.length > 0 || source.connector.instances.length > 0 || analysis.problems.length > 0;
}

/**
 * True when a source file holds no pin site at all: no `defineConnector`, `defineStack` connector
 * or `mcpInvoke$` call, and no pin in a part that could not be read. Files of Toolpin's own kinds
 * always count as holding their pin sites.
 */
export function holdsNoPinSite(document: DocumentModel): boolean {
  const source = sourceOf(document);
  if (!source) return false;
  return source.blueprint.steps.length === 0 && source.connector.instances.length === 0 && source.unreadPins.length === 0 && source.computedPins.length === 0 && source.foreignPins.length === 0;
}
