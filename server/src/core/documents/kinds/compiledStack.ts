/**
 * ObjectStack's compiled stack (`os compile` writes `dist/objectstack.json`): the whole stack, with
 * its `connectors` among other keys and defaults filled in, read as connector instances, leniently
 * (core/documents/connector.ts `compiledStack`). The ObjectStack runtime loads this file, not the
 * TypeScript it came from, so its pins are checked too; it is a build output, so `toolpin pin`
 * never writes it (the pin belongs in the module that defines the connector). The folder walk
 * skips `dist`, so the file is looked for there directly. It stays a JSON document in the editor.
 */
import { analyzeConnector } from '../connector';
import { endsWithSegments, type PinKind } from './kind';

export const compiledStackKind: PinKind = {
  id: 'compiledStack',
  role: 'pins',
  title: "ObjectStack's compiled stack: connector instances with tool pins (a build output)",
  patterns: ['dist/objectstack.json'],
  examples: ['dist/objectstack.json', 'packages/app/dist/objectstack.json'],
  recognises: (name) => endsWithSegments(name, ['objectstack.json'], true),
  watchedFiles: ['**/objectstack.json'],
  selectors: [{ scheme: 'file', language: 'json', pattern: '**/objectstack.json' }],
  languages: [],
  activationEvents: ['workspaceContains:dist/objectstack.json'],
  settings: [],
  analyze: (text) => analyzeConnector(text, { compiledStack: true }),
  servers: 'declares',
  buildOutput: { folder: 'dist', file: 'objectstack.json' },
  pinEdits: 'json',
  repins: 'build-output',
};
