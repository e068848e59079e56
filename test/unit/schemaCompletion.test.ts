/**
 * The completions and schema problems that the contributed JSON Schemas cause in VS Code, simulated
 * with vscode-json-languageservice (the library VS Code's JSON language features run) configured
 * from package.json exactly as VS Code reads it: the `jsonValidation` associations (fileMatch
 * patterns prefixed with "/" and `./` URLs resolved against the extension folder, as the JSON
 * client does), the language id of each file pattern, and the suggest mode that
 * `configurationDefaults` gives that language (VS Code's own default is "insert").
 *
 * Every item offered in an empty string, a partly typed string and where no value is written yet
 * is applied as VS Code applies it; the document must still parse and the cursor must be inside
 * the completed value. In insert mode the JSON client's edits keep the string's closing quote
 * (`"mcp.invoke""`), which is why the Toolpin languages ask for replace mode like JSON does.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type CompletionItem, getLanguageService, type LanguageService, TextDocument } from 'vscode-json-languageservice';
import { analyzeDocument } from '../../server/src/core/documents/documents';
import { applyCompletion, cursorProblem, marked, positionAt, type SuggestMode, syntaxErrors } from '../support/completionEdits';
import { repoRoot } from '../support/lspClient';

const root = repoRoot();

interface Manifest {
  contributes: {
    languages: Array<{ id: string; filenamePatterns?: string[] }>;
    jsonValidation: Array<{ fileMatch: string | string[]; url: string }>;
    jsonLanguageParticipants?: Array<{ languageId: string; allowComments?: boolean }>;
    configurationDefaults?: Record<string, Record<string, unknown>>;
  };
}

const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;
const extensionUri = pathToFileURL(root + path.sep).href;

function languageOf(file: string): string {
  const language = manifest.contributes.languages.find((entry) =>
    (entry.filenamePatterns ?? []).some((pattern) => new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`).test(file)),
  );
  if (!language) throw new Error(`no contributed language claims ${file}`);
  return language.id;
}

/** The suggest mode VS Code uses for `language`: its configurationDefaults entry, else "insert". */
function suggestModeOf(language: string): SuggestMode {
  const mode = manifest.contributes.configurationDefaults?.[`[${language}]`]?.['editor.suggest.insertMode'];
  return mode === 'replace' ? 'replace' : 'insert';
}

function createService(): LanguageService {
  const service = getLanguageService({
    schemaRequestService: (uri) => {
      if (!uri.startsWith('file:')) return Promise.reject(new Error(`the simulation fetches no remote schema (${uri})`));
      return Promise.resolve(readFileSync(fileURLToPath(uri), 'utf8'));
    },
    clientCapabilities: { textDocument: { completion: { completionItem: { documentationFormat: ['markdown', 'plaintext'], labelDetailsSupport: true } } } },
  });
  service.configure({
    validate: true,
    allowComments: true,
    schemas: manifest.contributes.jsonValidation.map((entry) => ({
      uri: entry.url.startsWith('./') ? new URL(entry.url.slice(2), extensionUri).href : entry.url,
      fileMatch: (Array.isArray(entry.fileMatch) ? entry.fileMatch : [entry.fileMatch]).map((pattern) => (/^(\w+:\/\/|\/|!)/.test(pattern) ? pattern : `/${pattern}`)),
    })),
  });
  return service;
}

const service = createService();

function documentFor(file: string, text: string): TextDocument {
  return TextDocument.create(`file:///workspace/flows/${file}`, languageOf(file), 1, text);
}

async function complete(file: string, text: string, offset: number): Promise<CompletionItem[]> {
  const document = documentFor(file, text);
  const list = await service.doComplete(document, positionAt(text, offset), service.parseJSONDocument(document));
  return list?.items ?? [];
}

/** Checks every item at the marked cursor; returns the labels, so a case can say what it expects. */
async function checkAll(file: string, document: string, mode: SuggestMode = suggestModeOf(languageOf(file))): Promise<{ labels: string[]; failures: string[] }> {
  const { text, offset } = marked(document);
  const items = await complete(file, text, offset);
  const failures: string[] = [];
  for (const item of items) {
    const applied = applyCompletion(text, offset, item, mode, true);
    const errors = syntaxErrors(applied.text);
    const where = cursorProblem(applied);
    if (errors.length > 0 || where) failures.push(`${JSON.stringify(item.label)} → ${JSON.stringify(applied.text)}: ${[...errors, where ?? ''].join('; ')}`);
  }
  return { labels: items.map((item) => item.label), failures };
}

