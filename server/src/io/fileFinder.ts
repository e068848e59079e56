/**
 * The one file finder of Toolpin: every search of a folder tree for blueprint and connector files
 * (the editor's workspace scan, `toolpin check`, `pin` and `history`) and for dispatch-history logs
 * (the Dispatch History view and `toolpin history`) walks the tree here, so all of them skip the
 * same folders.
 *
 * - {@link SKIPPED_FOLDERS} are never entered below the folder searched: dependencies, version
 *   control, build output, caches and test hosts never hold a workspace's own documents, and a
 *   folder such as `.cache/host` holds copies of fixtures whose commands must not be run.
 *   A folder given as the search root is searched even when its name is in the list.
 * - `.gitignore` files are honoured when asked (`gitignore: true`), with git's rules as the
 *   `ignore` package implements them: each file's patterns apply below its folder, a deeper file
 *   can re-include (`!pattern`) what a shallower one excluded, and an excluded folder is not entered.
 * - Globs are matched with `minimatch` (braces, `**`, character classes), against the path relative
 *   to the folder searched, with `/` separators; dot files match like any other.
 * - Symbolic links to files are followed; symbolic links to folders never are (no cycles, no
 *   leaving the tree).
 * - The walk is asynchronous: every directory read is awaited, so a large tree never blocks the
 *   event loop of the language server, and it yields to other work every {@link YIELD_EVERY_ENTRIES}
 *   entries besides.
 * - {@link SYSTEM_FOLDERS} (the kernel's and the operating system's own trees: `/proc`, `/sys`,
 *   `/dev`, `C:\Windows`, …) are never entered below the folder searched, so a walk of the disk
 *   root (an editor that opened `file:///`) reads no pseudo-files and no system tree.
 * - A walk may be given a budget (`budget`: entries visited and time); when it is spent the walk
 *   stops, returns what it found and says so once (`onCut`).
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { Minimatch } from 'minimatch';
import { pinKindOfFile, pinKinds } from '../core/documents/kinds/registry';
import { errorCode } from '../core/json/values';
import { defaultSourceNames, type SourceNames } from '../core/documents/source/sourceNames';
import { isNotARegularFile, readRegularFile, readRegularFileSync, readRegularText } from './regularFile';

/** Folder names never entered below the folder searched. */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set([
  'node_modules',
  'bower_components',
  '.git',
  '.hg',
  '.svn',
  '.toolpin',
  '.cache',
  'dist',
  'out',
  'build',
  'coverage',
  '.nyc_output',
  '.vscode-test',
  '.next',
  '.turbo',
]);

/**
 * Absolute folders never entered below the folder searched: pseudo-file systems (reading them
 * never ends or blocks), devices, and the operating system's own trees, which hold no workspace's
 * documents. Compared case-insensitively on Windows.
 */
export const SYSTEM_FOLDERS: readonly string[] = [
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/boot',
  '/lost+found',
  '/snap',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/usr',
  '/etc',
  '/var/lib',
  '/var/cache',
  '/var/log',
  '/var/run',
  '/mnt',
  '/media',
  '/System',
  '/Library',
  '/Applications',
  '/Volumes',
  '/private',
  '/cores',
  'C:\\Windows',
  'C:\\Program Files',
  'C:\\Program Files (x86)',
  'C:\\ProgramData',
  'C:\\$Recycle.Bin',
  'C:\\System Volume Information',
];

const systemFolders = new Set(SYSTEM_FOLDERS);
const windowsSystemFolders = new Set(SYSTEM_FOLDERS.map((folder) => folder.toLowerCase()));

/** True for a folder of {@link SYSTEM_FOLDERS} (any drive letter on Windows). */
export function isSystemFolder(folder: string): boolean {
  const normal = path.normalize(folder).replace(/(.)[\\/]+$/, '$1');
  if (process.platform === 'win32') return windowsSystemFolders.has(normal.replace(/^[A-Za-z]:/, 'c:').toLowerCase());
  return systemFolders.has(normal);
}

/** How many directory entries a walk handles between two yields to the event loop. */
export const YIELD_EVERY_ENTRIES = 2000;

