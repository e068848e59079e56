/**
 * Live verification benchmark: 1,000 blueprint files referencing 5 stdio MCP servers.
 *
 *   npm run build && npm run bench:verify     (runs out/bench/verification.bench.js, about 1-2 min)
 *
 * Workspace (generated into a temp dir, removed at the end): 5 connector files, one per server,
 * each pinning 3 tools (tool pins), and 1,000 `*.blueprint.json` files with 4 `mcp.invoke` steps
 * each (schema pins): 3 name their `server`, 1 names none and is looked up on all 5. The servers
 * are 3 fixture servers (test/fixtures/servers/fixture-server.mjs, 50 tools each with names unique
 * to the server, `--delay-ms 150` before every tools/list answer, like a remote server) and 2 real
 * ones from node_modules (server-everything over stdio, server-memory). Every pin is computed from a
 * first, raw listing made with the SDK before anything is timed, so every pin must verify.
 *
 * Measured in each round, interleaved, the order rotated every round:
 *   ours        the cold path of `toolpin check`: find + read + analyze the 1,005 files, build the
 *               registry, a NEW Inventory (default concurrency, keepAlive false), ensure every
 *               needed definition as the CLI does, dispose, verify every document. Asserts that
 *               every pin is verified and that exactly 5 sessions were opened.
 *   floor       the same 5 listings made directly with the SDK (`Client` + `StdioClientTransport`,
 *               `listTools` following cursors), all 5 in parallel (Promise.all), then closed.
 *   sequential  the same 5 SDK listings one after another.
 *   verify-only analysis + verification of the same 1,005 documents from memory, against the listings
 *               of the last `ours` run: the CPU part of `ours`, without any I/O.
 * Ratios are taken within a round (samples taken back to back) and reported as median, min, max:
 *   ours / floor        near 1 means the CLI path adds nothing over the bare SDK listings
 *   sequential / ours   the gain from listing the servers in parallel
 * Finally `node dist/cli.js check <tempdir> --format json` runs once, end to end.
 *
 * Options: --rounds=N (default 7, at least 5), --delay-ms=N (default 150), --no-real (5 fixture
 *          servers, no real ones), --diagnose (adds "ours" with concurrency 5 to every round),
 *          --keep (keep the temp dir). Exit 1 if any pin is not verified or the session count is
 *          not 5. Results: bench/results/verification.json.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, homedir, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import type { ConnectorModel } from '../server/src/core/connector';
import { analyzeDocument, documentKindOf } from '../server/src/core/documents';
import { schemaPin, toolPin } from '../server/src/core/pins';
import type { ServerRegistry } from '../server/src/core/registry';
import { summarize, type PinState } from '../server/src/core/verify';
import { findDocuments } from '../server/src/cli/checkCommand';
import { type AnalyzedDocument, definitionsNeeded, verifyDocuments } from '../server/src/engine/verifyWorkspace';
import { buildWorkspaceRegistry } from '../server/src/engine/workspaceRegistry';
import { environmentCredentials, Redactor } from '../server/src/mcp/credentials';
import { Inventory } from '../server/src/mcp/inventory';
import { TOOLPIN_VERSION } from '../server/src/server';

// ---------------------------------------------------------------------------------------------
// Options

function option(name: string, fallback: number): number {
  const prefix = `--${name}=`;
  const given = process.argv.find((arg) => arg.startsWith(prefix));
  if (given === undefined) return fallback;
  const value = Number(given.slice(prefix.length));
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} needs a non-negative number`);
  return value;
}

const ROUNDS = Math.max(5, Math.floor(option('rounds', 7)));
const DELAY_MS = Math.floor(option('delay-ms', 150));
const REAL_SERVERS = !process.argv.includes('--no-real');
const DIAGNOSE = process.argv.includes('--diagnose');
const KEEP = process.argv.includes('--keep');
const BLUEPRINTS = 1000;
const FIXTURE_TOOLS = 50;
const NAMED_STEPS = 3;
const CONNECTOR_PINS = 3;

function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the benchmark');
    dir = parent;
  }
}

const repoRoot = findRepoRoot(__dirname);
const fixtureServer = join(repoRoot, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const cliBundle = join(repoRoot, 'dist', 'cli.js');

function packageVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return `${name}@${manifest.version}`;
}

function now(): number {
  return performance.now();
}

// ---------------------------------------------------------------------------------------------
// The servers

interface ServerSpec {
  readonly name: string;
  readonly what: string;
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
}

const workspace = mkdtempSync(join(tmpdir(), 'toolpin-bench-verify-'));
let cleanedUp = false;
function cleanUp(): void {
  if (cleanedUp || KEEP) return;
  cleanedUp = true;
  rmSync(workspace, { recursive: true, force: true });
}
process.on('exit', cleanUp);

/** The tools of fixture server `index`: names unique to it, so unnamed steps are never ambiguous. */
function fixtureTools(index: number): unknown[] {
  const tools: unknown[] = [];
  for (let number = 0; number < FIXTURE_TOOLS; number++) {
    const id = String(number).padStart(3, '0');
    tools.push({
      name: `svc${index}_tool_${id}`,
      description: `Fixture tool ${id} of service ${index}: does one thing and reports the result as text.`,
      inputSchema: {
        type: 'object',
        properties: {
          [`arg_${id}`]: { type: number % 2 === 0 ? 'string' : 'integer', description: `argument ${id}` },
          verbose: { type: 'boolean', description: 'explain the result' },
        },
        required: [`arg_${id}`],
        additionalProperties: false,
      },
    });
  }
  return tools;
}

