/**
 * A V8 code cache for the CLI's own bundles (dist/commands.js and dist/lib/*.js), kept in the
 * user's cache folder, so that a `toolpin check` does not compile the same 2.3 MB of JavaScript
 * in every run (issue 13: compiling and lazily compiling the bundles was a tenth of a cold
 * check's own CPU). Node 22's `module.enableCompileCache` does the same for every module; the
 * Node this runs on (20, and the one in VS Code) has no such thing.
 *
 * Contract:
 * - Only files in the folder of the bundle that installs the hook (dist/) whose names are
 *   bundles are compiled through the cache; every other module loads as Node loads it.
 * - A cache entry is found by a SHA-256 of the bundle's exact text, with Node's V8 version and
 *   the architecture in the folder name: V8 itself checks little more than the text's length
 *   before it uses a cache, so the key must be the content. V8 may still reject an entry (other
 *   flags): the bundle is then compiled from its text, and the entry rewritten.
 * - The cache is written once, when the process exits after a run that found no usable entry,
 *   so that it holds the functions the run compiled lazily as well. Entries of other versions of
 *   the same bundle are deleted then.
 * - The folder is the user's own: made with mode 0700, and used only when it is owned by the user
 *   and not writable by group or others (on POSIX); an entry is read only when it is a regular
 *   file owned by the user. A cache somebody else can write would be code they choose to run.
 * - Nothing here can fail a command: every problem (no home folder, a read-only disk, a corrupt
 *   entry, a full disk) means compiling from the text, as without the cache, and says nothing;
 *   an entry that is not a regular file (a FIFO, a device) is the one thing it names on stderr.
 * - `TOOLPIN_CODE_CACHE=0` (or `off`, `false`) turns it off; `TOOLPIN_CODE_CACHE_DIR` names the
 *   folder instead of the platform's cache folder.
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import Module from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { constants as vmConstants, Script } from 'node:vm';
import { makeFolderSafelySync, removeFileSafelySync, writeFileSafelySync } from '../io/safeWrite';
import { isNotARegularFile, readRegularFileSync } from '../io/regularFile';

/** The bundles of dist/ that go through the cache. */
const BUNDLE_NAME = /^(?:commands|babel-parser|ajv|re2js)\.js$/;

/** Where the cache lives for this user, this V8 and this architecture, or undefined when it is off or has no place. */
export function codeCacheFolder(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, home: () => string = homedir): string | undefined {
  const setting = (env.TOOLPIN_CODE_CACHE ?? '').trim().toLowerCase();
  if (setting === '0' || setting === 'off' || setting === 'false' || setting === 'no') return undefined;
  const runtime = `v8-${process.versions.v8}-${process.arch}`;
  if (env.TOOLPIN_CODE_CACHE_DIR) return join(env.TOOLPIN_CODE_CACHE_DIR, runtime);
  let base: string | undefined;
  try {
    if (platform === 'win32') base = env.LOCALAPPDATA ? join(env.LOCALAPPDATA, 'toolpin', 'Cache') : undefined;
    else if (platform === 'darwin') base = join(home(), 'Library', 'Caches', 'toolpin');
    else base = join(env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(home(), '.cache'), 'toolpin');
  } catch {
    return undefined;
  }
  return base ? join(base, 'code-cache', runtime) : undefined;
}

/** A bundle compiled without a usable entry, whose entry is written at exit. */
interface Unwritten {
  readonly script: Script;
  readonly entry: string;
  readonly bundle: string;
}

let installed = false;

