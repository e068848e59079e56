/**
 * The whole real ObjectStack repository, checked (issue 23 "Cost"): `toolpin check
 * --structure-only` of every file of a checkout, against its floor, each side a process of its own.
 *
 *   git --git-dir=<bare clone> archive <commit> | tar -x -C /tmp/objectstack   (or `git worktree add`)
 *   npm run build && node out/bench/objectstackRepository.bench.js --repo=/tmp/objectstack
 *
 * Ours: the CLI's `check --structure-only --format json <repo>` (dist/cli.js, as CI runs it) in a
 * process whose peak resident memory (`process.resourceUsage().maxRSS`, reported by the preload
 * bench/support/rssAtExit.ts) and wall time are taken: the file walk (with
 * `.gitignore`), the cheap text test, one parse of each candidate module, the analysis, the report.
 * Floor: the least any reader of the same pins must do, in a process of its own: a plain recursive
 * walk of the same tree (the same skipped folders), reading each TypeScript or JavaScript file, and
 * a bare Babel parse (`@babel/parser`, TypeScript plugin, error recovery) of each candidate module:
 * those whose text passes the same cheap tests (`mayHoldPins` on the bytes, `importsPinFunction`
 * on the text). Goal: ours / floor ≤ 1.5 in wall
 * time, and ours ≤ 150 MB peak.
 *
 * Method: one warm-up of each side, then --samples rounds (default 5) of one sample of each side,
 * the order alternating; the ratio is per round. Results: bench/results/objectstack.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { extname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse } from '@babel/parser';
import { importsPinFunction, mayHoldPins } from '../server/src/core/documents/source/sourceReader';
import { SKIPPED_FOLDERS } from '../server/src/io/fileFinder';
import { findRepoRoot, option, stats } from './support/benchSupport';

const SOURCE_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);

interface Sample {
  readonly wallMs: number;
  readonly maxRssMb: number;
  /** User and system CPU time of the process: on a loaded machine, steadier than wall time. */
  readonly cpuMs: number;
  readonly candidates?: number;
}

/** The floor, run in this process when called as `--floor=DIR`: walk, read, test, bare parse. Prints one JSON sample. */
function floor(repo: string): void {
  const started = performance.now();
  let candidates = 0;
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) walk(path);
      } else if (entry.isFile() && SOURCE_EXTENSIONS.has(extname(entry.name)) && !entry.name.endsWith('.d.ts')) {
        const bytes = readFileSync(path);
        if (!mayHoldPins(bytes)) continue;
        const text = bytes.toString('utf8');
        if (!importsPinFunction(text)) continue;
        candidates++;
        try {
          parse(text, { sourceType: 'unambiguous', errorRecovery: true, attachComment: false, plugins: ['typescript', ['decorators', {}], 'decoratorAutoAccessors'] });
        } catch {
          // A module the parser cannot read costs what it cost.
        }
      }
    }
  };
  walk(repo);
  const usage = process.resourceUsage();
  process.stdout.write(`${JSON.stringify({ wallMs: performance.now() - started, maxRssMb: usage.maxRSS / 1024, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, candidates })}\n`);
}

function sample(side: 'floor' | 'ours', repo: string, root: string): Sample {
  const started = performance.now();
  // Ours is the CLI as CI runs it, with a preload that reports its peak memory at exit.
  const args = side === 'floor' ? [__filename, `--floor=${repo}`] : ['--require', join(root, 'out', 'bench', 'support', 'rssAtExit.js'), join(root, 'dist', 'cli.js'), 'check', '--structure-only', '--format', 'json', repo];
  const result = spawnSync(process.execPath, args, { cwd: repo, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const wall = performance.now() - started;
  const output = side === 'floor' ? result.stdout : result.stderr;
  const last = output.trim().split('\n').pop() ?? '{}';
  const parsed = JSON.parse(last) as Sample & { status?: number };
  if (side === 'ours' && parsed.status !== 0) throw new Error(`toolpin check exited ${parsed.status}: ${result.stderr.slice(0, 2000)}`);
  // Whole-process wall time: both sides pay Node's start-up, as a CI step does.
  return { ...parsed, wallMs: wall };
}

function main(): void {
  const floorArg = process.argv.find((arg) => arg.startsWith('--floor='));
  if (floorArg) return floor(floorArg.slice('--floor='.length));
  const root = findRepoRoot(__dirname);
  const repo = process.argv.find((arg) => arg.startsWith('--repo='))?.slice('--repo='.length);
  if (!repo) {
    process.stderr.write('usage: node out/bench/objectstackRepository.bench.js --repo=DIR (a checkout of objectstack-ai/objectstack)\n');
    process.exit(2);
  }
  const samples = Math.max(1, Math.floor(option('samples', 5)));
  sample('floor', repo, root);
  sample('ours', repo, root);
  const rounds: Array<{ floor: Sample; ours: Sample }> = [];
  for (let round = 0; round < samples; round++) {
    const first = round % 2 === 0 ? 'floor' : 'ours';
    const a = sample(first, repo, root);
    const b = sample(first === 'floor' ? 'ours' : 'floor', repo, root);
    rounds.push(first === 'floor' ? { floor: a, ours: b } : { floor: b, ours: a });
  }
  const result = {
    repo,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg(), node: process.version },
    candidates: rounds[0]!.floor.candidates,
    floorWallMs: stats(rounds.map((round) => round.floor.wallMs)),
    oursWallMs: stats(rounds.map((round) => round.ours.wallMs)),
    ratio: stats(rounds.map((round) => round.ours.wallMs / round.floor.wallMs)),
    floorCpuMs: stats(rounds.map((round) => round.floor.cpuMs)),
    oursCpuMs: stats(rounds.map((round) => round.ours.cpuMs)),
    cpuRatio: stats(rounds.map((round) => round.ours.cpuMs / round.floor.cpuMs)),
    floorMaxRssMb: Math.max(...rounds.map((round) => round.floor.maxRssMb)),
    oursMaxRssMb: Math.max(...rounds.map((round) => round.ours.maxRssMb)),
  };
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'objectstack.json'), `${JSON.stringify(result, null, 2)}\n`);
  const verdict = (ok: boolean): string => (ok ? 'met' : 'MISSED');
  process.stdout.write(
    `candidates ${result.candidates}; floor ${result.floorWallMs.median.toFixed(0)} ms, ours ${result.oursWallMs.median.toFixed(0)} ms; ratio median ${result.ratio.median.toFixed(2)} (min ${result.ratio.min.toFixed(2)}, max ${result.ratio.max.toFixed(2)}) ${verdict(result.ratio.median <= 1.5)}; CPU floor ${result.floorCpuMs.median.toFixed(0)} ms, ours ${result.oursCpuMs.median.toFixed(0)} ms, ratio median ${result.cpuRatio.median.toFixed(2)}; load ${loadavg()[0]!.toFixed(1)}; peak ours ${result.oursMaxRssMb.toFixed(0)} MB ${verdict(result.oursMaxRssMb <= 150)}, floor ${result.floorMaxRssMb.toFixed(0)} MB\n`,
  );
}

main();
