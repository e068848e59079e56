/**
 * Memory benchmark (issue 13): the language server's memory with the 10,000-step blueprint open,
 * and after editing it, against VS Code's JSON language server holding the same file.
 *
 *   npm run build && node out/bench/memory.bench.js      (about a minute)
 *
 * Ours: `dist/cli.js lsp --stdio` on a temp workspace whose `.mcp.json` names the fixture server
 * (test/fixtures/servers/fixture-server.mjs) serving the 20 bench tools, in two runs: live
 * verification on (the default), and `toolpin.verify.enable` false (offline), where verification
 * must not be a problem per pin. Peer: `vscode-json-language-server --stdio` from
 * vscode-langservers-extracted (the JSON language server VS Code ships, as an npm package),
 * validating the same text against schemas/blueprint.schema.json.
 *
 * Each server gets the file (bench/support/generatedBlueprint.ts, 2.3 MB) opened, and the
 * measurement waits for its first diagnostics (for ours: the live verdicts, 100 drifted pins), then
 * 2 s of quiet; "open" is the resident set size then. Then `--edits` (default 50) one-character
 * edits, each waited for (its publication), then 2 s of quiet: "after edits". Peak is the process's
 * high-water mark (VmHWM). Figures come from /proc/<pid>/status, so this runs on Linux only; the
 * servers run one after the other, never side by side, and the order is rotated per round
 * (--rounds, default 3); medians and the spread of the rounds are reported.
 *
 * Before the servers, a fresh process with --expose-gc reports the heap each parse retains for the
 * same text: vscode-json-languageservice's `parseJSONDocument` against our `analyzeDocument`
 * (information, no target: where the servers' difference is, or is not).
 *
 * Targets: ours ≤ 1.1× the JSON language server, open and after edits; offline publishes no
 * diagnostic per pin. Results: bench/results/memory.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DidChangeConfigurationNotification } from 'vscode-languageserver-protocol';
import { startTestServer, type TestServer } from '../test/support/lspClient';
import { findRepoRoot, option, packageVersion, stats } from './support/benchSupport';
import { generate, tools } from './support/generatedBlueprint';

const ROUNDS = Math.max(1, Math.floor(option('rounds', 3)));
const EDITS = Math.max(1, Math.floor(option('edits', 50)));
const STEPS = Math.floor(option('steps', 10_000));
const QUIET_MS = Math.floor(option('quiet-ms', 2000));

const repoRoot = findRepoRoot(__dirname);
const fixtureServer = join(repoRoot, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const jsonServer = join(repoRoot, 'node_modules', 'vscode-langservers-extracted', 'bin', 'vscode-json-language-server');
const schemaUri = pathToFileURL(join(repoRoot, 'schemas', 'blueprint.schema.json')).href;

const workspace = mkdtempSync(join(tmpdir(), 'toolpin-bench-memory-'));
process.on('exit', () => rmSync(workspace, { recursive: true, force: true }));

/** Resident set size and its high-water mark of a process, in MiB (Linux /proc). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

interface Sample {
  readonly open: number;
  readonly afterEdits: number;
  readonly peak: number;
  /** Diagnostics of the last publication (ours: the drift and, offline, nothing per pin). */
  readonly diagnostics: number;
}

type Subject = 'ours' | 'oursOffline' | 'jsonServer';