const specs: ServerSpec[] = [];
const fixtureCount = REAL_SERVERS ? 3 : 5;
mkdirSync(join(workspace, 'servers'));
for (let index = 1; index <= fixtureCount; index++) {
  const toolsFile = join(workspace, 'servers', `svc${index}.tools.json`);
  writeFileSync(toolsFile, JSON.stringify({ tools: fixtureTools(index) }));
  specs.push({
    name: `svc${index}`,
    what: `fixture server, ${FIXTURE_TOOLS} tools, --delay-ms ${DELAY_MS}`,
    command: 'node',
    args: [fixtureServer, '--stdio', '--tools-file', toolsFile, '--delay-ms', String(DELAY_MS), '--server-name', `svc${index}`],
    env: {},
  });
}
if (REAL_SERVERS) {
  specs.push({
    name: 'everything',
    what: packageVersion('@modelcontextprotocol/server-everything'),
    command: 'node',
    args: [join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
    env: {},
  });
  specs.push({
    name: 'memory',
    what: packageVersion('@modelcontextprotocol/server-memory'),
    command: 'node',
    args: [join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')],
    env: { MEMORY_FILE_PATH: join(workspace, 'servers', 'memory.jsonl') },
  });
}
const SERVERS = specs.length;

// ---------------------------------------------------------------------------------------------
// Listing with the SDK directly (the floor, and the first listing the pins are computed from)

const ANY_RESULT = z.any();

async function openSdk(spec: ServerSpec): Promise<Client> {
  const client = new Client({ name: 'toolpin-bench-floor', version: TOOLPIN_VERSION }, { capabilities: {} });
  // Same command, arguments, environment (the SDK adds its default environment, as ours does),
  // working folder and piped stderr as the inventory's sessions.
  const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: workspace, stderr: 'pipe' });
  transport.stderr?.on('data', () => undefined);
  await client.connect(transport);
  return client;
}

/**
 * One SDK listing: connect, `listTools` following cursors, close. Returns the number of tools and
 * when the listing was in hand (before the close).
 */
async function sdkListing(spec: ServerSpec): Promise<{ count: number; listedAt: number }> {
  const client = await openSdk(spec);
  try {
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      count += page.tools.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { count, listedAt: now() };
  } finally {
    await client.close();
  }
}

interface RawTool {
  name: string;
  description?: string;
  inputSchema?: unknown;
}

