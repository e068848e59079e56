/**
 * Activation and memory in a workspace of plain TypeScript (issue: pins in TypeScript and
 * JavaScript sources): does serving `typescript` documents slow down or swell the language server
 * in a project whose modules hold no pins?
 *
 *   npm run build && npm run bench:plainTs     (runs out/bench/plainTsWorkspace.bench.js, about 1 min)
 *
 * Two workspaces, generated in a temp folder and removed at the end: "plain" holds --files (default
 * 2,000) TypeScript modules without pins (20 folders of 100, 1–4 KB each, a `.gitignore`);
 * "empty" holds nothing else. Both hold the same one sentinel: a module under `zz/` that imports
 * `mcpInvoke$` and writes a malformed pin, so the scan publishes a TP204 for it once it has walked
 * and read the whole workspace (the scan publishes only after its walk; nothing else in either
 * workspace has a diagnostic). One sample = one server: the built `dist/cli.js lsp --stdio`
 * started through the test client (test/support/lspClient.ts), timed from the spawn to the
 * initialize answer and to the sentinel's TP204 ("scan done"); then its resident set size
 * (VmRSS) and peak (VmHWM) from /proc, and the server is stopped. The workspaces alternate, for
 * --samples rounds (default 7, at least 3) after one warm-up round; medians, min and max, and the
 * plain / empty ratio per round are reported. Linux only (memory is read from /proc).
 * Results: bench/results/plainTsWorkspace.json.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestServer } from '../test/support/lspClient';
import { findRepoRoot, option, type Stats, stats } from './support/benchSupport';

const FILES = Math.floor(option('files', 2000));
const SAMPLES = Math.max(3, Math.floor(option('samples', 7)));
const root = findRepoRoot(__dirname);

const SENTINEL = `import { mcpInvoke$ } from '@loom/plugin-mcp';
export const sentinel = mcpInvoke$('sentinel', { toolName: 'echo', expectedSchemaHash: 'fnv1a64:not-a-pin' });
`;

function makeWorkspace(files: number): string {
  const dir = mkdtempSync(join(tmpdir(), `toolpin-bench-plain-${files}-`));
  writeFileSync(join(dir, '.gitignore'), 'coverage/\n');
  for (let index = 0; index < files; index++) {
    const folder = join(dir, 'src', `area${Math.floor(index / 100)}`);
    if (index % 100 === 0) mkdirSync(folder, { recursive: true });
    const body = Array.from({ length: 20 + (index % 60) }, (_, line) => `export const value${line}: number = ${index} + ${line}; // plain code`).join('\n');
    writeFileSync(join(folder, `module${index}.ts`), `import { helper } from '../util';\n${body}\n`);
  }
  mkdirSync(join(dir, 'zz'), { recursive: true });
  writeFileSync(join(dir, 'zz', 'sentinel.ts'), SENTINEL);
  return dir;
}

/** kB of a process's resident set now and at its peak, from /proc (Linux). */
function memoryOf(pid: number): { rssKb: number; peakKb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssKb: field('VmRSS'), peakKb: field('VmHWM') };
}

interface Sample {
  readonly initializeMs: number;
  readonly scanMs: number;
  readonly rssKb: number;
  readonly peakKb: number;
}

async function sample(dir: string): Promise<Sample> {
  const start = performance.now();
  const server = await startTestServer({ rootUri: `file://${dir}` });
  const initializeMs = performance.now() - start;
  try {
    const sentinel = `file://${join(dir, 'zz', 'sentinel.ts')}`;
    await server.diagnostics(sentinel, (params) => params.diagnostics.some((diagnostic) => diagnostic.code === 'TP204'), 120_000);
    const scanMs = performance.now() - start;
    return { initializeMs, scanMs, ...memoryOf(server.process.pid!) };
  } finally {
    await server.stop();
  }
}

function show(value: Stats, digits = 0): string {
  return `${value.median.toFixed(digits)} (${value.min.toFixed(digits)}–${value.max.toFixed(digits)})`;
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('this benchmark reads memory from /proc: Linux only');
  const plain = makeWorkspace(FILES);
  const empty = makeWorkspace(0);
  const load = loadavg().map((value) => value.toFixed(1)).join(' ');
  console.log(`Node ${process.version}; ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}; load ${load}; ${FILES} plain TypeScript files; ${SAMPLES} rounds`);
  try {
    await sample(plain);
    await sample(empty);
    const samples: { plain: Sample[]; empty: Sample[] } = { plain: [], empty: [] };
    for (let round = 0; round < SAMPLES; round++) {
      const order = round % 2 === 0 ? (['plain', 'empty'] as const) : (['empty', 'plain'] as const);
      for (const which of order) samples[which].push(await sample(which === 'plain' ? plain : empty));
    }
    const of = (which: 'plain' | 'empty', field: keyof Sample): Stats => stats(samples[which].map((entry) => entry[field]));
    const ratio = (field: keyof Sample): Stats => stats(samples.plain.map((entry, round) => entry[field] / samples.empty[round]![field]));
    const report = {
      node: process.version,
      load,
      files: FILES,
      rounds: SAMPLES,
      plain: { initializeMs: of('plain', 'initializeMs'), scanMs: of('plain', 'scanMs'), rssKb: of('plain', 'rssKb'), peakKb: of('plain', 'peakKb') },
      empty: { initializeMs: of('empty', 'initializeMs'), scanMs: of('empty', 'scanMs'), rssKb: of('empty', 'rssKb'), peakKb: of('empty', 'peakKb') },
      ratio: { scan: ratio('scanMs'), rss: ratio('rssKb') },
    };
    console.log(`                      ${FILES} plain files        empty workspace      plain / empty`);
    console.log(`spawn → initialize ms  ${show(report.plain.initializeMs).padEnd(20)} ${show(report.empty.initializeMs).padEnd(20)}`);
    console.log(`spawn → scan done ms   ${show(report.plain.scanMs).padEnd(20)} ${show(report.empty.scanMs).padEnd(20)} ${show(report.ratio.scan, 2)}`);
    console.log(`RSS after scan MB      ${show(stats(samples.plain.map((entry) => entry.rssKb / 1024)), 1).padEnd(20)} ${show(stats(samples.empty.map((entry) => entry.rssKb / 1024)), 1).padEnd(20)} ${show(report.ratio.rss, 2)}`);
    console.log(`peak RSS MB            ${show(stats(samples.plain.map((entry) => entry.peakKb / 1024)), 1).padEnd(20)} ${show(stats(samples.empty.map((entry) => entry.peakKb / 1024)), 1)}`);
    mkdirSync(join(root, 'bench', 'results'), { recursive: true });
    writeFileSync(join(root, 'bench', 'results', 'plainTsWorkspace.json'), JSON.stringify(report, null, 2) + '\n');
  } finally {
    rmSync(plain, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