async function measure(subject: Subject, text: string, uri: string): Promise<Sample> {
  const server: TestServer =
    subject === 'jsonServer'
      ? await startTestServer({ command: [jsonServer, '--stdio'], rootUri: pathToFileURL(workspace).href, trusted: null })
      : await startTestServer({
          rootUri: pathToFileURL(workspace).href,
          settings: { validate: { debounceMs: 0 }, verify: { enable: subject === 'ours' } },
          capabilities: { workspace: { workspaceFolders: true } },
        });
  try {
    const languageId = subject === 'jsonServer' ? 'jsonc' : 'toolpin-blueprint';
    if (subject === 'jsonServer') {
      // The JSON language server takes its schema associations from pushed settings.
      await server.connection.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { json: { validate: { enable: true }, schemas: [{ fileMatch: ['*.blueprint.jsonc'], url: schemaUri }] } },
      });
    }
    const accept = subject === 'ours' ? (count: number): boolean => count === 100 : (): boolean => true;
    server.open(uri, text, languageId);
    let last = await server.diagnostics(uri, (params) => accept(params.diagnostics.length) || subject !== 'ours', 300_000);
    await sleep(QUIET_MS);
    const pid = server.process.pid!;
    const open = memoryOf(pid).rss;
    let version = 1;
    let current = text;
    for (let edit = 0; edit < EDITS; edit++) {
      // Type a character into one step's argument text, then delete it again.
      const typed = edit % 2 === 0;
      const step = Math.floor(edit / 2) * 97 % STEPS;
      const at = current.indexOf(typed ? `#${step}", "count"` : `#${step}x", "count"`) + `#${step}`.length;
      const position = positionAt(current, at);
      const change = typed ? { range: { start: position, end: position }, text: 'x' } : { range: { start: position, end: positionAt(current, at + 1) }, text: '' };
      current = typed ? current.slice(0, at) + 'x' + current.slice(at) : current.slice(0, at) + current.slice(at + 1);
      version++;
      const target = version;
      const published = server.published.length;
      server.change(uri, version, [change]);
      // The JSON language server publishes without versions: wait for any new publication.
      last = await server.diagnostics(uri, (params) => (params.version !== undefined ? params.version === target : server.published.indexOf(params) >= published), 300_000);
      if (server.published.length > 20) server.published.splice(0, server.published.length - 5);
    }
    await sleep(QUIET_MS);
    const after = memoryOf(pid);
    return { open, afterEdits: after.rss, peak: after.peak, diagnostics: last.diagnostics.length };
  } finally {
    await server.stop();
  }
}

function positionAt(text: string, offset: number): { line: number; character: number } {
  let line = 0;
  let lineStart = 0;
  for (let index = text.indexOf('\n'); index >= 0 && index < offset; index = text.indexOf('\n', index + 1)) {
    line++;
    lineStart = index + 1;
  }
  return { line, character: offset - lineStart };
}

/**
 * The heap the two parses retain for the same text, in one fresh process run with --expose-gc:
 * vscode-json-languageservice's `parseJSONDocument` (the peer's document) and our
 * `analyzeDocument` (tree and models), each measured as heapUsed after a full GC with the result
 * held, minus heapUsed before it; the text itself is made before either, so neither counts it.
 */