/** The raw tools as served (no SDK validation, which may strip keys), for computing pins. */
async function rawListing(spec: ServerSpec): Promise<RawTool[]> {
  const client = await openSdk(spec);
  try {
    const tools: RawTool[] = [];
    let cursor: string | undefined;
    do {
      const page = (await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ANY_RESULT)) as {
        tools: RawTool[];
        nextCursor?: string;
      };
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The workspace: 5 connectors, 1,000 blueprints, every pin computed from the first listing

interface Workspace {
  readonly pins: number;
  readonly blueprintPins: number;
  readonly connectorPins: number;
  readonly unnamedSteps: number;
  readonly bytes: number;
  readonly texts: Array<{ path: string; text: string }>;
}

async function generateWorkspace(): Promise<Workspace> {
  const listings = await Promise.all(specs.map((spec) => rawListing(spec)));
  const owners = new Map<string, number>();
  for (const tools of listings) for (const tool of tools) owners.set(tool.name, (owners.get(tool.name) ?? 0) + 1);
  const texts: Array<{ path: string; text: string }> = [];
  let bytes = 0;
  const write = (path: string, text: string): void => {
    writeFileSync(path, text);
    texts.push({ path, text });
    bytes += Buffer.byteLength(text);
  };

  mkdirSync(join(workspace, 'connectors'));
  let connectorPins = 0;
  specs.forEach((spec, index) => {
    const pinned = listings[index]!.slice(0, CONNECTOR_PINS);
    const snapshot: Record<string, string> = {};
    for (const tool of pinned) snapshot[tool.name] = toolPin(tool);
    connectorPins += pinned.length;
    const connector = {
      name: spec.name,
      label: `${spec.name} (MCP)`,
      type: 'api',
      provider: 'mcp',
      providerConfig: {
        transport: { kind: 'stdio', command: spec.command, args: spec.args, ...(Object.keys(spec.env).length > 0 ? { env: spec.env } : {}) },
        include: pinned.map((tool) => tool.name),
        toolsSnapshot: snapshot,
      },
    };
    write(join(workspace, 'connectors', `${spec.name}.connector.json`), `${JSON.stringify(connector, null, 2)}\n`);
  });

  // Tools that take part: those with an input schema; unnamed steps use only names served once.
  const usable = listings.map((tools) => tools.filter((tool) => tool.inputSchema !== undefined));
  const unique = usable.map((tools) => tools.filter((tool) => owners.get(tool.name) === 1));
  if (usable.some((tools) => tools.length === 0) || unique.some((tools) => tools.length === 0)) {
    throw new Error('every server needs at least one tool with an inputSchema and a unique name');
  }
  mkdirSync(join(workspace, 'blueprints'));
  let blueprintPins = 0;
  let unnamedSteps = 0;
  for (let file = 0; file < BLUEPRINTS; file++) {
    const steps: unknown[] = [];
    for (let step = 0; step < NAMED_STEPS + 1; step++) {
      const server = (file + step) % SERVERS;
      const named = step < NAMED_STEPS;
      const pool = named ? usable[server]! : unique[server]!;
      const tool = pool[(file * 7 + step * 3) % pool.length]!;
      steps.push({
        id: `call-${step}`,
        effect: 'mcp.invoke',
        input: {
          toolName: tool.name,
          expectedSchemaHash: schemaPin(tool.inputSchema),
          ...(named ? { server: specs[server]!.name } : {}),
          arguments: { note: `{{event.subject}} #${step}`, apiKey: { $secret: 'SERVICE_API_KEY' } },
        },
        on: { schemaDrift: 'report', toolNotFound: 'report' },
      });
      blueprintPins++;
      if (!named) unnamedSteps++;
    }
    steps.push({ id: 'report', effect: 'log.write', input: { message: 'a pinned tool changed or vanished' } });
    const blueprint = { blueprint: `flow-${file}`, formatVersion: 1, description: `Generated flow ${file}.`, steps };
    const folder = join(workspace, 'blueprints', `group-${String(Math.floor(file / 100)).padStart(2, '0')}`);
    if (file % 100 === 0) mkdirSync(folder);
    write(join(folder, `flow-${String(file).padStart(4, '0')}.blueprint.json`), `${JSON.stringify(blueprint, null, 2)}\n`);
  }
  return { pins: blueprintPins + connectorPins, blueprintPins, connectorPins, unnamedSteps, bytes, texts };
}

// ---------------------------------------------------------------------------------------------
// The measured paths

const failures: string[] = [];

interface OursSample {
  readonly totalMs: number;
  /** find + read + analyze every file. */
  readonly analyzeMs: number;
  readonly registryMs: number;
  /** inventory.ensure of every needed definition (connect, list, close of each session). */
  readonly listMs: number;
  readonly disposeMs: number;
  readonly verifyMs: number;
  readonly sessions: number;
  readonly counts: Record<PinState, number>;
}

let lastOurs: { documents: AnalyzedDocument[]; registry: ServerRegistry; inventory: Inventory } | undefined;

/** The cold path of `toolpin check` (server/src/cli/checkCommand.ts), phase by phase. */
async function ours(concurrency: number | undefined, label: string): Promise<OursSample> {
  const started = now();
  const { files } = await findDocuments([workspace]);
  const documents: AnalyzedDocument[] = [];
  for (const file of files) {
    const kind = documentKindOf(file)!;
    const text = readFileSync(file, 'utf8');
    const analysis = analyzeDocument(kind, text);
    if (analysis.problems.length > 0) failures.push(`${label}: ${file}: ${analysis.problems[0]!.code} ${analysis.problems[0]!.message}`);
    documents.push({ path: file, kind, model: analysis.model });
  }
  const analyzed = now();
  const registry = await buildWorkspaceRegistry({
    workspaceFolder: workspace,
    connectors: documents.filter((document) => document.kind === 'connector').map((document) => ({ path: document.path, model: document.model as ConnectorModel })),
    readFile: async (file) => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return undefined;
      }
    },
    variables: { env: process.env, userHome: homedir() },
  });
  const inventory = new Inventory({
    credentials: environmentCredentials(process.env),
    redactor: new Redactor(),
    log: () => undefined,
    clientVersion: TOOLPIN_VERSION,
    trusted: () => true,
    keepAlive: false,
    ...(concurrency !== undefined ? { concurrency } : {}),
  });
  const needed = definitionsNeeded(documents, registry);
  const registered = now();
  let listed = registered;
  try {
    await Promise.all(needed.map((definition) => inventory.ensure([definition])));
    listed = now();
  } finally {
    await inventory.dispose();
  }
  const disposed = now();
  const results = verifyDocuments(documents, registry, inventory, Date.now());
  const verified = now();

  const counts = summarize([...results.values()].flatMap((result) => result.verdicts));
  const unverified = [...results.values()].flatMap((result) => result.verdicts).filter((verdict) => verdict.state !== 'verified');
  if (unverified.length > 0) failures.push(`${label}: ${unverified.length} pin(s) not verified, e.g. ${unverified[0]!.tool}: ${unverified[0]!.state} ${unverified[0]!.reason ?? ''}`);
  if (counts.verified !== expectedPins) failures.push(`${label}: ${counts.verified} pins verified, expected ${expectedPins}`);
  if (inventory.sessionsOpened !== SERVERS) failures.push(`${label}: ${inventory.sessionsOpened} sessions opened, expected exactly ${SERVERS}`);
  if (needed.length !== SERVERS) failures.push(`${label}: ${needed.length} definitions needed, expected ${SERVERS}`);
  if (inventory.pids().length > 0) failures.push(`${label}: server processes still running after dispose`);
  lastOurs = { documents, registry, inventory };
  return {
    totalMs: verified - started,
    analyzeMs: analyzed - started,
    registryMs: registered - analyzed,
    listMs: listed - registered,
    disposeMs: disposed - listed,
    verifyMs: verified - disposed,
    sessions: inventory.sessionsOpened,
    counts,
  };
}

