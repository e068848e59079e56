/**
 * Hashing benchmark: the two pin kinds and canonical JSON, on real MCP tool listings.
 *
 *   npm run build && npm run bench          (runs out/bench/hashing.bench.js)
 *
 * Corpus: every test/fixtures/tool-lists/*.json (recorded by scripts/record-tool-lists.mjs).
 * In one run, on the same inputs, it measures these comparisons and checks that the compared
 * implementations produce identical outputs (exit code 1 if not):
 *
 *   tool pin      ours `toolPin`  vs  peer: npm `canonicalize` + node:crypto sha256   ratio = peer / ours
 *                 ours `toolPin`  vs  floor: `JSON.stringify` + node:crypto sha256    ratio = ours / floor
 *   schema pin    ours `fnv1a64Hex` (string, UTF-8 encoded inside) and `fnv1a64HexOfBytes`
 *                 vs  peer: a BigInt FNV-1a 64 written with `BigInt.asUintN` over the UTF-8 bytes
 *                                                                                  ratio = peer / ours
 *                 vs  floor: an FNV-1a 32 plain JavaScript loop (`Math.imul`) over the same bytes
 *                                                                                  ratio = floor / ours
 *                 (the bytes are encoded once, outside the timing; ours on the string encodes them
 *                 inside the timing, as `schemaPin` does)
 *   canonical     ours `canonicalJson`  vs  `JSON.stringify` (the ceiling)      ratio = ours / stringify
 *
 * Method: each measured function is one pass over the whole corpus. Each is warmed up (which also
 * calibrates how many passes fill one sample), then every comparison takes N samples of at least
 * `--sample-ms` each, interleaving the implementations and rotating their order each round so that
 * drift (thermal, GC, other load) hits both. Samples are timed in process CPU time, which a busy
 * machine's scheduling does not inflate. Per-sample ratios are taken between the samples of one
 * round; the median, min and max of those are reported. Single-threaded; about 40 s.
 *
 * Options: --samples=N (default 9, at least 7), --sample-ms=N (default 300),
 *          --enforce (exit 2 when a target is missed). Results: bench/results/hashing.json.
 */
import * as crypto from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { canonicalize as jsonCanonicalize } from 'json-canonicalize';
import { canonicalJson } from '../server/src/core/pins/canonicalJson';
import { fnv1a64Backend, fnv1a64Hex, fnv1a64HexJs, fnv1a64HexOfBytes } from '../server/src/core/pins/fnv1a64';
import { schemaPin, toolPin, toolPinContent, type PinnableTool } from '../server/src/core/pins/pins';
import { sha256Hex } from '../server/src/core/pins/sha256';
import { fnv1a64ReferenceHex } from '../test/support/fnv1a64Reference';
import { type Stats, findRepoRoot, option, packageVersion, stats } from './support/benchSupport';

// ---------------------------------------------------------------------------------------------
// Options


const SAMPLES = Math.max(7, Math.floor(option('samples', 9)));
const SAMPLE_NS = option('sample-ms', 300) * 1e6;
const WARMUP_NS = 250e6;
const ENFORCE = process.argv.includes('--enforce');

// ---------------------------------------------------------------------------------------------
// Corpus


const repoRoot = findRepoRoot(__dirname);

interface Fixture {
  readonly server: string;
  readonly package: string;
  readonly tools: ReadonlyArray<PinnableTool & Record<string, unknown>>;
}


const fixtureDir = join(repoRoot, 'test', 'fixtures', 'tool-lists');
const fixtureFiles = existsSync(fixtureDir)
  ? readdirSync(fixtureDir).filter((file) => file.endsWith('.json')).sort()
  : [];
if (fixtureFiles.length === 0) {
  console.error('no fixtures in test/fixtures/tool-lists; run `node scripts/record-tool-lists.mjs` first');
  process.exit(1);
}

const servers: { server: string; package: string; tools: number; bytes: number }[] = [];
const rawTools: (PinnableTool & Record<string, unknown>)[] = [];
let fixtureBytes = 0;
for (const file of fixtureFiles) {
  const text = readFileSync(join(fixtureDir, file), 'utf8');
  const fixture = JSON.parse(text) as Fixture;
  const bytes = Buffer.byteLength(text);
  fixtureBytes += bytes;
  servers.push({ server: fixture.server, package: fixture.package, tools: fixture.tools.length, bytes });
  rawTools.push(...fixture.tools);
}

