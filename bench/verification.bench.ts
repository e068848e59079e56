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
 * first, raw listing made with the SDK before anything is timed, so every pin must verify; every
 * step has `arguments` that its tool's live input schema accepts (`{{…}}` templates for the required
 * properties), so the argument check runs on every step and finds nothing.
 *
 * Measured in each round, interleaved, the order rotated every round:
 *   ours        the cold path of `toolpin check`: its own `verifyPaths` with the CLI's own I/O,
 *               which finds and reads (16 at a time) the 1,005 files, analyzes the connectors,
 *               builds the registry, then analyzes the blueprints, making a NEW Inventory (default
 *               concurrency, keepAlive false) when the first one needs a server and ensuring each
 *               server as soon as a blueprint needs it (the rest of the analysis overlaps the
 *               listings), disposes, looks the pins up in the pin store and verifies every
 *               document; only rendering the report is left out. Phases are timed by wrapping
 *               Inventory.prototype.ensure/dispose. Asserts that every pin is verified, that there
 *               is no problem at all, and that exactly 5 sessions were opened.
 *   floor       the same 5 listings made directly with the SDK (`Client` + `StdioClientTransport`,
 *               `listTools` following cursors), all 5 in parallel (Promise.all), then closed.
 *   floor, own sessions   the same, but each server process started in its own session
 *               (`detached: true`), as our transport starts them. On Linux with autogroup scheduling
 *               (`kernel.sched_autogroup_enabled=1`) every session gets its own share of the CPU, so
 *               on a shared machine ours gets more CPU than the plain floor; this floor is like for
 *               like. Done by wrapping `child_process.spawn` during this measure only.
 *   sequential  the same 5 SDK listings one after another.
 *   verify-only analysis + verification of the same 1,005 documents from memory, against the listings
 *               of the last `ours` run: the CPU part of `ours`, without any I/O.
 * Ratios are taken within a round (samples taken back to back) and reported as median, min, max:
 *   ours / floor        near 1 means the CLI path adds nothing over the bare SDK listings
 *                       (against both floors)
 *   sequential / ours   the gain from listing the servers in parallel
 * Finally `node dist/cli.js check <tempdir> --format json` runs once, end to end, and then whole
 * processes (issue 13): --process-rounds (default 7) interleaved rounds of `toolpin check` against
 * a floor process (the SDK alone listing the 5 servers), each with its CPU, its servers' CPU and its
 * peak memory, plus `toolpin check` without its code cache (TOOLPIN_CODE_CACHE=0: a user's first run
 * of a new version), for information. Ours uses a code cache folder of the benchmark's own, which a
 * warm-up run writes, as a user's later runs find theirs.
 *
 * Options: --rounds=N (default 5, at least 5), --delay-ms=N (default 150), --no-real (5 fixture
 *          servers, no real ones), --diagnose (adds "ours" with concurrency 5 to every round),
 *          --keep (keep the temp dir). Exit 1 if any pin is not verified, any problem is found,
 *          the session count is not exactly 5, or the CLI does not exit 0.
 *          Results: bench/results/verification.json.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import { analyzeDocument, documentKindOf } from '../server/src/core/documents/documents';
import { schemaPin, toolPin } from '../server/src/core/pins/pins';
import type { ServerRegistry } from '../server/src/core/verify/registry';
import { summarize, type PinState } from '../server/src/core/verify/verify';
import { verifyPaths } from '../server/src/cli/checkCommand';
import { type CliIo, processIo } from '../server/src/cli/io';
import { type AnalyzedDocument, definitionsNeeded, verifyDocuments } from '../server/src/engine/verifyWorkspace';
import { Inventory } from '../server/src/mcp/inventory';
import { TOOLPIN_VERSION } from '../server/src/server';
import { findRepoRoot, option, packageVersion, stats } from './support/benchSupport';

// ---------------------------------------------------------------------------------------------
// Options