/** Compiles the bundles of `bundleFolder` loaded from now on through the cache in `folder`. Installing twice is a no-op. */
export function installCodeCache(folder: string | undefined, bundleFolder: string): void {
  // Without the main context's loader for `import()`, a script compiled here could not import:
  // better no cache than a bundle that behaves differently.
  const dynamicImport: unknown = (vmConstants as Partial<typeof vmConstants> | undefined)?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (installed || !folder || dynamicImport === undefined || !ownFolder(folder)) return;
  installed = true;
  const unwritten: Unwritten[] = [];
  const prototype = Module.prototype as unknown as { _compile(content: string, filename: string): unknown; require(id: string): unknown };
  const nodeCompile = prototype._compile;
  prototype._compile = function compileThroughCache(this: Module & { _compile: typeof nodeCompile }, content: string, filename: string): unknown {
    const inBundleFolder = dirname(filename) === bundleFolder || dirname(filename) === join(bundleFolder, 'lib');
    if (!inBundleFolder || !BUNDLE_NAME.test(basename(filename))) return nodeCompile.call(this, content, filename);
    const key = createHash('sha256').update(content).digest('hex').slice(0, 32);
    const bundle = basename(filename, '.js');
    const entry = join(folder, `${bundle}-${key}.bin`);
    const cachedData = readOwnFile(entry);
    let script: Script;
    try {
      script = new Script(Module.wrap(content), { filename, cachedData, importModuleDynamically: dynamicImport as never });
    } catch {
      return nodeCompile.call(this, content, filename);
    }
    // No entry, or one V8 refused (other flags, another build of V8): write it at exit.
    if (cachedData === undefined || script.cachedDataRejected === true) unwritten.push({ script, entry, bundle });
    const wrapper = script.runInThisContext() as (exports: unknown, require: unknown, module: unknown, filename: string, dirname: string) => unknown;
    const module = this as Module;
    const requireHere = Object.assign((id: string) => (module as unknown as typeof prototype).require(id), {
      resolve: (request: string, options?: { paths?: string[] }) => (Module as unknown as { _resolveFilename(request: string, parent: Module, isMain: boolean, options?: unknown): string })._resolveFilename(request, module, false, options),
      cache: (Module as unknown as { _cache: unknown })._cache,
      main: require.main,
    });
    return wrapper.call(module.exports, module.exports, requireHere, module, filename, dirname(filename));
  };
  process.once('exit', () => {
    for (const bundle of unwritten) writeEntry(folder, bundle);
  });
}

/** Makes the folder when it is missing; true when it is the user's own and nobody else can write it. */
function ownFolder(folder: string): boolean {
  try {
    makeFolderSafelySync(folder, 0o700);
    const status = statSync(folder);
    if (!status.isDirectory()) return false;
    if (process.platform === 'win32' || typeof process.getuid !== 'function') return true;
    return status.uid === process.getuid() && (status.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * The bytes of a cache entry when it is a regular file of this user's (not a link), else
 * undefined. It is opened without blocking (io/regularFile.ts): a named pipe put in its place
 * once made every batch command wait for ever for a writer. Anything but a regular file is
 * skipped with one line on standard error, since it is no entry Toolpin wrote; the run compiles
 * from the text.
 */
function readOwnFile(path: string): Buffer | undefined {
  try {
    return readRegularFileSync(path, {
      noFollow: true,
      accept: (status) => process.platform === 'win32' || typeof process.getuid !== 'function' || (status.uid === process.getuid() && (status.mode & 0o022) === 0),
    });
  } catch (error) {
    if (isNotARegularFile(error)) process.stderr.write(`toolpin: code cache entry ${path} skipped: ${error.message}\n`);
    return undefined;
  }
}

/** Writes one entry whole (a new file renamed over the old) and deletes the bundle's other entries. */
function writeEntry(folder: string, done: Unwritten): void {
  try {
    const data = done.script.createCachedData();
    writeFileSafelySync(done.entry, data, { exactly: true }, { mode: 0o600 });
    for (const name of readdirSync(folder)) {
      if (name.startsWith(`${done.bundle}-`) && name.endsWith('.bin') && join(folder, name) !== done.entry) removeFileSafelySync(join(folder, name));
    }
  } catch {
    // A cache that cannot be written is a cache that is not there (see the contract).
  }
}