/** What a walk may spend: directory entries looked at, and time from its start. */
export interface WalkBudget {
  readonly maxEntries: number;
  readonly maxMs: number;
}

/** Why and where a walk stopped before its end. */
export interface WalkCut {
  readonly reason: 'entries' | 'time';
  readonly entries: number;
  readonly elapsedMs: number;
  readonly budget: WalkBudget;
}

/**
 * The one budgeted walk for the file finder, timed with the monotonic clock. The
 * language server's scans are budgeted; `toolpin check` walks what it is asked to, in full, so that
 * its result never depends on the machine's speed.
 */
class WalkMeter {
  private entries = 0;
  private sinceYield = 0;
  private readonly started = performance.now();
  cut: WalkCut | undefined;

  constructor(private readonly budget: WalkBudget | undefined) {}

  /** Counts a folder's entries; false once the budget is spent (the walk then stops). */
  count(entries: number): boolean {
    this.entries += entries;
    this.sinceYield += entries;
    if (!this.budget || this.cut) return !this.cut;
    const elapsedMs = performance.now() - this.started;
    if (this.entries > this.budget.maxEntries) this.cut = { reason: 'entries', entries: this.entries, elapsedMs, budget: this.budget };
    else if (elapsedMs > this.budget.maxMs) this.cut = { reason: 'time', entries: this.entries, elapsedMs, budget: this.budget };
    return !this.cut;
  }

