/**
 * Starting a server process portably and ending everything it started, on every platform and
 * every exit path, without blocking the event loop.
 *
 * - Start: `cross-spawn`, so a command found through PATHEXT (`npx`, `*.cmd`, `*.bat`) starts on
 *   Windows as it does in a shell. On Linux and macOS the server leads a new process group
 *   (`detached`), so one signal reaches it and every child that stays in its group.
 * - End ({@link endProcessTree}): first the tree is recorded (on Linux from /proc, on macOS with
 *   `ps`, both read asynchronously): every descendant of the server, including one that left the
 *   group with setsid() (a daemonising server does that). Then SIGTERM to the group and to each
 *   recorded descendant outside it, waiting with timers (never a synchronous scan) until they are
 *   gone, SIGKILL for whatever is left after the grace period. On Windows `taskkill /T /F` ends
 *   the tree by parent chain.
 * - Exit ({@link installExitHook}): when this process exits by any path that runs `exit`
 *   handlers (`process.exit`, the end of the event loop, the signal handlers below), every tree
 *   still alive gets SIGKILL, synchronously, as `exit` handlers must be.
 * - Signals ({@link endProcessTreesOnSignals}): SIGINT, SIGTERM and SIGHUP end every tree
 *   gracefully and then this process with status 128 + the signal's number, as a shell reports a
 *   death by signal. Without a handler Node dies at once and runs no `exit` handler.
 *
 * What is not reached: a descendant whose parent exited before the tree was recorded is adopted
 * by init (or a subreaper) and no longer leads back to the server; if it also left the process
 * group (setsid), nothing finds it. So a server that crashes on its own is ended with its group,
 * but a setsid grandchild it leaves behind stays. A SIGKILL to Toolpin itself runs no code at
 * all; then the servers end only when they notice their standard input closed.
 */
import { type ChildProcess, execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import crossSpawn from 'cross-spawn';
import { errorCode, errorMessage } from '../core/json/values';

export interface SpawnServerOptions {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/** Starts a server with piped standard streams, as the leader of a new process group (POSIX). */
export function spawnServerProcess(command: string, args: readonly string[], options: SpawnServerOptions): ChildProcess {
  return crossSpawn(command, [...args], {
    cwd: options.cwd,
    env: { ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    // On Windows `detached` opens a new console instead; taskkill /T finds the tree without it.
    detached: process.platform !== 'win32',
    windowsHide: true,
  });
}

/** The trees this process started and has not ended yet, by the pid of their root. */
const liveTrees = new Map<number, { end: () => Promise<void> }>();

/** Records a started server; `end` ends it gracefully (its transport's close). */
export function trackProcessTree(pid: number, end: () => Promise<void>): void {
  installExitHook();
  liveTrees.set(pid, { end });
}

export function untrackProcessTree(pid: number): void {
  liveTrees.delete(pid);
}

interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly zombie: boolean;
}

/** One /proc/<pid>/stat line: "pid (comm) state ppid pgrp …"; comm may hold spaces and ')'. */
function parseStat(text: string): ProcessRow | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text.slice(close + 2).split(' ');
  const pid = Number.parseInt(text, 10);
  const ppid = Number(fields[1]);
  const pgrp = Number(fields[2]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgrp)) return undefined;
  return { pid, ppid, pgrp, zombie: fields[0] === 'Z' || fields[0] === 'X' };
}

