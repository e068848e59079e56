/**
 * The peers' lockfiles in `toolpin check` and `toolpin pin` (core/documents/lockfiles): found
 * under the paths given (`mcp-pin.lock`, `warden.lock`, `.gitignore` honoured) or named
 * explicitly, read, verified against their servers' live surfaces and, for `pin`, re-pinned in
 * their own format.
 *
 * Which server a lock is verified against, under the same trust rules as any server:
 * - `mcp-pin.lock`: each entry's server is the stdio server of that name in the `.mcp.json` beside
 *   the lock (`mcpServers`, else `servers`), its variables resolved as for the registry; the id
 *   check uses the command line as written;
 * - `warden.lock`: the launch its own `server` block records, started in the lock's folder. It
 *   comes from the repository, so it runs only when the folder is trusted (`--trust`,
 *   `TOOLPIN_TRUST=1` or `toolpin trust`), as a connector's command would.
 * An unavailable server leaves every entry "cannot verify" (TP126), while the lock's own integrity
 * is still checked offline.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { stat } from 'node:fs/promises';
import { type LockEntryVerdict, type LockSurface } from '../core/documents/lockfiles/lockModel';
import { MCP_PIN_LOCK_FILE, type McpPinLockModel, type McpPinServerEntry, parseMcpPinLock, repinMcpPinServer, verifyMcpPinServer } from '../core/documents/lockfiles/mcpPinLock';
import { checkWardenIntegrity, parseWardenLock, repinWardenLock, verifyWardenLock, WARDEN_LOCK_FILE, type WardenLockModel, wardenServerName } from '../core/documents/lockfiles/wardenLock';
import { problem, type Problem, type Span } from '../core/problems';
import { readMcpJsonServers, type ServerDefinition } from '../core/verify/registry';
import type { PinVerdict, ServerListing } from '../core/verify/verify';
import type { TrustVerdict } from '../core/trust';
import { findFiles } from '../io/fileFinder';
import { dotMcpJsonKind } from '../core/documents/kinds/dotMcpJson';
import { scopeFor, WriteRefused, writeFileSafely } from '../io/safeWrite';
import { environmentCredentials, Redactor } from '../mcp/credentials';
import { fetchSurface, type SurfaceResult } from '../mcp/surface';
import { TOOLPIN_VERSION } from '../runtime';
import { type CliIo, readIfPresent } from './io';

export const LOCK_FILE_NAMES: ReadonlySet<string> = new Set([MCP_PIN_LOCK_FILE, WARDEN_LOCK_FILE]);

/** True when a path names a peer's lockfile. */
export function isLockFile(file: string): boolean {
  return LOCK_FILE_NAMES.has(path.basename(file));
}

/** The lockfiles under the given absolute paths: named files as they are, folders searched (sorted, no duplicates). */
export async function findLockFiles(roots: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const root of roots) {
    const info = await stat(root).catch(() => undefined);
    if (!info) continue;
    if (!info.isDirectory()) {
      if (isLockFile(root)) found.add(root);
      continue;
    }
    for (const file of await findFiles(root, { match: (_relative, name) => LOCK_FILE_NAMES.has(name), gitignore: true })) found.add(file);
  }
  return [...found].sort();
}

/** One server a lock was verified against, for the report's server list. */
export interface LockServer {
  readonly name: string;
  readonly source: string;
  readonly listing: ServerListing | undefined;
}

/** A lockfile as a check read it: its verdicts as pin verdicts, its problems, and how to re-pin it. */
export interface CheckedLock {
  readonly path: string;
  readonly kind: 'mcp-pin' | 'warden';
  readonly text: string;
  readonly entries: readonly LockEntryVerdict[];
  readonly verdicts: readonly PinVerdict[];
  readonly problems: readonly Problem[];
  readonly servers: readonly LockServer[];
  /** The lock re-pinned to what was listed (servers that could not be listed keep their entries), or undefined when nothing could be listed. */
  repin(now: Date): string | undefined;
}

export interface LockCheckOptions {
  readonly workspaceFolder: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly offline: boolean;
  readonly trust: () => Promise<(definition: ServerDefinition) => TrustVerdict>;
  readonly requestTimeoutMs?: number;
  readonly startTimeoutMs?: number;
}

