/**
 * Connector files (`*.connector.json`, `*.connector.jsonc`; docs/formats.md §4): JSONC connector
 * instances whose `toolsSnapshot` carries tool pins, and which declare MCP servers for their
 * folder's registry. Read by core/documents/connector.ts.
 */
import { analyzeConnector } from '../connector';
import { endsWithName, type PinKind } from './kind';

const SUFFIXES = ['.connector.json', '.connector.jsonc'];

export const connectorKind: PinKind = {
  id: 'connector',
  role: 'pins',
  title: 'Connector files: connector instances with tool pins, declaring servers',
  patterns: ['*.connector.json', '*.connector.jsonc'],
  examples: ['connectors/github.connector.json', 'github.connector.jsonc'],
  recognises: (name) => SUFFIXES.some((suffix) => endsWithName(name, suffix)),
  watchedFiles: ['**/*.connector.{json,jsonc}'],
  selectors: [{ language: 'toolpin-connector' }],
  languages: ['toolpin-connector'],
  activationEvents: ['onLanguage:toolpin-connector'],
  jsonValidation: { fileMatch: ['*.connector.json', '*.connector.jsonc'], url: './schemas/connector.schema.json' },
  settings: [],
  analyze: (text) => analyzeConnector(text),
  servers: 'declares',
  pinEdits: 'json',
  repins: 'write',
};