function blueprint(input: string, extraStep = ''): string {
  return `{
  // A comment, as JSONC allows.
  "blueprint": "triage",
  "formatVersion": 1,
  "steps": [
    { "id": "open", "effect": "mcp.invoke", "input": ${input}, "on": { "schemaDrift": "fix" } },
    { "id": "fix", "effect": "log.write"${extraStep} }
  ]
}`;
}

function connector(providerConfig: string, auth = '{ "type": "none" }', name = '"github_tools"'): string {
  return `{
  "name": ${name},
  "provider": "mcp",
  "providerConfig": ${providerConfig},
  "auth": ${auth}
}`;
}

const TRANSPORT = '"transport": { "kind": "stdio", "command": "node" }';

/** One value position written three ways: an empty string, a partly typed string and no value yet. */
function threeWays(make: (value: string) => string, partial: string): Array<[string, string]> {
  return [
    ['an empty string', make('"|"')],
    ['a partial string', make(`"${partial}|"`)],
    ['no value yet', make('|')],
  ];
}

const BLUEPRINT_CASES: Array<[string, string]> = [
  ...threeWays((value) => blueprint(`{ "toolName": ${value} }`), 'cr').map(([how, text]): [string, string] => [`toolName, ${how}`, text]),
  ...threeWays((value) => blueprint(`{ "toolName": "t", "expectedSchemaHash": ${value} }`), 'fnv').map(([how, text]): [string, string] => [`expectedSchemaHash, ${how}`, text]),
  ...threeWays((value) => blueprint(`{ "toolName": "t", "server": ${value} }`), 'gi').map(([how, text]): [string, string] => [`server, ${how}`, text]),
  ...threeWays((value) => blueprint(`{ "toolName": "t", "arguments": { "token": { "$secret": ${value} } } }`), 'GI').map(([how, text]): [string, string] => [`$secret, ${how}`, text]),
  ...threeWays((value) => blueprint('{ "toolName": "t" }').replace('"effect": "log.write"', `"effect": ${value}`), 'mc').map(([how, text]): [string, string] => [`effect, ${how}`, text]),
  ...threeWays((value) => blueprint('{ "toolName": "t" }').replace('"blueprint": "triage"', `"blueprint": ${value}`), 'tr').map(([how, text]): [string, string] => [`blueprint name, ${how}`, text]),
  ...threeWays((value) => blueprint('{ "toolName": "t" }').replace('"formatVersion": 1', `"formatVersion": ${value}`), '1').map(([how, text]): [string, string] => [`formatVersion, ${how}`, text]),
  ...threeWays((value) => blueprint('{ "toolName": "t" }').replace('"schemaDrift": "fix"', `"schemaDrift": ${value}`), 'fi').map(([how, text]): [string, string] => [`schemaDrift target, ${how}`, text]),
  ['an input key, an empty string', blueprint('{ "toolName": "t", "|" }')],
  ['an input key, a partial string', blueprint('{ "toolName": "t", "exp|" }')],
  ['an input key, no key yet', blueprint('{ "toolName": "t", | }')],
  ['a step key, no key yet', blueprint('{ "toolName": "t" }', ', |')],
  ['a step key, a partial string', blueprint('{ "toolName": "t" }', ', "la|"')],
  ['a step, no step yet', blueprint('{ "toolName": "t" }').replace('"steps": [', '"steps": [ |')],
  ['a top-level key, no key yet', blueprint('{ "toolName": "t" }').replace('"formatVersion": 1,', '"formatVersion": 1, |')],
];

