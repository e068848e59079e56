/**
 * Dispatch-history benchmark: building the read model over a large `*.events.jsonl` log.
 *
 *   npm run build && npm run bench:history     (runs out/bench/history.bench.js, about 1-2 min)
 *
 * Log (generated into a temp dir, deleted at the end): 1,000,000 events, about 250 MB, one per
 * line. 90% are MCP_DISPATCHED over 5 servers × 50 tools × 3 schema hashes (750 keys, uniform), the
 * rest EXECUTION_STARTED / STEP_STARTED / STEP_COMPLETED, whose payloads make them about as long.
 * Generated with a fixed seed, so every run reads the same bytes.
 *
 * Each measured side runs in its own child process (so peak RSS is its own: `maxRSS` from
 * `process.resourceUsage()`), interleaved, order rotated every round, on the same file (in the
 * page cache after generation: this measures CPU and memory, not the disk):
 *   ours        `new HistoryModel()` + `LogReader.update()` over the whole file: 1 MiB positioned
 *               reads, line split, JSON.parse, validation (schema hash via parsePin, cached), fold
 *               into the K=20 model; then `model.keys()` (merge). Asserts the dispatch count.
 *   floor       64 KiB chunked reads + UTF-8 decode + split on "\n" + `JSON.parse` of every line,
 *               nothing else: the cheapest way to read the file at all that we found (64 KiB
 *               strings stay in V8's young generation; 1 MiB ones do not and are slower).
 *   readline    `node:readline` over `fs.createReadStream` + `JSON.parse`: the plain line reader
 *               most code would use.
 * Ratios are taken within a round: ours / floor and ours / readline, for time and for peak RSS.
 * The `ours` child also measures, after the build: appending 1,000 events (≈ 250 KB) to the log
 * and `update()` again (ms, bytes read: must equal the appended bytes), and streaming all
 * executions of one hash from the file (`streamExecutions`, the "more than K" path).
 *
 * Options: --events=N (default 1,000,000), --rounds=N (default 3), --keep (keep the log).
 * Results: bench/results/history.json. Exit 1 when a check fails (counts, bytes read).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, cpSync, createReadStream, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fnv1a64Hex } from '../server/src/core/pins/fnv1a64';
import { HistoryModel } from '../server/src/core/history/history';
import { LogReader } from '../server/src/history/logReader';
import { findRepoRoot, median, option, stats } from './support/benchSupport';

// ---------------------------------------------------------------------------------------------
// Options


function stringOption(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

const EVENTS = Math.floor(option('events', 1_000_000));
const ROUNDS = Math.floor(option('rounds', 3));
const KEEP = process.argv.includes('--keep');
const APPENDED = 1_000;

// ---------------------------------------------------------------------------------------------
// The generated log

const SERVERS = 5;
const TOOLS = 50;
const HASHES = 3;
const START = Date.UTC(2026, 7, 1, 0, 0, 0);

/** A small deterministic PRNG (LCG, 32 bits). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The schema hashes (server × tool × version) and 50,000 ULID-like execution ids (each execution
 * dispatches ~20 times over the log). Built on first use only, so that the measured children do
 * not carry them: live data in the heap makes V8 let more garbage pile up before a full GC, which
 * would inflate the peak RSS being measured.
 */
let tables: { hashes: string[][][]; executionIds: string[] } | undefined;
function generatorTables(): { hashes: string[][][]; executionIds: string[] } {
  if (tables) return tables;
  const hashes: string[][][] = [];
  for (let server = 0; server < SERVERS; server++) {
    hashes.push([]);
    for (let tool = 0; tool < TOOLS; tool++) {
      hashes[server]!.push(Array.from({ length: HASHES }, (_, version) => `fnv1a64:${fnv1a64Hex(`server_${server}/tool_${tool}/v${version}`)}`));
    }
  }
  const next = random(1);
  const executionIds = Array.from({ length: 50_000 }, () => `exec_01J${Array.from({ length: 23 }, () => ULID[Math.floor(next() * 32)]).join('')}`);
  tables = { hashes, executionIds };
  return tables;
}

interface Generator {
  /** The next line (with its "\n") and whether it is a dispatch. */
  next(): { line: string; dispatch: boolean };
}

