/**
 * `toolpin check [paths…]`: finds blueprint and connector files, checks them, verifies every pin
 * against the live servers, and reports findings grouped by file with `file:line:col`.
 *
 * Exit status: 0 every pin verified and no error-level problem; 1 any drift, missing tool or
 * error-level problem; 2 nothing of that, but something could not be verified (or read).
 */
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { LineIndex, type Position } from '../core/json/lineIndex';
import { analyzeDocument, connectorOf, documentKindOf } from '../core/documents/documents';
import { capProblems, type Problem } from '../core/problems';
import type { ServerDefinition, ServerRegistry } from '../core/verify/registry';
import type { TrustVerdict } from '../core/trust';
import type { VerificationResult } from '../core/verify/verify';
import { buildReport, type CheckReport, exitStatusOf, type FailOn, type ReportFileInput, toSarif } from '../core/report/report';
import { toMarkdown } from '../core/report/markdownReport';
import type { ParsedPin } from '../core/pins/pins';
import { type AnalyzedDocument, definitionsNeeded, OFFLINE, verifyDocuments } from '../engine/verifyWorkspace';
import { buildWorkspaceRegistry } from '../engine/workspaceRegistry';
import { pinnedToolsOf, PinStoreReader, pinsOf } from '../engine/pinStore';
import { type PolicyFile, PolicyReader } from '../engine/policyFile';
import { terminalSafe } from '../core/report/terminalText';
import { environmentCredentials, Redactor } from '../mcp/credentials';
import { Inventory } from '../mcp/inventory';
import { acceptDocument, findFiles, isDocumentName } from '../io/fileFinder';
import { TOOLPIN_VERSION } from '../runtime';
import { type CliIo, readIfPresent } from './io';
import { cliTrust } from './trust';

/** The file names the CLI looks for, as said in messages. */
export const DOCUMENT_PATTERNS = '*.blueprint.json[c], *.connector.json[c]';

/**
 * Finds Toolpin documents under the given paths, in a stable (sorted) order, with the one file
 * finder (its skipped folders; `.gitignore` honoured). A path given explicitly is taken as it is:
 * a file is checked whatever its name (and reported if it is not a Toolpin document), a folder is
 * searched even when its name is one the finder skips below it.
 */
