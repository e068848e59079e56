/**
 * Re-exported and aliased pin functions (core/documents/source/sourceNames.ts): the settings'
 * `"module"` and `"module#name"` entries make the reader recognise calls imported from a
 * project's own module, in every import form the built-in names have (named, aliased, namespace,
 * CommonJS), with the pre-filter following; wrong entries are named and left out; and without the
 * settings nothing changes.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { analyzeDocument, blueprintOf, connectorOf } from '../../server/src/core/documents/documents';
import { BUILT_IN_SOURCE_NAMES, parseSourceNameEntry, setDefaultSourceNames, sourceNamesFrom } from '../../server/src/core/documents/source/sourceNames';
import { mayHoldPins, readSource } from '../../server/src/core/documents/source/sourceReader';

const PIN = 'fnv1a64:0123456789abcdef';

const REEXPORTED = `import { mcpInvoke$, step as run } from '@acme/platform';
import * as pins from '#pins';
const { mcpConnector } = require('@acme/platform');

export const a = mcpInvoke$('a#1', { toolName: 'alpha', expectedSchemaHash: '${PIN}' });
export const b = run('b#2', { toolName: 'beta', expectedSchemaHash: '${PIN}' });
export const c = pins.step('c#3', { toolName: 'gamma', expectedSchemaHash: '${PIN}' });
export const d = pins.other('d#4', { toolName: 'not-a-pin-call' });
export const e = mcpConnector({ name: 'notes', provider: 'mcp', providerConfig: { transport: { kind: 'http', url: 'https://notes.example.com/mcp' } } });
`;

const SETTINGS = { invokeFunctions: ['@acme/platform', '@acme/platform#step', '#pins#step'], connectorFunctions: ['@acme/platform#mcpConnector'] };

afterEach(() => setDefaultSourceNames(BUILT_IN_SOURCE_NAMES));

describe('source names from the settings', () => {
  test('entries: "module" keeps the own name, "module#name" names the export, a subpath import keeps its leading #', () => {
    assert.deepEqual(parseSourceNameEntry('@acme/platform', 'mcpInvoke$'), { module: '@acme/platform', name: 'mcpInvoke$' });
    assert.deepEqual(parseSourceNameEntry('@acme/platform#step', 'mcpInvoke$'), { module: '@acme/platform', name: 'step' });
    assert.deepEqual(parseSourceNameEntry('#pins', 'mcpInvoke$'), { module: '#pins', name: 'mcpInvoke$' });
    assert.deepEqual(parseSourceNameEntry('#pins#step', 'mcpInvoke$'), { module: '#pins', name: 'step' });
    assert.ok('error' in parseSourceNameEntry('', 'mcpInvoke$'));
    assert.ok('error' in parseSourceNameEntry(42, 'mcpInvoke$'));
    assert.ok('error' in parseSourceNameEntry('@acme/platform#not-an-identifier', 'mcpInvoke$'));
  });

  test('wrong entries are named and left out; the right ones and the built-in names still apply', () => {
    const { names, problems } = sourceNamesFrom({ invokeFunctions: ['@acme/platform', 7, 'x#1bad'], connectorFunctions: 'not a list' });
    assert.deepEqual(problems, [
      'connectorFunctions is not a list of "module" or "module#name" strings',
      'invokeFunctions[1] is not a non-empty string; expected "module" or "module#name"',
      'invokeFunctions[2] names "1bad", which is not a JavaScript identifier; expected "module" or "module#name"',
    ]);
    assert.deepEqual([...names.invoke.keys()].sort(), ['@acme/platform', '@loom/plugin-mcp']);
    assert.deepEqual([...names.connector.keys()], ['@objectstack/spec/integration', '@objectstack/spec']);
    assert.deepEqual(sourceNamesFrom(undefined), { names: sourceNamesFrom({}).names, problems: [] });
  });

  test('maxFileBytes: a positive whole number raises or lowers the size limit; anything else is named and the default kept', () => {
    assert.equal(sourceNamesFrom({}).names.maxFileBytes, 2 * 1024 * 1024);
    assert.equal(sourceNamesFrom({ maxFileBytes: 8 * 1024 * 1024 }).names.maxFileBytes, 8 * 1024 * 1024);
    for (const wrong of [0, -1, 1.5, '4 MiB']) {
      const { names, problems } = sourceNamesFrom({ maxFileBytes: wrong });
      assert.equal(names.maxFileBytes, 2 * 1024 * 1024);
      assert.deepEqual(problems, ['maxFileBytes is not a positive whole number of bytes']);
    }
  });
});

describe('the reader with re-exported names', () => {
  test('without the settings, a module importing only from a project module is not read at all', () => {
    assert.equal(mayHoldPins(REEXPORTED), false);
    const reading = readSource(REEXPORTED, 'steps.ts');
    assert.deepEqual([reading.invocations.length, reading.connectors.length], [0, 0]);
  });

  test('with them: named, aliased, namespace and CommonJS imports are read; another export of the module is not', () => {
    const { names } = sourceNamesFrom(SETTINGS);
    assert.equal(mayHoldPins(REEXPORTED, names), true);
    const analysis = analyzeDocument('source', REEXPORTED, 'steps.ts', names);
    const steps = blueprintOf(analysis)!.steps.map((step) => [step.id?.value, step.mcp?.toolName?.value, step.mcp?.expectedSchemaHash?.value]);
    assert.deepEqual(steps, [
      ['a#1', 'alpha', PIN],
      ['b#2', 'beta', PIN],
      ['c#3', 'gamma', PIN],
    ]);
    assert.deepEqual(connectorOf(analysis)!.instances.map((instance) => instance.name?.value), ['notes']);
    const [first] = blueprintOf(analysis)!.steps;
    assert.equal(REEXPORTED.slice(first!.mcp!.expectedSchemaHash!.span.offset, first!.mcp!.expectedSchemaHash!.span.offset + first!.mcp!.expectedSchemaHash!.span.length), `'${PIN}'`);
  });

  test('an export the settings do not name is not a pin call, even from a named module', () => {
    const { names } = sourceNamesFrom({ invokeFunctions: ['@acme/platform#step'] });
    const reading = readSource(REEXPORTED, 'steps.ts', names);
    assert.deepEqual(reading.invocations.map((call) => call.id?.value), ['b#2']);
  });

  test('the run default: what the CLI sets applies when no names are passed, and the built-in names still apply', () => {
    setDefaultSourceNames(sourceNamesFrom(SETTINGS).names);
    assert.equal(readSource(REEXPORTED, 'steps.ts').invocations.length, 3);
    const builtIn = `import { mcpInvoke$ } from '@loom/plugin-mcp';\nexport const s = mcpInvoke$('s', { toolName: 't', expectedSchemaHash: '${PIN}' });\n`;
    assert.equal(readSource(builtIn, 'steps.ts').invocations.length, 1);
  });
});
