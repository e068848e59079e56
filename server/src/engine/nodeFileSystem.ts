/**
 * Node's file system for the engine: reads files and finds Toolpin documents with the one file
 * finder (server/src/io/fileFinder.ts): its skipped folders, and the workspace's `.gitignore`
 * files honoured, alike for the language server and `toolpin check`.
 */
import { readdir, stat } from 'node:fs/promises';
import { errorCode } from '../core/json/values';
import { acceptDocument, acceptDocumentWith, findFiles, isDocumentName } from '../io/fileFinder';
import { defaultSourceNames } from '../core/documents/source/sourceNames';
import { isNotARegularFile, readRegularText } from '../io/regularFile';
import type { WorkspaceFileSystem } from './liveWorkspace';

/** `satisfies`, not a type annotation: callers see that this file system always lists folders. */
export const nodeFileSystem = {
  readFile: async (file) => {
    try {
      return await readRegularText(file);
    } catch (error) {
      // The language server's log (standard error) names what was skipped; absence says nothing.
      if (isNotARegularFile(error)) console.warn(`toolpin: ${file}: ${error.message}`);
      return undefined;
    }
  },
  listFolder: async (folder) => {
    try {
      return await readdir(folder);
    } catch {
      return undefined;
    }
  },
  findDocuments: (folder, limit, names?, walk?) =>
    findFiles(folder, { match: isDocumentName, accept: names ? acceptDocumentWith(names) : acceptDocument, gitignore: true, limit, ...(walk ? { budget: walk.budget, onCut: walk.onCut } : {}) }),
} satisfies WorkspaceFileSystem;

/** A path that could not be searched, and why (a system error code or message). */
export interface UnreadablePath {
  readonly path: string;
  readonly reason: string;
}

/**
 * Finds Toolpin documents under the given paths, in a stable (sorted) order, with the one file
 * finder (its skipped folders; `.gitignore` honoured). A path given explicitly is taken as it is:
 * a file is checked whatever its name (and reported if it is not a Toolpin document), a folder is
 * searched even when its name is one the finder skips below it.
 */
export async function findDocuments(paths: readonly string[]): Promise<{ files: string[]; unreadable: UnreadablePath[] }> {
  const files = new Set<string>();
  const unreadable: UnreadablePath[] = [];
  for (const target of paths) {
    let info;
    try {
      info = await stat(target);
    } catch (error) {
      const code = errorCode(error);
      unreadable.push({ path: target, reason: code === 'ENOENT' ? 'ENOENT (no such file or folder)' : String(code ?? error) });
      continue;
    }
    if (!info.isDirectory()) {
      files.add(target);
      continue;
    }
    const found = await findFiles(target, {
      match: isDocumentName,
      // A one-shot check has nothing else to do while it walks: one blocking read per module.
      accept: acceptDocumentWith(defaultSourceNames(), { synchronous: true }),
      gitignore: true,
      onUnreadable: (folder, reason) => unreadable.push({ path: folder, reason }),
    });
    for (const file of found) files.add(file);
  }
  return { files: [...files].sort(), unreadable };
}