const ROUNDS = Math.max(5, Math.floor(option('rounds', 5, true)));
const PROCESS_ROUNDS = Math.max(3, Math.floor(option('process-rounds', 7)));
const DELAY_MS = Math.floor(option('delay-ms', 150, true));
const REAL_SERVERS = !process.argv.includes('--no-real');
const DIAGNOSE = process.argv.includes('--diagnose');
const KEEP = process.argv.includes('--keep');
const BLUEPRINTS = 1000;
const FIXTURE_TOOLS = 50;
const NAMED_STEPS = 3;
const CONNECTOR_PINS = 3;


const repoRoot = findRepoRoot(__dirname);
const fixtureServer = join(repoRoot, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const cliBundle = join(repoRoot, 'dist', 'cli.js');


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
    what: packageVersion(repoRoot, '@modelcontextprotocol/server-everything'),
    command: 'node',
    args: [join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
    env: {},
  });
  specs.push({
    name: 'memory',
    what: packageVersion(repoRoot, '@modelcontextprotocol/server-memory'),
    command: 'node',
    args: [join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js')],
    env: { MEMORY_FILE_PATH: join(workspace, 'servers', 'memory.jsonl') },
  });
}
const SERVERS = specs.length;

// ---------------------------------------------------------------------------------------------
// Own sessions for the floor's servers: the SDK spawns through cross-spawn, which calls
// `child_process.spawn` of the shared module object at call time, so wrapping it here reaches the
// SDK. Only calls that do not choose `detached` themselves are changed, and only while
// `ownSessions` is set (ours always passes `detached: true`, so it is never changed).

const childProcessModule = createRequire(__filename)('node:child_process') as { spawn: (...args: unknown[]) => unknown };
const originalSpawn = childProcessModule.spawn;
let ownSessions = false;
childProcessModule.spawn = (...args: unknown[]): unknown => {
  const options = args[2];
  if (ownSessions && typeof options === 'object' && options !== null && (options as { detached?: boolean }).detached === undefined) {
    args = [args[0], args[1], { ...options, detached: true }];
  }
  return Reflect.apply(originalSpawn, childProcessModule, args);
};

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

/**
 * Arguments that the tool's live input schema accepts, so that the argument check (TP410) runs on
 * every step and finds nothing: each required property (or, when none is required, the first one)
 * gets a value that is exactly one `{{…}}` template, which stands for any value.
 */
function argumentsFor(inputSchema: unknown): Record<string, string> {
  const schema = (typeof inputSchema === 'object' && inputSchema !== null ? inputSchema : {}) as { properties?: Record<string, unknown>; required?: unknown };
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const names = required.length > 0 ? required : Object.keys(schema.properties ?? {}).slice(0, 1);
  return Object.fromEntries(names.map((name) => [name, `{{event.${name}}}`]));
}

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
          arguments: argumentsFor(tool.inputSchema),
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
  /**
   * Until the first inventory.ensure: find + read every file, analyze the connectors, build the
   * registry, analyze blueprints until one needs a server (the rest is analyzed while the servers
   * start: engine/workspaceCheck.ts).
   */
  readonly analyzeMs: number;
  /** From the first inventory.ensure to dispose: the listings, with the rest of the analysis overlapping them. */
  readonly listMs: number;
  readonly disposeMs: number;
  /** The pin-store lookup (a read per pin) and the verification of every document. */
  readonly storeAndVerifyMs: number;
  readonly storeReads: number;
  readonly sessions: number;
  readonly counts: Record<PinState, number>;
}

let lastOurs: { documents: AnalyzedDocument[]; registry: ServerRegistry; inventory: Inventory } | undefined;

/**
 * Phase marks of the run in progress, set by the wrappers below. `verifyPaths` makes its own
 * Inventory, so the phases are read off the inventory's methods and the CLI I/O it is given.
 */