/** Every process of the system with its parent and group, read without blocking; [] if unknown. */
async function processTable(): Promise<ProcessRow[]> {
  if (process.platform === 'linux') {
    let entries: string[];
    try {
      entries = await readdir('/proc');
    } catch {
      return [];
    }
    const rows = await Promise.all(
      entries
        .filter((entry) => /^\d+$/.test(entry))
        .map(async (entry) => {
          try {
            return parseStat(await readFile(`/proc/${entry}/stat`, 'utf8'));
          } catch {
            return undefined; // ended meanwhile
          }
        }),
    );
    return rows.filter((row): row is ProcessRow => row !== undefined);
  }
  if (process.platform === 'win32') return [];
  return new Promise((resolve) => {
    execFile('ps', ['-A', '-o', 'pid=', '-o', 'ppid=', '-o', 'pgid=', '-o', 'stat='], { windowsHide: true, maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      if (error) return resolve([]);
      resolve(
        stdout.split('\n').flatMap((line) => {
          const [pid, ppid, pgrp, stat] = line.trim().split(/\s+/);
          return pid && ppid && pgrp ? [{ pid: Number(pid), ppid: Number(ppid), pgrp: Number(pgrp), zombie: (stat ?? '').startsWith('Z') }] : [];
        }),
      );
    });
  });
}

let childrenFiles: Promise<boolean> | undefined;

/** Whether the kernel lists each task's children (`/proc/<pid>/task/<tid>/children`, CONFIG_PROC_CHILDREN). */
function childrenFilesSupported(): Promise<boolean> {
  childrenFiles ??= readFile(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').then(
    () => true,
    () => false,
  );
  return childrenFiles;
}

/** The direct children of `pid`, from every one of its threads (any thread may fork). */
async function childrenOf(pid: number): Promise<number[]> {
  let tasks: string[];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return []; // ended meanwhile
  }
  const lists = await Promise.all(tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')));
  return lists.flatMap((list) => list.split(' ').filter((entry) => /^\d+$/.test(entry)).map(Number));
}

/**
 * The rows of every living descendant of `root`. On Linux the children lists are walked, which
 * reads a few files per descendant; the whole process table is read only where the kernel does
 * not keep those lists (and on macOS, with `ps`).
 */
