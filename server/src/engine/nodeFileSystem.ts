/**
 * Node's file system for the live workspace: reads files and finds Toolpin documents under a
 * folder, skipping folders that never hold a workspace's own documents.
 */
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { documentKindOf } from '../core/documents';
import type { WorkspaceFileSystem } from './liveWorkspace';

const SKIPPED = new Set(['node_modules', '.git', '.toolpin', '.cache', 'dist', 'out']);

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
  findDocuments: async (folder, limit) => {
    const found: string[] = [];
    const queue = [folder];
    while (queue.length > 0 && found.length < limit) {
      const current = queue.shift()!;
      let entries;
      try {
        entries = await readdir(current, { withFileTypes: true });
      } catch {
        continue;
      }
      entries.sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        const full = path.join(current, entry.name);
        if (entry.isDirectory()) {
          if (!SKIPPED.has(entry.name)) queue.push(full);
        } else if (entry.isFile() && documentKindOf(entry.name) && found.length < limit) {
          found.push(full);
        }
      }
    }
    return found;
  },
};
