/**
 * Sizes a person can hold (issue 24): no file over 800 lines and no function over 100 lines in
 * server/src, client/src and scripts. The finder is scripts/code-sizes.mjs (the TypeScript compiler
 * API), which also lists the longest ones for a reader: `node scripts/code-sizes.mjs --top 10`.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

const root = path.resolve(__dirname, '..', '..', '..');

interface FileSize {
  readonly file: string;
  readonly lines: number;
}
interface FunctionSize extends FileSize {
  readonly name: string;
  readonly line: number;
}
interface Sizes {
  readonly files: readonly FileSize[];
  readonly functions: readonly FunctionSize[];
}
interface CodeSizes {
  readonly MAX_FILE_LINES: number;
  readonly MAX_FUNCTION_LINES: number;
  shippedSources(base?: string): string[];
  functionLengths(fileName: string, text: string): Array<{ name: string; line: number; lines: number }>;
  measure(files: readonly string[], base?: string, read?: (file: string) => string): Sizes;
  overLimits(sizes: Sizes): Sizes;
}

async function codeSizes(): Promise<CodeSizes> {
  return import(pathToFileURL(path.join(root, 'scripts', 'code-sizes.mjs')).href);
}

test('functionLengths measures every kind of function, nested ones apart, from first to last line', async () => {
  const { functionLengths } = await codeSizes();
  const text = [
    'function outer() {', // 1
    '  const inner = () => {', // 2
    '    return 1;', // 3
    '  };', // 4
    '  return inner;', // 5
    '}', // 6
    'class Box {', // 7
    '  constructor() {}', // 8
    '  get size() {', // 9
    '    return 2;', // 10
    '  }', // 11
    '  method(): void {', // 12
    '    // a comment that mentions function f() {}', // 13
    "    const s = 'function g() {}';", // 14
    '  }', // 15
    '}', // 16
    'declare function bodiless(): void;', // 17
    'list.map(function (x) { return x; });', // 18
  ].join('\n');
  assert.deepEqual(functionLengths('sample.ts', text), [
    { name: 'outer', line: 1, lines: 6 },
    { name: 'inner', line: 2, lines: 3 },
    { name: 'constructor', line: 8, lines: 1 },
    { name: 'size', line: 9, lines: 3 },
    { name: 'method', line: 12, lines: 4 },
    { name: '<callback of list.map>', line: 18, lines: 1 },
  ]);
});

test('overLimits reports a file and a function just over their limits, and not those at them', async () => {
  const { measure, overLimits, MAX_FILE_LINES, MAX_FUNCTION_LINES } = await codeSizes();
  const body = (lines: number): string => Array.from({ length: lines - 2 }, (_, index) => `  const v${index} = ${index};`).join('\n');
  const texts = new Map<string, string>([
    [path.join(root, 'at.ts'), `function atLimit() {\n${body(MAX_FUNCTION_LINES)}\n}\n`],
    [path.join(root, 'over.ts'), `function overLimit() {\n${body(MAX_FUNCTION_LINES + 1)}\n}\n${'\n'.repeat(MAX_FILE_LINES)}`],
  ]);
  const over = overLimits(measure([...texts.keys()], root, (file) => texts.get(file) ?? ''));
  assert.deepEqual(over.functions.map((entry) => [entry.file, entry.name, entry.lines]), [['over.ts', 'overLimit', MAX_FUNCTION_LINES + 1]]);
  assert.deepEqual(over.files.map((entry) => entry.file), ['over.ts']);
});

test('no file over 800 lines and no function over 100 lines in server/src, client/src and scripts', async () => {
  const { shippedSources, measure, overLimits, MAX_FILE_LINES, MAX_FUNCTION_LINES } = await codeSizes();
  const files = shippedSources();
  assert.ok(files.length > 100, `only ${files.length} source files found: the scan is broken`);
  assert.ok(files.some((file) => file.endsWith(path.join('scripts', 'code-sizes.mjs'))), 'scripts/ was not scanned');
  const sizes = measure(files);
  assert.ok(sizes.functions.length > 500, `only ${sizes.functions.length} functions found: the scan is broken`);
  const over = overLimits(sizes);
  const lines = [
    ...over.files.map((entry) => `  ${entry.file}: ${entry.lines} lines (limit ${MAX_FILE_LINES})`),
    ...over.functions.map((entry) => `  ${entry.file}:${entry.line}: ${entry.name} is ${entry.lines} lines (limit ${MAX_FUNCTION_LINES})`),
  ];
  assert.deepEqual(lines, [], `split these by concern:\n${lines.join('\n')}`);
});
