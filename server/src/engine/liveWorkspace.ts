/**
 * The live workspace behind the language server: every Toolpin document of the workspace folders
 * (open editor buffers first, the disk for the rest), a server registry per folder, one inventory
 * for all of them, and verification results that follow listings as they arrive.
 *
 * It knows nothing of LSP: the server adapts it (features/*.ts). Its contract:
 * - `analysis(path)` and `verification(path)` never wait for a server; a server whose first
 *   listing is still being fetched gives "pending" verdicts and no problem;
 * - a registry is never built from a half-read workspace: while the workspace scan runs (it
 *   finds the connector files that declare servers), `verification(path)` gives no verdict and no
 *   problem, exactly as a pending listing does, and the scan's end fires `onDidChange` for every
 *   document; registry lookups for hovers and completion wait for the scan instead;
 * - a listing reaches the documents one way: whenever one arrives or changes (first fetch,
 *   list_changed, refresh, a TTL re-fetch), `listingsChanged` turns the definitions into the
 *   documents that use them and fires `onDidChange` once with those, so they are published again
 *   without anyone typing; one slow server never holds back the results of the others. The
 *   listing source reports list_changed and refresh (engine/listingSource.ts); first fetches and
 *   TTL re-fetches are the workspace's own requests, reported when they settle. Nothing else
 *   revalidates for a listing: every view (diagnostics, status, history, code lenses) follows
 *   `onDidChange` or the publications it causes.
 */
import * as path from 'node:path';
import { analyzeDocument, blueprintOf, connectorOf, type DocumentAnalysis, type DocumentKind, documentKindOf, holdsAnything, type ModuleAccess, reanalyzeDocument } from '../core/documents/documents';
import { kindOfFile, pinKind } from '../core/documents/kinds/registry';
import { BUILT_IN_SOURCE_NAMES, type SourceNames, sourceNamesKey } from '../core/documents/source/sourceNames';
import { connectorServers, definedIn, type ServerDefinition, ServerRegistry } from '../core/verify/registry';
import type { ServerListing, VerificationResult } from '../core/verify/verify';
import type { ParsedPin } from '../core/pins/pins';
import { ConnectorIndex } from './connectorIndex';
import type { ListingSource } from './listingSource';
import type { WalkBudget, WalkCut } from '../io/fileFinder';
import { PinStoreReader } from './pinStore';
import { isPolicyFile, type PolicyFile, PolicyReader } from './policyFile';
import { type AnalyzedDocument, definitionsNeeded, listingsFrom, readFolderInputs, verifyDocument } from './verifyWorkspace';
import { buildWorkspaceRegistry } from './workspaceRegistry';

/** A pending timer; disposing it before it fires cancels it. */
export interface Timer {
  dispose(): void;
}

/** How often stale listings (TTL expired) are looked for and fetched again in the background. */
export const STALE_CHECK_MS = 15_000;

/** The file access the live workspace needs, injected (the language server gives Node's fs). */
export interface WorkspaceFileSystem {
  readFile(file: string): Promise<string | undefined>;
  /**
   * Toolpin documents under a folder (never inside node_modules or .git), at most `limit`; with a
   * `walk`, the search stops when its budget is spent and says so through `walk.onCut`.
   */
  findDocuments(folder: string, limit: number, names?: SourceNames, walk?: ScanWalk): Promise<string[]>;
  /** The file names in a folder, or undefined when it does not exist. */
  listFolder?(folder: string): Promise<string[] | undefined>;
}

/** The bound of one workspace folder's search, and who hears that it was reached. */
export interface ScanWalk {
  readonly budget: WalkBudget;
  readonly onCut: (cut: WalkCut) => void;
}

