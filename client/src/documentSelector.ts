/**
 * The client's document selector: the VS Code document filters of every document kind
 * (server/src/core/documents/kinds/, each kind's `selectors`), in the registry's order. The client
 * may import nothing of the server but its protocol, so the table is copied here as data, and a unit
 * test (test/unit/kindsManifest.test.ts) fails when it and the registry disagree.
 *
 * The server reads a TypeScript or JavaScript module only when its text names a pin module, so
 * ordinary modules cost a substring search. ObjectStack's compiled stack stays a JSON document
 * (VS Code's JSON support keeps working on it); the repository's policy is selected so that its
 * own mistakes (TP413) are shown where it is edited.
 */
export const DOCUMENT_SELECTOR = [
  { language: 'toolpin-blueprint' },
  { language: 'toolpin-connector' },
  { scheme: 'file', language: 'typescript' },
  { scheme: 'file', language: 'typescriptreact' },
  { scheme: 'file', language: 'javascript' },
  { scheme: 'file', language: 'javascriptreact' },
  { scheme: 'file', language: 'json', pattern: '**/objectstack.json' },
  { scheme: 'file', pattern: '**/.toolpin/policy.jsonc' },
];
