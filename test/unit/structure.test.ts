/**
 * The structure issue 9 asks the shipped code to keep (server/src and client/src, without .d.ts):
 *
 * - no import cycle between shipped files (type-only imports count: a cycle of types is still a
 *   cycle a reader has to untangle);
 * - at most 45 type casts, half of the 91 the issue counted: a cast is an `as X` expression other
 *   than `as const`, or a `<X>y` assertion;
 * - at most 8 files directly in server/src/core/ (the core is grouped by concern into folders);
 * - no `setInterval` in server/src (work follows events; timers that repeat hide polling).
 *
 * Every check reads the source with the TypeScript compiler API, so comments and strings never
 * count, and on failure names the files (and lines) at fault.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const root = path.resolve(__dirname, '..', '..', '..');

/** The limit of issue 9: half of the 91 casts it counted. */
export const MAX_CASTS = 45;
/** The limit of issue 9 on files directly in server/src/core/. */
export const MAX_CORE_TOP_FILES = 8;

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFilesUnder(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

function shippedFiles(): string[] {
  return [...tsFilesUnder(path.join(root, 'server', 'src')), ...tsFilesUnder(path.join(root, 'client', 'src'))].sort();
}

function parse(file: string, text: string = readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

function relative(file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}

// ---------------------------------------------------------------------------------------------
// Import graph

/**
 * The file a relative specifier of `from` names, among `known` (absolute paths), or undefined when
 * it is not a shipped TypeScript file (a package, a JSON file, a path outside the shipped trees).
 * Node16 resolution lets a specifier end in `.js` for a `.ts` file, or name a folder's index.
 */
export function resolveRelative(from: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(js|ts)$/, '');
  for (const candidate of [base, `${stem}.ts`, path.join(base, 'index.ts')]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Every module specifier a source names: imports and re-exports (type-only ones too), `import('x')`,
 * `typeof import('x')` and `require('x')`, as the compiler's own pre-processor finds them.
 */
export function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((reference) => reference.fileName);
}

/** The relative-import graph of `files` (absolute path → the shipped files it imports). */
export function importGraph(files: readonly string[], read: (file: string) => string = (file) => readFileSync(file, 'utf8')): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const specifier of specifiersOf(read(file))) {
      const target = resolveRelative(file, specifier, known);
      if (target !== undefined) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The import cycles of `graph`, each as the list of its files in import order (the first file
 * imports the second, …, the last imports the first). One cycle is reported per strongly
 * connected component (Tarjan's algorithm), so a tangle of many files is one finding, not hundreds.
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  // Iterative, so a deep chain of imports cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const target = edges[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfImport = component.length === 1 && (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfImport) components.push(component);
      }
    }
  }
  return components.map((component) => cycleThrough(graph, new Set(component)));
}

