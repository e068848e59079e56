/**
 * Editor benchmark (issue: drift in the editor): how long from a keystroke (`didChange`) to the
 * diagnostics of that version (`publishDiagnostics`), for a 10,000-step blueprint (~2 MB) whose
 * pins are checked against a warm inventory, compared with vscode-json-languageservice validating
 * the same text against our blueprint JSON Schema.
 *
 *   npm run build && npm run bench:editor      (runs out/bench/editor.bench.js, about 30 s; 1 min with --profile)
 *
 * Setup (a temp workspace, removed at the end): `.mcp.json` names one server, `demo`, the fixture
 * server (test/fixtures/servers/fixture-server.mjs over stdio) serving 20 tools from a tools file.
 * The big blueprint has 10,000 `mcp.invoke` steps calling those tools on `demo` with arguments,
 * every 100th step with a stale pin (100 drifted); a small one has 200 steps (2 drifted).
 *
 * Ours: the built language server (`dist/cli.js lsp --stdio`), through the test client
 * (test/support/lspClient.ts), with `toolpin.validate.debounceMs` = 0 so the debounce (200 ms by
 * default) is not measured. Both documents are opened once; timing starts when the live verdicts
 * are in (a publication with exactly the expected drift count). One sample = one round trip: an
 * incremental didChange that toggles one step's pin between live and stale (16 hex digits), until
 * the publication carrying that version arrives; its drift count is checked. It includes the IPC
 * and JSON-RPC overhead both ways (serializing, piping and parsing the diagnostics).
 *
 * Peer: vscode-json-languageservice in this process, configured with schemas/blueprint.schema.json
 * for `*.blueprint.jsonc` (comments allowed): TextDocument.create + parseJSONDocument + doValidation
 * of the same text the server just checked. No IPC, no live verification: a schema check only.
 *
 * Floor: jsonc-parser's `parseTree` of the same big text in this process, the parse no JSONC tool
 * can skip when it reads the whole file. Target: ours ≤ 1.5× the floor, which only re-reading what
 * the edit touched can meet (core/documents/incremental.ts).
 *
 * Typing: --typing=N (default 50) one-character edits in the small file (a character typed into a
 * step's argument text, then deleted), each followed by the peer on the same text; p50 and p95 of
 * both. Target: ours ≤ the peer at both.
 *
 * Method: 3 warm-up samples of each measure, then N rounds (--samples, default 9, at least 5) of
 * one sample of each measure, the order rotated every round. The ratio ours / peer is taken per
 * round (samples taken back to back); the median, min and max of the rounds are reported. Target:
 * ours / peer ≤ 0.5 for the 10,000-step file.
 *
 * Options: --samples=N, --steps=N (default 10000), --small-steps=N (default 200),
 *          --profile (afterwards, run a second server under `node --cpu-prof`, time 20 more round
 *          trips on the big file and print where the server's time goes), --keep (keep the temp
 *          dir and the profile). Exit 1 when a publication has the wrong drift count.
 *          Results: bench/results/editor.json.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTree } from 'jsonc-parser';
import { getLanguageService, type LanguageService } from 'vscode-json-languageservice';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { startTestServer, type TestServer } from '../test/support/lspClient';
import { findRepoRoot, median, option, packageVersion, stats } from './support/benchSupport';
import { type Generated, generate, isStale, livePins, STALE_PIN, TOOLS, tools } from './support/generatedBlueprint';

// ---------------------------------------------------------------------------------------------
// Options


const SAMPLES = Math.max(5, Math.floor(option('samples', 9)));
const STEPS = Math.floor(option('steps', 10_000));
const SMALL_STEPS = Math.floor(option('small-steps', 200));
const PROFILE = process.argv.includes('--profile');
const KEEP = process.argv.includes('--keep');
const WARMUP = 3;
const TYPING_EDITS = Math.max(10, Math.floor(option('typing', 50)));


const repoRoot = findRepoRoot(__dirname);
const fixtureServer = join(repoRoot, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const cliBundle = join(repoRoot, 'dist', 'cli.js');


/** The p-th percentile (nearest rank) of samples. */
function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function now(): number {
  return performance.now();
}