let marks: { ensure?: number; disposeStart?: number; disposeEnd?: number } | undefined;
const originalEnsure = Inventory.prototype.ensure;
const originalDispose = Inventory.prototype.dispose;
Inventory.prototype.ensure = function (this: Inventory, ...args: Parameters<Inventory['ensure']>): Promise<void> {
  if (marks && marks.ensure === undefined) marks.ensure = now();
  return originalEnsure.apply(this, args);
};
Inventory.prototype.dispose = async function (this: Inventory): Promise<void> {
  if (marks) marks.disposeStart = now();
  await originalDispose.apply(this);
  if (marks) marks.disposeEnd = now();
};

/**
 * The cold path of `toolpin check`: `verifyPaths` (server/src/cli/checkCommand.ts) with the CLI's
 * own I/O, i.e. everything but rendering the report.
 */
async function ours(concurrency: number | undefined, label: string): Promise<OursSample> {
  let storeReads = 0;
  const io: CliIo = {
    ...processIo,
    cwd: workspace,
    readFile: (file) => {
      if (marks?.disposeEnd !== undefined) storeReads++;
      return processIo.readFile(file);
    },
    stdout: () => undefined,
    stderr: (text) => void failures.push(`${label}: stderr: ${text.trim()}`),
  };
  marks = {};
  const started = now();
  // The benchmark's own generated workspace: trusted for the run, as `--trust` does.
  const verified = await verifyPaths(io, { paths: [workspace], format: 'json', workspace, trust: true, ...(concurrency !== undefined ? { concurrency } : {}) }, 'check');
  const ended = now();
  const { ensure = started, disposeStart = ensure, disposeEnd = disposeStart } = marks;
  marks = undefined;
  const { documents, registry, listings: inventory, results } = verified;

  const analysisProblems = documents.flatMap((document) => document.problems);
  if (analysisProblems.length > 0) failures.push(`${label}: ${analysisProblems.length} analysis problem(s), e.g. ${analysisProblems[0]!.code} ${analysisProblems[0]!.message}`);
  const problems = [...results.values()].flatMap((result) => result.problems);
  if (problems.length > 0) failures.push(`${label}: ${problems.length} verification problem(s), e.g. ${problems[0]!.code} ${problems[0]!.message}`);
  if (documents.length !== BLUEPRINTS + SERVERS) failures.push(`${label}: ${documents.length} documents, expected ${BLUEPRINTS + SERVERS}`);
  const verdicts = [...results.values()].flatMap((result) => result.verdicts);
  const counts = summarize(verdicts);
  const unverified = verdicts.filter((verdict) => verdict.state !== 'verified');
  if (unverified.length > 0) failures.push(`${label}: ${unverified.length} pin(s) not verified, e.g. ${unverified[0]!.tool}: ${unverified[0]!.state} ${unverified[0]!.reason ?? ''}`);
  if (counts.verified !== expectedPins) failures.push(`${label}: ${counts.verified} pins verified, expected ${expectedPins}`);
  if (inventory.sessionsOpened !== SERVERS) failures.push(`${label}: ${inventory.sessionsOpened} sessions opened, expected exactly ${SERVERS}`);
  const needed = definitionsNeeded(documents, registry);
  if (needed.length !== SERVERS) failures.push(`${label}: ${needed.length} definitions needed, expected ${SERVERS}`);
  if (inventory.pids().length > 0) failures.push(`${label}: server processes still running after dispose`);
  lastOurs = { documents, registry, inventory };
  return {
    totalMs: ended - started,
    analyzeMs: ensure - started,
    listMs: disposeStart - ensure,
    disposeMs: disposeEnd - disposeStart,
    storeAndVerifyMs: ended - disposeEnd,
    storeReads,
    sessions: inventory.sessionsOpened,
    counts,
  };
}

