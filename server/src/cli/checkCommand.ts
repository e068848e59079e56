/**
 * `toolpin check [paths…]`: finds blueprint and connector files, checks them, verifies every pin
 * against the live servers, and reports findings grouped by file with `file:line:col`.
 *
 * Exit status: 0 every pin verified and no error-level problem; 1 any drift, missing tool or
 * error-level problem; 2 nothing of that, but something could not be verified (or read).
 */
import { stat } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { pinKinds } from '../core/documents/kinds/registry';
import { sourceOf } from '../core/documents/documents';
import { LineIndex, type Position } from '../core/json/lineIndex';
import { capProblems } from '../core/problems';
import type { ServerDefinition } from '../core/verify/registry';
import type { TrustVerdict } from '../core/trust';
import type { PinState } from '../core/verify/verify';
import { buildReport, type CheckReport, exitStatusOf, type FailOn, type ReportFileInput, toSarif } from '../core/report/report';
import { toMarkdown } from '../core/report/markdownReport';
import { errorCode } from '../core/json/values';
import { scopeFor, WriteRefused, writeFileSafely } from '../io/safeWrite';
import { nodeFileSystem } from '../engine/nodeFileSystem';
import { type CheckedDocument, type CheckIssue, checkWorkspace, type ListingProgress, type WorkspaceCheck } from '../engine/workspaceCheck';
import { terminalSafe } from '../core/report/terminalText';
import { environmentCredentials, Redactor } from '../mcp/credentials';
import { Inventory } from '../mcp/inventory';
import { CHECK_CONCURRENCY } from '../engine/timeouts';
import { TOOLPIN_VERSION } from '../runtime';
import { type CliIo, readIfPresent } from './io';
import { cliTrust } from './trust';
import { checkLockFiles, findLockFiles, isLockFile } from './lockfiles';
import { nodeModuleAccess } from '../io/sourceModules';
import { readRegularText } from '../io/regularFile';
import { foreignPinAt } from '../core/documents/source/analyzeSource';
import { defaultSourceNames } from '../core/documents/source/sourceNames';

export { CHECK_CONCURRENCY } from '../engine/timeouts';

/** The file names the CLI looks for, as said in messages. */
export const DOCUMENT_PATTERNS = ownFilePatterns();

/**
 * The file names of Toolpin's own kinds (those with a language of their own: blueprint and
 * connector files), as messages write them: `*.x.json` and `*.x.jsonc` as `*.x.json[c]`.
 */