// ---------------------------------------------------------------------------------------------
// Workspace: tools, .mcp.json, the two blueprints

const workspace = mkdtempSync(join(tmpdir(), 'toolpin-bench-editor-'));
let cleanedUp = false;
function cleanUp(): void {
  if (cleanedUp || KEEP) return;
  cleanedUp = true;
  rmSync(workspace, { recursive: true, force: true });
}
process.on('exit', cleanUp);

// ---------------------------------------------------------------------------------------------
// Ours: one document in the real server

class OursDocument {
  private document: TextDocument;
  private version = 1;
  /** Steps currently toggled to the other state (live ↔ stale). */
  private readonly toggled = new Set<number>();
  private next = 0;

  constructor(
    private readonly server: TestServer,
    readonly uri: string,
    readonly generated: Generated,
  ) {
    this.document = TextDocument.create(uri, 'toolpin-blueprint', 1, generated.text);
  }

  text(): string {
    return this.document.getText();
  }

  positionAt(offset: number): { line: number; character: number } {
    return this.document.positionAt(offset);
  }

  /** Sends one change and waits for the publication of its version; the drift count must not move. */
  async applyAndWait(server: TestServer, change: { range: { start: { line: number; character: number }; end: { line: number; character: number } }; text: string }): Promise<number> {
    this.version++;
    this.document = TextDocument.update(this.document, [change], this.version);
    const version = this.version;
    const expected = this.expectedDrift();
    const published = server.diagnostics(this.uri, (params) => params.version === version, 120_000);
    const started = now();
    server.change(this.uri, version, [change]);
    const params = await published;
    const elapsed = now() - started;
    const drift = driftCount(params.diagnostics);
    if (drift !== expected) failures.push(`${this.uri} version ${version}: ${drift} drifted pins published after typing, expected ${expected}`);
    if (server.published.length > 50) server.published.splice(0, server.published.length - 10);
    return elapsed;
  }

  expectedDrift(): number {
    let drift = this.generated.drifted;
    for (const step of this.toggled) drift += isStale(step) ? -1 : 1;
    return drift;
  }

  async open(timeoutMs: number): Promise<number> {
    const started = now();
    this.server.open(this.uri, this.generated.text, 'toolpin-blueprint');
    await this.server.diagnostics(this.uri, (params) => driftCount(params.diagnostics) === this.expectedDrift(), timeoutMs);
    return now() - started;
  }

  /** One round trip: toggle one step's pin, wait for the publication of that version. */
  async roundTrip(): Promise<number> {
    // Spread the edited steps over the file, never the same one twice in a row.
    const step = (this.next = (this.next + 3_797) % this.generated.steps);
    const live = livePins[step % TOOLS]!.slice('fnv1a64:'.length);
    const stale = STALE_PIN.slice('fnv1a64:'.length);
    const wasToggled = this.toggled.has(step);
    const nowStale = isStale(step) ? wasToggled : !wasToggled;
    if (wasToggled) this.toggled.delete(step);
    else this.toggled.add(step);
    const offset = this.generated.pinOffsets[step]!;
    const range = { start: this.document.positionAt(offset), end: this.document.positionAt(offset + 16) };
    const change = { range, text: nowStale ? stale : live };
    this.version++;
    this.document = TextDocument.update(this.document, [change], this.version);
    const version = this.version;
    const expected = this.expectedDrift();
    const published = this.server.diagnostics(this.uri, (params) => params.version === version, 120_000);
    const started = now();
    this.server.change(this.uri, version, [change]);
    const params = await published;
    const elapsed = now() - started;
    const drift = driftCount(params.diagnostics);
    if (drift !== expected) failures.push(`${this.uri} version ${version}: ${drift} drifted pins published, expected ${expected}`);
    // Keep the client's list of publications short: a 10,000-step file publishes big arrays.
    if (this.server.published.length > 50) this.server.published.splice(0, this.server.published.length - 10);
    return elapsed;
  }
}

/**
 * One keystroke: a one-character insertion into the text argument of a step, or the deletion of
 * the character inserted before (so the text alternates between two states and the drift count
 * never changes), until the publication of that version arrives.
 */