/** The objects a tool pin covers: name, description, inputSchema, absent fields omitted. */
const covered: PinnableTool[] = rawTools.map((tool) => {
  const object: { name: string; description?: string; inputSchema?: unknown } = { name: tool.name };
  if (tool.description !== undefined) object.description = tool.description;
  if (tool.inputSchema !== undefined) object.inputSchema = tool.inputSchema;
  return object;
});
const schemas: unknown[] = rawTools.map((tool) => tool.inputSchema);
/** The canonical strings a schema pin hashes, and their UTF-8 bytes (encoded once, outside timing). */
const schemaStrings: string[] = schemas.map((schema) => canonicalJson(schema));
const encoder = new TextEncoder();
const schemaBytes: Uint8Array[] = schemaStrings.map((text) => encoder.encode(text));
const TOOLS = rawTools.length;

const toolPinTexts = covered.map((tool) => toolPinContent(tool));
const toolPinBytes = toolPinTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
const schemaPinBytes = schemaBytes.reduce((sum, bytes) => sum + bytes.length, 0);
const nonAsciiSchemas = schemaStrings.filter((text) => !/^\p{ASCII}*$/u.test(text)).length;

// ---------------------------------------------------------------------------------------------
// The measured functions: each is one pass over the whole corpus; the return value is a sink that
// depends on every result, so that nothing can be optimized away.

/**
 * SHA-256 for the peer and the floor: node:crypto (the one-shot `crypto.hash` where Node has it,
 * else `createHash`). Ours is the plain-JavaScript `sha256Hex` of the `toolpin/pins` library (no
 * Node built-in), so the tool-pin ratios compare canonicalization plus the hash; the `sha256`
 * group times the hash alone on the same tool-pin texts.
 */
const sha256 = (text: string): string =>
  typeof crypto.hash === 'function' ? crypto.hash('sha256', text, 'hex') : crypto.createHash('sha256').update(text, 'utf8').digest('hex');

function peerToolPin(tool: PinnableTool): string {
  const text = canonicalize(tool);
  if (text === undefined) throw new Error(`canonicalize returned undefined for ${tool.name}`);
  return `sha256:${sha256(text)}`;
}

function floorToolPin(tool: PinnableTool): string {
  return `sha256:${sha256(JSON.stringify(tool))}`;
}

const FNV64_BASIS = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;

/** The peer: FNV-1a 64 with BigInt, reduced with `BigInt.asUintN` (faster than `& MASK`). */
function fnv1a64AsUintNHex(bytes: Uint8Array): string {
  let hash = FNV64_BASIS;
  for (let index = 0; index < bytes.length; index++) hash = BigInt.asUintN(64, (hash ^ BigInt(bytes[index]!)) * FNV64_PRIME);
  return hash.toString(16).padStart(16, '0');
}

/** The floor: FNV-1a 32, the plain JavaScript loop (a different, weaker hash: a speed bound only). */
function fnv1a32Hex(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < bytes.length; index++) hash = Math.imul(hash ^ bytes[index]!, 0x01000193);
  return (hash >>> 0).toString(16).padStart(8, '0');
}

type Pass = () => number;

