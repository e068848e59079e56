/**
 * Source-file benchmark (issue: pins in TypeScript and JavaScript sources), three measures, each
 * against a peer in the same run:
 *
 *   npm run build && npm run bench:sources     (runs out/bench/sources.bench.js, about 1 min)
 *
 * (a) Edit → diagnostics, in the core. A generated 5,000-line TypeScript module with 500
 *     `mcpInvoke$` calls (an aliased import, typed helpers, comments, mixed quotes, `as const`),
 *     each call pinned to a tool of one server whose listing is warm. One sample of ours = what a
 *     didChange costs before publishDiagnostics: `analyzeDocument` of an edited copy (one pin
 *     toggled, so no cache can help) + `verifyBlueprint` against the warm listing (with the
 *     arguments checked against the live schemas, as the editor does). Peer: @babel/parser's bare
 *     `parse` of the same edited text (sourceType module, errorRecovery, typescript plugin).
 *     Target: ours / peer ≤ 1.5.
 * (b) A TypeScript module without pins (the same 5,000 lines with the pin import left out):
 *     `analyzeDocument` time. Target: < 1 ms. Its peer, for scale, is the bare parse again.
 * (c) The workspace scan. A generated tree of 5,000 TypeScript files (50 folders of 100, 1–4 KB
 *     each, a `.gitignore`), 10 of which hold pins. Ours: `findFiles` of io/fileFinder.ts with the
 *     document matcher and content filter the CLI and the server use (`.gitignore` honoured), then
 *     each found file read and analyzed. Peer: a plain recursive `readdir` + `readFile` of every
 *     file of the same tree. Target: ours / peer ≤ 2.
 *
 * Method: each measure is warmed up (3 samples of each side), then N rounds (--samples, default
 * 15, at least 5) of one sample of each side, the order alternating every round. The ratio is
 * taken per round, between samples taken back to back; the median, min and max of the times and
 * of the ratios are reported, in wall-clock time (the target) and in the process's CPU time (user +
 * system, steadier when the machine is shared; for (c) it leaves out the waiting on the disk and
 * the thread pool). The file cache is warm for both sides of (c) (the warm-up reads
 * every file). Results: bench/results/sources.json. Exit 1 when a measure reads the wrong number
 * of pins (the comparison would be meaningless), 0 otherwise; a missed target is printed as
 * MISSED.
 *
 * Options: --samples=N, --files=N (default 5000), --pinned-files=N (default 10), --keep (keep the
 * generated tree).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse, type ParserOptions } from '@babel/parser';
import { analyzeDocument, blueprintOf, documentKindOf } from '../server/src/core/documents/documents';
import { type CollectedListing, type ListedTool, readListedTool } from '../server/src/core/verify/listing';
import { schemaPin } from '../server/src/core/pins/pins';
import { type ServerDefinition, ServerRegistry } from '../server/src/core/verify/registry';
import { type ServerListing, type VerificationContext, verifyBlueprint } from '../server/src/core/verify/verify';
import { acceptDocument, findFiles, isDocumentName } from '../server/src/io/fileFinder';
import { findRepoRoot, option, packageVersion, type Stats, stats } from './support/benchSupport';
import { ALIASED_INVOKE_IMPORT, generatedModule } from './support/generatedModule';

const SAMPLES = Math.max(5, Math.floor(option('samples', 15)));
const FILES = Math.floor(option('files', 5000));
const PINNED_FILES = Math.floor(option('pinned-files', 10));
const KEEP = process.argv.includes('--keep');
const WARMUP = 3;
const CALLS = 500;
const TOOLS = 20;
const root = findRepoRoot(__dirname);

// ---------------------------------------------------------------------------------------------
// Inputs

const TOOL_LIST: ListedTool[] = Array.from({ length: TOOLS }, (_, index) => ({
  name: `read_record_${index}`,
  description: `Reads record kind ${index}.`,
  inputSchema: { type: 'object', properties: { id: { type: 'integer' }, label: { type: 'string' } }, required: ['id'] },
})).map((tool) => {
  const read = readListedTool(tool);
  if (typeof read === 'string') throw new Error(`the bench's tool ${tool.name} does not read: ${read}`);
  return read;
});
const LIVE_PINS = TOOL_LIST.map((tool) => schemaPin(tool.inputSchema));
const STALE_PIN = 'fnv1a64:0000000000000000';

/** A module as users write them: 500 calls of 10 lines each, pinned to the live schemas. */
function pinnedModule(calls: number, withImport = true): string {
  return generatedModule(calls, {
    importLine: withImport ? ALIASED_INVOKE_IMPORT : `import { invoke } from './local';`,
    tool: (index) => `read_record_${index % TOOLS}`,
    pin: (index) => LIVE_PINS[index % TOOLS]!,
  });
}