async function typeRoundTrip(document: OursDocument, server: TestServer, state: { typed: boolean; step: number }): Promise<number> {
  const text = document.text();
  if (!state.typed) state.step = (state.step + 37) % document.generated.steps;
  const at = text.indexOf(state.typed ? `#${state.step}x", "count"` : `#${state.step}", "count"`);
  if (at < 0) throw new Error(`typing: no argument text for step ${state.step} `);
  const offset = at + `#${state.step}`.length;
  const change = state.typed ? { range: { start: document.positionAt(offset), end: document.positionAt(offset + 1) }, text: '' } : { range: { start: document.positionAt(offset), end: document.positionAt(offset) }, text: 'x' };
  state.typed = !state.typed;
  return document.applyAndWait(server, change);
}

function driftCount(diagnostics: ReadonlyArray<{ code?: unknown }>): number {
  return diagnostics.filter((diagnostic) => diagnostic.code === 'TP400').length;
}

// ---------------------------------------------------------------------------------------------
// Peer: vscode-json-languageservice with our JSON Schema

const schemaPath = join(repoRoot, 'schemas', 'blueprint.schema.json');
const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;

function makePeer(): LanguageService {
  const service = getLanguageService({});
  service.configure({ allowComments: true, validate: true, schemas: [{ uri: 'toolpin://schemas/blueprint.schema.json', fileMatch: ['*.blueprint.jsonc'], schema }] });
  return service;
}

let peerVersion = 0;
async function peerValidate(service: LanguageService, uri: string, text: string): Promise<{ elapsed: number; diagnostics: number }> {
  const started = now();
  const document = TextDocument.create(uri, 'jsonc', ++peerVersion, text);
  const jsonDocument = service.parseJSONDocument(document);
  const diagnostics = await service.doValidation(document, jsonDocument, { comments: 'ignore', trailingCommas: 'ignore', schemaValidation: 'error' });
  return { elapsed: now() - started, diagnostics: diagnostics.length };
}

// ---------------------------------------------------------------------------------------------
// Statistics



// ---------------------------------------------------------------------------------------------
// Profile: where the server's time goes

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/**
 * Self time by function and by area, from a .cpuprofile, over the last `windowMicros` of the
 * profile only (the round trips; the open before them is left out).
 */
function summarizeProfile(file: string, windowMicros: number): { total: number; functions: Array<[string, number]>; areas: Array<[string, number]> } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; endTime: number; startTime: number };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  const from = profile.endTime - windowMicros;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at >= from) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of self) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    total += micros;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url ? `${frame.url.split('/').slice(-1)[0]}:${frame.lineNumber + 1}` : ''}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + micros);
    const area = areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + micros);
  }
  const sorted = (map: Map<string, number>): Array<[string, number]> => [...map].sort((a, b) => b[1] - a[1]);
  return { total, functions: sorted(functions).slice(0, 25), areas: sorted(areas) };
}