/** The floor: total (connect, list, close) and the time until the last listing was in hand. */
async function floor(inOwnSessions: boolean): Promise<{ totalMs: number; listedMs: number }> {
  ownSessions = inOwnSessions;
  try {
    const started = now();
    const listings = await Promise.all(specs.map((spec) => sdkListing(spec)));
    const totalMs = now() - started;
    checkToolCounts(inOwnSessions ? 'floor (own sessions)' : 'floor', listings.map((listing) => listing.count));
    return { totalMs, listedMs: Math.max(...listings.map((listing) => listing.listedAt)) - started };
  } finally {
    ownSessions = false;
  }
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
  let problems = 0;
  for (const result of results.values()) {
    problems += result.problems.length;
    for (const verdict of result.verdicts) if (verdict.state === 'verified') count++;
  }
  if (count !== expectedPins) failures.push(`verify-only: ${count} pins verified, expected ${expectedPins}`);
  if (problems > 0) failures.push(`verify-only: ${problems} verification problem(s)`);
  return { analyzeMs: analyzed - started, verifyMs: verified - analyzed };
}

/** `node dist/cli.js check <workspace> --format json`, run from the workspace. */
function runCli(): Promise<{ wallMs: number; exitCode: number | null; summary: Record<string, number> | undefined; servers: number }> {
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(process.execPath, [cliBundle, 'check', '--trust', workspace, '--format', 'json'], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] });
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
// Whole processes: the cold check row of issue 13 (time, CPU and peak memory of the process)

interface ProcessSample {
  readonly wallMs: number;
  /** User + system CPU of the process itself (its servers are children, the same on both sides). */
  readonly cpuMs: number;
  /** The same, plus its servers' CPU (the children it waited for; Linux only, else 0 added). */
  readonly treeCpuMs: number;
  readonly peakMiB: number;
}

/** A module preloaded with `--require`: at exit, the process's own resource usage, as JSON. */
const USAGE_REPORTER = `process.on('exit', () => {
  const usage = process.resourceUsage();
  // Linux: the CPU of the children the process waited for (its MCP servers), in clock ticks of 10 ms.
  let childrenMs = 0;
  try {
    const fields = require('node:fs').readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    childrenMs = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {}
  require('node:fs').writeFileSync(process.env.TOOLPIN_BENCH_USAGE, JSON.stringify({ cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, treeCpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000 + childrenMs, peakMiB: usage.maxRSS / 1024 }));
});
`;

/**
 * The floor as a process: the same 5 listings with the SDK alone, in parallel, then closed, and
 * nothing else (no files read, no verification).
 */
function floorScript(): string {
  const sdk = (name: string): string => JSON.stringify(createRequire(join(repoRoot, 'package.json')).resolve(`@modelcontextprotocol/sdk/${name}`));
  return `const { Client } = require(${sdk('client/index.js')});
const { StdioClientTransport } = require(${sdk('client/stdio.js')});
const specs = ${JSON.stringify(specs)};
async function list(spec) {
  const client = new Client({ name: 'toolpin-bench-floor', version: '0' }, { capabilities: {} });
  const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, cwd: ${JSON.stringify(workspace)}, stderr: 'pipe' });
  transport.stderr?.on('data', () => undefined);
  await client.connect(transport);
  let count = 0;
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    count += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
  return count;
}
Promise.all(specs.map(list)).then((counts) => { process.stdout.write(JSON.stringify(counts)); });
`;
}

/** Runs `node --require <reporter> ...args` from the workspace and measures it. */
function measureProcess(args: readonly string[], dir: string, label: string, env: NodeJS.ProcessEnv = {}): Promise<ProcessSample> {
  const usageFile = join(dir, `usage-${label}.json`);
  return new Promise((resolve, reject) => {
    const started = now();
    const child = spawn(process.execPath, ['--require', join(dir, 'usage-reporter.cjs'), ...args], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env, TOOLPIN_BENCH_USAGE: usageFile } });
    child.stdout.on('data', () => undefined);
    child.stderr.on('data', () => undefined);
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const wallMs = now() - started;
      if (exitCode !== 0) failures.push(`${label}: whole process exited with ${exitCode}`);
      try {
        const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { cpuMs: number; treeCpuMs: number; peakMiB: number };
        resolve({ wallMs, cpuMs: usage.cpuMs, treeCpuMs: usage.treeCpuMs, peakMiB: usage.peakMiB });
      } catch (error) {
        reject(new Error(`${label}: no usage report (${String(error)})`));
      }
    });
  });
}

