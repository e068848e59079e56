/**
 * Which kind of Toolpin document a file is, by its name, and one entry point that analyzes any of
 * them. The CLI, the language server and the tests all go through {@link analyzeDocument}.
 *
 * Three kinds: blueprint and connector files (JSONC), and `source` files (TypeScript and
 * JavaScript modules, docs/formats.md "Source files"), whose analysis carries both a blueprint
 * model (the `mcpInvoke$` steps) and a connector model (the `defineConnector` instances). Code
 * that needs one of the two models asks {@link blueprintOf} or {@link connectorOf} instead of
 * switching on the kind.
 */
import { analyzeBlueprint, type BlueprintModel } from './blueprint';
import { analyzeConnector, type ConnectorModel } from './connector';
import { capProblems, type Problem } from '../problems';
import { reanalyzeBlueprint } from './incremental';
import { analyzeSource, type SourceModel } from './source/analyzeSource';
import type { SourceNames } from './source/sourceNames';
import type { ModuleAccess } from './source/sourceModules';

export type { ModuleAccess, SourceModel, SourceNames };

export type DocumentKind = 'blueprint' | 'connector' | 'source';

const KIND_BY_SUFFIX: ReadonlyArray<readonly [string, DocumentKind]> = [
  ['.blueprint.json', 'blueprint'],
  ['.blueprint.jsonc', 'blueprint'],
  ['.connector.json', 'connector'],
  ['.connector.jsonc', 'connector'],
];

/** TypeScript and JavaScript modules; declaration files (`.d.ts`, `.d.mts`, `.d.cts`) hold no calls. */
const SOURCE_FILE = /\.(?:[mc]?ts|tsx|[mc]?js|jsx)$/;
const DECLARATION_FILE = /\.d\.[mc]?ts$/;
/** Dependencies' files are never a workspace's own documents, even when opened in an editor. */
const DEPENDENCY_FOLDER = /(?:^|[\\/])node_modules[\\/]/;

/**
 * ObjectStack's compiled stack (`os compile` writes `dist/objectstack.json`): the whole stack, with
 * its `connectors` among other keys and defaults filled in. Read as a connector document, leniently
 * (core/documents/connector.ts `compiledStack`).
 */
const COMPILED_STACK = /(?:^|[\\/])objectstack\.json$/;

/** True when a file name or URI names ObjectStack's compiled stack. */
export function isCompiledStack(fileNameOrUri: string): boolean {
  return COMPILED_STACK.test(fileNameOrUri.toLowerCase());
}

/** The kind of a file from its name or URI, or undefined when Toolpin does not read it. */
export function documentKindOf(fileNameOrUri: string): DocumentKind | undefined {
  const lower = fileNameOrUri.toLowerCase();
  if (COMPILED_STACK.test(lower)) return 'connector';
  for (const [suffix, kind] of KIND_BY_SUFFIX) {
    if (lower.endsWith(suffix)) return kind;
  }
  if (SOURCE_FILE.test(lower) && !DECLARATION_FILE.test(lower) && !DEPENDENCY_FOLDER.test(lower)) return 'source';
  return undefined;
}

export type DocumentAnalysis =
  | { readonly kind: 'blueprint'; readonly model: BlueprintModel; readonly problems: readonly Problem[] }
  | { readonly kind: 'connector'; readonly model: ConnectorModel; readonly problems: readonly Problem[] }
  | { readonly kind: 'source'; readonly model: SourceModel; readonly problems: readonly Problem[] };

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
  switch (kind) {
    case 'blueprint': {
      const analysis = analyzeBlueprint(text);
      return { kind, model: analysis.model, problems: capProblems(analysis.problems) };
    }
    case 'connector': {
      const analysis = analyzeConnector(text, { compiledStack: fileName !== undefined && isCompiledStack(fileName) });
      return { kind, model: analysis.model, problems: capProblems(analysis.problems) };
    }
    default: {
      const analysis = analyzeSource(text, fileName, sourceNames, modules);
      return { kind, model: analysis.model, problems: capProblems(analysis.problems) };
    }
  }
}

/**
 * Analyzes the new text of a document the caller analyzed before, reusing what the edit did not
 * touch where that gives the same result (a blueprint edit inside one step: core/documents/incremental.ts),
 * and analyzing the whole text otherwise. The previous analysis is consumed: the caller must not
 * use it afterwards.
 */
export function reanalyzeDocument(
  kind: DocumentKind,
  previous: { readonly text: string; readonly analysis: DocumentAnalysis },
  text: string,
  fileName?: string,
  sourceNames?: SourceNames,
  modules?: ModuleAccess,
): DocumentAnalysis {
  if (kind === 'blueprint' && previous.analysis.kind === 'blueprint') {
    const analysis = reanalyzeBlueprint(previous.text, previous.analysis, text);
    if (analysis) return { kind, model: analysis.model, problems: capProblems(analysis.problems) };
  }
  return analyzeDocument(kind, text, fileName, sourceNames, modules);
}