/** A coarse area of a frame; the server is one bundle (dist/commands.js), so the function name decides. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const name = frame.functionName;
  if (name === '(garbage collector)') return 'garbage collection';
  if (name === '(program)' || name === '(root)') return 'V8 / native (program)';
  if (frame.url === 'node:path') return 'pin store lookup (engine/pinStore)'; // path.join of every pin's store path
  if (!frame.url.endsWith('commands.js')) return `node internals (${frame.url.split('/').slice(-1)[0] || 'native'})`;
  if (/^(scan|parse|visit|onValue|onObject|onArray|onSeparator|onLiteral|onComment|onError|getNodeValue|parseTree|ensurePropertyComplete|scanNext|scanString|scanHexDigits|scanNumber|skipToToken|scanNextNonTrivia|handleError|getToken)/.test(name)) return 'JSONC parse (jsonc-parser)';
  if (/^(collectDuplicateKeys|objectProperties|getProperty|stringField|spanOf|parseJsonDocument)$/.test(name)) return 'document tree helpers (core/json/jsonDocument)';
  if (/checkShape|readStep|analyzeBlueprint|checkBlueprint|checkUnique|checkChannels|checkSchemaPins|checkArgumentSecrets|checkLoggedValue|keyWords|isCredentialKey|stepLabel|problem$/.test(name)) return 'blueprint analysis (core/documents/blueprint, shape, secrets)';
  if (/^(lookup|key|pinsOf)$/.test(name)) return 'pin store lookup (engine/pinStore)';
  if (/verify|lookUp|liveSchemaPin|sameDigest|describeChange|checkStepArguments|readArguments|^read$|validator|Validators|validate|canonical|serialize|write$|fnv1a64|schemaPin/i.test(name)) return 'verification, argument checks and pins (core/verify/verify, arguments, canonicalJson)';
  if (/positionAt|offsetAt|getLineOffsets|computeLineOffsets|problemToDiagnostic|spanToRange|toLsp/.test(name)) return 'offsets → LSP ranges (TextDocument, util/toLsp)';
  if (/stringify|JSON|write|Writer|encode|toString|Buffer|send|Message|handleMessage|readMessage|onData|Content/i.test(name)) return 'JSON-RPC messages (vscode-jsonrpc: parse, stringify, write)';
  if (/update|applyEdits|mergeSort|TextDocument|getText/.test(name)) return 'document sync (TextDocument.update)';
  return 'other server code';
}

// ---------------------------------------------------------------------------------------------
// Main

const failures: string[] = [];

async function startServer(command?: string[]): Promise<TestServer> {
  return startTestServer({
    rootUri: `file://${workspace}`,
    settings: { validate: { debounceMs: 0 } },
    capabilities: { workspace: { workspaceFolders: true } },
    ...(command ? { command } : {}),
  });
}

async function main(): Promise<void> {
  const machine = {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    platform: `${process.platform} ${process.arch}`,
    node: process.version,
    v8: process.versions.v8,
    loadAverageAtStart: loadavg().map((value) => Number(value.toFixed(2))),
  };
  console.log(`editor benchmark: ${machine.cpus} cpus (${machine.cpuModel}), ${machine.platform}, node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`);

  const toolsFile = join(workspace, 'tools.json');
  writeFileSync(toolsFile, JSON.stringify({ tools }));
  writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--tools-file', toolsFile] } } }));
  mkdirSync(join(workspace, 'flows'));
  const big = generate(STEPS);
  const small = generate(SMALL_STEPS);
  console.log(`big: ${big.steps} steps, ${(big.text.length / 1e6).toFixed(2)} MB, ${big.drifted} drifted; small: ${small.steps} steps, ${(small.text.length / 1e3).toFixed(1)} kB, ${small.drifted} drifted`);

  // The peer checks that the schema is applied at all: a step without "id" is an error.
  const peer = makePeer();
  const broken = await peerValidate(peer, 'file:///bench/broken.blueprint.jsonc', small.text.replace('"id": "step-00000", ', ''));
  if (broken.diagnostics === 0) failures.push('the peer reports nothing for a step without "id": the schema is not applied');
  const clean = await peerValidate(peer, 'file:///bench/clean.blueprint.jsonc', big.text);
  console.log(`peer: ${broken.diagnostics} diagnostic(s) on a step without "id", ${clean.diagnostics} on the generated big file`);

  const server = await startServer();
  const bigDoc = new OursDocument(server, `file://${join(workspace, 'flows', 'big.blueprint.jsonc')}`, big);
  const smallDoc = new OursDocument(server, `file://${join(workspace, 'flows', 'small.blueprint.jsonc')}`, small);
  const openBig = await bigDoc.open(180_000);
  const openSmall = await smallDoc.open(60_000);
  console.log(`opened with live verdicts in: big ${openBig.toFixed(0)} ms (includes starting the fixture server and its listing), small ${openSmall.toFixed(0)} ms`);

  const measures = {
    oursBig: { label: `ours, ${STEPS} steps: didChange → publishDiagnostics`, samples: [] as number[] },
    peerBig: { label: `peer, ${STEPS} steps: parse + doValidation`, samples: [] as number[] },
    oursSmall: { label: `ours, ${SMALL_STEPS} steps: didChange → publishDiagnostics`, samples: [] as number[] },
    peerSmall: { label: `peer, ${SMALL_STEPS} steps: parse + doValidation`, samples: [] as number[] },
    floorBig: { label: `floor, ${STEPS} steps: jsonc-parser parseTree`, samples: [] as number[] },
  };
  type Key = keyof typeof measures;
  const run: Record<Key, () => Promise<number>> = {
    oursBig: () => bigDoc.roundTrip(),
    peerBig: async () => (await peerValidate(peer, bigDoc.uri, bigDoc.text())).elapsed,
    oursSmall: () => smallDoc.roundTrip(),
    peerSmall: async () => (await peerValidate(peer, smallDoc.uri, smallDoc.text())).elapsed,
    floorBig: async () => {
      const text = bigDoc.text();
      const started = now();
      parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
      return now() - started;
    },
  };
  const keys = Object.keys(measures) as Key[];
  for (let i = 0; i < WARMUP; i++) for (const key of keys) await run[key]();
  const started = now();
  for (let round = 0; round < SAMPLES; round++) {
    const order = [...keys.slice(round % keys.length), ...keys.slice(0, round % keys.length)];
    for (const key of order) measures[key].samples.push(await run[key]());
  }
  // Typing: one-character edits in the small file, each followed by the peer on the same text.
  const typing = { ours: [] as number[], peer: [] as number[] };
  const typingState = { typed: false, step: 0 };
  for (let i = 0; i < 4; i++) await typeRoundTrip(smallDoc, server, typingState);
  for (let i = 0; i < TYPING_EDITS; i++) {
    typing.ours.push(await typeRoundTrip(smallDoc, server, typingState));
    typing.peer.push((await peerValidate(peer, smallDoc.uri, smallDoc.text())).elapsed);
  }
  const timedSeconds = (now() - started) / 1000;
  await server.stop();

  const ratios = {
    big: measures.oursBig.samples.map((ours, index) => ours / measures.peerBig.samples[index]!),
    small: measures.oursSmall.samples.map((ours, index) => ours / measures.peerSmall.samples[index]!),
    bigFloor: measures.oursBig.samples.map((ours, index) => ours / measures.floorBig.samples[index]!),
  };
  const typingStats = { ours: { p50: percentile(typing.ours, 50), p95: percentile(typing.ours, 95) }, peer: { p50: percentile(typing.peer, 50), p95: percentile(typing.peer, 95) } };
  console.log('');
  console.log(`${'measure'.padEnd(58)} ${'median'.padStart(9)} ${'min'.padStart(9)} ${'max'.padStart(9)}   (ms, ${SAMPLES} samples each)`);
  for (const key of keys) {
    const s = stats(measures[key].samples);
    console.log(`${measures[key].label.padEnd(58)} ${s.median.toFixed(1).padStart(9)} ${s.min.toFixed(1).padStart(9)} ${s.max.toFixed(1).padStart(9)}`);
  }
  const bigRatio = stats(ratios.big);
  const smallRatio = stats(ratios.small);
  console.log('');
  console.log(`ratio ours / peer, ${STEPS} steps: median ${bigRatio.median.toFixed(2)} (min ${bigRatio.min.toFixed(2)}, max ${bigRatio.max.toFixed(2)}), target ≤ 0.5: ${bigRatio.median <= 0.5 ? 'met' : 'MISSED'}`);
  const floorRatio = stats(ratios.bigFloor);
  console.log(`ratio ours / parseTree, ${STEPS} steps: median ${floorRatio.median.toFixed(2)} (min ${floorRatio.min.toFixed(2)}, max ${floorRatio.max.toFixed(2)}), target ≤ 1.5: ${floorRatio.median <= 1.5 ? 'met' : 'MISSED'}`);
  console.log(`ratio ours / peer, ${SMALL_STEPS} steps: median ${smallRatio.median.toFixed(2)} (min ${smallRatio.min.toFixed(2)}, max ${smallRatio.max.toFixed(2)}) (no target)`);
  console.log(`typing, ${TYPING_EDITS} one-character edits in the ${SMALL_STEPS}-step file: ours p50 ${typingStats.ours.p50.toFixed(1)} ms, p95 ${typingStats.ours.p95.toFixed(1)} ms; peer p50 ${typingStats.peer.p50.toFixed(1)} ms, p95 ${typingStats.peer.p95.toFixed(1)} ms; target ours ≤ peer at both: ${typingStats.ours.p50 <= typingStats.peer.p50 && typingStats.ours.p95 <= typingStats.peer.p95 ? 'met' : 'MISSED'}`);
  console.log('ours includes the IPC and JSON-RPC overhead (stdio, serializing and parsing both messages) and live verification; the peer runs in process and checks the schema only.');
  console.log(`timed section: ${timedSeconds.toFixed(1)} s; load average at end ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);

  let profile: ReturnType<typeof summarizeProfile> & { roundTrips: number[]; file: string } | undefined;
  if (PROFILE) profile = await runProfile(big);

  const resultsDir = join(repoRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const results = {
    benchmark: 'editor',
    recordedAt: new Date().toISOString(),
    machine: { ...machine, loadAverageAtEnd: loadavg().map((value) => Number(value.toFixed(2))) },
    peer: packageVersion(repoRoot, 'vscode-json-languageservice'),
    documents: {
      big: { steps: big.steps, bytes: Buffer.byteLength(big.text), drifted: big.drifted },
      small: { steps: small.steps, bytes: Buffer.byteLength(small.text), drifted: small.drifted },
      tools: TOOLS,
    },
    method: { samples: SAMPLES, warmup: WARMUP, interleaved: true, debounceMs: 0, unit: 'ms' },
    openMs: { big: openBig, small: openSmall },
    measures: Object.fromEntries(keys.map((key) => [key, { label: measures[key].label, ...stats(measures[key].samples), samples: measures[key].samples }])),
    ratios: { big: { ...bigRatio, samples: ratios.big, target: '<= 0.5' }, bigFloor: { ...stats(ratios.bigFloor), samples: ratios.bigFloor, target: '<= 1.5' }, small: { ...smallRatio, samples: ratios.small } },
    typing: { edits: TYPING_EDITS, ...typingStats, samples: typing, target: 'ours <= peer at p50 and p95' },
    ...(profile ? { profile } : {}),
    failures,
    timedSeconds,
  };
  writeFileSync(join(resultsDir, 'editor.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log('wrote bench/results/editor.json');
  if (failures.length > 0) {
    console.error(`FAILED (${failures.length}):`);
    for (const line of failures.slice(0, 20)) console.error(`  ${line}`);
    process.exitCode = 1;
  }
}

/** Runs the server under --cpu-prof, times 20 round trips on the big file, summarizes the profile. */
async function runProfile(big: Generated): Promise<ReturnType<typeof summarizeProfile> & { roundTrips: number[]; file: string }> {
  const dir = join(workspace, 'profile');
  mkdirSync(dir, { recursive: true });
  const server = await startServer(['--cpu-prof', `--cpu-prof-dir=${dir}`, cliBundle, 'lsp', '--stdio']);
  const document = new OursDocument(server, `file://${join(workspace, 'flows', 'profiled.blueprint.jsonc')}`, big);
  await document.open(180_000);
  for (let i = 0; i < WARMUP; i++) await document.roundTrip();
  const roundTrips: number[] = [];
  const started = now();
  for (let i = 0; i < 20; i++) roundTrips.push(await document.roundTrip());
  await server.stop();
  const window = (now() - started) * 1000;
  const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no .cpuprofile');
  const summary = summarizeProfile(join(dir, file), window);
  console.log('');
  console.log(`profile (server under --cpu-prof; 20 round trips on the big file and the shutdown, median ${median(roundTrips).toFixed(1)} ms each): ${(summary.total / 1e3).toFixed(0)} ms busy (idle left out)`);
  console.log('by area (self time):');
  for (const [area, micros] of summary.areas) console.log(`  ${(micros / 1e3).toFixed(0).padStart(7)} ms  ${((micros / summary.total) * 100).toFixed(1).padStart(5)}%  ${area}`);
  console.log('by function (self time, top 25):');
  for (const [name, micros] of summary.functions) console.log(`  ${(micros / 1e3).toFixed(0).padStart(7)} ms  ${((micros / summary.total) * 100).toFixed(1).padStart(5)}%  ${name}`);
  if (KEEP) console.log(`profile kept: ${join(dir, file)}`);
  return { ...summary, roundTrips, file: KEEP ? join(dir, file) : file };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