const passes = {
  toolPinOurs: (): number => {
    let sink = 0;
    for (let index = 0; index < covered.length; index++) sink += toolPin(covered[index]!).charCodeAt(20);
    return sink;
  },
  toolPinPeer: (): number => {
    let sink = 0;
    for (let index = 0; index < covered.length; index++) sink += peerToolPin(covered[index]!).charCodeAt(20);
    return sink;
  },
  toolPinFloor: (): number => {
    let sink = 0;
    for (let index = 0; index < covered.length; index++) sink += floorToolPin(covered[index]!).charCodeAt(20);
    return sink;
  },
  fnvOursString: (): number => {
    let sink = 0;
    for (let index = 0; index < schemaStrings.length; index++) sink += fnv1a64Hex(schemaStrings[index]!).charCodeAt(9);
    return sink;
  },
  fnvOursBytes: (): number => {
    let sink = 0;
    for (let index = 0; index < schemaBytes.length; index++) sink += fnv1a64HexOfBytes(schemaBytes[index]!).charCodeAt(9);
    return sink;
  },
  fnvJsString: (): number => {
    let sink = 0;
    for (let index = 0; index < schemaStrings.length; index++) sink += fnv1a64HexJs(schemaStrings[index]!).charCodeAt(9);
    return sink;
  },
  fnvAsUintN: (): number => {
    let sink = 0;
    for (let index = 0; index < schemaBytes.length; index++) sink += fnv1a64AsUintNHex(schemaBytes[index]!).charCodeAt(9);
    return sink;
  },
  fnv32: (): number => {
    let sink = 0;
    for (let index = 0; index < schemaBytes.length; index++) sink += fnv1a32Hex(schemaBytes[index]!).charCodeAt(5);
    return sink;
  },
  sha256Ours: (): number => {
    let sink = 0;
    for (let index = 0; index < toolPinTexts.length; index++) sink += sha256Hex(toolPinTexts[index]!).charCodeAt(9);
    return sink;
  },
  sha256Node: (): number => {
    let sink = 0;
    for (let index = 0; index < toolPinTexts.length; index++) sink += sha256(toolPinTexts[index]!).charCodeAt(9);
    return sink;
  },
  canonicalOurs: (): number => {
    let sink = 0;
    for (let index = 0; index < covered.length; index++) sink += canonicalJson(covered[index]!).length;
    return sink;
  },
  canonicalStringify: (): number => {
    let sink = 0;
    for (let index = 0; index < covered.length; index++) sink += JSON.stringify(covered[index]!).length;
    return sink;
  },
} satisfies Record<string, Pass>;

type PassName = keyof typeof passes;

const LABELS: Record<PassName, string> = {
  toolPinOurs: 'ours: toolPin (canonicalJson + sha256)',
  toolPinPeer: 'peer: canonicalize + node:crypto sha256',
  toolPinFloor: 'floor: JSON.stringify + node:crypto sha256',
  fnvOursString: 'ours: fnv1a64Hex(string), encodeInto + wasm',
  fnvOursBytes: 'ours: fnv1a64HexOfBytes(bytes), wasm',
  fnvJsString: 'ours, JS fallback: fnv1a64HexJs(string)',
  fnvAsUintN: 'peer: BigInt FNV-1a 64, BigInt.asUintN',
  fnv32: 'floor: FNV-1a 32 JS loop (Math.imul)',
  sha256Ours: 'ours: sha256Hex, plain JavaScript',
  sha256Node: 'node:crypto sha256 (OpenSSL)',
  canonicalOurs: 'ours: canonicalJson',
  canonicalStringify: 'ceiling: JSON.stringify (not canonical)',
};

// ---------------------------------------------------------------------------------------------
// Identical outputs, checked before anything is timed.

const mismatches: string[] = [];
function expectEqual(what: string, ours: string, other: string): void {
  if (ours !== other) mismatches.push(`${what}: ours ${JSON.stringify(ours)} != ${JSON.stringify(other)}`);
}

// The standard vectors and the reference vectors of docs/formats.md §2.
for (const [text, hex] of [
  ['', 'cbf29ce484222325'],
  ['a', 'af63dc4c8601ec8c'],
  ['foobar', '85944171f73967e8'],
  ['é', '0ac21707b7181e01'],
] as const) {
  expectEqual(`reference fnv1a64(${JSON.stringify(text)})`, fnv1a64ReferenceHex(encoder.encode(text)), hex);
  expectEqual(`fnv1a64Hex(${JSON.stringify(text)})`, fnv1a64Hex(text), hex);
  expectEqual(`asUintN fnv1a64(${JSON.stringify(text)})`, fnv1a64AsUintNHex(encoder.encode(text)), hex);
}
// FNV-1a 32 standard vectors, so that the floor is the real hash.
expectEqual('fnv1a32("")', fnv1a32Hex(encoder.encode('')), '811c9dc5');
expectEqual('fnv1a32("a")', fnv1a32Hex(encoder.encode('a')), 'e40c292c');
expectEqual('fnv1a32("foobar")', fnv1a32Hex(encoder.encode('foobar')), 'bf9cf968');
expectEqual('FNV backend', fnv1a64Backend(), 'wasm');
const echoUpper: PinnableTool = {
  name: 'echo_upper',
  description: 'Upper-case the input text (deterministic showcase demo tool).',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', description: 'Text to upper-case' } },
    required: ['text'],
  },
};
expectEqual('echo_upper schema pin', schemaPin(echoUpper.inputSchema), 'fnv1a64:a76fe8d6d023fca0');
expectEqual(
  'echo_upper tool pin',
  toolPin(echoUpper),
  'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454',
);
expectEqual('echo_upper tool pin (peer)', peerToolPin(echoUpper), toolPin(echoUpper));