const CONNECTOR_CASES: Array<[string, string]> = [
  ...threeWays((value) => connector(`{ "transport": { "kind": ${value} } }`), 'st').map(([how, text]): [string, string] => [`transport kind, ${how}`, text]),
  ...threeWays((value) => connector(`{ "transport": { "kind": "stdio", "command": ${value} } }`), 'no').map(([how, text]): [string, string] => [`stdio command, ${how}`, text]),
  ...threeWays((value) => connector(`{ "transport": { "kind": "http", "url": ${value} } }`), 'ht').map(([how, text]): [string, string] => [`http url, ${how}`, text]),
  ...threeWays((value) => connector(`{ ${TRANSPORT}, "include": [${value}] }`), 'cr').map(([how, text]): [string, string] => [`include entry, ${how}`, text]),
  ...threeWays((value) => connector(`{ ${TRANSPORT}, "toolsSnapshot": { "create_issue": ${value} } }`), 'sha').map(([how, text]): [string, string] => [`toolsSnapshot value, ${how}`, text]),
  ['toolsSnapshot key, an empty string', connector(`{ ${TRANSPORT}, "toolsSnapshot": { "|" } }`)],
  ['toolsSnapshot key, a partial string', connector(`{ ${TRANSPORT}, "toolsSnapshot": { "cr|" } }`)],
  ['toolsSnapshot key, no key yet', connector(`{ ${TRANSPORT}, "toolsSnapshot": { | } }`)],
  ...threeWays((value) => connector(`{ ${TRANSPORT} }`, `{ "type": ${value} }`), 'be').map(([how, text]): [string, string] => [`auth type, ${how}`, text]),
  ...threeWays((value) => connector(`{ ${TRANSPORT} }`, `{ "type": "bearer", "credentialRef": ${value} }`), 'GI').map(([how, text]): [string, string] => [`credentialRef, ${how}`, text]),
  ...threeWays((value) => connector(`{ ${TRANSPORT} }`, `{ "type": "api-key", "credentialRef": "K", "headerName": ${value} }`), 'X').map(([how, text]): [string, string] => [`headerName, ${how}`, text]),
  ...threeWays((value) => connector(`{ ${TRANSPORT} }`).replace('"provider": "mcp"', `"provider": ${value}`), 'mc').map(([how, text]): [string, string] => [`provider, ${how}`, text]),
  ['a providerConfig key, no key yet', connector(`{ ${TRANSPORT}, | }`)],
  ['a providerConfig key, an empty string', connector(`{ ${TRANSPORT}, "|" }`)],
  ['a transport key, a partial string', connector('{ "transport": { "kind": "stdio", "command": "node", "ar|" } }')],
  ['an instance key, no key yet', connector(`{ ${TRANSPORT} }`).replace('"provider": "mcp",', '"provider": "mcp", |')],
  ['an instance in an array file, no instance yet', '[ | ]'],
  ['an empty file', '|'],
];

describe('the contributed schemas, as VS Code wires them', () => {
  test('package.json associates both schemas and asks for replace-mode suggestions in both languages', () => {
    assert.equal(languageOf('triage.blueprint.jsonc'), 'toolpin-blueprint');
    assert.equal(languageOf('github.connector.jsonc'), 'toolpin-connector');
    // Without this, VS Code's global "insert" default leaves the closing quote of every JSON value
    // completed inside a string (the JSON extension sets replace mode for json and jsonc only).
    assert.equal(suggestModeOf('toolpin-blueprint'), 'replace');
    assert.equal(suggestModeOf('toolpin-connector'), 'replace');
    const participants = (manifest.contributes.jsonLanguageParticipants ?? []).map((entry) => entry.languageId).sort();
    assert.deepEqual(participants, ['toolpin-blueprint', 'toolpin-connector'], 'VS Code runs its JSON language features on both languages');
  });

  test('the simulation reproduces the reported corruption in insert mode', async () => {
    const { text, offset } = marked(blueprint('{ "toolName": "t" }').replace('"effect": "log.write"', '"effect": "|"'));
    const items = await complete('triage.blueprint.jsonc', text, offset);
    const example = items.find((item) => item.label === '"mcp.invoke"');
    assert.ok(example, `the schema's example is offered: ${items.map((item) => item.label).join(', ')}`);
    const inserted = applyCompletion(text, offset, example, 'insert', true);
    assert.match(inserted.text, /"effect": "mcp\.invoke""/);
    assert.ok(syntaxErrors(inserted.text).length > 0);
    const replaced = applyCompletion(text, offset, example, 'replace', true);
    assert.match(replaced.text, /"effect": "mcp\.invoke" \}/);
    assert.deepEqual(syntaxErrors(replaced.text), []);
  });
});

describe('every schema completion leaves a valid blueprint, cursor in the value', () => {
  for (const [name, document] of BLUEPRINT_CASES) {
    test(name, async () => {
      const { failures } = await checkAll('triage.blueprint.jsonc', document);
      assert.deepEqual(failures, []);
    });
  }
});

describe('every schema completion leaves a valid connector, cursor in the value', () => {
  for (const [name, document] of CONNECTOR_CASES) {
    test(name, async () => {
      const { failures } = await checkAll('github.connector.jsonc', document);
      assert.deepEqual(failures, []);
    });
  }
});