/** One concrete cycle inside a strongly connected component: a path from its first file back to it. */
function cycleThrough(graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>): string[] {
  const start = [...component].sort()[0]!;
  // Breadth-first from `start` inside the component, until an edge leads back to `start`.
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const target of graph.get(node) ?? []) {
      if (!component.has(target)) continue;
      if (target === start) {
        const cycle = [node];
        for (let at = node; at !== start; ) {
          at = previous.get(at)!;
          cycle.unshift(at);
        }
        return cycle;
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

// ---------------------------------------------------------------------------------------------
// Casts, timers

export interface Site {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

function siteOf(source: ts.SourceFile, node: ts.Node): Site {
  return {
    file: relative(source.fileName),
    line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
    text: node.getText(source).replace(/\s+/g, ' ').slice(0, 100),
  };
}

function isAsConst(node: ts.AsExpression): boolean {
  return ts.isTypeReferenceNode(node.type) && ts.isIdentifier(node.type.typeName) && node.type.typeName.text === 'const';
}

/** The casts of a source: `x as T` (but not `x as const`) and `<T>x`. */
export function castsIn(source: ts.SourceFile): Site[] {
  const sites: Site[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isAsExpression(node) && !isAsConst(node)) || ts.isTypeAssertionExpression(node)) sites.push(siteOf(source, node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

/** Every use of the name `setInterval` in code (a call, `globalThis.setInterval`, an import of it). */
export function setIntervalUses(source: ts.SourceFile): Site[] {
  const sites: Site[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === 'setInterval') sites.push(siteOf(source, node.parent ?? node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sites;
}

function describe(sites: readonly Site[]): string {
  return sites.map((site) => `  ${site.file}:${site.line}: ${site.text}`).join('\n');
}

// ---------------------------------------------------------------------------------------------
// The checks' own tests: each finder finds what it must and nothing else.

test('importCycles finds a cycle as its list of files, and none in a tree', () => {
  const graph = new Map<string, string[]>([
    ['a', ['b']],
    ['b', ['c', 'd']],
    ['c', ['a']],
    ['d', []],
    ['e', ['e']],
  ]);
  assert.deepEqual(importCycles(graph).sort(), [['a', 'b', 'c'], ['e']]);
  assert.deepEqual(importCycles(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), []);
});

test('specifiersOf and resolveRelative see every form of relative import, type-only ones included', () => {
  const text = [
    "import type { A } from './a';",
    "export { B } from '../b.js';",
    "const c = require('./c');",
    "type D = typeof import('./d');",
    "import 'node:fs';",
    "// import { E } from './e';",
  ].join('\n');
  assert.deepEqual(specifiersOf(text), ['./a', '../b.js', './c', './d', 'node:fs']);
  const known = new Set([path.resolve('/x/y/a.ts'), path.resolve('/x/b.ts'), path.resolve('/x/y/c/index.ts')]);
  assert.equal(resolveRelative(path.resolve('/x/y/f.ts'), './a', known), path.resolve('/x/y/a.ts'));
  assert.equal(resolveRelative(path.resolve('/x/y/f.ts'), '../b.js', known), path.resolve('/x/b.ts'));
  assert.equal(resolveRelative(path.resolve('/x/y/f.ts'), './c', known), path.resolve('/x/y/c/index.ts'));
  assert.equal(resolveRelative(path.resolve('/x/y/f.ts'), './d', known), undefined);
  assert.equal(resolveRelative(path.resolve('/x/y/f.ts'), 'node:fs', known), undefined);
});

test('castsIn counts `as T` and `<T>x` but not `as const`, comments or strings', () => {
  const source = parse(
    'sample.ts',
    [
      'const a = value as string;',
      'const b = <number>other;',
      'const c = [1, 2] as const;',
      'const d = value as unknown as Map<string, number>;',
      "// const e = value as string;",
      "const f = 'value as string';",
      'const g = { x: 1 } satisfies object;',
    ].join('\n'),
  );
  assert.deepEqual(
    castsIn(source).map((site) => site.line),
    [1, 2, 4, 4],
  );
});

test('setIntervalUses finds a call and a qualified use, not a comment or a string', () => {
  const source = parse(
    'sample.ts',
    ['setInterval(tick, 10);', 'globalThis.setInterval(tick, 10);', '// setInterval(tick)', "const s = 'setInterval';", 'setTimeout(tick, 10);'].join('\n'),
  );
  assert.deepEqual(
    setIntervalUses(source).map((site) => site.line),
    [1, 2],
  );
});

// ---------------------------------------------------------------------------------------------
// The shipped tree.

test('no import cycle between shipped files', () => {
  const files = shippedFiles();
  const graph = importGraph(files);
  // The scan saw the imports the tree is built from (it did not silently resolve nothing).
  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0);
  assert.ok(edges > files.length, `only ${edges} relative imports resolved among ${files.length} files: the scan is broken`);
  const cycles = importCycles(graph).map((cycle) => cycle.map(relative));
  assert.deepEqual(cycles, [], `import cycles (each file imports the next, the last the first):\n${cycles.map((cycle) => '  ' + cycle.join(' → ')).join('\n')}`);
});

test(`at most ${MAX_CASTS} type casts in shipped code`, () => {
  const files = shippedFiles();
  assert.ok(files.length > 50, `only ${files.length} shipped files found: the scan is broken`);
  const casts = files.flatMap((file) => castsIn(parse(file)));
  assert.ok(casts.length <= MAX_CASTS, `${casts.length} casts in shipped code, at most ${MAX_CASTS} allowed:\n${describe(casts)}`);
});

test(`at most ${MAX_CORE_TOP_FILES} files directly in server/src/core/`, () => {
  const core = path.join(root, 'server', 'src', 'core');
  const files = readdirSync(core).filter((name) => statSync(path.join(core, name)).isFile());
  assert.ok(files.length <= MAX_CORE_TOP_FILES, `${files.length} files at the top of server/src/core/, at most ${MAX_CORE_TOP_FILES}: ${files.sort().join(', ')}`);
  // The folders the core is grouped into are there (the check did not read an empty or wrong folder).
  assert.ok(statSync(path.join(core, 'verify')).isDirectory());
});

test('no setInterval in server/src', () => {
  const files = tsFilesUnder(path.join(root, 'server', 'src'));
  assert.ok(files.length > 50, `only ${files.length} server files found: the scan is broken`);
  const uses = files.flatMap((file) => setIntervalUses(parse(file)));
  assert.deepEqual(uses, [], `setInterval in the server (repeat on events or a rescheduled setTimeout instead):\n${describe(uses)}`);
});
