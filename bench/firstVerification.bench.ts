/**
 * First-verification benchmark (issue 26): how long the language server the editor runs takes
 * from its start to the first complete verification of the example workspace's blueprint,
 * compared with `toolpin check` of the same workspace (the peer the issue names: "within 1.5× of
 * the CLI").
 *
 *   npm run build && node out/bench/firstVerification.bench.js     (about 1 min at the default 5 rounds)
 *
 * Setup: a copy of examples/ in a temporary folder (its servers are bundled in it: server-everything,
 * server-memory, the rug-pull server, and an HTTP server that is down), removed at the end.
 *
 * Ours: `dist/cli.js lsp --stdio` spawned through the test client (test/support/lspClient.ts),
 * initialized with the copy as its root and trusted as VS Code says it, the blueprint opened at
 * once; the sample ends at the first publication of the blueprint that carries its live verdicts:
 * the drift (TP400), the missing tool (TP401) and the server that is down (TP403). It holds what
 * the server does before that: its start, the workspace scan, the listings, verification. It does
 * not hold what VS Code adds before it (the extension's activation, the language client, opening
 * the editor): code-server runs are test/host's.
 *
 * Peer: `dist/cli.js check --workspace . . --format json` in the copy (TOOLPIN_TRUST=1), whole
 * process, its exit status (1) and its 5 drifted pins checked.
 *
 * Also measured: the same server with the client capabilities VS Code declares (settings pulled,
 * watched files registered before the workspace scan), which a plain LSP client does not.
 *
 * Method: one warm-up of each, then N rounds (--rounds, default 5) of one sample of each, the order
 * rotated every round; the ratio ours / peer is taken per round; median, min and max reported with
 * the load average, since the machine is shared. Target: ours / peer ≤ 1.5.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestServer } from '../test/support/lspClient';
import { findRepoRoot, option, stats } from './support/benchSupport';

const ROUNDS = Math.max(3, Math.floor(option('rounds', 5)));
const TARGET = 1.5;
const repoRoot = findRepoRoot(__dirname);
const cli = join(repoRoot, 'dist', 'cli.js');

function checkOnce(copy: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, [cli, 'check', '--workspace', '.', '.', '--format', 'json'], { cwd: copy, encoding: 'utf8', env: { ...process.env, TOOLPIN_TRUST: '1' }, timeout: 180_000 });
  const elapsed = performance.now() - started;
  const drifted = (JSON.parse(result.stdout) as { summary: { drifted: number } }).summary.drifted;
  if (result.status !== 1 || drifted !== 5) throw new Error(`check: exit ${result.status}, ${drifted} drifted (expected 1 and 5)\n${result.stderr}`);
  return elapsed;
}

/**
 * What VS Code declares that changes the server's start: settings pulled (workspace/configuration),
 * watched files registered before the scan, file creation in edits, code lens refresh.
 */
const VSCODE_LIKE = {
  configuration: true,
  acceptRegistrations: true,
  capabilities: { workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, workspaceFolders: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create'] }, codeLens: { refreshSupport: true } } },
};

async function serverOnce(copy: string, asVsCode = false): Promise<number> {
  const blueprint = join(copy, 'blueprints', 'triage-inbound-issue.blueprint.jsonc');
  const uri = pathToFileURL(blueprint).href;
  const text = readFileSync(blueprint, 'utf8');
  const started = performance.now();
  const server = await startTestServer({ rootUri: pathToFileURL(copy).href, cwd: copy, ...(asVsCode ? VSCODE_LIKE : {}) });
  try {
    server.open(uri, text);
    const wanted = ['TP400', 'TP401', 'TP403'];
    await server.diagnostics(uri, (params) => wanted.every((code) => params.diagnostics.some((diagnostic) => diagnostic.code === code)), 180_000);
    return performance.now() - started;
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'toolpin-first-verification-'));
  const copy = join(scratch, 'example');
  cpSync(join(repoRoot, 'examples'), copy, { recursive: true });
  try {
    checkOnce(copy);
    await serverOnce(copy);
    const ours: number[] = [];
    const asVsCode: number[] = [];
    const peer: number[] = [];
    const ratios: number[] = [];
    const loads: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      loads.push(loadavg()[0]!);
      let server: number;
      let check: number;
      if (round % 2 === 0) {
        server = await serverOnce(copy);
        check = checkOnce(copy);
      } else {
        check = checkOnce(copy);
        server = await serverOnce(copy);
      }
      const vscodeLike = await serverOnce(copy, true);
      ours.push(server);
      asVsCode.push(vscodeLike);
      peer.push(check);
      ratios.push(server / check);
      console.log(`round ${round + 1}: server ${server.toFixed(0)} ms, with VS Code's capabilities ${vscodeLike.toFixed(0)} ms, check ${check.toFixed(0)} ms, ratio ${(server / check).toFixed(2)} (load ${loads.at(-1)!.toFixed(1)})`);
    }
    const ratio = stats(ratios);
    const ms = (values: number[]): string => {
      const s = stats(values);
      return `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
    };
    console.log(`language server, start to the blueprint's live verdicts: ${ms(ours)}`);
    console.log(`the same with VS Code's client capabilities:            ${ms(asVsCode)}`);
    console.log(`toolpin check of the same workspace:                    ${ms(peer)}`);
    console.log(`ratio: median ${ratio.median.toFixed(2)} (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)}), target ≤ ${TARGET}; load ${stats(loads).min.toFixed(1)}–${stats(loads).max.toFixed(1)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 2;
});
