/**
 * Start-up benchmark: how long the whole `toolpin hash <file>` process takes, compared with a
 * Node process that does nothing (`node -e 0`), the floor every command pays.
 *
 *   npm run build && node out/bench/startup.bench.js        (or npm run bench:startup)
 *
 * Method: each sample is one process, spawned and waited for (wall time from spawn to exit, so the
 * time to read, compile and run the bundle is in it). The commands are interleaved and their order
 * rotates every round, so drift (thermal, other load on the machine) hits all of them. One
 * ratio per round (hash / node -e 0, from the samples of that round); the median, min and max of
 * those ratios are reported with each command's median and spread. `toolpin --version` is measured
 * too: it loads the same bundle and runs nothing, so it separates loading the bundle from hashing.
 * Each `hash` run's output is checked (the tools of the file, exit status 0), so a broken bundle
 * cannot look fast.
 *
 * Options: --runs=N (default 21, at least 15), --cli=PATH (another build's cli.js, to compare),
 *          --enforce (exit 2 when the target is missed).
 * Target (issue 13): hash / node -e 0 ≤ 1.5. Results: bench/results/startup.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { findRepoRoot, option, stats, type Stats } from './support/benchSupport';

const RUNS = Math.max(15, Math.floor(option('runs', 21)));
const ENFORCE = process.argv.includes('--enforce');
const TARGET_RATIO = 1.5;

const repoRoot = findRepoRoot(__dirname);
// --cli=PATH measures another build of the CLI (e.g. an older commit's, to compare), same method.
const cliOption = process.argv.find((arg) => arg.startsWith('--cli='))?.slice('--cli='.length);
const cli = cliOption !== undefined ? resolve(cliOption) : join(repoRoot, 'dist', 'cli.js');
const input = join(repoRoot, 'test', 'fixtures', 'tool-lists', 'everything.json');
if (!existsSync(cli)) {
  console.error(`${cli} is missing: run "npm run build" first`);
  process.exit(1);
}
const expectedTools = (JSON.parse(readFileSync(input, 'utf8')) as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);

interface Command {
  readonly name: string;
  readonly args: readonly string[];
  /** Throws when the run did not do what the command should. */
  readonly check: (stdout: string, status: number | null) => void;
}

const COMMANDS: readonly Command[] = [
  {
    name: 'node -e 0',
    args: ['-e', '0'],
    check: (_stdout, status) => {
      if (status !== 0) throw new Error(`node -e 0 exited with ${status}`);
    },
  },
  {
    name: 'toolpin --version',
    args: [cli, '--version'],
    check: (stdout, status) => {
      if (status !== 0 || !/^\d+\.\d+\.\d+/.test(stdout)) throw new Error(`toolpin --version printed ${JSON.stringify(stdout)}, exit ${status}`);
    },
  },
  {
    name: 'toolpin hash',
    args: [cli, 'hash', input, '--format', 'json'],
    check: (stdout, status) => {
      if (status !== 0) throw new Error(`toolpin hash exited with ${status}`);
      const names = (JSON.parse(stdout) as Array<{ name: string }>).map((row) => row.name);
      if (JSON.stringify(names) !== JSON.stringify(expectedTools)) throw new Error(`toolpin hash printed tools ${names.join(', ')}`);
    },
  },
];

/** One process of a command: its wall time in milliseconds, after checking its output. */
function runOnce(command: Command): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, command.args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.error) throw result.error;
  command.check(result.stdout, result.status);
  return elapsed;
}

// Warm-up: the first runs read the files from disk into the page cache and fill V8's code cache
// folders, if any; they are not counted.
for (let i = 0; i < 3; i++) for (const command of COMMANDS) runOnce(command);

const samples = new Map<string, number[]>(COMMANDS.map((command) => [command.name, []]));
const ratios: number[] = [];
const versionRatios: number[] = [];
for (let round = 0; round < RUNS; round++) {
  const order = COMMANDS.map((_, index) => COMMANDS[(index + round) % COMMANDS.length]!);
  const times = new Map<string, number>();
  for (const command of order) times.set(command.name, runOnce(command));
  for (const [name, time] of times) samples.get(name)!.push(time);
  ratios.push(times.get('toolpin hash')! / times.get('node -e 0')!);
  versionRatios.push(times.get('toolpin --version')! / times.get('node -e 0')!);
}

const summary: Record<string, Stats> = Object.fromEntries([...samples].map(([name, values]) => [name, stats(values)]));
const ratio = stats(ratios);
const versionRatio = stats(versionRatios);
const met = ratio.median <= TARGET_RATIO;

const cpuList = cpus();
const machine = { node: process.version, platform: `${process.platform} ${process.arch}`, cores: availableParallelism(), cpu: cpuList[0]?.model ?? 'unknown' };
const bundleBytes = readFileSync(cli).length;

console.log('Toolpin start-up benchmark');
console.log(`machine: ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}, ${machine.platform}`);
console.log(`${cliOption ?? 'dist/cli.js'}: ${(bundleBytes / 1024).toFixed(0)} KiB; ${RUNS} rounds, interleaved`);
console.log('');
console.log(`${'command'.padEnd(20)} ${'median ms'.padStart(10)} ${'min'.padStart(8)} ${'max'.padStart(8)}`);
for (const [name, value] of Object.entries(summary)) {
  console.log(`${name.padEnd(20)} ${value.median.toFixed(1).padStart(10)} ${value.min.toFixed(1).padStart(8)} ${value.max.toFixed(1).padStart(8)}`);
}
console.log('');
console.log(`--version / node -e 0: median ${versionRatio.median.toFixed(2)}× (min ${versionRatio.min.toFixed(2)}, max ${versionRatio.max.toFixed(2)})`);
console.log(`hash / node -e 0:      median ${ratio.median.toFixed(2)}× (min ${ratio.min.toFixed(2)}, max ${ratio.max.toFixed(2)})  target ≤ ${TARGET_RATIO}  ${met ? 'met' : 'MISSED'}`);

const resultsDir = join(repoRoot, 'bench', 'results');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(
  join(resultsDir, 'startup.json'),
  `${JSON.stringify({ machine, cli: cliOption ?? 'dist/cli.js', runs: RUNS, bundleBytes, target: TARGET_RATIO, met, ratio, versionRatio, summary, samples: Object.fromEntries(samples), ratios }, null, 2)}\n`,
);
console.log('wrote bench/results/startup.json');
if (ENFORCE && !met) process.exitCode = 2;
