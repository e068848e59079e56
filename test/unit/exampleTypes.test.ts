/**
 * The example workspace's TypeScript sources open without errors in a fresh clone (issue 26):
 * examples/tsconfig.json and examples/types/ declare the modules they import, so TypeScript (the
 * same compiler VS Code's TypeScript support runs) reports nothing, imports included.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import * as ts from 'typescript';

const examples = path.resolve(__dirname, '..', '..', '..', 'examples');

test('the example sources compile with no diagnostic under examples/tsconfig.json', () => {
  const configFile = path.join(examples, 'tsconfig.json');
  const read = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
  assert.equal(read.error, undefined, read.error && ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, examples);
  assert.deepEqual(parsed.errors, []);
  const sources = parsed.fileNames.filter((file) => !file.endsWith('.d.ts')).map((file) => path.relative(examples, file)).sort();
  assert.deepEqual(sources, ['blueprints/triage.steps.ts', 'connectors/notes.connectors.ts']);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => `${diagnostic.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
  assert.deepEqual(diagnostics, []);
});
