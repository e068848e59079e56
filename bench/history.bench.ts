/**
 * Dispatch-history benchmark: building the read model over large `*.events.jsonl` logs.
 *
 *   npm run build && npm run bench:history     (runs out/bench/history.bench.js, about 2-4 min)
 *
 * Logs (generated into a temp dir, deleted at the end): by default 100,000, 300,000 and 1,000,000
 * events, about 260 bytes each, one per line; each smaller log is the first lines of the largest.
 * 90% are MCP_DISPATCHED over 5 servers × 50 tools × 3 schema hashes (750 keys, uniform), the
 * rest EXECUTION_STARTED / STEP_STARTED / STEP_COMPLETED, whose payloads make them about as long.
 * Generated with a fixed seed, so every run reads the same bytes.
 *
 * Each measured side runs in its own child process (so peak RSS is its own: `maxRSS` from
 * `process.resourceUsage()`), interleaved, order rotated every round, on the same file (in the
 * page cache after generation: this measures CPU and memory, not the disk):
 *   ours        `new HistoryModel()` + `LogReader.update()` over the whole file: positioned reads,
 *               each chunk of complete lines folded from its bytes (`foldLineBytes`: a line the
 *               byte scanner answers for is read in place, any other is decoded and read with
 *               JSON.parse), validation of every MCP_DISPATCHED field (schema hash via parsePin,
 *               once per key), fold into the K=20 model; then `model.keys()` (merge). Asserts the
 *               dispatch count.
 *   readline    the peer: `node:readline` over `fs.createReadStream` + `JSON.parse` of every line
 *               + a `Map` count per (server, tool, schemaHash) of the MCP_DISPATCHED events: the
 *               plain code most would write for "how often was each tool called at each schema".
 *   floor       64 KiB chunked reads + UTF-8 decode + split on "\n" + `JSON.parse` of every line,
 *               nothing else: the cheapest way to read the file at all that we found.
 * Ratios are taken within a round: ours / readline and ours / floor, for wall time, for CPU time
 * (user + system of the measured part, which a busy machine's scheduling does not inflate) and for
 * peak RSS.
 * The `ours` child also measures, after the build: appending 1,000 events (≈ 260 KB) to the log
 * and `update()` again (ms, bytes read: must equal the appended bytes), and streaming all
 * executions of one hash from the file (`streamExecutions`, the "more than K" path).
 *
 * Many files: the largest log is also cut into --files=N files (default 1,000; 0: not measured),
 * at line ends, named in order, which every side reads one after another (ours through `LogSet`,
 * one model over all of them; the peers with the same code per file, one Map over all). Reported
 * as the other sizes, plus our peak RSS over the files against our peak RSS over the same events in
 * one file (the model keeps one state per key across logs, so it should not grow per file).
 *
 * Options: --sizes=N,N,… (default 100000,300000,1000000), --rounds=N (default 5), --files=N, --keep
 * (keep the logs). Results: bench/results/history.json. Exit 1 when a check fails (counts, bytes read).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, cpSync, symlinkSync, createReadStream, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fnv1a64Hex } from '../server/src/core/pins/fnv1a64';
import type * as HistoryModule from '../server/src/core/history/history';
import type * as LogReaderModule from '../server/src/history/logFile';
import type * as LogSetModule from '../server/src/history/logReader';
import { findRepoRoot, option, stats } from './support/benchSupport';

// ---------------------------------------------------------------------------------------------
// Options


function stringOption(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}

const SIZES = (stringOption('sizes') ?? '100000,300000,1000000').split(',').map((size) => Math.floor(Number(size)));
if (SIZES.some((size) => !Number.isFinite(size) || size < 1)) throw new Error('--sizes needs positive numbers, e.g. --sizes=100000,1000000');
/** Events in the log a child reads (the parent passes it), or the largest size. */
const EVENTS = Math.floor(option('events', Math.max(...SIZES)));
const ROUNDS = Math.floor(option('rounds', 5));
const KEEP = process.argv.includes('--keep');
const APPENDED = 1_000;
const FILES = Math.floor(option('files', 1_000));

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

interface Generated {
  readonly events: number;
  readonly bytes: number;
  readonly dispatched: number;
}

