/**
 * History store benchmark (issue 27): the team store's two goals against their named peers, in
 * the same run, on a throwaway PostgreSQL cluster (test/support/postgres.ts):
 *
 *   ingest   `toolpin history ingest --store URL LOG` of N dispatches into a fresh database,
 *            against the peer `psql -c "\copy raw FROM LOG"` of the same raw lines into a
 *            one-column table (PostgreSQL's own bulk load, nothing parsed). Goal: ratio ≤ 2.
 *   answer   `toolpin history --store URL --offline --format json` (the default view), against
 *            `toolpin history LOG --offline --format json` (the file reader) over the same log,
 *            same empty workspace. Goal: ratio ≤ 0.25. The two JSON reports must be equal
 *            (exit 1 otherwise).
 *
 *   npm run build && node out/bench/historyStore.bench.js [--events=1000000] [--rounds=3]
 *
 * Each measured side is a child process (wall time), interleaved within a round; the ratio is
 * taken per round and the median reported, with the machine's load average beside it (the machine
 * may be shared). The log: N MCP_DISPATCHED events, about 250 bytes each, over 5 servers × 50
 * tools × 3 hashes (750 keys), in time order. Results: bench/results/historyStore.json.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBin, startTestCluster } from '../test/support/postgres';
import { findRepoRoot, option } from './support/benchSupport';

const events = option('events', 1_000_000);
const rounds = option('rounds', 3);
const root = findRepoRoot(__dirname);
const cli = join(root, 'dist', 'cli.js');

function writeLog(file: string, count: number): void {
  const fd = openSync(file, 'w');
  let lines: string[] = [];
  let at = Date.UTC(2026, 0, 1);
  for (let index = 0; index < count; index++) {
    at += 37;
    const server = index % 5;
    const tool = (index * 7) % 50;
    const hash = (index * 13) % 3;
    lines.push(
      JSON.stringify({
        type: 'MCP_DISPATCHED',
        seq: index + 1,
        at: new Date(at).toISOString(),
        executionId: `01J${String(index).padStart(23, '0')}`,
        blueprint: `blueprint-${tool % 9}`,
        stepId: `step-${tool}`,
        data: { toolName: `tool_${tool}`, server: `server-${server}`, schemaHash: `fnv1a64:${(0x1000000000000000n + BigInt(server * 1000 + tool * 10 + hash)).toString(16)}` },
      }),
    );
    if (lines.length === 10_000) {
      writeSync(fd, `${lines.join('\n')}\n`);
      lines = [];
    }
  }
  if (lines.length > 0) writeSync(fd, `${lines.join('\n')}\n`);
  closeSync(fd);
}

function timed(command: string, args: string[], cwd: string): { ms: number; stdout: string } {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0 && !(args.includes('--offline') && result.status === 2)) throw new Error(`${command} ${args.join(' ')}: exit ${result.status}: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'toolpin-store-bench-'));
  const workspace = join(folder, 'workspace');
  mkdirSync(workspace);
  const log = join(workspace, 'bench.events.jsonl');
  writeLog(log, events);
  const cluster = await startTestCluster();
  const psql = join(postgresBin()!, 'psql');
  const ingestRatios: number[] = [];
  const answerRatios: number[] = [];
  const rows: unknown[] = [];
  let failed = false;
  try {
    for (let round = 1; round <= rounds; round++) {
      const raw = `raw_${round}`;
      const store = `store_${round}`;
      cluster.createDatabase(raw);
      cluster.createDatabase(store);
      execFileSync(psql, ['-q', cluster.url(raw), '-c', 'CREATE TABLE raw (line text)']);
      const load = loadavg()[0]!;
      const copyFirst = round % 2 === 1;
      const runCopy = (): number => timed(psql, ['-q', cluster.url(raw), '-c', `\\copy raw FROM '${log}'`], workspace).ms;
      const runIngest = (): number => timed(process.execPath, [cli, 'history', 'ingest', '--store', cluster.url(store), 'bench.events.jsonl'], workspace).ms;
      const copyMs = copyFirst ? runCopy() : 0;
      const ingestMs = runIngest();
      const copyMsLast = copyFirst ? copyMs : runCopy();
      const fileRun = timed(process.execPath, [cli, 'history', 'bench.events.jsonl', '--offline', '--format', 'json'], workspace);
      const storeRun = timed(process.execPath, [cli, 'history', '--store', cluster.url(store), '--offline', '--format', 'json'], workspace);
      if (storeRun.stdout !== fileRun.stdout) {
        failed = true;
        console.error(`round ${round}: the store's report differs from the file reader's`);
      }
      ingestRatios.push(ingestMs / copyMsLast);
      answerRatios.push(storeRun.ms / fileRun.ms);
      const row = { round, load1: load, copyMs: copyMsLast, ingestMs, ingestRatio: ingestMs / copyMsLast, fileMs: fileRun.ms, storeMs: storeRun.ms, answerRatio: storeRun.ms / fileRun.ms };
      rows.push(row);
      console.log(
        `round ${round} (load ${load.toFixed(2)}): ingest ${ingestMs.toFixed(0)} ms vs \\copy ${copyMsLast.toFixed(0)} ms = ${row.ingestRatio.toFixed(2)}×; ` +
          `answer ${storeRun.ms.toFixed(0)} ms vs file reader ${fileRun.ms.toFixed(0)} ms = ${row.answerRatio.toFixed(2)}×`,
      );
    }
  } finally {
    cluster.stop();
    rmSync(folder, { recursive: true, force: true });
  }
  const summary = { events, rounds, ingestRatio: median(ingestRatios), answerRatio: median(answerRatios), goals: { ingestRatio: 2, answerRatio: 0.25 }, rows };
  console.log(`median of ${rounds} at ${events} events: ingest ${summary.ingestRatio.toFixed(2)}× \\copy (goal ≤ 2), answer ${summary.answerRatio.toFixed(2)}× the file reader (goal ≤ 0.25)`);
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(join(root, 'bench', 'results', 'historyStore.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (failed) process.exitCode = 1;
}

void main();
