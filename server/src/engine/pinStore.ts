/**
 * Reading the pin store (docs/formats.md §6) for a set of documents: the store entries of their
 * pins, so verification can say what changed. Entries are content-addressed and never change, so
 * a found entry is cached for good; a missing one is looked for again next time.
 */
import * as path from 'node:path';
import { blueprintOf, connectorOf, type DocumentAnalysis } from '../core/documents/documents';
import { entryPath, fullDefinitionPath, fullDefinitionPinPart, isFullDefinitionEntryName, legacyFullDefinitionPath, PIN_STORE_SEGMENTS, pinPartsOfEntryName } from '../core/pins/storeLayout';
import type { ParsedPin } from '../core/pins/pins';

/** Every well-formed pin of a document. */
export function pinsOf(analysis: Pick<DocumentAnalysis, 'kind' | 'model'>): ParsedPin[] {
  const pins: ParsedPin[] = [];
  for (const step of blueprintOf(analysis)?.steps ?? []) if (step.mcp?.pin) pins.push(step.mcp.pin);
  for (const instance of connectorOf(analysis)?.instances ?? []) for (const entry of instance.snapshot) if (entry.parsed) pins.push(entry.parsed);
  return pins;
}

/** A pinned tool, for full-definition entries; `server` when the document names it (a connector, a step's `server`). */
export interface PinnedTool {
  readonly pin: ParsedPin;
  readonly tool: string;
  readonly server?: string;
}

/** Every well-formed pin of a document with the tool it pins, for full-definition entries. */
export function pinnedToolsOf(analysis: Pick<DocumentAnalysis, 'kind' | 'model'>): PinnedTool[] {
  const pinned: PinnedTool[] = [];
  for (const step of blueprintOf(analysis)?.steps ?? []) if (step.mcp?.pin && step.mcp.toolName) pinned.push({ pin: step.mcp.pin, tool: step.mcp.toolName.value, server: step.mcp.server?.value });
  for (const instance of connectorOf(analysis)?.instances ?? []) for (const entry of instance.snapshot) if (entry.parsed) pinned.push({ pin: entry.parsed, tool: entry.tool.value, server: instance.name?.value });
  return pinned;
}

/** Where a folder's store keeps its entries. */
function storeFolderOf(folder: string): string {
  return path.join(folder, ...PIN_STORE_SEGMENTS);
}

export class PinStoreReader {
  private readonly found = new Map<string, string>();

  /**
   * @param listFolder lists a folder's file names, or undefined when it does not exist; when given,
   *   only entries that exist are read (a workspace without a store costs one listing, not one
   *   read per pin).
   */
  constructor(
    private readonly readFile: (file: string) => Promise<string | undefined>,
    private readonly listFolder?: (folder: string) => Promise<string[] | undefined>,
  ) {}

  private static key(folder: string, pin: ParsedPin): string {
    return path.join(folder, ...entryPath(pin.algorithm, pin.hex).split('/'));
  }

  /** Loads the entries of `pins` under `folder` and returns a synchronous lookup for verification. */
  async lookup(folder: string, pins: readonly ParsedPin[]): Promise<(pin: ParsedPin) => string | undefined> {
    // A 10,000-step blueprint repeats a few pins thousands of times: paths are made per distinct
    // pin, found by the pin's own strings (no key is built per pin, since this runs per keystroke).
    const seen = new Map<string, Set<string>>();
    const wanted: string[] = [];
    for (const pin of pins) {
      let hexes = seen.get(pin.algorithm);
      if (!hexes) seen.set(pin.algorithm, (hexes = new Set()));
      if (hexes.has(pin.hex)) continue;
      hexes.add(pin.hex);
      const file = PinStoreReader.key(folder, pin);
      if (!this.found.has(file)) wanted.push(file);
    }
    await this.readPresent(folder, wanted, this.found);
    // Asked only for the pins whose change is described (drifted ones), so the path is made then.
    return (pin) => this.found.get(PinStoreReader.key(folder, pin));
  }

  /**
   * Reads the `files` of `folder`'s store into `into`: one listing of the store folder (when the
   * file system can list) saves a failed read per missing entry, which is the common case.
   */
  private async readPresent(folder: string, files: readonly string[], into: Map<string, string>): Promise<void> {
    if (files.length === 0) return;
    let present: Set<string> | undefined;
    if (this.listFolder) {
      const names = await this.listFolder(storeFolderOf(folder));
      present = new Set((names ?? []).map((name) => path.join(storeFolderOf(folder), name)));
    }
    await Promise.all(
      files.map(async (file) => {
        if (present && !present.has(file)) return;
        const text = await this.readFile(file);
        if (text !== undefined) into.set(file, text);
      }),
    );
  }

  /**
   * Loads the full-definition entries (core/verify/fullDefinition.ts) of the pinned tools under
   * `folder` and returns a synchronous lookup by pin, tool and server. Unlike pinned content, such
   * an entry is replaced when a change outside the pin is accepted, so it is read again every time
   * (only the entries the folder holds).
   *
   * Entries are keyed by server; an entry of a store written before that (no server in its name)
   * is the fallback for a server without an entry of its own. With a listing of the store, every
   * entry of a pinned tool's pin is read, whatever its server (a blueprint step's server is known
   * only once the registry resolves it); without one, the entries of the servers the documents
   * name and the legacy entries.
   */
  async lookupFull(folder: string, pinnedTools: () => readonly PinnedTool[]): Promise<(pin: ParsedPin, tool: string, server: string | undefined) => string | undefined> {
    const none = (): undefined => undefined;
    // Most stores hold no full-definition entry: one listing says so, before the pinned tools are
    // even gathered (they are asked for by a function for this reason).
    let names: string[] | undefined;
    if (this.listFolder) {
      names = (await this.listFolder(storeFolderOf(folder))) ?? [];
      if (!names.some(isFullDefinitionEntryName)) return none;
    }
    const pins = pinnedTools();
    if (pins.length === 0) return none;
    const absolute = (relative: string): string => path.join(folder, ...relative.split('/'));
    const wanted = new Set<string>();
    if (names) {
      // The pin part hashes the tool name (schema pins): computed once per distinct pin and tool.
      const parts = new Set<string>();
      for (const entry of pins) parts.add(fullDefinitionPinPart(entry.pin.algorithm, entry.pin.hex, entry.tool));
      for (const name of names) if (pinPartsOfEntryName(name)?.some((part) => parts.has(part))) wanted.add(path.join(storeFolderOf(folder), name));
    } else {
      for (const entry of pins) {
        wanted.add(absolute(legacyFullDefinitionPath(entry.pin.algorithm, entry.pin.hex, entry.tool)));
        if (entry.server !== undefined) wanted.add(absolute(fullDefinitionPath(entry.pin.algorithm, entry.pin.hex, entry.tool, entry.server)));
      }
    }
    const found = new Map<string, string>();
    await this.readPresent(folder, [...wanted], found);
    if (found.size === 0) return none;
    const answers = new Map<string, string | undefined>();
    return (pin, tool, server) => {
      const id = `${pin.algorithm}:${pin.hex}:${tool}:${server ?? ''}`;
      if (answers.has(id)) return answers.get(id);
      const own = server === undefined ? undefined : found.get(absolute(fullDefinitionPath(pin.algorithm, pin.hex, tool, server)));
      const answer = own ?? found.get(absolute(legacyFullDefinitionPath(pin.algorithm, pin.hex, tool)));
      answers.set(id, answer);
      return answer;
    };
  }
}