for (let index = 0; index < TOOLS; index++) {
  const tool = covered[index]!;
  const where = `tool ${JSON.stringify(tool.name)}`;
  const content = toolPinContent(tool);
  expectEqual(`${where} canonical content vs canonicalize`, content, canonicalize(tool) ?? '<undefined>');
  expectEqual(`${where} canonical content vs json-canonicalize`, content, jsonCanonicalize(tool));
  expectEqual(`${where} tool pin vs peer`, toolPin(tool), peerToolPin(tool));
  expectEqual(`${where} JS fallback vs reference`, fnv1a64HexJs(schemaStrings[index]!), fnv1a64ReferenceHex(schemaBytes[index]!));
  expectEqual(`${where} asUintN peer vs reference`, fnv1a64AsUintNHex(schemaBytes[index]!), fnv1a64ReferenceHex(schemaBytes[index]!));
  expectEqual(`${where} tool pin of the raw tool`, toolPin(rawTools[index]!), toolPin(tool));
  expectEqual(`${where} canonical schema vs canonicalize`, schemaStrings[index]!, canonicalize(schemas[index]) ?? '<undefined>');
  const reference = fnv1a64ReferenceHex(schemaBytes[index]!);
  expectEqual(`${where} fnv1a64Hex vs reference`, fnv1a64Hex(schemaStrings[index]!), reference);
  expectEqual(`${where} fnv1a64HexOfBytes vs reference`, fnv1a64HexOfBytes(schemaBytes[index]!), reference);
  expectEqual(`${where} schema pin`, schemaPin(schemas[index]), `fnv1a64:${reference}`);
  // The ceiling must describe the same value, or the comparison would be meaningless.
  expectEqual(`${where} JSON.stringify round trip`, canonicalJson(JSON.parse(JSON.stringify(tool))), content);
}
// The sinks of ours and the peer must agree too (same outputs, summed).
expectEqual('tool pin sinks', String(passes.toolPinOurs()), String(passes.toolPinPeer()));
expectEqual('sha256 sinks', String(passes.sha256Ours()), String(passes.sha256Node()));
for (const text of toolPinTexts) expectEqual('sha256 of a tool-pin text', sha256Hex(text), sha256(text));
expectEqual('fnv sinks (string)', String(passes.fnvOursString()), String(passes.fnvAsUintN()));
expectEqual('fnv sinks (bytes)', String(passes.fnvOursBytes()), String(passes.fnvAsUintN()));
expectEqual('fnv sinks (JS fallback)', String(passes.fnvJsString()), String(passes.fnvAsUintN()));

if (mismatches.length > 0) {
  console.error(`OUTPUT MISMATCH (${mismatches.length}):`);
  for (const line of mismatches.slice(0, 20)) console.error(`  ${line}`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// Timing

let globalSink = 0;

function now(): bigint {
  return process.hrtime.bigint();
}

/**
 * The process's CPU time (user + system) in ns. Samples are timed with it, not with the wall
 * clock: on a shared machine a process waits for a core for tens of milliseconds at a time, which
 * the wall clock would charge to whichever function was running. All measured code runs on this
 * one thread (GC helper threads count too, as part of the cost).
 */
function cpuNow(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) * 1000;
}

/** Runs `pass` for about `budgetNs`; returns the passes per sample that give at least SAMPLE_NS. */
function warmUpAndCalibrate(pass: Pass): number {
  let runs = 0;
  const start = now();
  let elapsed = 0;
  while (elapsed < WARMUP_NS || runs < 10) {
    globalSink += pass();
    runs++;
    elapsed = Number(now() - start);
  }
  return Math.max(1, Math.ceil((SAMPLE_NS * runs) / elapsed));
}

/** One sample: `iterations` passes, in ns per tool. */
function sample(pass: Pass, iterations: number): number {
  let sink = 0;
  const start = cpuNow();
  for (let round = 0; round < iterations; round++) sink += pass();
  const elapsed = cpuNow() - start;
  globalSink += sink;
  return elapsed / (iterations * TOOLS);
}



/** Interleaved samples of the given passes; rotates the order each round. */
function measureGroup(names: readonly PassName[]): Record<string, { iterations: number; samples: number[] }> {
  const iterations = new Map<PassName, number>();
  for (const name of names) iterations.set(name, warmUpAndCalibrate(passes[name]));
  const samples = new Map<PassName, number[]>(names.map((name) => [name, []]));
  for (let round = 0; round < SAMPLES; round++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length]!;
      samples.get(name)!.push(sample(passes[name], iterations.get(name)!));
    }
  }
  const result: Record<string, { iterations: number; samples: number[] }> = {};
  for (const name of names) result[name] = { iterations: iterations.get(name)!, samples: samples.get(name)! };
  return result;
}