async function descendantRows(root: number): Promise<ProcessRow[]> {
  if (process.platform !== 'linux' || !(await childrenFilesSupported())) {
    const rows = await processTable();
    const found = new Set(descendantsIn(rows, root));
    return rows.filter((row) => found.has(row.pid));
  }
  const rows: ProcessRow[] = [];
  const seen = new Set([root]);
  let level = [root];
  while (level.length > 0) {
    const next = (await Promise.all(level.map(childrenOf))).flat().filter((pid) => !seen.has(pid));
    for (const pid of next) seen.add(pid);
    const stats = await Promise.all(next.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').then(parseStat, () => undefined)));
    rows.push(...stats.filter((row): row is ProcessRow => row !== undefined && !row.zombie));
    level = next;
  }
  return rows;
}

/** The same as {@link processTable}, synchronously: only for `exit` handlers, which cannot wait. */
function processTableSync(): ProcessRow[] {
  if (process.platform !== 'linux') return [];
  try {
    return readdirSync('/proc').flatMap((entry) => {
      if (!/^\d+$/.test(entry)) return [];
      try {
        const row = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
        return row ? [row] : [];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/** The pids whose parent chain leads to `root` (not `root` itself), living ones only. */
function descendantsIn(rows: readonly ProcessRow[], root: number): number[] {
  const children = new Map<number, ProcessRow[]>();
  for (const row of rows) {
    const list = children.get(row.ppid);
    if (list) list.push(row);
    else children.set(row.ppid, [row]);
  }
  const found: number[] = [];
  const queue = [root];
  const seen = new Set(queue);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      queue.push(child.pid);
      if (!child.zombie) found.push(child.pid);
    }
  }
  return found;
}

/** Sends `signal`; false when the target does not exist, and other failures are reported. */
function signal(target: number, name: NodeJS.Signals, report?: (message: string) => void): boolean {
  try {
    process.kill(target, name);
    return true;
  } catch (error) {
    if (errorCode(error) !== 'ESRCH') report?.(`could not send ${name} to ${target < 0 ? `process group ${-target}` : `process ${target}`}: ${errorMessage(error)}`);
    return false;
  }
}

function taskkill(pid: number): Promise<void> {
  return new Promise((resolve) => {
    execFile('taskkill', ['/T', '/F', '/PID', String(pid)], { windowsHide: true }, () => resolve());
  });
}

/** True while a process exists and has not exited (a zombie has exited). */
async function running(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    return !parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'))?.zombie;
  } catch {
    return false;
  }
}

/**
 * True while the group led by `pid`, or one of `others`, has a member that has not exited.
 * Signal 0 to a group also succeeds for zombies (exited members that whoever adopted them has not
 * reaped yet, which in a container may be never), so on Linux the members known from the table
 * read at the start are checked one by one, and the whole table is read again only when none of
 * them runs but the group still answers (a member that started later, or only zombies left).
 */
async function treeAlive(pid: number, members: readonly number[], others: readonly number[]): Promise<boolean> {
  for (const other of others) if (await running(other)) return true;
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  for (const member of members) if (await running(member)) return true;
  return (await processTable()).some((row) => row.pgrp === pid && !row.zombie);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends the tree of the server `pid`: its process group and every recorded descendant outside it,
 * SIGTERM first and SIGKILL after `graceMs`. Resolves when everything is gone or killed.
 * `report` hears signals that could not be sent for another reason than "no such process".
 */
export async function endProcessTree(pid: number, graceMs: number, report?: (message: string) => void): Promise<void> {
  if (process.platform === 'win32') {
    await taskkill(pid);
    liveTrees.delete(pid);
    return;
  }
  const rows = await descendantRows(pid);
  const members = [pid, ...rows.filter((row) => row.pgrp === pid).map((row) => row.pid)];
  // A descendant in another group left it with setsid() or setpgid(): the group signal misses it.
  const outside = rows.filter((row) => row.pgrp !== pid).map((row) => row.pid);
  signal(-pid, 'SIGTERM', report);
  for (const descendant of outside) signal(descendant, 'SIGTERM', report);
  const deadline = Date.now() + graceMs;
  let wait = 5;
  while ((await treeAlive(pid, members, outside)) && Date.now() < deadline) {
    await sleep(wait);
    wait = Math.min(wait * 2, 100);
  }
  if (await treeAlive(pid, members, outside)) {
    signal(-pid, 'SIGKILL', report);
    for (const descendant of outside) signal(descendant, 'SIGKILL', report);
  }
  liveTrees.delete(pid);
}

let exitHookInstalled = false;

/** SIGKILL to every tree still alive when this process exits (synchronous, as `exit` requires). */
export function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    if (liveTrees.size === 0) return;
    if (process.platform === 'win32') {
      for (const pid of liveTrees.keys()) spawnSync('taskkill', ['/T', '/F', '/PID', String(pid)], { windowsHide: true });
      return;
    }
    const rows = processTableSync();
    for (const pid of liveTrees.keys()) {
      for (const descendant of descendantsIn(rows, pid)) signal(descendant, 'SIGKILL');
      signal(-pid, 'SIGKILL');
    }
  });
}

/** Ends every tree still alive, gracefully (each transport's own close), in parallel. */
export async function endAllProcessTrees(): Promise<void> {
  await Promise.allSettled([...liveTrees.values()].map((tree) => tree.end()));
}

let signalHandlersInstalled = false;

/**
 * SIGINT, SIGTERM and SIGHUP end every process tree this process started, then this process with
 * status 128 + the signal's number. A second signal while the trees are ending exits at once
 * (the exit hook still sends SIGKILL). Ending is bounded by `boundMs` whatever the servers do.
 */
export function endProcessTreesOnSignals(boundMs = 3000): void {
  if (signalHandlersInstalled) return;
  signalHandlersInstalled = true;
  installExitHook();
  let ending = false;
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const status = 128 + constants.signals[name];
    process.on(name, () => {
      if (ending) process.exit(status);
      ending = true;
      const bound = sleep(boundMs);
      void Promise.race([endAllProcessTrees(), bound]).finally(() => process.exit(status));
    });
  }
}