  /** Lets other work run (requests to the language server) after every few thousand entries. */
  async yieldNow(): Promise<void> {
    if (this.sinceYield < YIELD_EVERY_ENTRIES) return;
    this.sinceYield = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * The message of a walk that stopped early, naming the folder, what was spent and the settings that
 * raise the bounds.
 */
export function walkCutMessage(root: string, cut: WalkCut, what: string): string {
  const spent = cut.reason === 'entries' ? `${cut.budget.maxEntries.toLocaleString('en-US')} files and folders` : `${(cut.budget.maxMs / 1000).toLocaleString('en-US')} s`;
  return `Toolpin stopped looking for ${what} in ${root} after ${spent} (${cut.entries.toLocaleString('en-US')} entries in ${(cut.elapsedMs / 1000).toFixed(1)} s): files beyond are not checked until they are opened. Open a smaller folder, or raise toolpin.workspaceScan.maxEntries / toolpin.workspaceScan.timeBudgetMs.`;
}

/**
 * The build outputs Toolpin reads (a kind's `buildOutput`: ObjectStack's compiled stack,
 * `dist/objectstack.json`): the runtime loads such a file, not the sources it came from, so its
 * pins are checked too. It is looked for directly (one `stat`), without entering its folder, and
 * even where `.gitignore` excludes the folder (as it usually does: the file is built, not committed).
 */
function buildOutputsIn(folderName: string): string[] {
  return pinKinds().flatMap((kind) => (kind.buildOutput?.folder === folderName ? [kind.buildOutput.file] : []));
}

async function findBuildOutput(folder: string, name: string, relative: string, options: FindFilesOptions, found: string[]): Promise<void> {
  const file = path.join(folder, name);
  if (!options.match(relative, name)) return;
  const target = await stat(file).catch(() => undefined);
  if (!target?.isFile()) return;
  if (options.accept && !(await options.accept(file))) return;
  found.push(file);
}

export interface FindFilesOptions {
  /** Keeps a file, by its path relative to the folder searched (`/`-separated) and its name. */
  readonly match: (relative: string, name: string) => boolean;
  /** Honour `.gitignore` files in the folder searched and below it (default false). */
  readonly gitignore?: boolean;
  /**
   * Keeps a matched file by its content (awaited before the file counts towards `limit`), e.g.
   * {@link acceptDocument}: a TypeScript file that names neither pin module is not a document.
   */
  readonly accept?: (file: string) => Promise<boolean>;
  /** Stop after this many files; the walk is breadth-first, so shallower files come first. */
  readonly limit?: number;
  /** Called for a folder that could not be read, or a matching path that is not a regular file (the walk goes on without it). */
  readonly onUnreadable?: (folder: string, reason: string) => void;
  /** What the walk may spend; absent: no bound (the CLI). */
  readonly budget?: WalkBudget;
  /** Called once when the budget is spent and the walk stops early. */
  readonly onCut?: (cut: WalkCut) => void;
}

interface IgnoreScope {
  /** The folder of the `.gitignore`, relative to the root (`''` for the root itself). */
  readonly base: string;
  readonly rules: Ignore;
}

function direntKind(entry: Dirent): string {
  if (entry.isFIFO()) return 'a named pipe (FIFO)';
  if (entry.isSocket()) return 'a socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

async function gitignoreScope(folder: string, relative: string, onUnreadable: FindFilesOptions['onUnreadable']): Promise<IgnoreScope | undefined> {
  let text: string;
  try {
    text = await readRegularText(path.join(folder, '.gitignore'));
  } catch (error) {
    if (isNotARegularFile(error)) onUnreadable?.(error.file, error.message);
    return undefined;
  }
  return { base: relative, rules: ignore().add(text) };
}

/** Applies the scopes from the root down, as git does: the deepest rule that speaks wins. */
function isIgnored(scopes: readonly IgnoreScope[], relative: string, isFolder: boolean): boolean {
  let ignored = false;
  for (const scope of scopes) {
    const inScope = scope.base === '' ? relative : relative.slice(scope.base.length + 1);
    const result = scope.rules.test(isFolder ? `${inScope}/` : inScope);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/**
 * The files under `root` that `options.match` keeps, sorted by path. A missing or unreadable root
 * gives no files (and one `onUnreadable` call).
 */
export async function findFiles(root: string, options: FindFilesOptions): Promise<string[]> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const found: string[] = [];
  const meter = new WalkMeter(options.budget);
  const queue: Array<{ folder: string; relative: string; scopes: readonly IgnoreScope[] }> = [{ folder: root, relative: '', scopes: [] }];
  // A queue read from its head by index: shift() on a queue of a disk's folders moves them all.
  let head = 0;
  while (head < queue.length && found.length < limit) {
    const { folder, relative, scopes: parentScopes } = queue[head++]!;
    if (head >= 4096 && head * 2 >= queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      options.onUnreadable?.(folder, String(errorCode(error) ?? error));
      continue;
    }
    if (!meter.count(entries.length)) break;
    await meter.yieldNow();
    let scopes = parentScopes;
    if (options.gitignore && entries.some((entry) => entry.name === '.gitignore' && !entry.isDirectory())) {
      const scope = await gitignoreScope(folder, relative, options.onUnreadable);
      if (scope) scopes = [...parentScopes, scope];
    }
    // The content test of a folder's files runs for all of them at once: one by one, a tree of
    // thousands of modules waited on each read in turn (issue 23).
    const accepting: Array<Promise<string | undefined>> = [];
    for (const entry of entries.sort(byName)) {
      const childRelative = relative ? `${relative}/${entry.name}` : entry.name;
      const child = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        for (const name of buildOutputsIn(entry.name)) await findBuildOutput(child, name, `${childRelative}/${name}`, options, found);
        if (SKIPPED_FOLDERS.has(entry.name) || isSystemFolder(child) || isIgnored(scopes, childRelative, true)) continue;
        queue.push({ folder: child, relative: childRelative, scopes });
        continue;
      }
      if (!entry.isFile() && !entry.isSymbolicLink()) {
        // A FIFO, socket or device with a document's name is never read (it would block or never
        // end), and it is named, so that it does not vanish from a check unseen.
        if (options.match(childRelative, entry.name) && !isIgnored(scopes, childRelative, false)) options.onUnreadable?.(child, `not a regular file (${direntKind(entry)}); skipped`);
        continue;
      }
      if (!options.match(childRelative, entry.name) || isIgnored(scopes, childRelative, false)) continue;
      if (entry.isSymbolicLink()) {
        const target = await stat(child).catch(() => undefined);
        if (!target?.isFile()) continue;
      }
      if (options.accept) {
        const accept = options.accept;
        accepting.push(accept(child).then((accepted) => (accepted ? child : undefined)));
        continue;
      }
      found.push(child);
      if (found.length >= limit) break;
    }
    for (const child of await Promise.all(accepting)) if (child !== undefined && found.length < limit) found.push(child);
  }
  if (meter.cut) options.onCut?.(meter.cut);
  return found.sort();
}

/** Document matching by name, for {@link FindFilesOptions.match}: the files of every kind with pin sites (core/documents/kinds/). */
export function isDocumentName(_relative: string, name: string): boolean {
  return pinKindOfFile(name) !== undefined;
}

/**
 * Document matching by content, for {@link FindFilesOptions.accept}: the files of a kind without a
 * content test (blueprint and connector files) always; those of a kind with one (`mayBeDocument`:
 * a TypeScript or JavaScript module names one of the pin modules, core/documents/source) only when
 * it passes, so a tree of ordinary modules adds nothing to a check or a workspace scan.
 */
export function acceptDocument(file: string): Promise<boolean> {
  return acceptDocumentWith(defaultSourceNames())(file);
}

/**
 * {@link acceptDocument} for the modules `names` gives (a folder's `toolpin.sources.*` settings).
 * `synchronous` reads each module with one blocking read (open, fstat and read on one
 * descriptor, still never blocking on a FIFO): for a one-shot command that has nothing else to do
 * while it walks, this costs half the garbage of the promise-based read (on the 6,444 files of
 * objectstack, 87 scavenges instead of 170, and about a fifth of the CPU time of a whole check).
 * The language server keeps the asynchronous read, so a scan never holds up its answers.
 */
export function acceptDocumentWith(names: SourceNames, options: { readonly synchronous?: boolean } = {}): (file: string) => Promise<boolean> {
  return async (file) => {
    const test = pinKindOfFile(file)?.mayBeDocument;
    if (!test) return true;
    try {
      // The bytes, not a decoded string: most modules are not documents, and searching the bytes
      // for the names' UTF-8 spares decoding them and the garbage of their text.
      const bytes = options.synchronous ? (readRegularFileSync(file) ?? Buffer.alloc(0)) : await readRegularFile(file);
      return test(bytes, names);
    } catch {
      // An unreadable module is reported by whoever reads it, not hidden here.
      return true;
    }
  };
}

/** True when a string uses glob syntax (`*`, `?`, `[…]` or `{…}`). */
export function isGlob(text: string): boolean {
  return /[*?[\]{}]/.test(text);
}

const GLOB_OPTIONS = { dot: true, nocomment: true, nonegate: true } as const;

/** A glob as a RegExp over `/`-separated relative paths (minimatch's dialect, dot files included). */
export function globToRegExp(pattern: string): RegExp {
  const glob = pattern.replace(/\\/g, '/').replace(/^\.\//, '');
  const compiled = new Minimatch(glob, GLOB_OPTIONS).makeRe();
  return compiled === false ? /$^/ : compiled;
}

/** A matcher for {@link FindFilesOptions.match}: true when the relative path matches any glob. */
export function globMatcher(globs: readonly string[]): (relative: string) => boolean {
  const matchers = globs.map((glob) => new Minimatch(glob.replace(/\\/g, '/').replace(/^\.\//, ''), GLOB_OPTIONS));
  return (relative) => matchers.some((matcher) => matcher.match(relative));
}

/**
 * Splits a glob into the folder to walk (its leading segments without glob syntax) and the rest:
 * `logs/**\/*.events.jsonl` → `logs` + `**\/*.events.jsonl`.
 */
export function splitGlob(pattern: string): { base: string; glob: string } {
  const segments = pattern.replace(/\\/g, '/').split('/');
  const firstGlob = segments.findIndex(isGlob);
  if (firstGlob < 0) return { base: pattern, glob: '' };
  if (firstGlob === 0) return { base: '.', glob: pattern };
  // An absolute pattern starts with an empty segment: its base is at least the root.
  return { base: segments.slice(0, firstGlob).join('/') || '/', glob: segments.slice(firstGlob).join('/') };
}