/** Per-round ratios numerator[i] / denominator[i]. */
function ratios(numerator: readonly number[], denominator: readonly number[]): number[] {
  return numerator.map((value, index) => value / denominator[index]!);
}

interface RatioResult {
  readonly name: string;
  readonly definition: string;
  readonly target: string;
  readonly met: boolean;
  readonly stats: Stats;
  readonly samples: number[];
}

const loadAtStart = loadavg();
const started = now();
const toolPinGroup = measureGroup(['toolPinOurs', 'toolPinPeer', 'toolPinFloor']);
const fnvGroup = measureGroup(['fnvOursString', 'fnvOursBytes', 'fnvJsString', 'fnvAsUintN', 'fnv32']);
const canonicalGroup = measureGroup(['canonicalOurs', 'canonicalStringify']);
const sha256Group = measureGroup(['sha256Ours', 'sha256Node']);
const totalSeconds = Number(now() - started) / 1e9;

const measured = { ...toolPinGroup, ...fnvGroup, ...canonicalGroup, ...sha256Group } as Record<
  PassName,
  { iterations: number; samples: number[] }
>;

function ratioResult(
  name: string,
  definition: string,
  numerator: PassName,
  denominator: PassName,
  target: { op: '>=' | '<='; value: number },
): RatioResult {
  const samples = ratios(measured[numerator].samples, measured[denominator].samples);
  const result = stats(samples);
  const met = target.op === '>=' ? result.median >= target.value : result.median <= target.value;
  return { name, definition, target: `${target.op} ${target.value}`, met, stats: result, samples };
}

const ratioResults: RatioResult[] = [
  ratioResult('tool pin', 'peer time / our time', 'toolPinPeer', 'toolPinOurs', { op: '>=', value: 1 }),
  ratioResult('tool pin vs floor', 'our time / stringify+sha256 time', 'toolPinOurs', 'toolPinFloor', { op: '<=', value: 1.2 }),
  ratioResult('FNV 64, string vs asUintN BigInt', 'peer time / our time', 'fnvAsUintN', 'fnvOursString', { op: '>=', value: 2 }),
  ratioResult('FNV 64, string vs FNV-1a 32 loop', 'floor time / our time', 'fnv32', 'fnvOursString', { op: '>=', value: 0.8 }),
  ratioResult('FNV 64, bytes vs asUintN BigInt', 'peer time / our time', 'fnvAsUintN', 'fnvOursBytes', { op: '>=', value: 2 }),
  ratioResult('FNV 64, bytes vs FNV-1a 32 loop', 'floor time / our time', 'fnv32', 'fnvOursBytes', { op: '>=', value: 0.8 }),
  ratioResult('FNV 64, JS fallback vs asUintN BigInt', 'peer time / our time', 'fnvAsUintN', 'fnvJsString', { op: '>=', value: 0 }),
  ratioResult('SHA-256 alone vs node:crypto', 'our time / node:crypto time', 'sha256Ours', 'sha256Node', { op: '<=', value: Number.POSITIVE_INFINITY }),
  ratioResult('canonicalization', 'our time / JSON.stringify time', 'canonicalOurs', 'canonicalStringify', {
    op: '<=',
    value: 2,
  }),
];