/** A lock entry verdict in the shape of Toolpin's own pins, for the report and the exit status. */
export function asPinVerdict(entry: LockEntryVerdict): PinVerdict {
  const state = entry.state === 'tampered' || entry.state === 'added' ? 'drifted' : entry.state;
  return {
    kind: entry.kind,
    tool: entry.name,
    server: entry.server,
    pinned: entry.locked ?? '(not in the lock)',
    live: entry.live ?? undefined,
    state,
    reason: entry.reason ?? (entry.state === 'verified' ? undefined : entry.state),
    span: entry.span,
    problemSpan: entry.span,
  };
}

/** The verdicts of every entry when the server could not be listed, and the TP126 that says why. */
function unverified(entries: ReadonlyArray<{ kind: LockEntryVerdict['kind']; name: string; locked: string; span: Span }>, server: string, why: string, at: Span): { verdicts: LockEntryVerdict[]; problem: Problem } {
  return {
    verdicts: entries.map((entry) => ({ ...entry, server, state: 'cannot-verify', live: null, changes: [], reason: why })),
    problem: problem('TP126', at, `cannot verify the lock's entries for ${server}: ${why}`),
  };
}

function listingOf(result: SurfaceResult | undefined, now: number): ServerListing | undefined {
  if (!result) return undefined;
  if ('surface' in result) return { status: 'listed', listing: result.listing, listedAt: now };
  return { status: 'unavailable', reason: result.reason, message: result.unavailable };
}

/** Reads and verifies every lockfile; never throws for a lock (what cannot be read is a problem of that file). */
export async function checkLockFiles(io: CliIo, files: readonly string[], options: LockCheckOptions): Promise<CheckedLock[]> {
  let trust: ((definition: ServerDefinition) => TrustVerdict) | undefined;
  const surfaceOf = async (definition: ServerDefinition): Promise<SurfaceResult> => {
    trust ??= await options.trust();
    const redactor = new Redactor();
    return fetchSurface(definition, {
      credentials: environmentCredentials(options.env),
      redactor,
      clientVersion: TOOLPIN_VERSION,
      trust,
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      ...(options.startTimeoutMs !== undefined ? { startTimeoutMs: options.startTimeoutMs } : {}),
    });
  };
  const checked: CheckedLock[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      checked.push(emptyLock(file, isWarden(file) ? 'warden' : 'mcp-pin', '', [problem('TP120', { offset: 0, length: 0 }, `cannot read the lock: ${message}`)]));
      continue;
    }
    checked.push(isWarden(file) ? await checkWarden(file, text, options, surfaceOf) : await checkMcpPin(io, file, text, options, surfaceOf));
  }
  return checked;
}

function isWarden(file: string): boolean {
  return path.basename(file) === WARDEN_LOCK_FILE;
}

function emptyLock(file: string, kind: 'mcp-pin' | 'warden', text: string, problems: Problem[]): CheckedLock {
  return { path: file, kind, text, entries: [], verdicts: [], problems, servers: [], repin: () => undefined };
}

/** The server a `warden.lock` records, started in the lock's folder. */
export function wardenDefinition(file: string, model: WardenLockModel): ServerDefinition {
  const transport =
    model.server.url !== null
      ? ({ kind: 'http', url: model.server.url, headers: {} } as const)
      : ({ kind: 'stdio', command: model.server.command, args: model.server.args, env: {} } as const);
  return { name: wardenServerName(model), origin: { kind: 'warden-lock', file, span: model.server.span }, transport, auth: undefined, unusable: undefined, cwd: path.dirname(file) };
}

async function checkWarden(file: string, text: string, options: LockCheckOptions, surfaceOf: (definition: ServerDefinition) => Promise<SurfaceResult>): Promise<CheckedLock> {
  const parsed = parseWardenLock(text);
  const model = parsed.model;
  if (!model) return emptyLock(file, 'warden', text, parsed.problems);
  const definition = wardenDefinition(file, model);
  const result = options.offline ? undefined : await surfaceOf(definition);
  let entries: LockEntryVerdict[];
  let problems: Problem[];
  if (result && 'surface' in result) {
    const verification = verifyWardenLock(model, result.surface);
    entries = [...verification.verdicts];
    problems = [...parsed.problems, ...verification.problems];
  } else {
    const why = result ? result.unavailable : 'offline: no server was started';
    const recorded = [...model.tools, ...model.resources, ...model.prompts].map((entry) => ({ kind: entry.kind, name: entry.name, locked: entry.entryDigest, span: entry.nameSpan }));
    const none = unverified(recorded, definition.name, why, model.server.span);
    entries = none.verdicts;
    problems = [...parsed.problems, ...checkWardenIntegrity(model).problems, ...(options.offline ? [] : [none.problem])];
  }
  const surface = result && 'surface' in result ? result.surface : undefined;
  return {
    path: file,
    kind: 'warden',
    text,
    entries,
    verdicts: entries.map(asPinVerdict),
    problems,
    servers: [{ name: definition.name, source: 'warden-lock', listing: listingOf(result, Date.now()) }],
    repin: (now) => (surface ? repinWardenLock(model, surface, now.toISOString().replace(/\.\d{3}Z$/, 'Z')) : undefined),
  };
}

