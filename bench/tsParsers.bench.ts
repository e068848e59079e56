/**
 * Parser benchmark (issue: pins in TypeScript and JavaScript sources): which parser reads the
 * `defineConnector` / `mcpInvoke$` calls of a module. For each candidate: the time to parse a
 * 5,000-line TypeScript module with 500 `mcpInvoke$` calls, whether a half-typed copy of it (the
 * last call unfinished) still parses, and the size of the parser bundled and minified with esbuild
 * (what it would add to dist/server.js and dist/cli.js), raw and gzipped (the .vsix is a zip).
 *
 *   npm run build && node out/bench/tsParsers.bench.js [--samples=N] [--modules=DIR]
 *
 * Candidates: @babel/parser (plugins typescript; errorRecovery), TypeScript's createSourceFile,
 * acorn + @sveltejs/acorn-typescript, acorn-loose (JavaScript only: it cannot read type syntax, so
 * it gets the same module with the types stripped by esbuild). Only @babel/parser (a dependency)
 * and typescript (a devDependency) are installed with Toolpin; the others are looked up in
 * node_modules and then in --modules=DIR (e.g. a scratch folder where they were installed with
 * `npm install acorn @sveltejs/acorn-typescript acorn-loose`), and are reported as "not installed"
 * when absent. Toolpin's own reading (parse + find calls + models + checks, analyzeSource) is
 * measured on the same module.
 *
 * Method: 3 warm-up parses, then N (default 15) timed parses per candidate; the median and min are
 * reported. Results: bench/results/tsParsers.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { build, transformSync } from 'esbuild';
import { analyzeSource } from '../server/src/core/documents/source/analyzeSource';
import { ALIASED_INVOKE_IMPORT, generatedModule } from './support/generatedModule';

const root = join(__dirname, '..', '..');
const args = new Map(process.argv.slice(2).map((arg) => arg.replace(/^--/, '').split('=') as [string, string]));
const samples = Math.max(3, Number(args.get('samples') ?? 15));
const extraModules = args.get('modules');

/** A module as users write them: an aliased import, typed helpers, 500 calls of 10 lines each. */
function corpus(calls: number): string {
  return generatedModule(calls, { importLine: ALIASED_INVOKE_IMPORT, tool: () => 'read_record', pin: (index) => `fnv1a64:${index.toString(16).padStart(16, '0')}` });
}

interface Candidate {
  readonly name: string;
  /** The module bundled for the size measure, and what it exports. */
  readonly entry: string;
  /** Loads the parser, or returns undefined when it is not installed. */
  readonly load: () => Promise<((text: string) => unknown) | undefined>;
  /** Reads JavaScript only: gets the module with its types stripped. */
  readonly javascriptOnly?: boolean;
}

const requireFrom = [createRequire(join(root, 'package.json')), ...(extraModules ? [createRequire(join(extraModules, 'x.js'))] : [])];

function resolveModule(name: string): string | undefined {
  for (const require of requireFrom) {
    try {
      return require.resolve(name);
    } catch {
      // Looked up in the next place.
    }
  }
  return undefined;
}

async function importModule<T>(name: string): Promise<T | undefined> {
  const resolved = resolveModule(name);
  if (!resolved) return undefined;
  return (await import(resolved)) as T;
}