/** The floor: total (connect, list, close) and the time until the last listing was in hand. */
async function floor(): Promise<{ totalMs: number; listedMs: number }> {
  const started = now();
  const listings = await Promise.all(specs.map((spec) => sdkListing(spec)));
  const totalMs = now() - started;
  checkToolCounts('floor', listings.map((listing) => listing.count));
  return { totalMs, listedMs: Math.max(...listings.map((listing) => listing.listedAt)) - started };
}

async function sequential(): Promise<number> {
  const started = now();
  const counts: number[] = [];
  for (const spec of specs) counts.push((await sdkListing(spec)).count);
  const elapsed = now() - started;
  checkToolCounts('sequential', counts);
  return elapsed;
}

let toolCounts: number[] = [];
function checkToolCounts(label: string, counts: number[]): void {
  counts.forEach((count, index) => {
    if (count !== toolCounts[index]) failures.push(`${label}: ${specs[index]!.name} listed ${count} tools, expected ${toolCounts[index]}`);
  });
}

/** Analysis + verification of the documents from memory, against the last run's listings. */
function verifyOnly(texts: ReadonlyArray<{ path: string; text: string }>): { analyzeMs: number; verifyMs: number } {
  if (!lastOurs) throw new Error('verify-only needs a previous run of ours');
  const started = now();
  const documents: AnalyzedDocument[] = texts.map(({ path, text }) => {
    const kind = documentKindOf(path)!;
    return { path, kind, model: analyzeDocument(kind, text).model };
  });
  const analyzed = now();
  const results = verifyDocuments(documents, lastOurs.registry, lastOurs.inventory, Date.now());
  const verified = now();
  let count = 0;
  for (const result of results.values()) for (const verdict of result.verdicts) if (verdict.state === 'verified') count++;
  if (count !== expectedPins) failures.push(`verify-only: ${count} pins verified, expected ${expectedPins}`);
  return { analyzeMs: analyzed - started, verifyMs: verified - analyzed };
}