/** The stdio servers of the `.mcp.json` beside a lock, by name, with the command line as written. */
async function serversBeside(io: CliIo, file: string, env: Readonly<Record<string, string | undefined>>): Promise<{ file: string; servers: Map<string, ServerDefinition> } | undefined> {
  const folder = path.dirname(file);
  const config = path.join(folder, ...dotMcpJsonKind.location);
  const text = await readIfPresent(io, config);
  if (text === undefined) return undefined;
  const context = { workspaceFolder: folder, env, userHome: os.homedir() };
  let definitions = readMcpJsonServers(text, 'mcpServers', { kind: 'mcp-json', file: config }, context);
  if (definitions.length === 0) definitions = readMcpJsonServers(text, 'servers', { kind: 'mcp-json', file: config }, context);
  return { file: config, servers: new Map(definitions.filter((definition) => (definition.declared ?? definition.transport)?.kind === 'stdio').map((definition) => [definition.name, definition])) };
}

function declaredCommand(definition: ServerDefinition): { command: string; args: readonly string[] } | undefined {
  const declared = definition.declared ?? definition.transport;
  return declared?.kind === 'stdio' ? { command: declared.command, args: declared.args } : undefined;
}

function recordedEntries(entry: McpPinServerEntry): Array<{ kind: LockEntryVerdict['kind']; name: string; locked: string; span: Span }> {
  return [
    ...entry.tools.map((tool) => ({ kind: 'tool' as const, name: tool.name, locked: tool.hash, span: tool.nameSpan })),
    ...(entry.prompts ?? []).map((prompt) => ({ kind: 'prompt' as const, name: prompt.name, locked: prompt.hash, span: prompt.nameSpan })),
  ];
}

async function checkMcpPin(io: CliIo, file: string, text: string, options: LockCheckOptions, surfaceOf: (definition: ServerDefinition) => Promise<SurfaceResult>): Promise<CheckedLock> {
  const parsed = parseMcpPinLock(text);
  const model: McpPinLockModel | undefined = parsed.model;
  if (!model) return emptyLock(file, 'mcp-pin', text, parsed.problems);
  const beside = await serversBeside(io, file, options.env);
  const entries: LockEntryVerdict[] = [];
  const problems: Problem[] = [...parsed.problems];
  const servers: LockServer[] = [];
  const surfaces = new Map<string, { surface: LockSurface; declared: { command: string; args: readonly string[] } }>();
  for (const entry of model.servers) {
    const definition = beside?.servers.get(entry.name);
    const declared = definition ? declaredCommand(definition) : undefined;
    const result = definition && !options.offline ? await surfaceOf(definition) : undefined;
    if (definition) servers.push({ name: entry.name, source: `mcp-json ${path.relative(io.cwd, beside!.file).split(path.sep).join('/')}`, listing: listingOf(result, Date.now()) });
    if (result && 'surface' in result && declared) {
      surfaces.set(entry.name, { surface: result.surface, declared });
      const verification = verifyMcpPinServer(entry, result.surface, declared);
      entries.push(...verification.verdicts);
      problems.push(...verification.problems);
      continue;
    }
    const why = !beside
      ? 'there is no .mcp.json beside the lock to say how to start it'
      : !definition
        ? `.mcp.json beside the lock declares no stdio server "${entry.name}"`
        : result && 'unavailable' in result
          ? result.unavailable
          : 'offline: no server was started';
    const none = unverified(recordedEntries(entry), entry.name, why, entry.keySpan);
    entries.push(...none.verdicts);
    // Offline, the lock's own hashes are still checked; the server is not.
    const own = verifyMcpPinServer(entry, { tools: [] }, declared).problems.filter((found) => found.code === 'TP122' || found.code === 'TP127');
    problems.push(...own, ...(options.offline ? [] : [none.problem]));
  }
  // Servers of .mcp.json the lock does not record yet: listed for a first pin by `toolpin pin`.
  if (!options.offline && beside) {
    for (const [name, definition] of beside.servers) {
      if (model.servers.some((entry) => entry.name === name)) continue;
      const declared = declaredCommand(definition);
      const result = await surfaceOf(definition);
      servers.push({ name, source: `mcp-json ${path.relative(io.cwd, beside.file).split(path.sep).join('/')}`, listing: listingOf(result, Date.now()) });
      if ('surface' in result && declared) surfaces.set(name, { surface: result.surface, declared });
    }
  }
  return {
    path: file,
    kind: 'mcp-pin',
    text,
    entries,
    verdicts: entries.map(asPinVerdict),
    problems,
    servers,
    repin: () => {
      if (surfaces.size === 0) return undefined;
      let current: McpPinLockModel | undefined = model;
      let written = text;
      for (const [name, { surface, declared }] of surfaces) {
        written = repinMcpPinServer(current, name, declared, surface);
        current = parseMcpPinLock(written).model;
      }
      return written;
    },
  };
}