const candidates: Candidate[] = [
  {
    name: '@babel/parser (typescript, errorRecovery)',
    entry: `export { parse } from '@babel/parser';`,
    load: async () => {
      const babel = await importModule<typeof import('@babel/parser')>('@babel/parser');
      return babel && ((text: string) => babel.parse(text, { sourceType: 'module', errorRecovery: true, plugins: ['typescript'] }));
    },
  },
  {
    name: 'typescript createSourceFile',
    entry: `export { createSourceFile } from 'typescript';`,
    load: async () => {
      const ts = await importModule<typeof import('typescript')>('typescript');
      return ts && ((text: string) => ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
    },
  },
  {
    name: 'acorn + @sveltejs/acorn-typescript',
    entry: `export { Parser } from 'acorn'; export { tsPlugin } from '@sveltejs/acorn-typescript';`,
    load: async () => {
      const acorn = await importModule<{ Parser: { extend(plugin: unknown): { parse(text: string, options: object): unknown } } }>('acorn');
      const plugin = await importModule<{ tsPlugin: () => unknown }>('@sveltejs/acorn-typescript');
      if (!acorn || !plugin) return undefined;
      const parser = acorn.Parser.extend(plugin.tsPlugin());
      return (text: string) => parser.parse(text, { sourceType: 'module', ecmaVersion: 'latest', locations: true });
    },
  },
  {
    name: 'acorn-loose (JavaScript only)',
    entry: `export { parse } from 'acorn-loose';`,
    javascriptOnly: true,
    load: async () => {
      const loose = await importModule<{ parse(text: string, options: object): unknown }>('acorn-loose');
      return loose && ((text: string) => loose.parse(text, { sourceType: 'module', ecmaVersion: 'latest' }));
    },
  },
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(run: () => unknown): { median: number; min: number } {
  for (let index = 0; index < 3; index++) run();
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return { median: median(times), min: Math.min(...times) };
}

async function bundleSize(entry: string): Promise<{ raw: number; gzip: number } | undefined> {
  try {
    const result = await build({
      stdin: { contents: entry, resolveDir: root, loader: 'js' },
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      logLevel: 'silent',
      nodePaths: extraModules ? [extraModules] : [],
    });
    const bytes = result.outputFiles[0]!.contents;
    return { raw: bytes.length, gzip: gzipSync(bytes).length };
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const text = corpus(500);
  const javascript = transformSync(text, { loader: 'ts' }).code;
  const halfTyped = text.slice(0, text.lastIndexOf("  expectedSchemaHash: 'fnv1a64:"));
  const lineCount = text.split('\n').length - 1;
  console.log(`corpus: ${lineCount} lines, ${text.length} UTF-16 units, 500 mcpInvoke$ calls; ${samples} samples; ${cpus()[0]?.model ?? 'unknown CPU'}`);
  const rows: Array<Record<string, unknown>> = [];
  for (const candidate of candidates) {
    const parse = await candidate.load();
    const size = await bundleSize(candidate.entry);
    if (!parse) {
      rows.push({ name: candidate.name, installed: false, size });
      console.log(`${candidate.name}: not installed${size ? `; bundle ${(size.raw / 1024).toFixed(0)} KiB` : ''}`);
      continue;
    }
    const input = candidate.javascriptOnly ? javascript : text;
    const timing = time(() => parse(input));
    let recovers: boolean;
    try {
      parse(candidate.javascriptOnly ? transformSync(text, { loader: 'ts' }).code.slice(0, -40) : halfTyped);
      recovers = true;
    } catch {
      recovers = false;
    }
    rows.push({ name: candidate.name, installed: true, parseMs: timing, halfTypedParses: recovers, size });
    console.log(
      `${candidate.name}: parse ${timing.median.toFixed(1)} ms (min ${timing.min.toFixed(1)}); half-typed file ${recovers ? 'parses' : 'throws'}; ` +
        (size ? `bundle ${(size.raw / 1024).toFixed(0)} KiB minified, ${(size.gzip / 1024).toFixed(0)} KiB gzipped` : 'bundle: n/a'),
    );
  }
  const ours = time(() => analyzeSource(text, 'module.ts'));
  const oursHalf = analyzeSource(halfTyped, 'module.ts');
  console.log(`Toolpin analyzeSource (parse + calls + models + checks): ${ours.median.toFixed(1)} ms (min ${ours.min.toFixed(1)}); half-typed file: ${oursHalf.model.blueprint.steps.length} of 500 steps read`);
  const plain = 'export const answer = 42;\n'.repeat(5000);
  const prefilter = time(() => analyzeSource(plain, 'plain.ts'));
  console.log(`a 5,000-line module without pins: ${prefilter.median.toFixed(3)} ms (the pre-filter)`);
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'tsParsers.json'),
    JSON.stringify({ lines: lineCount, calls: 500, samples, candidates: rows, toolpin: { analyzeMs: ours, halfTypedSteps: oursHalf.model.blueprint.steps.length, noPinsMs: prefilter } }, null, 2) + '\n',
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
