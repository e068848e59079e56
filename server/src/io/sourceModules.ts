/**
 * The module access of the CLI and the language server (core/documents/source/sourceModules.ts):
 * which file a relative specifier names, and its text.
 *
 * Contracts:
 * - Only `./` and `../` specifiers are resolved; a package (`@acme/pins`) is never read.
 * - A specifier is tried as written, then with each of {@link EXTENSIONS}, then as a folder's
 *   `index` with each; a `.js`, `.mjs`, `.cjs` or `.jsx` specifier is also tried as the TypeScript
 *   file it is compiled from (`./pins.js` → `./pins.ts`), as TypeScript resolves it.
 * - Only files inside the workspace root are read: a specifier that leads out of it, or a symbolic
 *   link (of the file or of a folder on its way) whose target is outside it, is refused with a
 *   message saying so; the link is not followed.
 * - Files are read through io/regularFile.ts (a FIFO or a device is refused, never blocks), and
 *   at most `maxFileBytes` bytes of each are read.
 * - `openText` may give the text of a module an editor has open (unsaved edits win over the disk).
 * - Texts and parses are kept for the life of the access: make one per check or per analysis.
 */
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { ModuleAccess, ModuleScope, ResolvedModule } from '../core/documents/source/sourceModules';
import { isNotARegularFile, readRegularFileSync } from './regularFile';

/** The extensions tried after a specifier, in TypeScript's order of preference. */
export const EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

const COMPILED = /\.(?:[mc]?js|jsx)$/;

export interface NodeModuleAccessOptions {
  /** The workspace folder: nothing outside it is read. */
  readonly root: string;
  /** The text of a file an editor has open, else undefined (the disk is read). */
  readonly openText?: (file: string) => string | undefined;
  /** The largest module read, in bytes (the `maxFileBytes` of the source names). */
  readonly maxFileBytes?: number;
}

function inside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The files a specifier may name, in order. */
function candidates(base: string): string[] {
  const found = [base, ...EXTENSIONS.map((extension) => base + extension)];
  if (COMPILED.test(base)) {
    const stem = base.replace(COMPILED, '');
    found.push(...EXTENSIONS.filter((extension) => !COMPILED.test(extension)).map((extension) => stem + extension));
  }
  found.push(...EXTENSIONS.map((extension) => path.join(base, `index${extension}`)));
  return found;
}

/** A module access on the file system (see the contract at the top). */
export function nodeModuleAccess(options: NodeModuleAccessOptions): ModuleAccess {
  const root = path.resolve(options.root);
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    realRoot = root;
  }
  const texts = new Map<string, ResolvedModule | null>();
  const parsed = new Map<string, ModuleScope>();

  /** The file's text, null when there is no such regular file, or an error when it may not be read. */
  const read = (file: string): ResolvedModule | null => {
    const open = options.openText?.(file);
    if (open !== undefined) return { file, text: open };
    const known = texts.get(file);
    if (known !== undefined) return known;
    let answer: ResolvedModule | null;
    try {
      const real = realpathSync(file);
      if (!inside(realRoot, real)) {
        answer = { error: `${path.relative(root, file)} is a symbolic link (or lies behind one) that leads outside the workspace; Toolpin does not follow it` };
      } else {
        const bytes = readRegularFileSync(file);
        answer = bytes === undefined ? null : options.maxFileBytes !== undefined && bytes.length > options.maxFileBytes ? { error: `it is over the limit of ${options.maxFileBytes.toLocaleString('en-US')} bytes for modules read (setting maxFileBytes)` } : { file, text: bytes.toString('utf8') };
      }
    } catch (error) {
      answer = isNotARegularFile(error) || (error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) ? null : { error: error instanceof Error ? error.message : String(error) };
    }
    texts.set(file, answer);
    return answer;
  };

  return {
    parsed,
    resolve(fromFile, specifier) {
      if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..') return undefined;
      const base = path.resolve(path.dirname(fromFile), specifier);
      if (!inside(root, base)) return { error: `it lies outside the workspace folder, which is all Toolpin reads` };
      for (const candidate of candidates(base)) {
        const found = read(candidate);
        if (found) return found;
      }
      return { error: 'no such module (tried the TypeScript and JavaScript extensions and index files)' };
    },
  };
}