/** `node dist/cli.js check <workspace> --format json`, run from the workspace. */
function runCli(): Promise<{ wallMs: number; exitCode: number | null; summary: Record<string, number> | undefined; servers: number }> {
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(process.execPath, [cliBundle, 'check', workspace, '--format', 'json'], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const wallMs = now() - started;
      let summary: Record<string, number> | undefined;
      let servers = 0;
      try {
        const report = JSON.parse(Buffer.concat(out).toString('utf8')) as { summary: Record<string, number>; servers: Array<{ state: string }> };
        summary = report.summary;
        servers = report.servers.filter((server) => server.state === 'listed').length;
      } catch {
        failures.push(`cli: no JSON report (stderr: ${Buffer.concat(err).toString('utf8').slice(0, 300)})`);
      }
      resolve({ wallMs, exitCode, summary, servers });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Statistics

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

interface Stats {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}
function stats(values: readonly number[]): Stats {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

// ---------------------------------------------------------------------------------------------
// Run

let expectedPins = 0;

async function main(): Promise<number> {
  if (!existsSync(cliBundle)) {
    console.error('dist/cli.js is missing: run `npm run build` first');
    return 1;
  }
  const cpuList = cpus();
  const machine = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cores: availableParallelism(),
    cpu: cpuList[0]?.model ?? 'unknown',
    loadAverageAtStart: loadavg().map((value) => Number(value.toFixed(2))),
  };
  const setupStarted = now();
  const generated = await generateWorkspace();
  expectedPins = generated.pins;
  const setupMs = now() - setupStarted;

  console.log('Toolpin live verification benchmark');
  console.log(`machine: ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}, ${machine.platform}, load ${machine.loadAverageAtStart.join(' ')}`);
  console.log(`sdk:     ${packageVersion('@modelcontextprotocol/sdk')}`);
  console.log(
    `work:    ${BLUEPRINTS} blueprints + ${SERVERS} connectors (${(generated.bytes / 1024).toFixed(0)} KiB), ${generated.pins} pins ` +
      `(${generated.blueprintPins} schema pins, ${generated.unnamedSteps} of them without "server"; ${generated.connectorPins} tool pins), generated in ${setupMs.toFixed(0)} ms`,
  );
  for (const spec of specs) console.log(`  server ${pad(spec.name, 11)} ${spec.what}`);

  // Warm-up round (not counted): loads every module on both sides, records the tool counts.
  toolCounts = (await Promise.all(specs.map((spec) => sdkListing(spec)))).map((listing) => listing.count);
  await ours(undefined, 'warm-up');
  console.log(`  tools per server: ${specs.map((spec, index) => `${spec.name} ${toolCounts[index]}`).join(', ')}`);
  console.log(`method:  ${ROUNDS} rounds after a warm-up round; in each round every measure once, order rotated`);
  console.log('');

  type Measure = 'ours' | 'floor' | 'sequential' | 'verifyOnly' | 'oursConcurrency5';
  const names: Measure[] = ['ours', 'floor', 'sequential', 'verifyOnly', ...(DIAGNOSE ? (['oursConcurrency5'] as const) : [])];
  const oursSamples: OursSample[] = [];
  const ours5Samples: OursSample[] = [];
  const floorSamples: number[] = [];
  const floorListedSamples: number[] = [];
  const sequentialSamples: number[] = [];
  const verifyOnlySamples: Array<{ analyzeMs: number; verifyMs: number }> = [];
  const timedStarted = now();
  for (let round = 0; round < ROUNDS; round++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length]!;
      if (name === 'ours') oursSamples.push(await ours(undefined, `ours round ${round + 1}`));
      else if (name === 'oursConcurrency5') ours5Samples.push(await ours(SERVERS, `ours (concurrency ${SERVERS}) round ${round + 1}`));
      else if (name === 'floor') {
        const sample = await floor();
        floorSamples.push(sample.totalMs);
        floorListedSamples.push(sample.listedMs);
      }
      else if (name === 'sequential') sequentialSamples.push(await sequential());
      else verifyOnlySamples.push(verifyOnly(generated.texts));
    }
    const last = oursSamples[oursSamples.length - 1]!;
    console.log(
      `round ${round + 1}: ours ${last.totalMs.toFixed(0)} ms (analyze ${last.analyzeMs.toFixed(0)}, list ${last.listMs.toFixed(0)}, verify ${last.verifyMs.toFixed(0)}), ` +
        `floor ${floorSamples[round]!.toFixed(0)} ms, sequential ${sequentialSamples[round]!.toFixed(0)} ms` +
        (DIAGNOSE ? `, ours c=${SERVERS} ${ours5Samples[round]!.totalMs.toFixed(0)} ms` : ''),
    );
  }
  const timedSeconds = (now() - timedStarted) / 1000;

  const cli = await runCli();
  if (cli.exitCode !== 0) failures.push(`cli: exit code ${cli.exitCode}, expected 0`);
  if (cli.summary && cli.summary.verified !== expectedPins) failures.push(`cli: ${cli.summary.verified} pins verified, expected ${expectedPins}`);

  const perRound = (numerator: readonly number[], denominator: readonly number[]): number[] => numerator.map((value, index) => value / denominator[index]!);
  const oursTotals = oursSamples.map((sample) => sample.totalMs);
  const ratioResults = [
    { name: 'ours / floor', definition: 'cold CLI path / parallel SDK listings (near 1: no overhead)', samples: perRound(oursTotals, floorSamples) },
    { name: 'sequential / ours', definition: 'SDK listings one by one / cold CLI path (parallelism gain)', samples: perRound(sequentialSamples, oursTotals) },
    {
      name: 'ours / floor without close',
      definition: 'cold CLI path / parallel SDK listings until the last is in hand (strict)',
      samples: perRound(oursTotals, floorListedSamples),
    },
    { name: 'ours listing phase / floor', definition: 'inventory.ensure alone (incl. closes) / parallel SDK listings', samples: perRound(oursSamples.map((sample) => sample.listMs), floorSamples) },
    ...(DIAGNOSE
      ? [{ name: `ours (concurrency ${SERVERS}) / floor`, definition: 'as ours, with a concurrency limit of 5', samples: perRound(ours5Samples.map((sample) => sample.totalMs), floorSamples) }]
      : []),
  ].map((ratio) => ({ ...ratio, stats: stats(ratio.samples) }));

  const timeRows: Array<[string, number[]]> = [
    ['ours: total (cold CLI path)', oursTotals],
    ['  find + read + analyze 1,005 files', oursSamples.map((sample) => sample.analyzeMs)],
    ['  build registry', oursSamples.map((sample) => sample.registryMs)],
    ['  inventory.ensure (5 sessions)', oursSamples.map((sample) => sample.listMs)],
    ['  inventory.dispose', oursSamples.map((sample) => sample.disposeMs)],
    ['  verify 1,005 documents', oursSamples.map((sample) => sample.verifyMs)],
    ['floor: 5 SDK listings in parallel', floorSamples],
    ['  until the last listing is in hand', floorListedSamples],
    ['sequential: 5 SDK listings one by one', sequentialSamples],
    ['verify-only: analyze + verify (no I/O)', verifyOnlySamples.map((sample) => sample.analyzeMs + sample.verifyMs)],
    ['  analyze 1,005 documents from memory', verifyOnlySamples.map((sample) => sample.analyzeMs)],
    ['  verify 1,005 documents', verifyOnlySamples.map((sample) => sample.verifyMs)],
    ...(DIAGNOSE
      ? ([
          [`ours, concurrency ${SERVERS}: total`, ours5Samples.map((sample) => sample.totalMs)],
          [`  inventory.ensure (5 sessions)`, ours5Samples.map((sample) => sample.listMs)],
        ] as Array<[string, number[]]>)
      : []),
  ];

  console.log('');
  const header = `${pad('measure', 44)} ${pad('median ms', 10, true)} ${pad('min', 8, true)} ${pad('max', 8, true)}`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const [label, values] of timeRows) {
    const s = stats(values);
    console.log(`${pad(label, 44)} ${pad(s.median.toFixed(0), 10, true)} ${pad(s.min.toFixed(0), 8, true)} ${pad(s.max.toFixed(0), 8, true)}`);
  }
  console.log('');
  const ratioHeader = `${pad('ratio', 34)} ${pad('median', 7, true)} ${pad('min', 7, true)} ${pad('max', 7, true)}  definition`;
  console.log(ratioHeader);
  console.log('-'.repeat(ratioHeader.length + 50));
  for (const ratio of ratioResults) {
    console.log(
      `${pad(ratio.name, 34)} ${pad(ratio.stats.median.toFixed(2), 7, true)} ${pad(ratio.stats.min.toFixed(2), 7, true)} ${pad(ratio.stats.max.toFixed(2), 7, true)}  ${ratio.definition}`,
    );
  }
  console.log('');
  const sessions = [...new Set([...oursSamples, ...ours5Samples].map((sample) => sample.sessions))];
  console.log(`sessions opened per run of ours: ${sessions.join(', ')} (expected exactly ${SERVERS})`);
  const allVerified = oursSamples.every((sample) => sample.counts.verified === expectedPins);
  console.log(`pins verified per run of ours: ${allVerified ? `all ${expectedPins}` : 'NOT ALL'}`);
  const s = cli.summary;
  console.log(
    `cli: node dist/cli.js check <tempdir> --format json: ${cli.wallMs.toFixed(0)} ms wall, exit ${cli.exitCode}` +
      (s ? `; ${s.verified} verified, ${s.drifted} drifted, ${s.missing} missing, ${s.ambiguous} ambiguous, ${s.cannotVerify} cannot verify, ${s.problems} problem(s); ${cli.servers} servers listed` : ''),
  );
  console.log(`timed section: ${timedSeconds.toFixed(1)} s; load average at end ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);

  const resultsDir = join(repoRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const results = {
    benchmark: 'verification',
    recordedAt: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: loadavg().map((value) => Number(value.toFixed(2))) },
    sdk: packageVersion('@modelcontextprotocol/sdk'),
    workspace: {
      blueprints: BLUEPRINTS,
      connectors: SERVERS,
      bytes: generated.bytes,
      pins: generated.pins,
      schemaPins: generated.blueprintPins,
      unnamedSteps: generated.unnamedSteps,
      toolPins: generated.connectorPins,
      servers: specs.map((spec, index) => ({ name: spec.name, what: spec.what, tools: toolCounts[index] })),
    },
    method: { rounds: ROUNDS, delayMs: DELAY_MS, realServers: REAL_SERVERS, diagnose: DIAGNOSE, interleaved: true, unit: 'ms' },
    measures: Object.fromEntries(timeRows.map(([label, values]) => [label.trim(), { ...stats(values), samples: values }])),
    ratios: ratioResults,
    ours: oursSamples,
    ...(DIAGNOSE ? { oursConcurrency5: ours5Samples } : {}),
    cli,
    failures,
    timedSeconds,
  };
  writeFileSync(join(resultsDir, 'verification.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('wrote bench/results/verification.json');

  if (failures.length > 0) {
    console.error(`FAILED (${failures.length}):`);
    for (const line of failures.slice(0, 20)) console.error(`  ${line}`);
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    cleanUp();
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    cleanUp();
    process.exitCode = 1;
  },
);