/** The edit of round `round`: the pin of step 250 stale on odd rounds, live on even ones. */
function edited(text: string, round: number): string {
  const live = LIVE_PINS[250 % TOOLS]!;
  const at = text.indexOf(`'read#250'`);
  const pinAt = text.indexOf(live, at);
  return round % 2 === 1 ? text.slice(0, pinAt) + STALE_PIN + text.slice(pinAt + live.length) : text;
}

const DEFINITION: ServerDefinition = {
  name: 'records',
  origin: { kind: 'mcp-json', file: join(tmpdir(), '.mcp.json') },
  transport: { kind: 'stdio', command: 'node', args: [], env: {} },
  auth: undefined,
  unusable: undefined,
  cwd: tmpdir(),
};
const LISTING: CollectedListing = { tools: TOOL_LIST, malformedEntries: [], duplicateNames: [], pages: 1, incomplete: undefined, ttlMs: undefined };
const WARM: ServerListing = { status: 'listed', listing: LISTING, listedAt: Date.now() };
const CONTEXT: VerificationContext = { registry: new ServerRegistry([DEFINITION]), now: Date.now(), listingFor: () => WARM };

const BABEL_OPTIONS: ParserOptions = { sourceType: 'module', errorRecovery: true, plugins: ['typescript'] };

// ---------------------------------------------------------------------------------------------
// Timing

interface Pair {
  /** Wall-clock milliseconds. */
  readonly ours: Stats;
  readonly peer: Stats;
  readonly ratio: Stats;
  /** The same samples in CPU milliseconds of the process (steadier on a shared machine). */
  readonly oursCpu: Stats;
  readonly peerCpu: Stats;
  readonly ratioCpu: Stats;
}

interface Sample {
  readonly wall: number;
  readonly cpu: number;
}

/** Times two functions in alternating order, one sample each per round; ratios per round. */
async function compare(ours: (round: number) => unknown, peer: (round: number) => unknown): Promise<Pair> {
  const time = async (run: (round: number) => unknown, round: number): Promise<Sample> => {
    const cpu = process.cpuUsage();
    const start = performance.now();
    await run(round);
    const wall = performance.now() - start;
    const used = process.cpuUsage(cpu);
    return { wall, cpu: (used.user + used.system) / 1000 };
  };
  for (let round = 0; round < WARMUP; round++) {
    await time(ours, round);
    await time(peer, round);
  }
  const oursSamples: Sample[] = [];
  const peerSamples: Sample[] = [];
  for (let round = 0; round < SAMPLES; round++) {
    if (round % 2 === 0) {
      oursSamples.push(await time(ours, round));
      peerSamples.push(await time(peer, round));
    } else {
      peerSamples.push(await time(peer, round));
      oursSamples.push(await time(ours, round));
    }
  }
  const ratios = (of: (sample: Sample) => number): number[] => oursSamples.map((sample, round) => of(sample) / of(peerSamples[round]!));
  return {
    ours: stats(oursSamples.map((sample) => sample.wall)),
    peer: stats(peerSamples.map((sample) => sample.wall)),
    ratio: stats(ratios((sample) => sample.wall)),
    oursCpu: stats(oursSamples.map((sample) => sample.cpu)),
    peerCpu: stats(peerSamples.map((sample) => sample.cpu)),
    ratioCpu: stats(ratios((sample) => sample.cpu)),
  };
}

function show(value: Stats, digits = 2): string {
  return `${value.median.toFixed(digits)} (${value.min.toFixed(digits)}–${value.max.toFixed(digits)})`;
}

// ---------------------------------------------------------------------------------------------
// (c) The workspace tree

function makeTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolpin-bench-sources-'));
  writeFileSync(join(dir, '.gitignore'), 'coverage/\n*.log\n');
  const folders = Math.max(1, Math.ceil(FILES / 100));
  const pinnedEvery = Math.max(1, Math.floor(FILES / Math.max(1, PINNED_FILES)));
  for (let folder = 0; folder < folders; folder++) mkdirSync(join(dir, 'src', `feature${folder}`), { recursive: true });
  for (let index = 0; index < FILES; index++) {
    const file = join(dir, 'src', `feature${Math.floor(index / 100)}`, `module${index}.ts`);
    const body = Array.from({ length: 20 + (index % 60) }, (_, line) => `export const value${line} = ${index} + ${line}; // a plain line of code`).join('\n');
    const pinned = PINNED_FILES > 0 && index % pinnedEvery === 0 && index / pinnedEvery < PINNED_FILES;
    writeFileSync(file, pinned ? `${pinnedModule(3)}${body}\n` : `import { helper } from '../util';\n${body}\n`);
  }
  return dir;
}

