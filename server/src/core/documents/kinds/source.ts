/**
 * TypeScript and JavaScript sources (docs/formats.md "Source files"): `defineConnector` (and
 * `defineStack` connectors) and `mcpInvoke$` calls read into the same models as connector and
 * blueprint files (core/documents/source/). Declaration files hold no calls, and dependencies'
 * files are never a workspace's own documents, even when opened in an editor. A module is a
 * document only when its text names a pin module and function, so a tree of ordinary modules
 * costs a substring search each. Re-pins keep the literal's quote and the object's key style.
 */
import { analyzeSource } from '../source/analyzeSource';
import { importsPinFunction, mayHoldPins } from '../source/sourceReader';
import type { PinKind } from './kind';

const SOURCE_FILE = /\.(?:[mc]?ts|tsx|[mc]?js|jsx)$/;
const DECLARATION_FILE = /\.d\.[mc]?ts$/;
const DEPENDENCY_FOLDER = /(?:^|[\\/])node_modules[\\/]/;
/** VS Code's language ids of the files, local ones only (`file:`). */
const LANGUAGES = ['typescript', 'typescriptreact', 'javascript', 'javascriptreact'];

export const sourceKind: PinKind = {
  id: 'source',
  role: 'pins',
  title: 'TypeScript and JavaScript sources: defineConnector and mcpInvoke$ calls with pins',
  patterns: ['*.ts', '*.tsx', '*.mts', '*.cts', '*.js', '*.jsx', '*.mjs', '*.cjs'],
  examples: ['src/connectors.ts', 'src/flow.mjs', 'src/View.tsx'],
  recognises: (name) => {
    const lower = name.toLowerCase();
    return SOURCE_FILE.test(lower) && !DECLARATION_FILE.test(lower) && !DEPENDENCY_FOLDER.test(lower);
  },
  watchedFiles: ['**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}'],
  selectors: LANGUAGES.map((language) => ({ scheme: 'file', language })),
  languages: [],
  activationEvents: LANGUAGES.map((language) => `onLanguage:${language}`),
  settings: ['sources.connectorFunctions', 'sources.invokeFunctions', 'sources.maxFileBytes'],
  analyze: (text, context) => analyzeSource(text, context.fileName, context.sourceNames, context.modules),
  servers: 'may-declare',
  // The bytes first: most modules are not documents, and searching their UTF-8 spares decoding
  // them; decoded only when they name a pin module and function, for the sharper test.
  mayBeDocument: (bytes, names) => mayHoldPins(bytes, names) && importsPinFunction(bytes.toString('utf8'), names),
  pinEdits: 'source-style',
  repins: 'write',
};