export async function findDocuments(paths: readonly string[]): Promise<{ files: string[]; unreadable: Array<{ path: string; reason: string }> }> {
  const files = new Set<string>();
  const unreadable: Array<{ path: string; reason: string }> = [];
  for (const target of paths) {
    let info;
    try {
      info = await stat(target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      unreadable.push({ path: target, reason: code === 'ENOENT' ? 'ENOENT (no such file or folder)' : (code ?? String(error)) });
      continue;
    }
    if (!info.isDirectory()) {
      files.add(target);
      continue;
    }
    const found = await findFiles(target, {
      match: isDocumentName,
      accept: acceptDocument,
      gitignore: true,
      onUnreadable: (folder, reason) => unreadable.push({ path: folder, reason }),
    });
    for (const file of found) files.add(file);
  }
  return { files: [...files].sort(), unreadable };
}

/**
 * Checks `--workspace DIR` before anything runs: a folder that does not exist would otherwise
 * surface later as a stdio server that "cannot start" (its working folder is missing).
 */
export async function checkWorkspaceFolder(io: CliIo, command: string, workspace: string): Promise<boolean> {
  const folder = path.resolve(io.cwd, workspace);
  try {
    if ((await stat(folder)).isDirectory()) return true;
    io.stderr(`toolpin ${command}: the workspace folder ${workspace} is not a folder\n`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.stderr(`toolpin ${command}: the workspace folder ${workspace} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`}\n`);
  }
  return false;
}

export interface CheckArgs {
  paths: string[];
  format: 'text' | 'json' | 'sarif' | 'markdown';
  /** The folder that stdio servers start in and mcp.json files are read from (default: cwd). */
  workspace?: string;
  /** Skip live verification: every pin is "cannot verify (offline)". */
  offline?: boolean;
  requestTimeoutMs?: number;
  overallTimeoutMs?: number;
  concurrency?: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** Trust the workspace folder for this run (`--trust`; `TOOLPIN_TRUST=1` does the same). */
  trust?: boolean;
  /** What makes the run exit 1 (core/report/report.ts `FailOn`); default `drift`. */
  failOn?: FailOn;
  /**
   * `--structure-only`: offline, and pins left unverified because of it do not make the status 2
   * (a commit hook checks structure; it must not start servers, nor fail for not starting them).
   * A file that cannot be read, or no file at all, is still 2.
   */
  structureOnly?: boolean;
  /** Also write the SARIF report to this file (so one run gives a job summary and SARIF). */
  sarifFile?: string;
}

/**
 * The inventory every CLI command uses: credentials from the environment, the folder's trust
 * (cli/trustCommand.ts) asked before any server is contacted, one-shot sessions (no server
 * outlives the command).
 */
export function createCliInventory(
  args: Pick<CheckArgs, 'requestTimeoutMs' | 'overallTimeoutMs' | 'concurrency'>,
  env: Readonly<Record<string, string | undefined>>,
  trust: (definition: ServerDefinition) => TrustVerdict,
): Inventory {
  return new Inventory({
    credentials: environmentCredentials(env),
    redactor: new Redactor(),
    log: () => undefined,
    clientVersion: TOOLPIN_VERSION,
    trust,
    keepAlive: false,
    ...(args.requestTimeoutMs !== undefined ? { requestTimeoutMs: args.requestTimeoutMs } : {}),
    ...(args.overallTimeoutMs !== undefined ? { overallTimeoutMs: args.overallTimeoutMs } : {}),
    ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
  });
}

/** A document as the CLI read it: the analysis, its text and how to name it to the user. */
export type CliDocument = AnalyzedDocument & { text: string; display: string; problems: readonly Problem[] };

export interface VerifiedWorkspace {
  readonly workspaceFolder: string;
  readonly documents: CliDocument[];
  readonly registry: ServerRegistry;
  readonly inventory: Inventory;
  readonly results: Map<string, VerificationResult>;
  readonly couldNotRead: boolean;
  /** The workspace folder's policy (`.toolpin/policy.jsonc`), applied to `results`. */
  readonly policy: PolicyFile;
  /** The pin store's content of the documents' pins (`.toolpin/store`), for diffs. */
  readonly pinnedContent: (pin: ParsedPin) => string | undefined;
}

/**
 * Finds, reads and analyzes the documents under the given paths, lists every server they need
 * (in parallel, with progress on a terminal) and verifies them. Shared by `check`, `pin` and
 * `history`. The inventory is disposed before this returns: no server process outlives it.
 */
export async function verifyPaths(io: CliIo, args: CheckArgs, command: string): Promise<VerifiedWorkspace> {
  const roots = args.paths.length > 0 ? args.paths : ['.'];
  const workspaceFolder = path.resolve(io.cwd, args.workspace ?? '.');
  const { files, unreadable } = await findDocuments(roots.map((root) => path.resolve(io.cwd, root)));
  let couldNotRead = false;
  for (const missing of unreadable) {
    io.stderr(`toolpin ${command}: cannot read ${path.relative(io.cwd, missing.path) || '.'}: ${missing.reason}\n`);
    couldNotRead = true;
  }
  if (files.length === 0 && unreadable.length < roots.length) {
    // Nothing to verify is not a pass: a mistyped path or a CI job run in the wrong folder
    // would otherwise succeed silently.
    const where = roots.length === 1 && roots[0] === '.' ? 'the current folder' : roots.join(', ');
    io.stderr(`toolpin ${command}: no blueprint or connector file (${DOCUMENT_PATTERNS}) under ${where}; nothing was verified\n`);
    couldNotRead = true;
  }

  // Files are read with bounded parallelism, then analyzed in a stable order.
  const texts = new Map<string, string | Error>();
  const queue = files.filter((file) => documentKindOf(file));
  const readers = Array.from({ length: Math.min(16, queue.length) }, async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      try {
        texts.set(file, await io.readFile(file));
      } catch (error) {
        texts.set(file, error as Error);
      }
    }
  });
  await Promise.all(readers);
  const documents: CliDocument[] = [];
  for (const file of files) {
    const display = path.relative(io.cwd, file).split(path.sep).join('/');
    const kind = documentKindOf(file);
    if (!kind) {
      io.stderr(`toolpin ${command}: ${display} is not a blueprint or connector file (${DOCUMENT_PATTERNS})\n`);
      couldNotRead = true;
      continue;
    }
    const text = texts.get(file);
    if (text === undefined || text instanceof Error) {
      io.stderr(`toolpin ${command}: cannot read ${display}: ${text?.message ?? 'unknown error'}\n`);
      couldNotRead = true;
      continue;
    }
    const analysis = analyzeDocument(kind, text, file);
    documents.push({ path: file, ...analysis, text, display });
  }

  const env = args.env ?? process.env;
  const readOptional = (file: string): Promise<string | undefined> => readIfPresent(io, file);
  // The registry is the workspace's, whatever part of it is checked: a blueprint checked alone
  // still names the servers its folder's connector files and modules declare (as in the editor).
  const connectors = documents.flatMap((document) => {
    const model = connectorOf(document);
    return model ? [{ path: document.path, model }] : [];
  });
  const given = new Set(documents.map((document) => document.path));
  const { files: workspaceFiles } = await findDocuments([workspaceFolder]);
  for (const file of workspaceFiles) {
    const kind = documentKindOf(file);
    if (given.has(file) || (kind !== 'connector' && kind !== 'source')) continue;
    const text = await readOptional(file);
    const model = text === undefined ? undefined : connectorOf(analyzeDocument(kind, text, file));
    if (model) connectors.push({ path: file, model });
  }
  const registry = await buildWorkspaceRegistry({ workspaceFolder, connectors, readFile: readOptional, variables: { env, userHome: os.homedir() } });

  const progress = io.stderrIsTerminal && args.format === 'text';
  const { decide } = await cliTrust(workspaceFolder, args.trust, env, io);
  const inventory = createCliInventory({ ...args, concurrency: undefined }, env, decide);
  const needed = args.offline ? [] : definitionsNeeded(documents, registry);
  // Every distinct server at once up to 8 unless told otherwise: listing time is mostly waiting.
  inventory.setConcurrency(args.concurrency ?? Math.min(8, Math.max(4, needed.length)));
  try {
    if (needed.length > 0) {
      let done = 0;
      const started = Date.now();
      const ticker = progress
        ? setInterval(() => io.stderr(`\rtoolpin: listing tools of ${needed.length} server(s)… ${done}/${needed.length} done, ${Math.round((Date.now() - started) / 1000)} s`), 1000)
        : undefined;
      try {
        await Promise.all(needed.map((definition) => inventory.ensure([definition]).then(() => void done++)));
      } finally {
        if (ticker) {
          clearInterval(ticker);
          io.stderr('\r\x1b[K');
        }
      }
    }
  } finally {
    await inventory.dispose();
  }

  const store = new PinStoreReader(readOptional, async (folder) => {
    try {
      return await readdir(folder);
    } catch {
      return undefined;
    }
  });
  const pinnedContent = await store.lookup(workspaceFolder, documents.flatMap((document) => pinsOf(document)));
  const policy = await new PolicyReader(readOptional).read(workspaceFolder);
  const fullDefinition = await store.lookupFull(workspaceFolder, documents.flatMap((document) => pinnedToolsOf(document)));
  const results = verifyDocuments(documents, registry, inventory, Date.now(), args.offline ? OFFLINE : undefined, pinnedContent, { policy: policy.policy, fullDefinition });
  return { workspaceFolder, documents, registry, inventory, results, couldNotRead, pinnedContent, policy };
}

export async function checkCommand(io: CliIo, given: CheckArgs): Promise<number> {
  const args: CheckArgs = given.structureOnly ? { ...given, offline: true } : given;
  const { documents, registry, inventory, results, couldNotRead, pinnedContent, policy } = await verifyPaths(io, args, 'check');
  const reportInputs: ReportFileInput[] = documents.map((document) => {
    const verification = results.get(document.path)!;
    let problems = capProblems([...document.problems, ...verification.problems]);
    if (args.offline) problems = problems.filter((found) => found.code !== 'TP403');
    return { path: document.display, text: document.text, verdicts: verification.verdicts, problems };
  });
  // A broken policy is reported as a file of its own: its errors fail the run like any other.
  if (policy.text !== undefined && policy.problems.length > 0) {
    reportInputs.push({ path: path.relative(io.cwd, policy.path).split(path.sep).join('/'), text: policy.text, verdicts: [], problems: capProblems(policy.problems) });
  }
  const servers = registry.definitions.map((definition) => ({
    name: definition.name,
    source: definition.origin.file ? `${definition.origin.kind} ${path.relative(io.cwd, definition.origin.file).split(path.sep).join('/')}` : definition.origin.kind,
    listing: inventory.listing(definition),
  }));
  const report = buildReport(reportInputs, servers);
  const judged = args.structureOnly ? { ...report, summary: { ...report.summary, cannotVerify: 0 } } : report;
  let status: number = exitStatusOf(judged, couldNotRead, args.failOn ?? 'drift');

  if (args.sarifFile !== undefined) {
    const target = path.resolve(io.cwd, args.sarifFile);
    try {
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, `${JSON.stringify(toSarif(report, TOOLPIN_VERSION, reportInputs), null, 2)}\n`, 'utf8');
    } catch (error) {
      // A CI job that asked for SARIF and gets none must not pass: 0 becomes 2, a failure stays.
      io.stderr(`toolpin check: cannot write ${args.sarifFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}\n`);
      if (status === 0) status = 2;
    }
  }
  if (args.format === 'json') io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else if (args.format === 'sarif') io.stdout(`${JSON.stringify(toSarif(report, TOOLPIN_VERSION, reportInputs), null, 2)}\n`);
  else if (args.format === 'markdown') io.stdout(toMarkdown(report, reportInputs, { pinnedContent, offline: args.offline === true }));
  else {
    // Each pin line names where the editor underlines its diagnostic (the tool name of a tool
    // that is not served, the pin otherwise), converted by the same line index.
    const positions = documents.map((document) => {
      const lines = new LineIndex(document.text);
      return results.get(document.path)!.verdicts.map((verdict) => lines.positionAt((verdict.problemSpan ?? verdict.span).offset));
    });
    io.stdout(terminalSafe(renderText(report, positions, registry.definitions.length, args.offline === true)));
  }
  return status;
}

const STATE_LABEL: Record<string, string> = { verified: 'verified', drifted: 'DRIFTED', missing: 'MISSING', ambiguous: 'ambiguous', 'cannot-verify': 'cannot verify' };

function renderText(report: CheckReport, positions: ReadonlyArray<readonly Position[]>, serverCount: number, offline: boolean): string {
  const out: string[] = [];
  for (const [fileIndex, file] of report.files.entries()) {
    if (file.problems.length === 0 && file.pins.length === 0) continue;
    out.push(file.path);
    for (const [pinIndex, pin] of file.pins.entries()) {
      const at = positions[fileIndex]?.[pinIndex] ?? pin.range.start;
      const where = `${file.path}:${at.line + 1}:${at.character + 1}`;
      const server = pin.server ? ` on ${pin.server}` : '';
      out.push(`  ${where}  ${STATE_LABEL[pin.state]!.padEnd(13)}  ${pin.kind} pin of ${pin.tool}${server}${pin.state === 'verified' ? '' : `: ${pin.reason ?? ''}`}${pin.policy ? ` (${pin.policy.text})` : ''}`);
    }
    for (const found of file.problems) {
      if (['TP400', 'TP401', 'TP402', 'TP403'].includes(found.code)) continue; // shown as pin lines above
      const where = `${file.path}:${found.range.start.line + 1}:${found.range.start.character + 1}`;
      out.push(`  ${where}  ${found.severity.padEnd(13)}  ${found.code} ${found.message}`);
    }
  }
  if (serverCount > 0) {
    out.push('', 'Servers:');
    for (const server of report.servers) {
      const state =
        server.state === 'listed'
          ? `${server.tools} tool(s)${server.incomplete ? `, INCOMPLETE: ${server.incomplete}` : ''}`
          : server.reason === 'not-needed'
            ? offline
              ? 'not contacted (offline)'
              : 'not listed (no pin refers to it)'
            : `cannot list: ${server.message}`;
      out.push(`  ${server.name.padEnd(20)} ${state}   [${server.source}]`);
    }
  }
  const s = report.summary;
  const pins = s.verified + s.drifted + s.missing + s.ambiguous + s.cannotVerify;
  out.push(
    '',
    `${report.files.length} file(s), ${pins} pin(s): ${s.verified} verified, ${s.drifted} drifted, ${s.missing} missing, ${s.ambiguous} ambiguous, ${s.cannotVerify} cannot verify${offline ? ' (offline)' : ''}; ${s.problems} problem(s)`,
  );
  return `${out.join('\n')}\n`;
}