async function plainWalkAndRead(dir: string): Promise<number> {
  let bytes = 0;
  const queue = [dir];
  while (queue.length > 0) {
    const folder = queue.shift()!;
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const child = join(folder, entry.name);
      if (entry.isDirectory()) queue.push(child);
      else if (entry.isFile()) bytes += (await readFile(child, 'utf8')).length;
    }
  }
  return bytes;
}

async function scanAndAnalyze(dir: string): Promise<number> {
  const files = await findFiles(dir, { match: isDocumentName, accept: acceptDocument, gitignore: true });
  let steps = 0;
  for (const file of files) {
    const kind = documentKindOf(file)!;
    const analysis = analyzeDocument(kind, await readFile(file, 'utf8'), file);
    steps += blueprintOf(analysis)?.steps.length ?? 0;
  }
  return steps;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const text = pinnedModule(CALLS);
  const lines = text.split('\n').length - 1;
  const load = loadavg().map((value) => value.toFixed(1)).join(' ');
  console.log(`${packageVersion(root, '@babel/parser')}; Node ${process.version}; ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}; load ${load}; ${SAMPLES} samples`);

  // Correctness first: the edited module reads all its pins, and exactly one drifts.
  const check = verifyBlueprint(blueprintOf(analyzeDocument('source', edited(text, 1), 'module.ts'))!, CONTEXT);
  const drifted = check.verdicts.filter((verdict) => verdict.state === 'drifted').length;
  const verified = check.verdicts.filter((verdict) => verdict.state === 'verified').length;
  if (drifted !== 1 || verified !== CALLS - 1) {
    console.error(`the edited module gives ${verified} verified and ${drifted} drifted pins; expected ${CALLS - 1} and 1`);
    process.exitCode = 1;
    return;
  }

  console.log(`(a) ${lines}-line module, ${CALLS} mcpInvoke$ calls: analyzeDocument + verifyBlueprint (warm listing) vs @babel/parser parse`);
  const editRun = await compare(
    (round) => verifyBlueprint(blueprintOf(analyzeDocument('source', edited(text, round), 'module.ts'))!, CONTEXT),
    (round) => parse(edited(text, round), BABEL_OPTIONS),
  );
  console.log(`    wall: ours ${show(editRun.ours)} ms, parse ${show(editRun.peer)} ms, ratio ${show(editRun.ratio)}; target ≤ 1.5: ${editRun.ratio.median <= 1.5 ? 'met' : 'MISSED'}`);
  console.log(`    cpu:  ours ${show(editRun.oursCpu)} ms, parse ${show(editRun.peerCpu)} ms, ratio ${show(editRun.ratioCpu)}`);

  const plain = pinnedModule(CALLS, false);
  if (blueprintOf(analyzeDocument('source', plain, 'plain.ts'))!.steps.length !== 0) throw new Error('the module without pins has steps');
  console.log(`(b) the same ${lines} lines without the pin import: analyzeDocument`);
  const plainRun = await compare(
    () => analyzeDocument('source', plain, 'plain.ts'),
    () => parse(plain, BABEL_OPTIONS),
  );
  console.log(`    ours ${show(plainRun.ours, 4)} ms (parse, for scale, ${show(plainRun.peer)} ms); target < 1 ms: ${plainRun.ours.median < 1 ? 'met' : 'MISSED'}`);

  const dir = makeTree();
  try {
    const expectedSteps = PINNED_FILES * 3;
    const steps = await scanAndAnalyze(dir);
    if (steps !== expectedSteps) {
      console.error(`the scan found ${steps} steps; expected ${expectedSteps}`);
      process.exitCode = 1;
      return;
    }
    console.log(`(c) ${FILES} TypeScript files, ${PINNED_FILES} with pins: findFiles + analysis vs a plain walk-and-read`);
    const scanRun = await compare(
      () => scanAndAnalyze(dir),
      () => plainWalkAndRead(dir),
    );
    console.log(`    wall: ours ${show(scanRun.ours, 1)} ms, walk-and-read ${show(scanRun.peer, 1)} ms, ratio ${show(scanRun.ratio)}; target ≤ 2: ${scanRun.ratio.median <= 2 ? 'met' : 'MISSED'}`);
    console.log(`    cpu:  ours ${show(scanRun.oursCpu, 1)} ms, walk-and-read ${show(scanRun.peerCpu, 1)} ms, ratio ${show(scanRun.ratioCpu)}`);
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(root, 'bench', 'results', 'sources.json'),
      JSON.stringify({ node: process.version, load, samples: SAMPLES, lines, calls: CALLS, files: FILES, pinnedFiles: PINNED_FILES, edit: editRun, noPins: plainRun, scan: scanRun }, null, 2) + '\n',
    );
  } finally {
    if (KEEP) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