// ---------------------------------------------------------------------------------------------
// Report

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}
function ns(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

const cpuList = cpus();
const machine = {
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cores: availableParallelism(),
  cpu: cpuList[0]?.model ?? 'unknown',
  loadAverageAtStart: loadAtStart,
  loadAverageAtEnd: loadavg(),
};
const peers = [packageVersion(repoRoot, 'canonicalize'), packageVersion(repoRoot, 'json-canonicalize')];

console.log('Toolpin hashing benchmark');
console.log(`machine: ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}, ${machine.platform}`);
console.log(`load:    1/5/15-minute load average ${machine.loadAverageAtStart.map((value) => value.toFixed(2)).join(' ')} at the start, ${machine.loadAverageAtEnd.map((value) => value.toFixed(2)).join(' ')} at the end`);
console.log(
  `corpus:  ${TOOLS} tools from ${servers.length} servers (${servers.map((s) => `${s.server} ${s.tools}`).join(', ')}); ` +
    `fixtures ${fixtureBytes} B, tool-pin content ${toolPinBytes} B, schema-pin content ${schemaPinBytes} B` +
    (nonAsciiSchemas === 0 ? ' (all ASCII)' : ` (${nonAsciiSchemas} schemas with non-ASCII)`),
);
console.log(`peers:   ${peers[0]} (timed), ${peers[1]} (output check only)`);
console.log(`method:  ${SAMPLES} interleaved samples of >= ${SAMPLE_NS / 1e6} ms each, after warm-up; outputs identical: yes`);
console.log('');

/** Bytes one pass of a measure covers, for MB/s: the schema bytes for FNV, the tool-pin content else. */
function passBytes(name: PassName): number {
  return name.startsWith('fnv') ? schemaPinBytes : toolPinBytes;
}
const mbPerSecond = (name: PassName, nsPerTool: number): string => ((passBytes(name) / TOOLS / nsPerTool) * 1e3).toFixed(0);
const header = `${pad('measure (process CPU time)', 46)} ${pad('median ns/tool', 15, true)} ${pad('min', 10, true)} ${pad('max', 10, true)} ${pad('MB/s (median)', 14, true)}`;
console.log(header);
console.log('-'.repeat(header.length));
const groups: [string, PassName[]][] = [
  ['tool pin', ['toolPinOurs', 'toolPinPeer', 'toolPinFloor']],
  ['schema pin FNV', ['fnvOursString', 'fnvOursBytes', 'fnvJsString', 'fnvAsUintN', 'fnv32']],
  ['canonicalization', ['canonicalOurs', 'canonicalStringify']],
  ['SHA-256 alone (the tool-pin texts)', ['sha256Ours', 'sha256Node']],
];
for (const [group, names] of groups) {
  console.log(group);
  for (const name of names) {
    const s = stats(measured[name].samples);
    console.log(`  ${pad(LABELS[name], 44)} ${pad(ns(s.median), 15, true)} ${pad(ns(s.min), 10, true)} ${pad(ns(s.max), 10, true)} ${pad(mbPerSecond(name, s.median), 14, true)}`);
  }
}
console.log('');
const ratioHeader = `${pad('ratio', 38)} ${pad('definition', 32)} ${pad('median', 8, true)} ${pad('min', 8, true)} ${pad('max', 8, true)}  target`;
console.log(ratioHeader);
console.log('-'.repeat(ratioHeader.length + 12));
for (const ratio of ratioResults) {
  console.log(
    `${pad(ratio.name, 38)} ${pad(ratio.definition, 32)} ${pad(ratio.stats.median.toFixed(2), 8, true)} ` +
      `${pad(ratio.stats.min.toFixed(2), 8, true)} ${pad(ratio.stats.max.toFixed(2), 8, true)}  ${ratio.target} ${ratio.met ? 'met' : 'MISSED'}`,
  );
}
console.log('');
console.log(`timed section: ${totalSeconds.toFixed(1)} s (sink ${globalSink % 997})`);

const resultsDir = join(repoRoot, 'bench', 'results');
mkdirSync(resultsDir, { recursive: true });
const results = {
  benchmark: 'hashing',
  recordedAt: new Date().toISOString(),
  machine,
  peers,
  corpus: { servers, tools: TOOLS, fixtureBytes, toolPinContentBytes: toolPinBytes, schemaPinContentBytes: schemaPinBytes, nonAsciiSchemas },
  method: { samples: SAMPLES, sampleMs: SAMPLE_NS / 1e6, warmupMs: WARMUP_NS / 1e6, interleaved: true, unit: 'ns of process CPU time per tool' },
  outputsIdentical: true,
  measures: Object.fromEntries(
    (Object.keys(LABELS) as PassName[]).map((name) => [
      name,
      { label: LABELS[name], iterationsPerSample: measured[name].iterations, ...stats(measured[name].samples), samples: measured[name].samples },
    ]),
  ),
  ratios: ratioResults,
  totalSeconds,
};
writeFileSync(join(resultsDir, 'hashing.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results/hashing.json');

if (ENFORCE && ratioResults.some((ratio) => !ratio.met)) process.exitCode = 2;