export interface LiveWorkspaceOptions {
  readonly fileSystem: WorkspaceFileSystem;
  /** The inventory in use; a getter because settings changes replace it. */
  readonly inventory: () => ListingSource;
  readonly now: () => number;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly userHome?: string;
  /** User-level servers (the `toolpin.servers` setting). */
  readonly userServers: () => unknown;
  /** Whether live verification runs at all (setting); when off, pins get no verdict. */
  /**
   * The names a folder's source files call their pin functions by (the `toolpin.sources.*`
   * settings, resource-scoped); absent: the built-in ones.
   */
  readonly sourceNamesFor?: (folder: string) => Promise<SourceNames>;
  readonly liveEnabled: () => boolean;
  readonly log: (line: string) => void;
  /** One-shot timers (the runtime's), for the background re-check of stale listings. */
  readonly setTimeout: (callback: () => void, milliseconds: number) => Timer;
  /**
   * A module access for one analysis (io/sourceModules.ts): reads the modules a source file imports
   * pins from, inside `root`, preferring an editor's text (`openText`). Absent, imported pins are
   * "cannot verify".
   */
  readonly moduleAccess?: (root: string, openText: (file: string) => string | undefined, maxFileBytes: number) => ModuleAccess;
}

interface DocumentState {
  text: string;
  /** True while an editor holds the document; its text then wins over the disk. */
  open: boolean;
  analysis: DocumentAnalysis;
  /** The source names the analysis was made with. */
  names: SourceNames;
}

/** A server whose first listing is still being fetched: no verdict, no problem. */
const PENDING: ServerListing = { status: 'pending' };


/** Why a document that is not a local file gets structure checks only (its pins' message). */
export const NOT_A_LOCAL_FILE = 'a document that is not a local file (git:, vscode-vfs:, untitled:) gets structure checks only: Toolpin starts and contacts no server for it';

/** True for a local file's path; a document of another scheme keeps its URI as its "path" (util/uris.ts). */
function isLocalPath(file: string): boolean {
  return path.isAbsolute(file);
}

