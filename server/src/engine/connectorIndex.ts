/**
 * The server definitions of the live workspace's connector documents, kept per document and per
 * workspace folder in path order.
 *
 * Contract: a folder's registry is assembled from `definitions(folder)` in time linear in the
 * number of its definitions (no document is read again, nothing is sorted), and a document whose
 * servers did not change keeps its definitions: the same objects, so `set` says "unchanged", the
 * folder's registry stays valid and its servers keep their listings. Opening and closing many
 * connector documents therefore costs each one a constant amount of registry work plus one
 * assembly per registry actually needed, instead of a rebuild from every document per event.
 * The order is the one `buildWorkspaceRegistry` sorts connectors by (`localeCompare` of paths), so
 * the first definition of a name wins exactly as it does in the CLI.
 */
import { type ServerDefinition, serverKey } from '../core/verify/registry';

interface FolderEntry {
  /** The paths of the folder's documents that define servers, sorted. */
  readonly paths: string[];
  readonly definitions: Map<string, readonly ServerDefinition[]>;
  /** The paths that define each server name. */
  readonly byName: Map<string, Set<string>>;
}

export class ConnectorIndex {
  private readonly folders = new Map<string, FolderEntry>();
  /** The folder each indexed path was filed under. */
  private readonly folderOfPath = new Map<string, string>();

  /**
   * Files a document's definitions under its folder (none: the document is removed). When the
   * folder's definitions changed (its registry must be built again), the server names the change
   * touches (those it had and those it has); otherwise undefined.
   */
  set(file: string, folder: string, definitions: readonly ServerDefinition[]): ReadonlySet<string> | undefined {
    const previousFolder = this.folderOfPath.get(file);
    if (previousFolder !== undefined && previousFolder !== folder) {
      const removed = this.delete(file)!;
      return new Set([...removed, ...(this.set(file, folder, definitions) ?? [])]);
    }
    if (definitions.length === 0) return this.delete(file);
    let entry = this.folders.get(folder);
    if (!entry) this.folders.set(folder, (entry = { paths: [], definitions: new Map(), byName: new Map() }));
    const previous = entry.definitions.get(file);
    if (previous && sameServers(previous, definitions)) return undefined;
    if (!previous) insertSorted(entry.paths, file);
    for (const definition of previous ?? []) entry.byName.get(definition.name)?.delete(file);
    for (const definition of definitions) {
      const paths = entry.byName.get(definition.name);
      if (paths) paths.add(file);
      else entry.byName.set(definition.name, new Set([file]));
    }
    entry.definitions.set(file, definitions);
    this.folderOfPath.set(file, folder);
    return new Set([...(previous ?? []), ...definitions].map((definition) => definition.name));
  }

  /** Removes a document; the names of the servers it defined, or undefined when it defined none. */
  delete(file: string): ReadonlySet<string> | undefined {
    const folder = this.folderOfPath.get(file);
    if (folder === undefined) return undefined;
    this.folderOfPath.delete(file);
    const entry = this.folders.get(folder)!;
    const previous = entry.definitions.get(file) ?? [];
    for (const definition of previous) entry.byName.get(definition.name)?.delete(file);
    entry.definitions.delete(file);
    const at = indexOfSorted(entry.paths, file);
    if (at !== -1) entry.paths.splice(at, 1);
    if (entry.paths.length === 0) this.folders.delete(folder);
    return new Set(previous.map((definition) => definition.name));
  }

  /** The definitions of a folder's documents, in path order. */
  definitions(folder: string): ServerDefinition[] {
    const entry = this.folders.get(folder);
    if (!entry) return [];
    const all: ServerDefinition[] = [];
    for (const file of entry.paths) for (const definition of entry.definitions.get(file)!) all.push(definition);
    return all;
  }

  /** The documents of a folder that define a server name. */
  pathsDefining(folder: string, name: string): ReadonlySet<string> {
    return this.folders.get(folder)?.byName.get(name) ?? new Set();
  }

  clear(): void {
    this.folders.clear();
    this.folderOfPath.clear();
  }
}

/**
 * True when two definition lists declare the same servers at the same places: names, what
 * connects (the server key: transport, auth, folder, why unusable) and the name's span, which
 * diagnostics about a definition point at.
 */
function sameServers(a: readonly ServerDefinition[], b: readonly ServerDefinition[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((left, index) => {
    const right = b[index]!;
    const leftSpan = left.origin.span;
    const rightSpan = right.origin.span;
    return (
      left.name === right.name &&
      left.origin.kind === right.origin.kind &&
      leftSpan?.offset === rightSpan?.offset &&
      leftSpan?.length === rightSpan?.length &&
      serverKey(left) === serverKey(right)
    );
  });
}

/** The position of `file` in sorted `paths`, or where it would go (`found` false). */
function search(paths: readonly string[], file: string): { at: number; found: boolean } {
  let low = 0;
  let high = paths.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const order = paths[middle]!.localeCompare(file);
    if (order === 0 && paths[middle] === file) return { at: middle, found: true };
    if (order < 0 || (order === 0 && paths[middle]! < file)) low = middle + 1;
    else high = middle;
  }
  return { at: low, found: false };
}

function insertSorted(paths: string[], file: string): void {
  const { at, found } = search(paths, file);
  if (!found) paths.splice(at, 0, file);
}

function indexOfSorted(paths: readonly string[], file: string): number {
  const { at, found } = search(paths, file);
  return found ? at : paths.indexOf(file);
}
