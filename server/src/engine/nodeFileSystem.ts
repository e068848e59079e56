/**
 * Node's file system for the live workspace: reads files and finds Toolpin documents under a
 * folder with the one file finder (server/src/io/fileFinder.ts): its skipped folders, and the
 * workspace's `.gitignore` files honoured, as `toolpin check` does.
 */
import { readdir, readFile } from 'node:fs/promises';
import { acceptDocument, findFiles, isDocumentName } from '../io/fileFinder';
import type { WorkspaceFileSystem } from './liveWorkspace';

export const nodeFileSystem: WorkspaceFileSystem = {
  readFile: async (file) => {
    try {
      return await readFile(file, 'utf8');
    } catch {
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
  findDocuments: (folder, limit) => findFiles(folder, { match: isDocumentName, accept: acceptDocument, gitignore: true, limit }),
};