function retainedHeap(text: string): { peerMiB: number; oursMiB: number } {
  const textFile = join(workspace, 'retained.jsonc');
  writeFileSync(textFile, text);
  const script = `
    const text = require('node:fs').readFileSync(${JSON.stringify(textFile)}, 'utf8');
    const ls = require('vscode-json-languageservice');
    const { TextDocument } = require('vscode-languageserver-textdocument');
    const { analyzeDocument } = require(${JSON.stringify(join(__dirname, '..', 'server', 'src', 'core', 'documents', 'documents.js'))});
    const service = ls.getLanguageService({});
    const held = [];
    const measure = (make) => { gc(); const before = process.memoryUsage().heapUsed; held.push(make()); gc(); return (process.memoryUsage().heapUsed - before) / 2 ** 20; };
    const peerMiB = measure(() => service.parseJSONDocument(TextDocument.create('file:///retained.jsonc', 'jsonc', 1, text)));
    const oursMiB = measure(() => analyzeDocument('blueprint', text));
    if (held.length !== 2) throw new Error('unreachable');
    process.stdout.write(JSON.stringify({ peerMiB, oursMiB }));
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the retained-heap child failed: ${run.stderr}`);
  const parsed: unknown = JSON.parse(run.stdout);
  if (typeof parsed !== 'object' || parsed === null || !('peerMiB' in parsed) || !('oursMiB' in parsed) || typeof parsed.peerMiB !== 'number' || typeof parsed.oursMiB !== 'number') throw new Error(`unexpected answer ${run.stdout}`);
  return { peerMiB: parsed.peerMiB, oursMiB: parsed.oursMiB };
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('the memory benchmark reads /proc and runs on Linux only');
  const machine = { cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, loadAverageAtStart: loadavg().map((value) => Number(value.toFixed(2))) };
  console.log(`memory benchmark: ${machine.cpus} cpus (${machine.cpuModel}), node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}`);
  const toolsFile = join(workspace, 'tools.json');
  writeFileSync(toolsFile, JSON.stringify({ tools }));
  writeFileSync(join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--tools-file', toolsFile] } } }));
  mkdirSync(join(workspace, 'flows'));
  const generated = generate(STEPS);
  const file = join(workspace, 'flows', 'big.blueprint.jsonc');
  writeFileSync(file, generated.text);
  const uri = pathToFileURL(file).href;
  console.log(`document: ${STEPS} steps, ${(generated.text.length / 1e6).toFixed(2)} MB, ${generated.drifted} drifted; ${EDITS} edits; ${ROUNDS} round(s)`);

  const retained = retainedHeap(generated.text);
  console.log(`retained heap of the document, in process: ours (analyzeDocument) ${retained.oursMiB.toFixed(1)} MiB, vscode-json-languageservice (parseJSONDocument) ${retained.peerMiB.toFixed(1)} MiB, ratio ${(retained.oursMiB / retained.peerMiB).toFixed(2)}`);

  const subjects: Subject[] = ['ours', 'oursOffline', 'jsonServer'];
  const samples: Record<Subject, Sample[]> = { ours: [], oursOffline: [], jsonServer: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...subjects.slice(round % subjects.length), ...subjects.slice(0, round % subjects.length)];
    for (const subject of order) {
      const sample = await measure(subject, generated.text, uri);
      samples[subject].push(sample);
      console.log(`  round ${round + 1} ${subject.padEnd(11)} open ${sample.open.toFixed(0)} MiB, after edits ${sample.afterEdits.toFixed(0)} MiB, peak ${sample.peak.toFixed(0)} MiB, ${sample.diagnostics} diagnostic(s)`);
    }
  }
  const ratio = (subject: Subject, field: 'open' | 'afterEdits' | 'peak'): ReturnType<typeof stats> =>
    stats(samples[subject].map((sample, index) => sample[field] / samples.jsonServer[index]![field]));
  console.log('');
  for (const subject of ['ours', 'oursOffline'] as const) {
    for (const field of ['open', 'afterEdits', 'peak'] as const) {
      const r = ratio(subject, field);
      const target = field === 'peak' ? '(no target)' : `target ≤ 1.1: ${r.median <= 1.1 ? 'met' : 'MISSED'}`;
      console.log(`${subject} / JSON language server, ${field.padEnd(10)}: median ${r.median.toFixed(2)} (min ${r.min.toFixed(2)}, max ${r.max.toFixed(2)}) ${target}`);
    }
  }
  const offlineDiagnostics = Math.max(...samples.oursOffline.map((sample) => sample.diagnostics));
  console.log(`offline (verify.enable false): at most ${offlineDiagnostics} diagnostic(s) published for ${STEPS} pins; target: none per pin: ${offlineDiagnostics < STEPS / 100 ? 'met' : 'MISSED'}`);

  const resultsDir = join(repoRoot, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    join(resultsDir, 'memory.json'),
    `${JSON.stringify({ benchmark: 'memory', recordedAt: new Date().toISOString(), machine: { ...machine, loadAverageAtEnd: loadavg() }, peer: `vscode-langservers-extracted@${packageVersion(repoRoot, 'vscode-langservers-extracted')}`, steps: STEPS, edits: EDITS, retainedHeap: retained, samples }, null, 2)}\n`,
  );
  console.log('wrote bench/results/memory.json');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