function generator(seed: number, firstSeq: number): Generator {
  const { hashes, executionIds } = generatorTables();
  const next = random(seed);
  let seq = firstSeq;
  return {
    next() {
      seq++;
      const at = new Date(START + seq * 1000 + Math.floor(next() * 1000)).toISOString();
      const executionId = executionIds[Math.floor(next() * executionIds.length)]!;
      const blueprint = `triage-issue-${Math.floor(next() * 40)}`;
      const step = `open-issue-${Math.floor(next() * 12)}`;
      if (next() < 0.9) {
        const server = Math.floor(next() * SERVERS);
        const tool = Math.floor(next() * TOOLS);
        const hash = hashes[server]![tool]![Math.floor(next() * HASHES)]!;
        const line = `{"type":"MCP_DISPATCHED","seq":${seq},"at":"${at}","executionId":"${executionId}","blueprint":"${blueprint}","stepId":"${step}","data":{"toolName":"tool_${tool}","server":"server_${server}","schemaHash":"${hash}"}}\n`;
        return { line, dispatch: true };
      }
      const type = ['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_COMPLETED'][Math.floor(next() * 3)]!;
      const line = `{"type":"${type}","seq":${seq},"at":"${at}","executionId":"${executionId}","blueprint":"${blueprint}","stepId":"${step}","data":{"attempt":${1 + Math.floor(next() * 3)},"durationMs":${Math.floor(next() * 5000)},"note":"benchmark payload"}}\n`;
      return { line, dispatch: false };
    },
  };
}

function generate(file: string): { bytes: number; dispatched: number } {
  const fd = openSync(file, 'w');
  const events = generator(42, 0);
  let dispatched = 0;
  let bytes = 0;
  try {
    let batch = '';
    for (let index = 0; index < EVENTS; index++) {
      const { line, dispatch } = events.next();
      if (dispatch) dispatched++;
      batch += line;
      if (batch.length > 4 * 1024 * 1024) {
        bytes += writeSync(fd, batch);
        batch = '';
      }
    }
    bytes += writeSync(fd, batch);
  } finally {
    closeSync(fd);
  }
  return { bytes, dispatched };
}

// ---------------------------------------------------------------------------------------------
// The children

interface ChildResult {
  side: string;
  ms: number;
  maxRssMiB: number;
  lines: number;
  dispatched?: number;
  keys?: number;
  appendMs?: number;
  appendBytes?: number;
  appendBytesRead?: number;
  appendDispatched?: number;
  appendExpected?: number;
  streamMs?: number;
  streamed?: number;
  streamKeyCount?: number;
}

function rssMiB(): number {
  return process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB
}

async function childOurs(file: string): Promise<ChildResult> {
  const model = new HistoryModel();
  const reader = new LogReader(file, 'bench', model);
  const started = process.hrtime.bigint();
  await reader.update();
  const keys = model.keys();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const maxRssMiB = rssMiB();
  const stats = model.logStats('bench');

  // Append 1,000 events and read only the tail.
  const events = generator(7, EVENTS);
  let appended = '';
  let appendDispatched = 0;
  for (let index = 0; index < APPENDED; index++) {
    const { line, dispatch } = events.next();
    appended += line;
    if (dispatch) appendDispatched++;
  }
  await appendFile(file, appended);
  const appendStarted = process.hrtime.bigint();
  const update = await reader.update();
  const appendMs = Number(process.hrtime.bigint() - appendStarted) / 1e6;
  const after = model.logStats('bench');

  // Stream every execution of the busiest key from the file.
  const busiest = model.keys().reduce((best, key) => (key.count > best.count ? key : best));
  const streamStarted = process.hrtime.bigint();
  let streamed = 0;
  for await (const execution of reader.streamExecutions(busiest)) if (execution) streamed++;
  const streamMs = Number(process.hrtime.bigint() - streamStarted) / 1e6;

  return {
    side: 'ours',
    ms,
    maxRssMiB,
    lines: stats.lines,
    dispatched: stats.dispatched,
    keys: keys.length,
    appendMs,
    appendBytes: Buffer.byteLength(appended),
    appendBytesRead: update.bytesRead,
    appendDispatched: after.dispatched - stats.dispatched,
    appendExpected: appendDispatched,
    streamMs,
    streamed,
    streamKeyCount: busiest.count,
  };
}

