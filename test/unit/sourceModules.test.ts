/**
 * Pin values read across modules (core/documents/source/sourceModules.ts) with an in-memory module
 * access: every export form is read where the literal is written; what cannot be read (a package,
 * a `let`, a call, a cycle, a chain deeper than the bound) is "cannot verify" with a reason, never
 * a guess; each module is parsed once per access; and the node access (io/sourceModules.ts) finds
 * files by extension and index, and refuses a link that leads out of the workspace.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { analyzeSource, type ForeignPin } from '../../server/src/core/documents/source/analyzeSource';
import { MAX_MODULE_DEPTH, type ModuleAccess, type ModuleScope } from '../../server/src/core/documents/source/sourceModules';
import { nodeModuleAccess } from '../../server/src/io/sourceModules';

const PIN = 'fnv1a64:a76fe8d6d023fca0';
const TOOL_PIN = `sha256:${'ab'.repeat(32)}`;

/** An access over `files` (path → text), resolving `./x` to `/ws/x.ts`; it counts resolutions per file. */
function memoryAccess(files: Record<string, string>): ModuleAccess & { readonly parsed: Map<string, ModuleScope> } {
  return {
    parsed: new Map(),
    resolve(from, specifier) {
      if (!specifier.startsWith('.')) return undefined;
      const base = path.posix.join(path.posix.dirname(from), specifier).replace(/\.js$/, '');
      for (const file of [base, `${base}.ts`, `${base}/index.ts`]) if (files[file] !== undefined) return { file, text: files[file] };
      return { error: 'no such module' };
    },
  };
}

const STEP = (expression: string, imports: string): string =>
  `import { mcpInvoke$ } from '@loom/plugin-mcp';\n${imports}\nexport const s = mcpInvoke$('s', { toolName: 'echo', server: 'demo', expectedSchemaHash: ${expression} });\n`;

function read(files: Record<string, string>, access = memoryAccess(files)): { pins: readonly ForeignPin[]; hash: string | undefined; reasons: string[]; access: typeof access } {
  const analysis = analyzeSource(files['/ws/steps.ts']!, '/ws/steps.ts', undefined, access);
  const step = analysis.model.blueprint.steps[0];
  return { pins: analysis.model.foreignPins, hash: step?.mcp?.expectedSchemaHash?.value, reasons: analysis.model.computedPins.map((pin) => pin.reason), access };
}