/**
 * Rounds of the whole `toolpin check` process against the whole floor process, interleaved, and
 * of `toolpin check` without its code cache (information: a user's first run of a new version).
 * Ours uses a code cache folder of the benchmark's own (server/src/cli/codeCache.ts), written by
 * the warm-up run, as a user's second and later runs find theirs.
 */
async function wholeProcesses(rounds: number): Promise<{ ours: ProcessSample[]; floor: ProcessSample[]; oursWithoutCodeCache: ProcessSample[] }> {
  const dir = join(workspace, '.bench-processes');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'usage-reporter.cjs'), USAGE_REPORTER);
  writeFileSync(join(dir, 'floor.cjs'), floorScript());
  const codeCache = join(dir, 'code-cache');
  rmSync(codeCache, { recursive: true, force: true });
  const samples = { ours: [] as ProcessSample[], floor: [] as ProcessSample[], oursWithoutCodeCache: [] as ProcessSample[] };
  const checkArgs = [cliBundle, 'check', '--trust', workspace, '--format', 'json'];
  const run = {
    ours: () => measureProcess(checkArgs, dir, 'ours', { TOOLPIN_CODE_CACHE_DIR: codeCache, TOOLPIN_CODE_CACHE: '' }),
    floor: () => measureProcess([join(dir, 'floor.cjs')], dir, 'floor'),
    oursWithoutCodeCache: () => measureProcess(checkArgs, dir, 'ours-without-code-cache', { TOOLPIN_CODE_CACHE: '0' }),
  };
  await run.ours();
  await run.floor();
  const rotations: Array<Array<keyof typeof run>> = [
    ['ours', 'floor', 'oursWithoutCodeCache'],
    ['floor', 'oursWithoutCodeCache', 'ours'],
    ['oursWithoutCodeCache', 'ours', 'floor'],
  ];
  for (let round = 0; round < rounds; round++) {
    for (const name of rotations[round % rotations.length]!) samples[name].push(await run[name]());
  }
  return samples;
}