/** Writes the largest log; returns the bytes and dispatches of each size's prefix. */
function generate(file: string, sizes: readonly number[]): Generated[] {
  const fd = openSync(file, 'w');
  const events = generator(42, 0);
  const largest = Math.max(...sizes);
  const prefixes: Generated[] = [];
  let dispatched = 0;
  let bytes = 0;
  try {
    let batch = '';
    for (let index = 0; index < largest; index++) {
      const { line, dispatch } = events.next();
      if (dispatch) dispatched++;
      batch += line;
      if (batch.length > 4 * 1024 * 1024 || sizes.includes(index + 1)) {
        bytes += writeSync(fd, batch);
        batch = '';
      }
      if (sizes.includes(index + 1)) prefixes.push({ events: index + 1, bytes, dispatched });
    }
    bytes += writeSync(fd, batch);
  } finally {
    closeSync(fd);
  }
  return prefixes;
}

// ---------------------------------------------------------------------------------------------
// The children

interface ChildResult {
  side: string;
  ms: number;
  /** CPU time (user + system) of the measured part: steadier than wall time on a busy machine. */
  cpuMs: number;
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

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function rssMiB(): number {
  return process.resourceUsage().maxRSS / 1024; // maxRSS is in KiB
}

/** The files of a folder of logs, in name order (the many-files case), or the one file. */
function filesOf(file: string): string[] {
  return statSync(file).isDirectory() ? readdirSync(file).sort().map((name) => join(file, name)) : [file];
}

/** Ours over a folder of logs: one model, one `LogSet` over the files. */
async function childOursMany(folder: string): Promise<ChildResult> {
  const history: typeof HistoryModule = require('../server/src/core/history/history');
  const logSet: typeof LogSetModule = require('../server/src/history/logReader');
  const files = filesOf(folder);
  const model = new history.HistoryModel();
  const set = new logSet.LogSet(model, () => Promise.resolve(files), (file) => basename(file));
  const cpuStart = process.cpuUsage();
  const started = process.hrtime.bigint();
  await set.update();
  const keys = model.keys();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = cpuMsSince(cpuStart);
  let lines = 0;
  let dispatched = 0;
  for (const log of model.logs()) {
    const stats = model.logStats(log);
    lines += stats.lines;
    dispatched += stats.dispatched;
  }
  return { side: 'ours', ms, cpuMs, maxRssMiB: rssMiB(), lines, dispatched, keys: keys.length };
}

async function childOurs(file: string): Promise<ChildResult> {
  if (statSync(file).isDirectory()) return childOursMany(file);
  // Loaded here, so that the peers' processes carry none of our modules (and their memory).
  const history: typeof HistoryModule = require('../server/src/core/history/history');
  const logReader: typeof LogReaderModule = require('../server/src/history/logFile');
  const { HistoryModel } = history;
  const { LogReader } = logReader;
  const model = new HistoryModel();
  const reader = new LogReader(file, 'bench', model);
  const cpuStart = process.cpuUsage();
  const started = process.hrtime.bigint();
  await reader.update();
  const keys = model.keys();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = cpuMsSince(cpuStart);
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
    cpuMs,
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
  const cpuStart = process.cpuUsage();
  const started = process.hrtime.bigint();
  const buffer = Buffer.allocUnsafe(64 * 1024);
  let lines = 0;
  let sink = 0;
  for (const one of filesOf(file)) {
    const read = floorOf(one, buffer);
    lines += read.lines;
    sink += read.sink;
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (sink < 0) console.error('impossible');
  return { side: 'floor', ms, cpuMs: cpuMsSince(cpuStart), maxRssMiB: rssMiB(), lines };
}

function floorOf(file: string, buffer: Buffer): { lines: number; sink: number } {
  const fd = openSync(file, 'r');
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
  return { lines, sink };
}

interface PeerEvent {
  readonly type?: unknown;
  readonly data?: { readonly server?: unknown; readonly toolName?: unknown; readonly schemaHash?: unknown };
}

async function childReadline(file: string): Promise<ChildResult> {
  const cpuStart = process.cpuUsage();
  const started = process.hrtime.bigint();
  const counts = new Map<string, number>();
  let lines = 0;
  let dispatched = 0;
  for (const one of filesOf(file)) {
    const lineReader = createInterface({ input: createReadStream(one), crlfDelay: Infinity });
    for await (const line of lineReader) {
      const value = JSON.parse(line) as PeerEvent;
      lines++;
      if (value.type === 'MCP_DISPATCHED' && value.data) {
        const key = `${String(value.data.server)}\u0000${String(value.data.toolName)}\u0000${String(value.data.schemaHash)}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        dispatched++;
      }
    }
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { side: 'readline', ms, cpuMs: cpuMsSince(cpuStart), maxRssMiB: rssMiB(), lines, dispatched, keys: counts.size };
}

// ---------------------------------------------------------------------------------------------
// The parent


/**
 * Copies the compiled benchmark and the server modules (out/server/src) into the temp dir, links
 * the repository's node_modules beside them, and runs the children from there: a rebuild of out/
 * while the benchmark runs (another terminal, another job on a shared machine) then cannot pull
 * the files from under it.
 */
function privateCopy(folder: string): string {
  const outRoot = join(__dirname, '..');
  const copyRoot = join(folder, 'out');
  cpSync(join(outRoot, 'server', 'src'), join(copyRoot, 'server', 'src'), { recursive: true });
  symlinkSync(join(findRepoRoot(__dirname), 'node_modules'), join(folder, 'node_modules'), 'dir');
  mkdirSync(join(copyRoot, 'bench', 'support'), { recursive: true });
  copyFileSync(__filename, join(copyRoot, 'bench', basename(__filename)));
  copyFileSync(join(__dirname, 'support', 'benchSupport.js'), join(copyRoot, 'bench', 'support', 'benchSupport.js'));
  return join(copyRoot, 'bench', basename(__filename));
}

let childScript = __filename;

function runChild(side: string, file: string, events: number): ChildResult {
  const result = spawnSync(process.execPath, [childScript, `--child=${side}`, `--file=${file}`, `--events=${events}`], { encoding: 'utf8', maxBuffer: 1024 * 1024 });
  if (result.status !== 0) throw new Error(`the ${side} child failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as ChildResult;
}

/**
 * Cuts `file` into `count` files of about as many bytes each, at line ends, named in order. Read
 * part by part: the parent's peak RSS is inherited by the children it starts (Linux keeps the
 * high-water mark across exec), so it must not hold the log.
 */
function splitInto(file: string, folder: string, count: number): void {
  mkdirSync(folder, { recursive: true });
  const total = statSync(file).size;
  const fd = openSync(file, 'r');
  const window = Buffer.allocUnsafe(64 * 1024);
  try {
    let from = 0;
    for (let index = 0; index < count; index++) {
      let end = total;
      const target = Math.floor(((index + 1) * total) / count);
      if (index < count - 1 && target > from) {
        const read = readSync(fd, window, 0, window.length, target);
        const lineEnd = window.subarray(0, read).indexOf(10);
        end = lineEnd < 0 ? Math.min(total, target + read) : target + lineEnd + 1;
      } else if (index < count - 1) end = from;
      const part = Buffer.allocUnsafe(end - from);
      if (part.length > 0) readSync(fd, part, 0, part.length, from);
      writeFileSync(join(folder, `run-${String(index).padStart(5, '0')}.events.jsonl`), part);
      from = end;
    }
  } finally {
    closeSync(fd);
  }
}

const f1 = (value: number): string => value.toFixed(1);
const f2 = (value: number): string => value.toFixed(2);

interface SizeResults {
  readonly log: Generated;
  /** A log file, or a folder of logs (the many-files case: `files` of them). */
  readonly file: string;
  readonly files: number;
  readonly samples: Record<string, ChildResult[]>;
  readonly ratios: { timeReadline: number[]; timeFloor: number[]; cpuReadline: number[]; cpuFloor: number[]; rssReadline: number[]; rssFloor: number[] };
  readonly load: number[];
}

function formatStats(values: readonly number[], format: (value: number) => string): string {
  const s = stats(values);
  return `${format(s.median)} (${format(s.min)}–${format(s.max)})`;
}

async function main(): Promise<number> {
  const cpuList = cpus();
  console.log(`machine: ${cpuList.length} cores, ${cpuList[0]?.model ?? 'unknown cpu'}, Node ${process.version}, load ${loadavg().map(f2).join(' ')}`);
  const folder = mkdtempSync(join(tmpdir(), 'toolpin-history-bench-'));
  let failed = false;
  try {
    childScript = privateCopy(folder);
    const generateStarted = Date.now();
    const largestFile = join(folder, `${Math.max(...SIZES)}.events.jsonl`);
    const logs = generate(largestFile, SIZES);
    const sizes: SizeResults[] = logs.map((log) => {
      const file = join(folder, `${log.events}.events.jsonl`);
      if (file !== largestFile) {
        copyFileSync(largestFile, file);
        truncateSync(file, log.bytes);
      }
      return { log, file, files: 1, samples: { ours: [], readline: [], floor: [] }, ratios: { timeReadline: [], timeFloor: [], cpuReadline: [], cpuFloor: [], rssReadline: [], rssFloor: [] }, load: [] };
    });
    if (FILES > 0) {
      const largest = logs[logs.length - 1]!;
      const splitFolder = join(folder, `${largest.events}-in-${FILES}-files`);
      splitInto(largestFile, splitFolder, FILES);
      sizes.push({ log: largest, file: splitFolder, files: FILES, samples: { ours: [], readline: [], floor: [] }, ratios: { timeReadline: [], timeFloor: [], cpuReadline: [], cpuFloor: [], rssReadline: [], rssFloor: [] }, load: [] });
    }
    for (const { log } of sizes) {
      console.log(`log: ${log.events.toLocaleString('en-US')} events, ${(log.bytes / 1e6).toFixed(1)} MB (${Math.round(log.bytes / log.events)} bytes/event), ${log.dispatched.toLocaleString('en-US')} MCP_DISPATCHED over ${SERVERS * TOOLS * HASHES} keys`);
    }
    console.log(`generated in ${((Date.now() - generateStarted) / 1000).toFixed(1)} s`);

    const sides = ['ours', 'readline', 'floor'];
    for (let round = 0; round < ROUNDS; round++) {
      const order = sides.map((_, index) => sides[(index + round) % sides.length]!);
      for (const size of sizes) {
        const results: Record<string, ChildResult> = {};
        size.load.push(loadavg()[0]!);
        for (const side of order) {
          // The ours child appends to the log: cut it back to the generated bytes before each child.
          if (size.files === 1 && statSync(size.file).size !== size.log.bytes) truncateSync(size.file, size.log.bytes);
          results[side] = runChild(side, size.file, size.log.events);
          size.samples[side]!.push(results[side]!);
        }
        const ours = results.ours!;
        const readline = results.readline!;
        const floor = results.floor!;
        size.ratios.timeReadline.push(ours.ms / readline.ms);
        size.ratios.timeFloor.push(ours.ms / floor.ms);
        size.ratios.cpuReadline.push(ours.cpuMs / readline.cpuMs);
        size.ratios.cpuFloor.push(ours.cpuMs / floor.cpuMs);
        size.ratios.rssReadline.push(ours.maxRssMiB / readline.maxRssMiB);
        size.ratios.rssFloor.push(ours.maxRssMiB / floor.maxRssMiB);
        console.log(
          `round ${round + 1}, ${size.log.events} events in ${size.files} file(s) (load ${f2(loadavg()[0]!)}): ours ${f1(ours.ms)} ms / ${f1(ours.maxRssMiB)} MiB, readline ${f1(readline.ms)} ms / ${f1(readline.maxRssMiB)} MiB, floor ${f1(floor.ms)} ms / ${f1(floor.maxRssMiB)} MiB; ` +
            `ours/readline ${f2(ours.ms / readline.ms)} time, ${f2(ours.cpuMs / readline.cpuMs)} CPU, ${f2(ours.maxRssMiB / readline.maxRssMiB)} RSS${size.files === 1 ? `; append 1,000: ${f2(ours.appendMs!)} ms, ${ours.appendBytesRead} of ${ours.appendBytes} bytes read; stream ${ours.streamed} executions of one hash: ${f1(ours.streamMs!)} ms` : ''}`,
        );

        const checks: Array<[boolean, string]> = [
          [ours.dispatched === size.log.dispatched, `ours folded ${ours.dispatched} dispatches, expected ${size.log.dispatched}`],
          [readline.dispatched === size.log.dispatched, `the readline peer counted ${readline.dispatched} dispatches, expected ${size.log.dispatched}`],
          [ours.keys === readline.keys, `ours has ${ours.keys} keys, the readline peer ${readline.keys}`],
          [ours.lines === size.log.events && readline.lines === size.log.events && floor.lines === size.log.events, 'every side reads every line'],
        ];
        if (size.files === 1) {
          checks.push(
          [ours.appendBytesRead === ours.appendBytes, `the append read ${ours.appendBytesRead} bytes, expected exactly the ${ours.appendBytes} appended`],
          [ours.appendDispatched === ours.appendExpected, `the append folded ${ours.appendDispatched} dispatches, expected ${ours.appendExpected}`],
            [ours.streamed === ours.streamKeyCount, `streamed ${ours.streamed} executions, the model counts ${ours.streamKeyCount}`],
          );
        }
        for (const [ok, message] of checks) {
          if (!ok) {
            console.error(`CHECK FAILED: ${message}`);
            failed = true;
          }
        }
      }
    }

    console.log('');
    console.log(`median (min–max) over ${ROUNDS} rounds`);
    for (const size of sizes) {
      const { samples, ratios } = size;
      console.log(`\n${size.log.events.toLocaleString('en-US')} events in ${size.files.toLocaleString('en-US')} file(s), ${(size.log.bytes / 1e6).toFixed(1)} MB; 1-minute load average ${formatStats(size.load, f1)}`);
      const rows: Array<[string, string]> = [
        ['ours: build model (ms)', formatStats(samples.ours!.map((s) => s.ms), f1)],
        ['readline + JSON.parse + Map count (ms)', formatStats(samples.readline!.map((s) => s.ms), f1)],
        ['floor: 64 KiB chunks + JSON.parse (ms)', formatStats(samples.floor!.map((s) => s.ms), f1)],
        ['ours / readline (time)', formatStats(ratios.timeReadline, f2)],
        ['ours / floor (time)', formatStats(ratios.timeFloor, f2)],
        ['ours: CPU (ms)', formatStats(samples.ours!.map((s) => s.cpuMs), f1)],
        ['readline: CPU (ms)', formatStats(samples.readline!.map((s) => s.cpuMs), f1)],
        ['floor: CPU (ms)', formatStats(samples.floor!.map((s) => s.cpuMs), f1)],
        ['ours / readline (CPU)', formatStats(ratios.cpuReadline, f2)],
        ['ours / floor (CPU)', formatStats(ratios.cpuFloor, f2)],
        ['ours: peak RSS (MiB)', formatStats(samples.ours!.map((s) => s.maxRssMiB), f1)],
        ['readline: peak RSS (MiB)', formatStats(samples.readline!.map((s) => s.maxRssMiB), f1)],
        ['floor: peak RSS (MiB)', formatStats(samples.floor!.map((s) => s.maxRssMiB), f1)],
        ['ours / readline (peak RSS)', formatStats(ratios.rssReadline, f2)],
        ['ours / floor (peak RSS)', formatStats(ratios.rssFloor, f2)],
      ];
      if (size.files === 1) {
        rows.push(
          ['append 1,000 events → model updated (ms)', formatStats(samples.ours!.map((s) => s.appendMs!), f2)],
          ['append: bytes read (of appended)', `${formatStats(samples.ours!.map((s) => s.appendBytesRead!), String)} of ${samples.ours![0]!.appendBytes}`],
          ['stream all executions of one hash (ms)', formatStats(samples.ours!.map((s) => s.streamMs!), f1)],
        );
      } else {
        const oneFile = sizes.find((other) => other.files === 1 && other.log.events === size.log.events)!;
        const perRound = samples.ours!.map((sample, round) => sample.maxRssMiB / oneFile.samples.ours![round]!.maxRssMiB);
        rows.push(['ours: peak RSS, these files / one file', formatStats(perRound, f2)]);
      }
      const width = Math.max(...rows.map(([name]) => name.length));
      for (const [name, value] of rows) console.log(`  ${name.padEnd(width)}  ${value}`);
    }

    const repoRoot = findRepoRoot(__dirname);
    const resultsDir = join(repoRoot, 'bench', 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(
      join(resultsDir, 'history.json'),
      `${JSON.stringify({ machine: { cores: cpuList.length, cpu: cpuList[0]?.model, node: process.version, loadavg: loadavg() }, rounds: ROUNDS, keys: SERVERS * TOOLS * HASHES, sizes: sizes.map(({ log, samples, ratios, load }) => ({ log, load, samples, ratios })) }, null, 2)}\n`,
    );
  } finally {
    if (KEEP) console.log(`kept ${folder}`);
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