/** The path part of a URI (`git:/a/b?x` → `/a/b`), or undefined when it has none that is absolute. */
function uriPathOf(uri: string): string | undefined {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:(?:\/\/[^/?#]*)?([^?#]*)/.exec(uri);
  const inner = match?.[1];
  if (!inner || !inner.startsWith('/')) return undefined;
  try {
    return decodeURIComponent(inner);
  } catch {
    return inner;
  }
}

export class LiveWorkspace {
  private folders: string[] = [];
  private readonly documents = new Map<string, DocumentState>();
  /** For each source document, the other modules its analysis read pins from: a change to one of them analyzes it again. */
  private readonly dependencies = new Map<string, ReadonlySet<string>>();
  private readonly sourceNames = new Map<string, SourceNames>();
  private readonly sourceNamesKeys = new Map<string, string>();
  private readonly registries = new Map<string, Promise<ServerRegistry>>();
  /** The server definitions of the connector documents, per folder (see engine/connectorIndex.ts). */
  private readonly connectors = new ConnectorIndex();
  /**
   * The documents with a pinned step (blueprints, source modules): the only ones a listing or a
   * change of servers can concern besides connectors, so those events walk these, not every document.
   */
  private readonly pinningDocuments = new Set<string>();
  private readonly listeners: Array<(paths: string[]) => void> = [];
  private readonly requested = new Set<ServerDefinition>();
  private readonly store: PinStoreReader;
  private readonly policies: PolicyReader;
  /**
   * The running workspace scan, if any. Announced as soon as the client names its folders (in
   * `initialize`), so a document opened before the scan starts is already held back.
   */
  private scanning: { readonly done: Promise<void>; readonly finish: () => void } | undefined;

  constructor(private readonly options: LiveWorkspaceOptions) {
    this.policies = new PolicyReader((file) => options.fileSystem.readFile(file));
    this.store = new PinStoreReader(
      (file) => options.fileSystem.readFile(file),
      options.fileSystem.listFolder?.bind(options.fileSystem),
    );
  }

  onDidChange(listener: (paths: string[]) => void): void {
    this.listeners.push(listener);
  }

  private fire(paths: string[]): void {
    for (const listener of this.listeners) listener(paths);
  }

  /** Every document the workspace knows (open or scanned). */
  paths(): string[] {
    return [...this.documents.keys()];
  }

  /** True when `folder` is one of the workspace folders (not the folder of a lone file). */
  isWorkspaceFolder(folder: string): boolean {
    return this.folders.includes(folder);
  }

  /** The workspace folders, as the client named them. */
  workspaceFolders(): readonly string[] {
    return this.folders;
  }

  /**
   * The workspace folder a file belongs to: the longest folder containing it, else its own folder.
   * A document that is not a local file (its "path" is a git:, vscode-vfs: or untitled: URI)
   * belongs to the workspace folder its URI's path lies in, if any (so its server names resolve),
   * never by the process's current folder; `verification` gives it structure checks only.
   */
  folderOf(file: string): string {
    if (!isLocalPath(file)) {
      const inner = uriPathOf(file);
      const folder = inner !== undefined ? this.containingFolder(inner) : undefined;
      if (folder) return folder;
      // `untitled:name` has no folder part: the URI itself, never "." (the process's folder).
      const parent = path.posix.dirname(file);
      return parent === '.' ? file : parent;
    }
    return this.containingFolder(file) ?? path.dirname(file);
  }

  /** The longest workspace folder containing an absolute path. */
  private containingFolder(file: string): string | undefined {
    let best: string | undefined;
    for (const folder of this.folders) {
      const relative = path.relative(folder, file);
      if (!relative.startsWith('..') && !path.isAbsolute(relative) && (!best || folder.length > best.length)) best = folder;
    }
    return best;
  }

  /**
   * Names the workspace folders before they are scanned: from now until `setFolders` has read
   * them, registries wait for the scan and verification reports nothing (see the contract above).
   */
  announceFolders(folders: readonly string[]): void {
    this.folders = [...folders];
    this.registries.clear();
    this.reindexConnectors();
    this.beginScan();
  }

  private beginScan(): void {
    if (this.scanning) return;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    this.scanning = { done, finish };
  }

  /** True while the workspace scan runs; registries built now would miss connector files. */
  isScanning(): boolean {
    return this.scanning !== undefined;
  }

  /**
   * Sets the workspace folders and scans them for documents (up to `limit` files in all; each
   * folder's search within `walk`'s budget when given, told to `walk.onCut` with the folder).
   */
  async setFolders(folders: readonly string[], limit: number, walk?: { readonly budget: WalkBudget; readonly onCut: (folder: string, cut: WalkCut) => void }): Promise<void> {
    this.folders = [...folders];
    this.registries.clear();
    this.reindexConnectors();
    this.beginScan();
    try {
      await this.readSourceNames();
      let remaining = limit;
      for (const folder of this.folders) {
        if (remaining <= 0) break;
        const bound = walk ? { budget: walk.budget, onCut: (cut: WalkCut) => walk.onCut(folder, cut) } : undefined;
        const found = await this.options.fileSystem.findDocuments(folder, remaining, this.namesOf(folder), bound);
        remaining -= found.length;
        for (const file of found) if (!this.documents.has(file)) await this.loadFromDisk(file);
      }
    } finally {
      // Registries built while the scan ran (none should be, but a folder change may race) are
      // dropped, so the next lookup sees every connector the scan found.
      this.registries.clear();
      const scanning = this.scanning;
      this.scanning = undefined;
      scanning?.finish();
    }
    this.fire(this.paths());
  }

  /**
   * Reads a document from the disk (an editor does not hold it). When the servers its folder gets
   * from it changed, the names they touch (see `put`); otherwise undefined.
   */
  private async loadFromDisk(file: string): Promise<ReadonlySet<string> | undefined> {
    const kind = documentKindOf(file);
    if (!kind) return undefined;
    const text = await this.options.fileSystem.readFile(file);
    // An editor that opened the file while it was being read holds it now: its text wins.
    const existing = this.documents.get(file);
    if (existing?.open) return undefined;
    if (text === undefined) return this.put(file, undefined);
    const names = this.namesOf(file);
    // The disk holds what was analyzed already (an editor closed a saved document, a watcher
    // reports a save): the analysis stands, and nothing that depends on it is redone.
    if (existing && existing.text === text && existing.names === names && holdsAnything(existing.analysis)) return undefined;
    const analysis = this.analyze(kind, text, file, names);
    // A module without pins is not kept unless an editor holds it: a watcher reports every
    // TypeScript file a build writes, and none of them is a document.
    if (!holdsAnything(analysis)) return this.put(file, undefined);
    return this.put(file, { text, open: false, analysis, names });
  }

  /**
   * Sets (or removes) a document and files its servers in the connector index. When its folder's
   * servers changed, the server names the change touches: the caller then calls `serversChanged`.
   */
  private put(file: string, state: DocumentState | undefined): ReadonlySet<string> | undefined {
    if (state) this.documents.set(file, state);
    else this.documents.delete(file);
    if (state && (blueprintOf(state.analysis)?.steps ?? []).some((step) => step.mcp?.pin)) this.pinningDocuments.add(file);
    else this.pinningDocuments.delete(file);
    return this.indexConnector(file, state);
  }

  private indexConnector(file: string, state: DocumentState | undefined): ReadonlySet<string> | undefined {
    const model = state ? connectorOf(state.analysis) : undefined;
    // A git: or vscode-vfs: copy of a connector declares nothing the folder runs.
    if (!model || !isLocalPath(file)) return this.connectors.delete(file);
    const folder = this.folderOf(file);
    return this.connectors.set(file, folder, connectorServers(file, model, folder));
  }

  /** Files every document's servers again (the folders changed, and with them each file's folder). */
  private reindexConnectors(): void {
    this.connectors.clear();
    for (const [file, state] of this.documents) this.indexConnector(file, state);
  }

  /** An editor opened or changed a document. */
  setOpenDocument(file: string, text: string): DocumentAnalysis | undefined {
    const kind = documentKindOf(file);
    if (!kind) return undefined;
    const existing = this.documents.get(file);
    const names = this.namesOf(file);
    if (existing && existing.text === text && existing.names === names) {
      // The editor's text is what the scan read from disk (the usual first open): that analysis
      // is this one, and a second parse of a large file would only cost time and memory. The
      // editor's string is kept and the disk's let go (the analysis holds no view of it: values
      // are copied flat by parseJsonTree), so an open file is held once.
      if (!existing.open) existing.open = true;
      existing.text = text;
      return existing.analysis;
    }
    // A keystroke re-reads only what it touched (the previous analysis is handed over for good).
    // A source file read with other names (the settings changed) is read again in full.
    const analysis = this.analyze(kind, text, file, names, existing && existing.names === names ? existing : undefined);
    const changed = this.put(file, { text, open: true, analysis, names });
    // The caller checks this document itself; the others its servers serve are announced.
    if (changed) this.fire(this.serversChanged(file, changed));
    this.importersChanged(file);
    return analysis;
  }

  /**
   * Analyzes a document, reading the pins it imports from other modules of its folder (open
   * editors' text first), and keeps which modules it read. `previous` is consumed as
   * {@link reanalyzeDocument} says.
   */
  private analyze(kind: DocumentKind, text: string, file: string, names: SourceNames, previous?: { readonly text: string; readonly analysis: DocumentAnalysis }): DocumentAnalysis {
    const base = pinKind(kind).pinEdits === 'source-style' && isLocalPath(file) ? this.options.moduleAccess?.(this.folderOf(file), (other) => (this.documents.get(other)?.open ? this.documents.get(other)!.text : undefined), names.maxFileBytes) : undefined;
    const read = new Set<string>();
    const modules: ModuleAccess | undefined = base && {
      ...(base.parsed ? { parsed: base.parsed } : {}),
      resolve: (from, specifier) => {
        const found = base.resolve(from, specifier);
        if (found && 'file' in found) read.add(found.file);
        return found;
      },
    };
    const analysis = previous ? reanalyzeDocument(kind, previous, text, file, names, modules) : analyzeDocument(kind, text, file, names, modules);
    if (read.size > 0) this.dependencies.set(file, read);
    else this.dependencies.delete(file);
    return analysis;
  }

  /**
   * The module `file` changed (an edit, a save, a close): the documents that read pins from it are
   * analyzed again and announced, so their diagnostics follow the pins where they are written.
   */
  private importersChanged(file: string): void {
    const importers: string[] = [];
    for (const [importer, read] of this.dependencies) {
      const state = importer !== file && read.has(file) ? this.documents.get(importer) : undefined;
      const kind = documentKindOf(importer);
      if (!state || !kind) continue;
      state.analysis = this.analyze(kind, state.text, importer, state.names);
      importers.push(importer);
    }
    if (importers.length > 0) this.fire(importers);
  }

  /** An editor closed a document: the disk version takes over (it may differ from the buffer). */
  async closeDocument(file: string): Promise<void> {
    const state = this.documents.get(file);
    if (!state) return;
    state.open = false;
    const changed = await this.loadFromDisk(file);
    this.fire(changed ? [file, ...this.serversChanged(file, changed)] : [file]);
    this.importersChanged(file);
  }

  /** A file changed on disk (file watcher): re-read it unless an editor holds it. */
  async fileChanged(file: string, deleted: boolean): Promise<void> {
    if (isPolicyFile(file)) {
      // The policy changes the presentation of every finding of its folder.
      this.policies.invalidate(path.dirname(path.dirname(file)));
      this.fire(this.paths());
      return;
    }
    if (kindOfFile(file)?.role === 'servers') {
      this.invalidateRegistry(this.folderOf(file));
      this.fire(this.paths());
      return;
    }
    if (!documentKindOf(file)) return;
    const state = this.documents.get(file);
    if (state?.open) return;
    const before = state?.analysis;
    const changed = deleted ? this.put(file, undefined) : await this.loadFromDisk(file);
    this.importersChanged(file);
    const after = this.documents.get(file)?.analysis;
    if (changed) {
      this.fire([file, ...this.serversChanged(file, changed)]);
    } else if (before || after) {
      this.fire([file]);
    }
  }

  /**
   * Reads every folder's source names again; true when any folder's changed (then the caller
   * scans again, and open source documents are read again as they change).
   */
  async readSourceNames(): Promise<boolean> {
    if (!this.options.sourceNamesFor) return false;
    let changed = false;
    for (const folder of this.folders) {
      const names = await this.options.sourceNamesFor(folder);
      const key = sourceNamesKey(names);
      // Equal names keep the object already held, so a document's reading is reused while they hold.
      if (this.sourceNamesKeys.get(folder) === key) continue;
      changed = true;
      this.sourceNames.set(folder, names);
      this.sourceNamesKeys.set(folder, key);
    }
    return changed;
  }

  /** The source names of a folder or of a file's folder. */
  private namesOf(fileOrFolder: string): SourceNames {
    return this.sourceNames.get(this.folders.includes(fileOrFolder) ? fileOrFolder : this.folderOf(fileOrFolder)) ?? BUILT_IN_SOURCE_NAMES;
  }

  /**
   * The text of a module that writes a pin a document imports (`./pins.ts`), for an edit there:
   * an editor's text when one holds it, else the disk's.
   */
  async moduleText(file: string): Promise<string | undefined> {
    const state = this.documents.get(file);
    if (state?.open) return state.text;
    return this.options.fileSystem.readFile(file);
  }

  /** Settings that change the registry (user servers) or verification changed. */
  settingsChanged(): void {
    this.registries.clear();
    this.fire(this.paths());
  }

  private invalidateRegistry(folder: string): void {
    this.registries.delete(folder);
  }

  /**
   * A document changed the servers of its folder (`names` are those it defined and defines): the
   * folder's registry is dropped, and the other documents whose verification may change are
   * returned: those of the folder with a pin on one of these servers or on no named server (it
   * is looked for among all of them), and the other definitions of these names (shadowing).
   * Documents that use none of them are not checked again, so that opening a thousand connectors
   * costs a thousand checks, not a million.
   */
  private serversChanged(file: string, names: ReadonlySet<string>): string[] {
    const folder = this.folderOf(file);
    this.invalidateRegistry(folder);
    const dependents = new Set<string>();
    for (const other of this.pinningDocuments) {
      const steps = blueprintOf(this.documents.get(other)!.analysis)?.steps ?? [];
      if (steps.some((step) => step.mcp?.pin && (!step.mcp.server || names.has(step.mcp.server.value))) && this.folderOf(other) === folder) dependents.add(other);
    }
    for (const name of names) for (const other of this.connectors.pathsDefining(folder, name)) dependents.add(other);
    dependents.delete(file);
    return [...dependents];
  }

  /**
   * The registry of a folder, built from its connector documents and mcp.json files. While the
   * workspace scan runs, it waits for the scan's end, so that it is built from every connector.
   */
  async registry(folder: string): Promise<ServerRegistry> {
    while (this.scanning) await this.scanning.done;
    let registry = this.registries.get(folder);
    if (!registry) {
      registry = buildWorkspaceRegistry({
        workspaceFolder: folder,
        connectors: [],
        connectorDefinitions: this.connectors.definitions(folder),
        readFile: (file) => this.options.fileSystem.readFile(file),
        userServers: this.options.userServers(),
        variables: { env: this.options.env, ...(this.options.userHome ? { userHome: this.options.userHome } : {}) },
      });
      this.registries.set(folder, registry);
    }
    return registry;
  }

  analysis(file: string): DocumentAnalysis | undefined {
    return this.documents.get(file)?.analysis;
  }

  text(file: string): string | undefined {
    return this.documents.get(file)?.text;
  }

  /**
   * Verifies a document against the listings held now, and asks the inventory for any listing it
   * lacks; when those arrive, `onDidChange` names the documents to verify again.
   */
  async verification(file: string): Promise<VerificationResult & { registry: ServerRegistry }> {
    const state = this.documents.get(file);
    // A workspace still being read reports nothing: its end fires onDidChange for every document.
    if (this.scanning) return { verdicts: [], problems: [], registry: new ServerRegistry([]) };
    const folder = this.folderOf(file);
    const registry = await this.registry(folder);
    if (!state) return { verdicts: [], problems: [], registry };
    // Verification turned off is a setting, not a problem of every pin: no verdict, no problem
    // (the structure checks of the analysis still run, and status displays say it is off).
    if (!this.options.liveEnabled()) return { verdicts: [], problems: [], registry };
    const document: AnalyzedDocument = { path: file, ...state.analysis };
    if (!isLocalPath(file)) return this.structureOnly(document, folder, registry);
    const inputs = await readFolderInputs(this.store, this.policies, folder, [document]);
    // Asked for only now, right before verifying: a listing that arrives (or fails) while the
    // store is read would otherwise be used by this very check instead of announced by onDidChange.
    this.request(definitionsNeeded([document], registry));
    const source = this.options.inventory();
    const result = verifyDocument(document, {
      registry,
      listingFor: listingsFrom(source, PENDING),
      now: this.options.now(),
      pinnedContent: inputs.pinnedContent,
      fullDefinition: inputs.fullDefinition,
      policy: inputs.policy.policy,
    });
    return { ...result, registry };
  }

  /**
   * A document that is not a local file (git:, vscode-vfs:, untitled:): its pins are checked
   * against its folder's servers and its own connector, but no listing is asked for or used, so
   * nothing starts and nothing is sent for it, whatever the folder's trust; every pin is "cannot
   * verify", saying why.
   */
  private async structureOnly(document: AnalyzedDocument, folder: string, folderRegistry: ServerRegistry): Promise<VerificationResult & { registry: ServerRegistry }> {
    const own = connectorOf(document);
    const registry = own
      ? await buildWorkspaceRegistry({ workspaceFolder: folder, connectorDefinitions: this.connectors.definitions(folder), connectors: [{ path: document.path, model: own }], readFile: (file) => this.options.fileSystem.readFile(file), userServers: this.options.userServers(), variables: { env: this.options.env, ...(this.options.userHome ? { userHome: this.options.userHome } : {}) } })
      : folderRegistry;
    const notLocal: ServerListing = { status: 'unavailable', reason: 'untrusted-workspace', message: NOT_A_LOCAL_FILE };
    const result = verifyDocument(document, { registry, listingFor: () => notLocal, now: this.options.now() });
    return { ...result, registry };
  }

  /** Whether live verification runs (the `toolpin.verify.enable` setting). */
  liveVerification(): boolean {
    return this.options.liveEnabled();
  }

  /** The policy of a file's workspace folder (`.toolpin/policy.jsonc`), and its own problems. */
  policyOf(file: string): Promise<PolicyFile> {
    return this.policies.read(this.folderOf(file));
  }

  /** Asks for the listings of definitions (history and other views that need live data). */
  requestListings(definitions: readonly ServerDefinition[]): void {
    if (this.options.liveEnabled()) this.request(definitions);
  }

  /**
   * The listing source reports changed listings here (list_changed, refresh): the documents that
   * use them are announced once, together. It fires even when no document uses them: views of
   * the servers themselves (status, history) follow every listing.
   */
  listingsChanged(definitions: readonly ServerDefinition[]): void {
    this.fire([...new Set(definitions.flatMap((definition) => this.pathsUsing(definition)))]);
  }

  /**
   * Looks for stale listings (TTL expired) every `everyMs` and fetches them again in the
   * background, without anyone typing; each arrival goes the one way above. The returned timer
   * stops it (at shutdown).
   */
  watchStaleListings(everyMs = STALE_CHECK_MS): Timer {
    let timer: Timer | undefined;
    let stopped = false;
    const check = (): void => {
      this.requestListings(this.options.inventory().stale());
      if (!stopped) timer = this.options.setTimeout(check, everyMs);
    };
    timer = this.options.setTimeout(check, everyMs);
    return {
      dispose: () => {
        stopped = true;
        timer?.dispose();
      },
    };
  }

  /** Fetches listings that are missing or stale, each on its own, and reports each arrival. */
  private request(definitions: readonly ServerDefinition[]): void {
    const inventory = this.options.inventory();
    for (const definition of definitions) {
      const known = inventory.listing(definition);
      // Asked per definition: a walk of every server here would make each check cost O(servers).
      if (known && !inventory.isStale(definition)) continue;
      if (this.requested.has(definition)) continue;
      this.requested.add(definition);
      void inventory
        .ensure([definition])
        .catch((error: unknown) => this.options.log(`listing ${definition.name} failed: ${String(error)}`))
        .finally(() => {
          this.requested.delete(definition);
          this.listingsChanged([definition]);
        });
    }
  }

  /** Documents whose verification may depend on a definition's listing. */
  pathsUsing(definition: ServerDefinition): string[] {
    const using = new Set<string>();
    const origin = definition.origin.file;
    const defining = origin !== undefined ? this.documents.get(origin) : undefined;
    if (origin !== undefined && defining && connectorOf(defining.analysis)) using.add(origin);
    for (const file of this.pinningDocuments) {
      const steps = blueprintOf(this.documents.get(file)!.analysis)?.steps ?? [];
      if (steps.some((step) => step.mcp?.pin && (!step.mcp.server || step.mcp.server.value === definition.name))) using.add(file);
    }
    return [...using];
  }

  /**
   * The server a pin is checked against and its current listing: the step's `server`, the one
   * server serving the tool, or the connector instance's own server.
   */
  async serverFor(file: string, kind: 'schema' | 'tool', tool: string, server: string | undefined): Promise<{ definition: ServerDefinition | undefined; listing: ServerListing | undefined }> {
    const registry = await this.registry(this.folderOf(file));
    const inventory = this.options.inventory();
    let definition: ServerDefinition | undefined;
    if (kind === 'tool') {
      definition = registry.definedIn(file).find((candidate) => definedIn(candidate, file) && candidate.name === server);
    } else if (server) {
      definition = registry.get(server);
    } else {
      definition = registry.named().find((candidate) => {
        const listing = inventory.listing(candidate);
        return listing?.status === 'listed' && listing.listing.tools.some((listed) => listed.name === tool);
      });
    }
    return { definition, listing: definition ? inventory.listing(definition) : undefined };
  }

  /**
   * The listings of `definitions` for a file's pins, fetched first when they are not held (a step
   * without a pin does not make its server listed: its first pin asks here). Nothing is fetched
   * when live verification is off or the file is not local; a definition without a listing then
   * reads as pending.
   */
  async listingsOf(file: string, definitions: readonly ServerDefinition[]): Promise<(definition: ServerDefinition) => ServerListing> {
    const inventory = this.options.inventory();
    const missing = definitions.filter((definition) => inventory.listing(definition) === undefined);
    if (missing.length > 0 && this.options.liveEnabled() && isLocalPath(file)) {
      await inventory.ensure(missing).catch((error: unknown) => this.options.log(`listing for a first pin failed: ${String(error)}`));
    }
    return listingsFrom(inventory, PENDING);
  }

  /** All named servers of a file's folder with their listings, for completion. */
  servers(file: string): Promise<Array<{ definition: ServerDefinition; listing: ServerListing | undefined }>> {
    return this.serversIn(this.folderOf(file));
  }

  /** All named servers of a folder with their listings. */
  async serversIn(folder: string): Promise<Array<{ definition: ServerDefinition; listing: ServerListing | undefined }>> {
    const registry = await this.registry(folder);
    const inventory = this.options.inventory();
    return registry.named().map((definition) => ({ definition, listing: inventory.listing(definition) }));
  }

  /** The folders of every document the workspace knows, each once, in the order of `paths()`. */
  documentFolders(): string[] {
    const folders = new Set<string>();
    for (const file of this.documents.keys()) folders.add(this.folderOf(file));
    return [...folders];
  }

  /** The store entry text of a pin, when the folder's store has it. */
  async pinnedContent(file: string, pin: ParsedPin): Promise<string | undefined> {
    return (await this.store.lookup(this.folderOf(file), [pin]))(pin);
  }

  /**
   * Re-lists servers (all, or by name). The source reports the re-listed definitions
   * (`listingsChanged`), so the documents using them are re-verified once, and no other.
   */
  async refresh(names?: readonly string[]): Promise<void> {
    await this.options.inventory().refresh(names);
  }

  /** Forgets every listing ("clear cache"): every document is verified again and asks anew. */
  async clearListings(): Promise<void> {
    await this.options.inventory().clear();
    this.fire(this.paths());
  }

  /**
   * The trust changed: every listing is forgotten (a server now untrusted must not stay listed,
   * one now trusted must be contacted) and every server listed again, reported as a refresh.
   */
  async trustChanged(): Promise<void> {
    await this.options.inventory().clear();
    await this.options.inventory().refresh();
  }
}