describe('what the schemas offer, and what they leave to Toolpin', () => {
  const labelsAt = async (file: string, document: string): Promise<string[]> => (await checkAll(file, document)).labels;

  test('the cases are not vacuous: enums, examples, snippets and keys are offered', async () => {
    assert.deepEqual((await labelsAt('github.connector.jsonc', connector('{ "transport": { "kind": "|" } }'))).sort(), ['"http"', '"stdio"']);
    assert.deepEqual((await labelsAt('github.connector.jsonc', connector(`{ ${TRANSPORT} }`, '{ "type": "|" }'))).sort(), ['"api-key"', '"basic"', '"bearer"', '"none"']);
    assert.ok((await labelsAt('triage.blueprint.jsonc', blueprint('{ "toolName": "t" }').replace('"effect": "log.write"', '"effect": |'))).includes('"mcp.invoke"'));
    assert.ok((await labelsAt('triage.blueprint.jsonc', blueprint('{ "toolName": "t" }').replace('"steps": [', '"steps": [ |'))).includes('New mcp.invoke step'));
    assert.ok((await labelsAt('triage.blueprint.jsonc', blueprint('{ "toolName": "t", | }'))).includes('expectedSchemaHash'));
    assert.ok((await labelsAt('github.connector.jsonc', '|')).includes('New MCP connector'));
  });

  test('no made-up tool name or pin competes with the live values Toolpin completes', async () => {
    for (const value of ['"|"', '|']) {
      assert.deepEqual(await labelsAt('triage.blueprint.jsonc', blueprint(`{ "toolName": ${value} }`)), [], `toolName ${value}`);
      assert.deepEqual(await labelsAt('triage.blueprint.jsonc', blueprint(`{ "toolName": "t", "expectedSchemaHash": ${value} }`)), [], `expectedSchemaHash ${value}`);
      assert.deepEqual(await labelsAt('github.connector.jsonc', connector(`{ ${TRANSPORT}, "toolsSnapshot": { "t": ${value} } }`)), [], `toolsSnapshot value ${value}`);
    }
  });
});

describe('a malformed pin is reported once, by Toolpin', () => {
  async function schemaProblems(file: string, text: string): Promise<Array<{ message: string; offset: number }>> {
    const document = documentFor(file, text);
    const diagnostics = await service.doValidation(document, service.parseJSONDocument(document), { comments: 'ignore', trailingCommas: 'ignore' });
    return diagnostics.map((diagnostic) => ({ message: typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value, offset: document.offsetAt(diagnostic.range.start) }));
  }

  test('every fixture the schemas leave to Toolpin draws no schema problem in VS Code', async () => {
    const folder = path.join(root, 'test', 'fixtures', 'schemas', 'toolpin');
    const files = readdirSync(folder).filter((name) => /\.jsonc?$/.test(name));
    assert.ok(files.length >= 6, `${files.length} fixtures`);
    for (const file of files) {
      const text = readFileSync(path.join(folder, file), 'utf8');
      assert.deepEqual(await schemaProblems(file, text), [], file);
      assert.ok(analyzeDocument(file.includes('.blueprint.') ? 'blueprint' : 'connector', text).problems.length > 0, `${file}: Toolpin reports it`);
    }
  });

  test('TP204: a schema pin with non-hex characters', async () => {
    const text = blueprint('{ "toolName": "t", "expectedSchemaHash": "fnv1a64:zz-not-a-hash" }');
    assert.deepEqual(await schemaProblems('triage.blueprint.jsonc', text), [], 'the schema reports nothing of its own');
    const problems = analyzeDocument('blueprint', text).problems.filter((found) => found.code === 'TP204');
    assert.equal(problems.length, 1);
    assert.equal(text.slice(problems[0]!.span.offset, problems[0]!.span.offset + problems[0]!.span.length), '"fnv1a64:zz-not-a-hash"');
    assert.match(problems[0]!.message, /this one has 2, and 11 characters that are not hex digits: "z", "-", "n", "o", "t", "h", "s"$/);
  });

  test('TP204: a schema pin one digit short, uppercase or of the other kind', async () => {
    for (const pin of ['fnv1a64:8465e642361d637', 'fnv1a64:8465E642361D6375', `sha256:${'e8'.repeat(32)}`]) {
      const text = blueprint(`{ "toolName": "t", "expectedSchemaHash": "${pin}" }`);
      assert.deepEqual(await schemaProblems('triage.blueprint.jsonc', text), [], pin);
      assert.deepEqual(analyzeDocument('blueprint', text).problems.map((found) => found.code), ['TP204'], pin);
    }
  });

  test('TP306: tool pins that are short, uppercase, schema pins or not hex', async () => {
    const hex = 'e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';
    for (const pin of [`sha256:${hex.slice(1)}`, `sha256:${hex.toUpperCase()}`, 'fnv1a64:8465e642361d6375', `sha256: ${hex}`]) {
      const text = connector(`{ ${TRANSPORT}, "include": ["t"], "toolsSnapshot": { "t": ${JSON.stringify(pin)} } }`);
      assert.deepEqual(await schemaProblems('github.connector.jsonc', text), [], pin);
      assert.deepEqual(analyzeDocument('connector', text).problems.map((found) => found.code), ['TP306'], pin);
    }
  });
});