/** The entries of a lock that a re-pin changes, said as the check says them. */
function changedEntries(lock: CheckedLock): LockEntryVerdict[] {
  return lock.entries.filter((entry) => entry.state !== 'verified' && entry.state !== 'cannot-verify');
}

/**
 * `toolpin pin` for the lockfiles: shows each entry that changed (drifted, gone, added, tampered)
 * and each server a lock does not record yet (a first pin), and with `write` re-pins the lock in
 * its own format through the one writer. Returns 0 when nothing was to change or everything
 * shown was written, 1 when changes were shown but not written, 2 when nothing changed but
 * something could not be verified.
 */
export async function pinLockFiles(io: CliIo, locks: readonly CheckedLock[], options: { readonly workspaceFolder: string; readonly write: () => Promise<boolean>; readonly now: Date }): Promise<0 | 1 | 2> {
  const pending: Array<{ lock: CheckedLock; text: string }> = [];
  let unverified = 0;
  for (const lock of locks) {
    const display = path.relative(io.cwd, lock.path).split(path.sep).join('/');
    const lines = lock.text.split(/\r?\n/);
    unverified += lock.entries.filter((entry) => entry.state === 'cannot-verify').length + lock.problems.filter((found) => found.code === 'TP120' || found.code === 'TP121').length;
    const written = lock.repin(options.now);
    if (written === undefined || written === lock.text) continue;
    for (const entry of changedEntries(lock)) {
      const line = lock.text.slice(0, entry.span.offset).split('\n').length;
      const column = entry.span.offset - lock.text.lastIndexOf('\n', entry.span.offset - 1);
      io.stdout(`${display}:${line}:${column}  ${entry.state.toUpperCase()}  ${entry.kind} ${entry.name} on ${entry.server}${entry.reason ? `: ${entry.reason}` : ''}\n`);
    }
    const before = lines.length;
    const after = written.split(/\r?\n/).length;
    io.stdout(`${display}: re-pinned in ${lock.kind === 'warden' ? "mcp-warden's" : "mcp-pin's"} format (${before} → ${after} lines)\n\n`);
    pending.push({ lock, text: written });
  }
  if (pending.length === 0) return unverified > 0 ? 2 : 0;
  if (!(await options.write())) {
    io.stdout(`${pending.length} lockfile(s) to re-pin shown; nothing written. Re-run with --yes to write them.\n`);
    return 1;
  }
  let refused = 0;
  for (const { lock, text } of pending) {
    try {
      await writeFileSafely(lock.path, text, scopeFor(lock.path, options.workspaceFolder));
    } catch (error) {
      refused++;
      io.stderr(`toolpin pin: cannot write ${path.relative(io.cwd, lock.path)}: ${error instanceof WriteRefused ? error.reason : error instanceof Error ? error.message : String(error)}\n`);
    }
  }
  io.stdout(`Wrote ${pending.length - refused} lockfile(s).\n`);
  return refused > 0 ? 1 : 0;
}