function ownFilePatterns(): string {
  const shown = (patterns: readonly string[]): string[] =>
    patterns.flatMap((pattern) => (pattern.endsWith('c') && patterns.includes(pattern.slice(0, -1)) ? [] : [patterns.includes(`${pattern}c`) ? `${pattern}[c]` : pattern]));
  return pinKinds()
    .filter((kind) => kind.languages.length > 0)
    .flatMap((kind) => shown(kind.patterns))
    .join(', ');
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
    const code = errorCode(error);
    io.stderr(`toolpin ${command}: the workspace folder ${workspace} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${String(code ?? error)})`}\n`);
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
  /** A stdio server's start (`--start-timeout`); engine/timeouts.ts by default. */
  startTimeoutMs?: number;
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
  args: Pick<CheckArgs, 'requestTimeoutMs' | 'overallTimeoutMs' | 'startTimeoutMs' | 'concurrency'>,
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
    ...(args.startTimeoutMs !== undefined ? { startTimeoutMs: args.startTimeoutMs } : {}),
    ...(args.concurrency !== undefined ? { concurrency: args.concurrency } : {}),
  });
}

/** A document as the CLI read it: the engine's document and how to name it to the user. */
export type CliDocument = CheckedDocument & { readonly display: string };

export interface VerifiedWorkspace extends Omit<WorkspaceCheck<Inventory>, 'documents'> {
  readonly documents: CliDocument[];
  /** True when something given could not be read (or nothing was found): the run is not a pass. */
  readonly couldNotRead: boolean;
  /** The peers' lockfiles under the paths given (cli/lockfiles.ts), verified by the caller. */
  readonly lockFiles: readonly string[];
}

/** How the CLI names a file: relative to the current folder, with forward slashes. */
export function displayPath(cwd: string, file: string): string {
  return path.relative(cwd, file).split(path.sep).join('/');
}

/**
 * The check of `check`, `pin` and `history` (engine/workspaceCheck.ts) with the command line's
 * words: what could not be read on standard error, the folder's trust, the MCP inventory as the
 * listing source (every distinct server at once up to 8 unless told otherwise: listing time is
 * mostly waiting), and progress on a terminal. No server process outlives it.
 */
export async function verifyPaths(io: CliIo, args: CheckArgs, command: string): Promise<VerifiedWorkspace> {
  const roots = args.paths.length > 0 ? args.paths : ['.'];
  const lockFiles = await findLockFiles(roots.map((root) => path.resolve(io.cwd, root)));
  const workspaceFolder = path.resolve(io.cwd, args.workspace ?? '.');
  const env = args.env ?? process.env;
  const progress = io.stderrIsTerminal && args.format === 'text';
  let couldNotRead = false;
  // Issues are said as the check finds them, before the trust decision speaks.
  const say = (issues: readonly CheckIssue[]): void => {
    for (const issue of issues) {
      // Lockfiles found are something to verify: no document besides them is not "nothing found".
      if (issue.kind === 'nothing-found' && lockFiles.length > 0) continue;
      couldNotRead = true;
      if (issue.kind === 'unreadable') io.stderr(`toolpin ${command}: cannot read ${path.relative(io.cwd, issue.path) || '.'}: ${issue.reason}\n`);
      else if (issue.kind === 'nothing-found') {
        // Nothing to verify is not a pass: a mistyped path or a CI job run in the wrong folder
        // would otherwise succeed silently.
        const where = roots.length === 1 && roots[0] === '.' ? 'the current folder' : roots.join(', ');
        io.stderr(`toolpin ${command}: no blueprint or connector file (${DOCUMENT_PATTERNS}) under ${where}; nothing was verified\n`);
      } else if (issue.kind === 'nothing-to-check') {
        io.stderr(`toolpin ${command}: ${displayPath(io.cwd, issue.path)} holds no defineConnector, defineStack connector or mcpInvoke$ call Toolpin recognises; nothing to check\n`);
      } else if (issue.kind === 'not-a-document') io.stderr(`toolpin ${command}: ${displayPath(io.cwd, issue.path)} is not a blueprint or connector file (${DOCUMENT_PATTERNS})\n`);
      else io.stderr(`toolpin ${command}: cannot read ${displayPath(io.cwd, issue.path)}: ${issue.message}\n`);
    }
  };
  const checked = await checkWorkspace({
    // A lockfile named explicitly is the lockfiles' own (checkLockFiles), not a document.
    roots: roots.filter((root) => !isLockFile(root)).map((root) => path.resolve(io.cwd, root)),
    workspaceFolder,
    files: { readFile: (file) => io.readFile(file), readIfPresent: (file) => readIfPresent(io, file), listFolder: nodeFileSystem.listFolder },
    variables: { env, userHome: os.homedir() },
    offline: args.offline === true,
    firstPins: command === 'pin',
    now: () => Date.now(),
    // Pins imported from another module of the workspace are read there (relative imports only).
    modules: nodeModuleAccess({ root: workspaceFolder, maxFileBytes: defaultSourceNames().maxFileBytes }),
    onIssues: say,
    // Made when the first document needs a server, before the others are analyzed: how many will
    // be needed is not known yet, so the default allows 8 at once (never more than are needed).
    listingSource: async () => {
      const { decide } = await cliTrust(workspaceFolder, args.trust, env, io);
      return createCliInventory({ ...args, concurrency: args.concurrency ?? CHECK_CONCURRENCY }, env, decide);
    },
    ...(progress ? { progress: (total: number) => terminalProgress(io, total) } : {}),
  });
  return { ...checked, documents: checked.documents.map((document) => ({ ...document, display: displayPath(io.cwd, document.path) })), couldNotRead, lockFiles };
}

/** "listing tools of N server(s)… k/N done, s" on one terminal line, every second until done. */
function terminalProgress(io: CliIo, total: number): ListingProgress {
  let done = 0;
  const started = Date.now();
  // A one-shot timer re-armed after each line, ended by finish (no interval to outlive it).
  let ticker: NodeJS.Timeout | undefined;
  const tick = (): void => {
    io.stderr(`\rtoolpin: listing tools of ${total} server(s)… ${done}/${total} done, ${Math.round((Date.now() - started) / 1000)} s`);
    ticker = setTimeout(tick, 1000);
  };
  ticker = setTimeout(tick, 1000);
  return {
    settled: () => void done++,
    finish: () => {
      clearTimeout(ticker);
      io.stderr('\r\x1b[K');
    },
  };
}

/** The texts of the modules that write pins the documents import (for SARIF fixes there); a module that cannot be read is absent. */
async function definingModuleTexts(documents: readonly CliDocument[]): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const document of documents) {
    for (const foreign of sourceOf(document)?.foreignPins ?? []) {
      if (texts.has(foreign.file)) continue;
      try {
        texts.set(foreign.file, await readRegularText(foreign.file));
      } catch {
        // Its SARIF fix is left out; the drift is reported all the same.
      }
    }
  }
  return texts;
}

export async function checkCommand(io: CliIo, given: CheckArgs): Promise<number> {
  const args: CheckArgs = given.structureOnly ? { ...given, offline: true } : given;
  const { documents, registry, listings, results, couldNotRead, pinnedContent, policy, workspaceFolder, lockFiles } = await verifyPaths(io, args, 'check');
  const definingTexts = await definingModuleTexts(documents);
  const reportInputs: ReportFileInput[] = documents.map((document) => {
    const verification = results.get(document.path)!;
    let problems = capProblems([...document.problems, ...verification.problems]);
    if (args.offline) problems = problems.filter((found) => found.code !== 'TP403');
    const model = document.model;
    const writtenElsewhere: ReportFileInput['writtenElsewhere'] = (span, tool) => {
      const foreign = foreignPinAt(model, span, tool);
      const text = foreign ? definingTexts.get(foreign.file) : undefined;
      return foreign && text !== undefined ? { path: displayPath(io.cwd, foreign.file), text, literal: foreign.literal, quote: foreign.quote } : undefined;
    };
    return { path: document.display, text: document.text, verdicts: verification.verdicts, problems, writtenElsewhere };
  });
  // A broken policy is reported as a file of its own: its errors fail the run like any other.
  if (policy.text !== undefined && policy.problems.length > 0) {
    reportInputs.push({ path: displayPath(io.cwd, policy.path), text: policy.text, verdicts: [], problems: capProblems(policy.problems) });
  }
  const env = args.env ?? process.env;
  const locks = await checkLockFiles(io, lockFiles, {
    workspaceFolder,
    env,
    offline: args.offline === true,
    trust: async () => (await cliTrust(workspaceFolder, args.trust, env, io)).decide,
    ...(args.requestTimeoutMs !== undefined ? { requestTimeoutMs: args.requestTimeoutMs } : {}),
    ...(args.startTimeoutMs !== undefined ? { startTimeoutMs: args.startTimeoutMs } : {}),
  });
  for (const lock of locks) {
    let problems = capProblems(lock.problems);
    if (args.offline) problems = problems.filter((found) => found.code !== 'TP126');
    reportInputs.push({ path: displayPath(io.cwd, lock.path), text: lock.text, verdicts: lock.verdicts, problems });
  }
  const lockServers = locks.flatMap((lock) => lock.servers.map((server) => ({ ...server, source: server.source === 'warden-lock' ? `warden-lock ${displayPath(io.cwd, lock.path)}` : server.source })));
  const servers = [
    ...registry.definitions.map((definition) => ({
      name: definition.name,
      source: definition.origin.file ? `${definition.origin.kind} ${path.relative(io.cwd, definition.origin.file).split(path.sep).join('/')}` : definition.origin.kind,
      listing: listings.listing(definition),
    }))
      // A server of .mcp.json that only a lockfile needed is shown once, as the lock listed it.
      .filter((server) => server.listing !== undefined || !lockServers.some((other) => other.name === server.name && other.source === server.source)),
    ...lockServers,
  ];
  const report = buildReport(reportInputs, servers);
  const judged = args.structureOnly ? { ...report, summary: { ...report.summary, cannotVerify: 0 } } : report;
  // A lock whose server could not be listed (TP126) was not verified: not a pass.
  const lockUnverified = !args.offline && locks.some((lock) => lock.problems.some((found) => found.code === 'TP126'));
  let status: number = exitStatusOf(judged, couldNotRead || lockUnverified, args.failOn ?? 'drift');

  if (args.sarifFile !== undefined) {
    const target = path.resolve(io.cwd, args.sarifFile);
    // Inside the workspace (the Action's toolpin.sarif) the report stays inside it, whatever links
    // the checkout holds; a file named elsewhere is written at exactly that name (io/safeWrite.ts).
    try {
      await writeFileSafely(target, `${JSON.stringify(toSarif(report, TOOLPIN_VERSION, reportInputs), null, 2)}\n`, scopeFor(target, workspaceFolder));
    } catch (error) {
      // A CI job that asked for SARIF and gets none must not pass: 0 becomes 2, a failure stays.
      io.stderr(`toolpin check: cannot write ${args.sarifFile}: ${error instanceof WriteRefused ? terminalSafe(error.reason) : String(errorCode(error) ?? error)}\n`);
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

const STATE_LABEL: Readonly<Record<PinState, string>> = { verified: 'verified', drifted: 'DRIFTED', missing: 'MISSING', ambiguous: 'ambiguous', 'cannot-verify': 'cannot verify' };

function renderText(report: CheckReport, positions: ReadonlyArray<readonly Position[]>, serverCount: number, offline: boolean): string {
  const out: string[] = [];
  for (const [fileIndex, file] of report.files.entries()) {
    if (file.problems.length === 0 && file.pins.length === 0) continue;
    out.push(file.path);
    for (const [pinIndex, pin] of file.pins.entries()) {
      const at = positions[fileIndex]?.[pinIndex] ?? pin.range.start;
      const where = `${file.path}:${at.line + 1}:${at.character + 1}`;
      const server = pin.server ? ` on ${pin.server}` : '';
      out.push(`  ${where}  ${STATE_LABEL[pin.state].padEnd(13)}  ${pin.kind} pin of ${pin.tool}${server}${pin.state === 'verified' ? '' : `: ${pin.reason ?? ''}`}${pin.policy ? ` (${pin.policy.text})` : ''}`);
    }
    for (const found of file.problems) {
      if (['TP400', 'TP401', 'TP402', 'TP403', 'TP123', 'TP124', 'TP125'].includes(found.code)) continue; // shown as pin lines above
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