// ---------------------------------------------------------------------------------------------
// Statistics



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
  console.log(`sdk:     ${packageVersion(repoRoot, '@modelcontextprotocol/sdk')}`);
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

  type Measure = 'ours' | 'floor' | 'floorOwnSessions' | 'sequential' | 'verifyOnly' | 'oursConcurrency5';
  const names: Measure[] = ['ours', 'floor', 'floorOwnSessions', 'sequential', 'verifyOnly', ...(DIAGNOSE ? (['oursConcurrency5'] as const) : [])];
  const oursSamples: OursSample[] = [];
  const ours5Samples: OursSample[] = [];
  const floorSamples: number[] = [];
  const floorListedSamples: number[] = [];
  const floorOwnSamples: number[] = [];
  const floorOwnListedSamples: number[] = [];
  const sequentialSamples: number[] = [];
  const verifyOnlySamples: Array<{ analyzeMs: number; verifyMs: number }> = [];
  const timedStarted = now();
  for (let round = 0; round < ROUNDS; round++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length]!;
      if (name === 'ours') oursSamples.push(await ours(undefined, `ours round ${round + 1}`));
      else if (name === 'oursConcurrency5') ours5Samples.push(await ours(SERVERS, `ours (concurrency ${SERVERS}) round ${round + 1}`));
      else if (name === 'floor') {
        const sample = await floor(false);
        floorSamples.push(sample.totalMs);
        floorListedSamples.push(sample.listedMs);
      } else if (name === 'floorOwnSessions') {
        const sample = await floor(true);
        floorOwnSamples.push(sample.totalMs);
        floorOwnListedSamples.push(sample.listedMs);
      }
      else if (name === 'sequential') sequentialSamples.push(await sequential());
      else verifyOnlySamples.push(verifyOnly(generated.texts));
    }
    const last = oursSamples[oursSamples.length - 1]!;
    console.log(
      `round ${round + 1}: ours ${last.totalMs.toFixed(0)} ms (analyze ${last.analyzeMs.toFixed(0)}, list ${last.listMs.toFixed(0)}, store + verify ${last.storeAndVerifyMs.toFixed(0)}), ` +
        `floor ${floorSamples[round]!.toFixed(0)} ms, floor (own sessions) ${floorOwnSamples[round]!.toFixed(0)} ms, sequential ${sequentialSamples[round]!.toFixed(0)} ms` +
        (DIAGNOSE ? `, ours c=${SERVERS} ${ours5Samples[round]!.totalMs.toFixed(0)} ms` : ''),
    );
  }
  const timedSeconds = (now() - timedStarted) / 1000;

  const cli = await runCli();
  if (cli.exitCode !== 0) failures.push(`cli: exit code ${cli.exitCode}, expected 0`);
  if (cli.summary && cli.summary.verified !== expectedPins) failures.push(`cli: ${cli.summary.verified} pins verified, expected ${expectedPins}`);
  if (cli.summary && cli.summary.problems !== 0) failures.push(`cli: ${cli.summary.problems} problem(s), expected none`);

  const processes = await wholeProcesses(PROCESS_ROUNDS);
  const perRound = (numerator: readonly number[], denominator: readonly number[]): number[] => numerator.map((value, index) => value / denominator[index]!);
  console.log('');
  console.log(`whole processes, ${PROCESS_ROUNDS} interleaved rounds: \`toolpin check --trust\` (dist/cli.js) against the floor process (the SDK alone: 5 listings in parallel, then exit)`);
  for (const [field, label, target] of [['wallMs', 'time', 1.1], ['cpuMs', 'CPU (process)', undefined], ['treeCpuMs', 'CPU (+servers)', 1.2], ['peakMiB', 'peak memory', 1.5]] as const) {
    const ours = stats(processes.ours.map((sample) => sample[field]));
    const floorStats = stats(processes.floor.map((sample) => sample[field]));
    const ratio = stats(perRound(processes.ours.map((sample) => sample[field]), processes.floor.map((sample) => sample[field])));
    const uncached = stats(processes.oursWithoutCodeCache.map((sample) => sample[field]));
    const uncachedRatio = stats(perRound(processes.oursWithoutCodeCache.map((sample) => sample[field]), processes.floor.map((sample) => sample[field])));
    console.log(
      `  ${label.padEnd(15)} ours ${ours.median.toFixed(0)} (${ours.min.toFixed(0)}–${ours.max.toFixed(0)}), floor ${floorStats.median.toFixed(0)} (${floorStats.min.toFixed(0)}–${floorStats.max.toFixed(0)}); ` +
        `ratio ${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})` +
        (target === undefined ? ' (no target)' : `, target ≤ ${target}: ${ratio.median <= target ? 'met' : 'MISSED'}`) +
        `; without the code cache ${uncached.median.toFixed(0)}, ratio ${uncachedRatio.median.toFixed(2)} (${uncachedRatio.min.toFixed(2)}–${uncachedRatio.max.toFixed(2)})`,
    );
  }
  const oursTotals = oursSamples.map((sample) => sample.totalMs);
  const ratioResults = [
    { name: 'ours / floor', definition: 'cold CLI path / parallel SDK listings (near 1: no overhead)', samples: perRound(oursTotals, floorSamples) },
    {
      name: 'ours / floor (own sessions)',
      definition: 'the same, SDK servers in their own sessions as ours (like for like)',
      samples: perRound(oursTotals, floorOwnSamples),
    },
    { name: 'sequential / ours', definition: 'SDK listings one by one / cold CLI path (parallelism gain)', samples: perRound(sequentialSamples, oursTotals) },
    {
      name: 'ours listing phase / floor (own s.)',
      definition: 'first ensure to dispose (the listings, overlapping the rest of the analysis) / floor (own sessions)',
      samples: perRound(oursSamples.map((sample) => sample.listMs), floorOwnSamples),
    },
    {
      name: 'ours / floor (own s.) without close',
      definition: 'cold CLI path / floor (own sessions) until the last listing is in hand',
      samples: perRound(oursTotals, floorOwnListedSamples),
    },
    ...(DIAGNOSE
      ? [
          {
            name: `ours (concurrency ${SERVERS}) / floor (own s.)`,
            definition: `as ours with a concurrency limit of ${SERVERS} / floor (own sessions)`,
            samples: perRound(ours5Samples.map((sample) => sample.totalMs), floorOwnSamples),
          },
        ]
      : []),
  ].map((ratio) => ({ ...ratio, stats: stats(ratio.samples) }));

  const timeRows: Array<[key: string, label: string, values: number[]]> = [
    ['ours', 'ours: total (cold CLI path)', oursTotals],
    ['oursAnalyze', '  until the first server starts (find, read, registry, first blueprint)', oursSamples.map((sample) => sample.analyzeMs)],
    ['oursEnsure', '  listings (5 sessions), the analysis of the rest overlapping', oursSamples.map((sample) => sample.listMs)],
    ['oursDispose', '  inventory.dispose', oursSamples.map((sample) => sample.disposeMs)],
    ['oursStoreAndVerify', '  pin-store lookup + verify 1,005 documents', oursSamples.map((sample) => sample.storeAndVerifyMs)],
    ['floor', 'floor: 5 SDK listings in parallel', floorSamples],
    ['floorListed', '  until the last listing is in hand', floorListedSamples],
    ['floorOwnSessions', 'floor, own sessions (like ours)', floorOwnSamples],
    ['floorOwnSessionsListed', '  until the last listing is in hand', floorOwnListedSamples],
    ['sequential', 'sequential: 5 SDK listings one by one', sequentialSamples],
    ['verifyOnly', 'verify-only: analyze + verify (no I/O)', verifyOnlySamples.map((sample) => sample.analyzeMs + sample.verifyMs)],
    ['verifyOnlyAnalyze', '  analyze 1,005 documents from memory', verifyOnlySamples.map((sample) => sample.analyzeMs)],
    ['verifyOnlyVerify', '  verify 1,005 documents', verifyOnlySamples.map((sample) => sample.verifyMs)],
    ...(DIAGNOSE
      ? ([
          ['oursConcurrency5', `ours, concurrency ${SERVERS}: total`, ours5Samples.map((sample) => sample.totalMs)],
          ['oursConcurrency5Ensure', '  listings (5 sessions), the analysis of the rest overlapping', ours5Samples.map((sample) => sample.listMs)],
        ] as Array<[string, string, number[]]>)
      : []),
  ];

  console.log('');
  const header = `${pad('measure', 44)} ${pad('median ms', 10, true)} ${pad('min', 8, true)} ${pad('max', 8, true)}`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const [, label, values] of timeRows) {
    const s = stats(values);
    console.log(`${pad(label, 44)} ${pad(s.median.toFixed(0), 10, true)} ${pad(s.min.toFixed(0), 8, true)} ${pad(s.max.toFixed(0), 8, true)}`);
  }
  console.log('');
  const ratioHeader = `${pad('ratio', 38)} ${pad('median', 7, true)} ${pad('min', 7, true)} ${pad('max', 7, true)}  definition`;
  console.log(ratioHeader);
  console.log('-'.repeat(ratioHeader.length + 50));
  for (const ratio of ratioResults) {
    console.log(
      `${pad(ratio.name, 38)} ${pad(ratio.stats.median.toFixed(2), 7, true)} ${pad(ratio.stats.min.toFixed(2), 7, true)} ${pad(ratio.stats.max.toFixed(2), 7, true)}  ${ratio.definition}`,
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
    sdk: packageVersion(repoRoot, '@modelcontextprotocol/sdk'),
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
    measures: Object.fromEntries(timeRows.map(([key, label, values]) => [key, { label: label.trim(), ...stats(values), samples: values }])),
    ratios: ratioResults,
    ours: oursSamples,
    wholeProcesses: processes,
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
