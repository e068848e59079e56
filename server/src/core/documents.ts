/**
 * Which kind of Toolpin document a file is, by its name, and one entry point that analyzes any of
 * them. The CLI, the language server and the tests all go through {@link analyzeDocument}.
 */
import { analyzeBlueprint, type BlueprintModel } from './blueprint';
import { analyzeConnector, type ConnectorModel } from './connector';
import { capProblems, type Problem } from './problems';

export type DocumentKind = 'blueprint' | 'connector';

const KIND_BY_SUFFIX: ReadonlyArray<readonly [string, DocumentKind]> = [
  ['.blueprint.json', 'blueprint'],
  ['.blueprint.jsonc', 'blueprint'],
  ['.connector.json', 'connector'],
  ['.connector.jsonc', 'connector'],
];

/** The kind of a file from its name or URI, or undefined when Toolpin does not read it. */
export function documentKindOf(fileNameOrUri: string): DocumentKind | undefined {
  const lower = fileNameOrUri.toLowerCase();
  for (const [suffix, kind] of KIND_BY_SUFFIX) {
    if (lower.endsWith(suffix)) return kind;
  }
  return undefined;
}

export interface DocumentAnalysis {
  readonly kind: DocumentKind;
  readonly model: BlueprintModel | ConnectorModel;
  readonly problems: readonly Problem[];
}

/** Analyzes a document of a known kind. Never throws. At most {@link capProblems}' limit of problems. */
export function analyzeDocument(kind: DocumentKind, text: string): DocumentAnalysis {
  const analysis = kind === 'blueprint' ? analyzeBlueprint(text) : analyzeConnector(text);
  return { kind, model: analysis.model, problems: capProblems(analysis.problems) };
}