describe('pin values read across modules', () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['export const, member', { '/ws/steps.ts': STEP('PINS.echo', "import { PINS } from './pins';"), '/ws/pins.ts': `export const PINS = { echo: '${PIN}' } as const;` }, '/ws/pins.ts'],
    ['aliased import, quoted member', { '/ws/steps.ts': STEP("P['echo']", "import { PINS as P } from './pins.js';"), '/ws/pins.ts': `export const PINS = { "echo": "${PIN}" };` }, '/ws/pins.ts'],
    ['namespace import', { '/ws/steps.ts': STEP('all.ECHO', "import * as all from './pins';"), '/ws/pins.ts': `export const ECHO = \`${PIN}\`;` }, '/ws/pins.ts'],
    ['export { a as b }', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './pins';"), '/ws/pins.ts': `const hash = '${PIN}';\nexport { hash as ECHO };` }, '/ws/pins.ts'],
    ['re-export from another module', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './shared';"), '/ws/shared/index.ts': "export { ECHO } from '../pins';", '/ws/pins.ts': `export const ECHO = '${PIN}';` }, '/ws/pins.ts'],
    ['export * from', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './shared';"), '/ws/shared/index.ts': "export * from './other';\nexport * from '../pins';", '/ws/shared/other.ts': 'export const X = 1;', '/ws/pins.ts': `export const ECHO = '${PIN}';` }, '/ws/pins.ts'],
    ['an import exported again', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './shared';"), '/ws/shared.ts': "import { ECHO } from './pins';\nexport { ECHO };", '/ws/pins.ts': `export const ECHO = '${PIN}';` }, '/ws/pins.ts'],
    ['a constant of the defining module', { '/ws/steps.ts': STEP('PINS.echo', "import { PINS } from './pins';"), '/ws/pins.ts': `const ECHO = '${PIN}';\nexport const PINS = { echo: ECHO };` }, '/ws/pins.ts'],
  ];
  for (const [name, files, definer] of cases) {
    test(`${name}: read where it is written`, () => {
      const { pins, hash, reasons } = read(files);
      assert.equal(hash, PIN);
      assert.deepEqual(reasons, []);
      assert.equal(pins.length, 1);
      const pin = pins[0]!;
      assert.equal(pin.file, definer);
      const text = files[definer]!;
      assert.equal(text.slice(pin.literal.offset + 1, pin.literal.offset + pin.literal.length - 1), PIN, 'the span is the literal, quotes included');
      assert.equal(pin.quote, text[pin.literal.offset]);
      const use = files['/ws/steps.ts']!;
      assert.equal(use.slice(pin.span.offset, pin.span.offset + pin.span.length), /expectedSchemaHash: ([^ ]+) \}/.exec(use)![1], 'the use is where diagnostics go');
    });
  }

  test('a whole imported snapshot: each entry is a pin written in the defining module', () => {
    const files = {
      '/ws/steps.ts': `import { defineConnector } from '@objectstack/spec';\nimport { SNAPSHOT } from './snapshot';\nexport const c = defineConnector({ name: 'c', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'x' }, toolsSnapshot: SNAPSHOT } });\n`,
      '/ws/snapshot.ts': `export const SNAPSHOT = { a: '${TOOL_PIN}', b: "${TOOL_PIN}" };\n`,
    };
    const analysis = analyzeSource(files['/ws/steps.ts'], '/ws/steps.ts', undefined, memoryAccess(files));
    assert.deepEqual(analysis.model.connector.instances[0]!.snapshot.map((entry) => [entry.tool.value, entry.pin.value]), [['a', TOOL_PIN], ['b', TOOL_PIN]]);
    assert.deepEqual(analysis.model.foreignPins.map((pin) => [pin.tool, pin.quote, files['/ws/snapshot.ts'].slice(pin.literal.offset, pin.literal.offset + pin.literal.length)]), [['a', "'", `'${TOOL_PIN}'`], ['b', '"', `"${TOOL_PIN}"`]]);
  });

  const unreadable: Array<[string, Record<string, string>, RegExp]> = [
    ['a package', { '/ws/steps.ts': STEP('PINS.echo', "import { PINS } from '@acme/pins';") }, /Toolpin reads pin values only in the module that uses them/],
    ['a let', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './pins';"), '/ws/pins.ts': `export let ECHO = '${PIN}';` }, /"ECHO" of '\.\/pins' is not a constant/],
    ['a call', { '/ws/steps.ts': STEP('PINS.echo', "import { PINS } from './pins';"), '/ws/pins.ts': "export const PINS = { echo: pinFor('echo') };" }, /PINS\.echo of '\.\/pins' is computed at run time \(pinFor\('echo'\)\)/],
    ['a missing module', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './nowhere';") }, /'\.\/nowhere' could not be read: no such module/],
    ['a missing export', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './pins';"), '/ws/pins.ts': 'export const OTHER = 1;' }, /no export "ECHO"/],
    ['a cycle', { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './a';"), '/ws/a.ts': "export { ECHO } from './b';", '/ws/b.ts': "export { ECHO } from './a';" }, /form a cycle/],
  ];
  for (const [name, files, reason] of unreadable) {
    test(`${name}: "cannot verify", saying why`, () => {
      const { pins, hash, reasons } = read(files);
      assert.equal(hash, undefined);
      assert.deepEqual(pins, []);
      assert.equal(reasons.length, 1);
      assert.match(reasons[0]!, reason);
    });
  }

  test(`a chain deeper than ${MAX_MODULE_DEPTH} modules ends with a reason`, () => {
    const files: Record<string, string> = { '/ws/steps.ts': STEP('ECHO', "import { ECHO } from './m0';") };
    for (let index = 0; index < MAX_MODULE_DEPTH + 2; index++) files[`/ws/m${index}.ts`] = `export { ECHO } from './m${index + 1}';`;
    files[`/ws/m${MAX_MODULE_DEPTH + 2}.ts`] = `export const ECHO = '${PIN}';`;
    assert.match(read(files).reasons[0]!, new RegExp(`more than ${MAX_MODULE_DEPTH} modules`));
  });

  test('each module is parsed once per access, however many uses read it', () => {
    const files = {
      '/ws/steps.ts': `import { mcpInvoke$ } from '@loom/plugin-mcp';\nimport { PINS } from './pins';\n${[1, 2, 3].map((n) => `export const s${n} = mcpInvoke$('s${n}', { toolName: 'echo', server: 'demo', expectedSchemaHash: PINS.echo });`).join('\n')}\n`,
      '/ws/pins.ts': `export const PINS = { echo: '${PIN}' };`,
    };
    const access = memoryAccess(files);
    const first = analyzeSource(files['/ws/steps.ts'], '/ws/steps.ts', undefined, access);
    const scope = access.parsed.get('/ws/pins.ts');
    assert.ok(scope);
    analyzeSource(files['/ws/steps.ts'], '/ws/steps.ts', undefined, access);
    assert.equal(access.parsed.get('/ws/pins.ts'), scope, 'the same parse is reused');
    assert.equal(first.model.foreignPins.length, 3);
  });
});

describe('the node module access', () => {
  test('extensions, index files and compiled names are found; a link leading out of the workspace is refused', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'toolpin-modules-'));
    const outside = mkdtempSync(path.join(tmpdir(), 'toolpin-modules-out-'));
    try {
      mkdirSync(path.join(root, 'shared'));
      writeFileSync(path.join(root, 'pins.mts'), 'export const A = 1;');
      writeFileSync(path.join(root, 'shared', 'index.tsx'), 'export const B = 1;');
      writeFileSync(path.join(root, 'compiled.ts'), 'export const C = 1;');
      writeFileSync(path.join(outside, 'secret.ts'), 'export const D = 1;');
      symlinkSync(path.join(outside, 'secret.ts'), path.join(root, 'linked.ts'));
      const access = nodeModuleAccess({ root });
      const from = path.join(root, 'steps.ts');
      assert.deepEqual(access.resolve(from, './pins'), { file: path.join(root, 'pins.mts'), text: 'export const A = 1;' });
      assert.deepEqual(access.resolve(from, './shared'), { file: path.join(root, 'shared', 'index.tsx'), text: 'export const B = 1;' });
      assert.deepEqual(access.resolve(from, './compiled.js'), { file: path.join(root, 'compiled.ts'), text: 'export const C = 1;' });
      assert.equal(access.resolve(from, 'some-package'), undefined, 'a package is never read');
      assert.match(JSON.stringify(access.resolve(from, './linked')), /symbolic link .*outside the workspace; Toolpin does not follow it/);
      assert.match(JSON.stringify(access.resolve(from, '../elsewhere/pins')), /outside the workspace folder/);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
