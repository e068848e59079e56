/**
 * Oversized modules (issue 25 "Unbounded cost"): a 50 MiB TypeScript module and a 5 MiB minified
 * bundle, both naming `defineConnector` of `@objectstack/spec` (so the text tests admit them),
 * checked by the CLI, each in a process of its own, with wall time and peak memory taken.
 *
 *   npm run build && node out/bench/largeModules.bench.js [--cli=PATH/TO/dist/cli.js] [--only=bundle5MiB] [--rounds=N]
 *
 * Measured, for each module: `toolpin check --structure-only` with the default size limit (the
 * module is skipped, with a positioned TP113), with `maxFileBytes` raised above its size (read
 * like any module), and the floor: a bare Babel parse of the same text in a process of its own.
 * `--cli` points at another build (an older one, for "before"). `--only` measures one module;
 * `--rounds` repeats the floor and the raised-limit check alternately (the machine is shared: one
 * round's ratio moves with the load) and reports each round's ratio and their median.
 * Results: bench/results/largeModules.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from '@babel/parser';
import { findRepoRoot } from './support/benchSupport';

interface Run {
  readonly wallMs: number;
  readonly maxRssMb: number;
  readonly status: number | null;
}

const root = findRepoRoot(__dirname);
const PIN = `sha256:${'a'.repeat(64)}`;

/** The bare parse, when called as `--parse=FILE`. */
function bareParse(file: string): void {
  const text = readFileSync(file, 'utf8');
  try {
    parse(text, { sourceType: 'unambiguous', errorRecovery: true, attachComment: false, plugins: ['typescript'] });
  } catch {
    // Measured whatever the outcome.
  }
}

/** A readable module of about `bytes`: many small exported objects, one connector with a pin at the end. */
function largeModule(bytes: number): string {
  const head = "import { defineConnector } from '@objectstack/spec';\n";
  const block = (index: number): string => `export const record${index} = { id: ${index}, name: 'record ${index}', tags: ['a', 'b', 'c'], nested: { on: true, weight: ${index % 97} } };\n`;
  const parts: string[] = [head];
  let size = head.length;
  for (let index = 0; size < bytes; index++) {
    const part = block(index);
    parts.push(part);
    size += part.length;
  }
  parts.push(`export const c = defineConnector({ name: 'big', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { t: '${PIN}' } } });\n`);
  return parts.join('');
}

/** A minified bundle of about `bytes`: Toolpin's own minified commands bundle repeated in function scopes, the spec's function aliased to `e`. */
function minifiedBundle(bytes: number): string {
  const code = readFileSync(join(root, 'dist', 'commands.js'), 'utf8').replace(/\/\/# sourceMappingURL=.*$/m, '');
  const parts = ['import{defineConnector as e}from"@objectstack/spec";'];
  let size = parts[0]!.length;
  for (let index = 0; size < bytes; index++) {
    const part = `function m${index}(e,t,n){${code}}`;
    parts.push(part);
    size += part.length;
  }
  return parts.join('');
}

function measure(args: readonly string[], cwd: string): Run {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--require', join(root, 'out', 'bench', 'support', 'rssAtExit.js'), ...args], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 600_000 });
  const wallMs = performance.now() - started;
  const last = result.stderr.trim().split('\n').pop() ?? '{}';
  const reported = last.startsWith('{') ? (JSON.parse(last) as { maxRssMb: number; status: number }) : { maxRssMb: Number.NaN, status: result.status ?? -1 };
  return { wallMs, maxRssMb: reported.maxRssMb, status: reported.status };
}

function main(): void {
  const parseArg = process.argv.find((arg) => arg.startsWith('--parse='));
  if (parseArg) return bareParse(parseArg.slice('--parse='.length));
  const cli = process.argv.find((arg) => arg.startsWith('--cli='))?.slice('--cli='.length) ?? join(root, 'dist', 'cli.js');
  const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
  const rounds = Math.max(1, Number(process.argv.find((arg) => arg.startsWith('--rounds='))?.slice('--rounds='.length) ?? 1));
  const folder = mkdtempSync(join(tmpdir(), 'toolpin-large-'));
  const results: Record<string, Record<string, Run | number>> = {};
  try {
    const makers = { module50MiB: () => largeModule(50 * 1024 * 1024), bundle5MiB: () => minifiedBundle(5 * 1024 * 1024) };
    for (const [name, make] of Object.entries(makers)) {
      if (only !== undefined && only !== name) continue;
      const text = make();
      const file = join(folder, `${name}.ts`);
      writeFileSync(file, text);
      const skipped = measure([cli, 'check', '--structure-only', file], folder);
      mkdirSync(join(folder, '.toolpin'), { recursive: true });
      writeFileSync(join(folder, '.toolpin', 'sources.jsonc'), JSON.stringify({ maxFileBytes: text.length + 1 }));
      const ratios: number[] = [];
      let floor!: Run;
      let read!: Run;
      for (let round = 0; round < rounds; round++) {
        floor = measure([__filename, `--parse=${file}`], folder);
        read = measure([cli, 'check', '--structure-only', file], folder);
        ratios.push(read.wallMs / floor.wallMs);
        if (rounds > 1) process.stdout.write(`${name} round ${round + 1}: bare parse ${floor.wallMs.toFixed(0)} ms, check ${read.wallMs.toFixed(0)} ms, ratio ${ratios.at(-1)!.toFixed(2)}\n`);
      }
      rmSync(join(folder, '.toolpin'), { recursive: true });
      const sorted = [...ratios].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
      results[name] = { bytes: text.length, floor, defaultLimit: skipped, limitRaised: read, ratioRaised: median };
      process.stdout.write(
        `${name} (${(text.length / 1048576).toFixed(1)} MiB): bare parse ${floor.wallMs.toFixed(0)} ms ${floor.maxRssMb.toFixed(0)} MB; check (default limit) ${skipped.wallMs.toFixed(0)} ms ${skipped.maxRssMb.toFixed(0)} MB exit ${skipped.status}; check (limit raised) ${read.wallMs.toFixed(0)} ms ${read.maxRssMb.toFixed(0)} MB exit ${read.status}, ratio ${median.toFixed(2)}${rounds > 1 ? ' (median)' : ''}\n`,
      );
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'largeModules.json'), `${JSON.stringify({ cli, results }, null, 2)}\n`);
}

main();