function childFloor(file: string): ChildResult {
  const started = process.hrtime.bigint();
  const fd = openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let carry = '';
  let lines = 0;
  let sink = 0;
  let position = 0;
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) break;
      position += read;
      // Decoding a whole chunk can split a multi-byte character; the log is ASCII, so the floor
      // may ignore that (ours does not).
      const text = carry + buffer.toString('utf8', 0, read);
      let from = 0;
      for (;;) {
        const end = text.indexOf('\n', from);
        if (end < 0) break;
        const value = JSON.parse(text.slice(from, end)) as { seq: number };
        sink += value.seq & 1;
        lines++;
        from = end + 1;
      }
      carry = text.slice(from);
    }
  } finally {
    closeSync(fd);
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (sink < 0) console.error('impossible');
  return { side: 'floor', ms, maxRssMiB: rssMiB(), lines };
}

async function childReadline(file: string): Promise<ChildResult> {
  const started = process.hrtime.bigint();
  const lineReader = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let lines = 0;
  let sink = 0;
  for await (const line of lineReader) {
    const value = JSON.parse(line) as { seq: number };
    sink += value.seq & 1;
    lines++;
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (sink < 0) console.error('impossible');
  return { side: 'readline', ms, maxRssMiB: rssMiB(), lines };
}

// ---------------------------------------------------------------------------------------------
// The parent


/**
 * Copies the compiled benchmark and the modules it needs (out/server/src/core, out/server/src/history)
 * into the temp dir, and runs the children from there: a rebuild of out/ while the benchmark runs
 * (another terminal, another job on a shared machine) then cannot pull the files from under it.
 */
function privateCopy(folder: string): string {
  const outRoot = join(__dirname, '..');
  const copyRoot = join(folder, 'out');
  for (const part of [join('server', 'src', 'core'), join('server', 'src', 'history')]) cpSync(join(outRoot, part), join(copyRoot, part), { recursive: true });
  mkdirSync(join(copyRoot, 'bench', 'support'), { recursive: true });
  copyFileSync(__filename, join(copyRoot, 'bench', basename(__filename)));
  copyFileSync(join(__dirname, 'support', 'benchSupport.js'), join(copyRoot, 'bench', 'support', 'benchSupport.js'));
  return join(copyRoot, 'bench', basename(__filename));
}

let childScript = __filename;

function runChild(side: string, file: string): ChildResult {
  const result = spawnSync(process.execPath, [childScript, `--child=${side}`, `--file=${file}`], { encoding: 'utf8', maxBuffer: 1024 * 1024 });
  if (result.status !== 0) throw new Error(`the ${side} child failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as ChildResult;
}



const f1 = (value: number): string => value.toFixed(1);
const f2 = (value: number): string => value.toFixed(2);

async function main(): Promise<number> {
  const cpuList = cpus();
  console.log(`machine: ${cpuList.length} cores, ${cpuList[0]?.model ?? 'unknown cpu'}, Node ${process.version}, load ${loadavg().map(f2).join(' ')}`);
  const folder = mkdtempSync(join(tmpdir(), 'toolpin-history-bench-'));
  const file = join(folder, 'bench.events.jsonl');
  let failed = false;
  try {
    childScript = privateCopy(folder);
    const generateStarted = Date.now();
    const generated = generate(file);
    console.log(`log: ${EVENTS.toLocaleString('en-US')} events, ${(generated.bytes / 1e6).toFixed(1)} MB (${Math.round(generated.bytes / EVENTS)} bytes/event), ${generated.dispatched.toLocaleString('en-US')} MCP_DISPATCHED over ${SERVERS * TOOLS * HASHES} keys; generated in ${((Date.now() - generateStarted) / 1000).toFixed(1)} s`);

    const sides = ['ours', 'floor', 'readline'];
    const samples: Record<string, ChildResult[]> = { ours: [], floor: [], readline: [] };
    const ratios = { timeFloor: [] as number[], timeReadline: [] as number[], rssFloor: [] as number[], rssReadline: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = sides.map((_, index) => sides[(index + round) % sides.length]!);
      const results: Record<string, ChildResult> = {};
      for (const side of order) {
        // The ours child appends to the log: cut it back to the generated bytes before each child.
        if (statSync(file).size !== generated.bytes) truncateSync(file, generated.bytes);
        results[side] = runChild(side, file);
        samples[side]!.push(results[side]!);
      }
      const ours = results.ours!;
      ratios.timeFloor.push(ours.ms / results.floor!.ms);
      ratios.timeReadline.push(ours.ms / results.readline!.ms);
      ratios.rssFloor.push(ours.maxRssMiB / results.floor!.maxRssMiB);
      ratios.rssReadline.push(ours.maxRssMiB / results.readline!.maxRssMiB);
      console.log(
        `round ${round + 1}: ours ${f1(ours.ms)} ms / ${f1(ours.maxRssMiB)} MiB, floor ${f1(results.floor!.ms)} ms / ${f1(results.floor!.maxRssMiB)} MiB, readline ${f1(results.readline!.ms)} ms / ${f1(results.readline!.maxRssMiB)} MiB; append 1,000: ${f2(ours.appendMs!)} ms, ${ours.appendBytesRead} of ${ours.appendBytes} bytes read; stream ${ours.streamed} executions of one hash: ${f1(ours.streamMs!)} ms`,
      );

      // Checks.
      const checks: Array<[boolean, string]> = [
        [ours.dispatched === generated.dispatched, `ours folded ${ours.dispatched} dispatches, expected ${generated.dispatched}`],
        [ours.lines === EVENTS && results.floor!.lines === EVENTS && results.readline!.lines === EVENTS, 'every side reads every line'],
        [ours.appendBytesRead === ours.appendBytes, `the append read ${ours.appendBytesRead} bytes, expected exactly the ${ours.appendBytes} appended`],
        [ours.appendDispatched === ours.appendExpected, `the append folded ${ours.appendDispatched} dispatches, expected ${ours.appendExpected}`],
        [ours.streamed === ours.streamKeyCount, `streamed ${ours.streamed} executions, the model counts ${ours.streamKeyCount}`],
      ];
      for (const [ok, message] of checks) {
        if (!ok) {
          console.error(`CHECK FAILED: ${message}`);
          failed = true;
        }
      }
    }

    const table = [
      ['measure', 'median', 'min', 'max'],
      ...(
        [
          ['ours: build model (ms)', samples.ours!.map((s) => s.ms)],
          ['floor: 64 KiB chunks + JSON.parse (ms)', samples.floor!.map((s) => s.ms)],
          ['readline + JSON.parse (ms)', samples.readline!.map((s) => s.ms)],
          ['ours / floor (time)', ratios.timeFloor],
          ['ours / readline (time)', ratios.timeReadline],
          ['ours: peak RSS (MiB)', samples.ours!.map((s) => s.maxRssMiB)],
          ['floor: peak RSS (MiB)', samples.floor!.map((s) => s.maxRssMiB)],
          ['readline: peak RSS (MiB)', samples.readline!.map((s) => s.maxRssMiB)],
          ['ours / floor (peak RSS)', ratios.rssFloor],
          ['ours / readline (peak RSS)', ratios.rssReadline],
          ['append 1,000 events → model updated (ms)', samples.ours!.map((s) => s.appendMs!)],
          ['append: bytes read', samples.ours!.map((s) => s.appendBytesRead!)],
          ['stream all executions of one hash (ms)', samples.ours!.map((s) => s.streamMs!)],
        ] as Array<[string, number[]]>
      ).map(([name, values]) => {
        const s = stats(values);
        const format = name.includes('/') || name.includes('ratio') ? f2 : name.includes('bytes') ? (value: number) => String(Math.round(value)) : f1;
        return [name, format(s.median), format(s.min), format(s.max)];
      }),
    ];
    const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
    console.log('');
    for (const row of table) console.log(row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
    console.log(`\nratio ours/floor (time): ${f2(median(ratios.timeFloor))}   ratio ours/floor (peak RSS): ${f2(median(ratios.rssFloor))}`);

    const repoRoot = findRepoRoot(__dirname);
    const resultsDir = join(repoRoot, 'bench', 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(
      join(resultsDir, 'history.json'),
      `${JSON.stringify({ machine: { cores: cpuList.length, cpu: cpuList[0]?.model, node: process.version, loadavg: loadavg() }, log: { events: EVENTS, bytes: generated.bytes, dispatched: generated.dispatched, keys: SERVERS * TOOLS * HASHES }, samples, ratios }, null, 2)}\n`,
    );
  } finally {
    if (KEEP) console.log(`kept ${file}`);
    else rmSync(folder, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

const child = stringOption('child');
if (child) {
  const file = stringOption('file')!;
  const work = child === 'ours' ? childOurs(file) : child === 'floor' ? Promise.resolve(childFloor(file)) : childReadline(file);
  work.then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
} else {
  main().then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
