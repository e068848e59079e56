/**
 * Blueprint files (`*.blueprint.json`, `*.blueprint.jsonc`; docs/formats.md §3): JSONC whose
 * `mcp.invoke` steps carry schema pins (`expectedSchemaHash`). Read by core/documents/blueprint.ts;
 * an edit inside one step is read again alone (core/documents/incremental.ts).
 */
import { analyzeBlueprint } from '../blueprint';
import { reanalyzeBlueprint } from '../incremental';
import { endsWithName, type PinKind } from './kind';

const SUFFIXES = ['.blueprint.json', '.blueprint.jsonc'];

export const blueprintKind: PinKind = {
  id: 'blueprint',
  role: 'pins',
  title: 'Blueprint files: mcp.invoke steps with schema pins',
  patterns: ['*.blueprint.json', '*.blueprint.jsonc'],
  examples: ['flows/order.blueprint.json', 'order.blueprint.jsonc'],
  recognises: (name) => SUFFIXES.some((suffix) => endsWithName(name, suffix)),
  watchedFiles: ['**/*.blueprint.{json,jsonc}'],
  selectors: [{ language: 'toolpin-blueprint' }],
  languages: ['toolpin-blueprint'],
  activationEvents: ['onLanguage:toolpin-blueprint'],
  jsonValidation: { fileMatch: ['*.blueprint.json', '*.blueprint.jsonc'], url: './schemas/blueprint.schema.json' },
  settings: [],
  analyze: (text) => analyzeBlueprint(text),
  reanalyze: (previous, text) => {
    const { analysis } = previous;
    if (analysis.model.kind !== 'blueprint') return undefined;
    return reanalyzeBlueprint(previous.text, { model: analysis.model, problems: analysis.problems }, text);
  },
  servers: 'none',
  pinEdits: 'json',
  repins: 'write',
};
