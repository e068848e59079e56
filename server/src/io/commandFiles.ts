/**
 * The workspace files a stdio command line runs, and their digests: what `toolpin trust` binds
 * besides the command line itself (docs/trust.md), so that a pull that rewrites `srv.mjs` in
 * `node srv.mjs`, or replaces `./bin/server`, asks again before it runs.
 *
 * Contract:
 * - Named files are: the command itself when it is a path (`./bin/server`, `bin/x`, an absolute
 *   path inside the folder); for an interpreter (node, python, deno, bun, ruby, perl, sh, bash, …)
 *   the script it is given (its first argument that is not an option) and the files of the
 *   options that load code (`--require`, `--import`, `--loader`, `-r`); for `python -m pkg.mod`
 *   the module's file in the folder; for any command (`npx tsx srv.ts`, `uv run tool.py`), every
 *   argument that names a script by its extension (.js, .mjs, .ts, .py, .sh, …). Only files inside
 *   the server's folder count: a file outside it is not the repository's.
 * - Not bound: what a named script imports, and a command given as a shell string (`sh -c "…"`):
 *   the record shows such a command line whole, and the user judges it.
 * - A digest is `sha256:<hex>` of the file's bytes, or `absent` when the file does not exist or
 *   cannot be read (so creating it later asks again). Reading is synchronous: the trust decision
 *   is asked synchronously before a server starts, and the files are a few small scripts.
 * - Reading never throws.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { CommandFileDigests } from '../core/trust';
import { readRegularFileSync } from './regularFile';
import type { ServerDefinition } from '../core/verify/registry';

/** Interpreters whose first non-option argument is the program they run. */
const INTERPRETERS: ReadonlySet<string> = new Set([
  'node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node', 'python', 'python2', 'python3', 'pypy', 'pypy3', 'ruby', 'perl', 'php',
  'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'pwsh', 'powershell', 'lua', 'luajit', 'Rscript', 'java', 'elixir', 'julia',
]);

/** A word that names a script by its extension, whatever runs it. */
const SCRIPT_FILE = /\.(?:[cm]?[jt]sx?|py|pyw|rb|pl|pm|php|sh|bash|zsh|ps1|lua|r|jl|exs?)$/i;

/** Interpreter options whose value is a file of code it loads before the program. */
const LOADING_OPTIONS: ReadonlySet<string> = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '--preload']);

/** Options that take a value in the next word (so the value is not taken for the script). */
const VALUE_OPTIONS: ReadonlySet<string> = new Set([...LOADING_OPTIONS, '-e', '--eval', '-p', '--print', '-c', '-m', '-W', '-X', '--input-type', '--conditions', '-C', '--env-file', '--title', '-cp', '-classpath', '--config']);

/** The interpreter's name without folder, version suffix handling kept simple (`python3.12` → `python3`). */
function interpreterName(command: string): string {
  const base = path.basename(command).replace(/\.exe$/i, '');
  return base.replace(/^(python\d?)\.\d+$/, '$1');
}

/** True when a word is a path to run rather than a name looked up on PATH. */
function isPathWord(word: string): boolean {
  return word.includes('/') || word.includes('\\');
}

/**
 * The files a command line names, as paths relative to `cwd` (see the contract); files outside
 * `cwd` are left out. It reads no file.
 */
export function namedCommandFiles(command: string, args: readonly string[], cwd: string): string[] {
  const named: string[] = [];
  if (isPathWord(command)) named.push(command);
  const interpreter = interpreterName(command);
  if (INTERPRETERS.has(interpreter)) {
    for (let index = 0; index < args.length; index++) {
      const word = args[index]!;
      const [option, inlineValue] = word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
      if (LOADING_OPTIONS.has(option)) {
        const value = inlineValue ?? args[index + 1];
        if (value !== undefined && (isPathWord(value) || /\.[cm]?[jt]sx?$|\.py$|\.rb$/.test(value))) named.push(value);
        if (inlineValue === undefined) index++;
        continue;
      }
      if (option === '-m' && interpreter.startsWith('python')) {
        const module = args[index + 1];
        if (module) named.push(path.join(...module.split('.')) + '.py', path.join(...module.split('.'), '__main__.py'));
        break;
      }
      if (option === '-e' || option === '--eval' || option === '-c' || option === '-p' || option === '--print') break;
      if (VALUE_OPTIONS.has(option) && inlineValue === undefined) {
        index++;
        continue;
      }
      if (word.startsWith('-')) continue;
      named.push(word);
      break;
    }
  }
  for (const word of args) {
    const value = word.startsWith('--') && word.includes('=') ? word.slice(word.indexOf('=') + 1) : word;
    if (!value.startsWith('-') && SCRIPT_FILE.test(value)) named.push(value);
  }
  const inside: string[] = [];
  for (const word of named) {
    const absolute = path.resolve(cwd, word);
    const relative = path.relative(cwd, absolute);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) continue;
    if (!inside.includes(relative)) inside.push(relative);
  }
  return inside;
}

/** `sha256:<hex>` of a regular file's bytes, or `absent` (see the contract). */
export function fileDigest(file: string): string {
  try {
    // Anything but a regular file (a FIFO would block the read) throws, and is "absent".
    const bytes = readRegularFileSync(file);
    return bytes ? `sha256:${createHash('sha256').update(bytes).digest('hex')}` : 'absent';
  } catch {
    return 'absent';
  }
}

/**
 * The digests of the workspace files a definition's declared command line names, keyed by their
 * path relative to the definition's folder; a named file whose link leads out of the folder is
 * keyed with where it leads. HTTP servers name none.
 */
export function commandFileDigests(definition: ServerDefinition): CommandFileDigests {
  // The command line as it will run (`${workspaceFolder}/srv.mjs` resolved): the files it names are
  // the files that run. Keys are relative paths, so no resolved value is shown or recorded.
  const declared = definition.transport ?? definition.declared;
  if (!declared || declared.kind !== 'stdio' || !path.isAbsolute(definition.cwd)) return {};
  // The folder's real path, so that a file reached through the folder's own link still counts.
  let realFolder = definition.cwd;
  try {
    realFolder = realpathSync.native(definition.cwd);
  } catch {
    // A folder that does not exist runs nothing; the digests say "absent".
  }
  const digests: Record<string, string> = {};
  for (const relative of namedCommandFiles(declared.command, declared.args, definition.cwd)) {
    const file = path.join(definition.cwd, relative);
    let real: string | undefined;
    try {
      real = realpathSync.native(file);
    } catch {
      real = undefined;
    }
    // A link that leads out of the folder is bound by where it points: its target's digest, and the target named.
    const key = real && path.relative(realFolder, real).startsWith('..') ? `${relative} -> ${real}` : relative;
    digests[key] = fileDigest(file);
  }
  return digests;
}
