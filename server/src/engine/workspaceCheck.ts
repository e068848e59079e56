/**
 * The one-shot check of a workspace, as `toolpin check`, `pin` and `history` run it: find the
 * documents under the given paths, analyze them, build the workspace folder's registry, decide
 * which servers they need, have a listing source list those, and verify every document with the
 * pin store and the folder's policy (engine/verifyWorkspace.ts, the same step the editor uses).
 *
 * It knows nothing of the command line: what it could not read is returned as `issues` (in the
 * order found) for the caller to word, and the listing source is the caller's (the CLI gives the
 * MCP inventory). Its contract:
 * - the registry is the workspace folder's, whatever part of it is checked: a blueprint checked
 *   alone still names the servers its folder's connector files and modules declare (as in the
 *   editor);
 * - the listing source is made once, when the first document needs a server (or after the
 *   analysis when none does), asked for each needed definition as soon as a document needs it
 *   and only then, and disposed before `checkWorkspace` returns, so no server process outlives
 *   the check; its listings stay readable afterwards;
 * - offline, no definition is needed and every pin is "cannot verify (offline)".
 */
import { analyzeDocument, blueprintFileOf, blueprintOf, connectorOf, type DocumentKind, documentKindOf, holdsNoPinSite, type ModuleAccess } from '../core/documents/documents';
import { pinKind } from '../core/documents/kinds/registry';
import { withVerificationTreeOnly } from '../core/documents/blueprint';
import type { ConnectorModel } from '../core/documents/connector';
import type { ParsedPin } from '../core/pins/pins';
import type { Problem } from '../core/problems';
import type { ServerDefinition, ServerRegistry, VariableContext } from '../core/verify/registry';
import { prepareArgumentChecks, type VerificationResult } from '../core/verify/verify';
import type { ListingSource } from './listingSource';
import { errorMessage } from '../core/json/values';
import { findDocuments, type UnreadablePath } from './nodeFileSystem';
import { PinStoreReader } from './pinStore';
import { type PolicyFile, PolicyReader } from './policyFile';
import { type AnalyzedDocument, definitionsNeeded, listingsFrom, NOT_LISTED, OFFLINE, readFolderInputs, verifyDocument } from './verifyWorkspace';
import { buildWorkspaceRegistry } from './workspaceRegistry';

/** A document as the check read it: the analysis and its text. */
export type CheckedDocument = AnalyzedDocument & { readonly text: string; readonly problems: readonly Problem[] };

/** Something the check could not read, in the order found; any of them makes a run "could not read". */
export type CheckIssue =
  /** A given path, or a folder below it, that could not be searched. */
  | ({ readonly kind: 'unreadable' } & UnreadablePath)
  /** The given paths hold no document at all (nothing verified is not a pass). */
  | { readonly kind: 'nothing-found' }
  /** A file given explicitly that is not a Toolpin document. */
  | { readonly kind: 'not-a-document'; readonly path: string }
  /** A document that could not be read. */
  | { readonly kind: 'read-failed'; readonly path: string; readonly message: string }
  /** A module named explicitly that holds no pin site (no recognised call, nothing unreadable with a pin): nothing to check. */
  | { readonly kind: 'nothing-to-check'; readonly path: string };

/** The file access of a check, injected (the CLI's I/O scrubs secrets from what it writes). */
export interface CheckFileAccess {
  /** Reads a document; rejects when it cannot. */
  readFile(file: string): Promise<string>;
  /** Reads an optional file (mcp.json, store entries, the policy): undefined when absent or unreadable. */
  readIfPresent(file: string): Promise<string | undefined>;
  /** The file names in a folder, or undefined when it does not exist. */
  listFolder(folder: string): Promise<string[] | undefined>;
}

/** Called once the needed servers are known; `settled` after each of them is listed (or failed). */
export interface ListingProgress {
  settled(): void;
  finish(): void;
}

export interface WorkspaceCheckOptions<Source extends ListingSource = ListingSource> {
  /** Absolute paths of the files and folders to check. */
  readonly roots: readonly string[];
  /** The folder stdio servers start in and mcp.json files are read from. */
  readonly workspaceFolder: string;
  readonly files: CheckFileAccess;
  readonly variables: Omit<VariableContext, 'workspaceFolder'>;
  /** Contact no server. */
  readonly offline: boolean;
  /** Also list the servers of steps without a pin, for their first pins (`toolpin pin`). */
  readonly firstPins?: boolean;
  /** Hears what could not be read as soon as the documents are read, before the listing source is made. */
  readonly onIssues?: (issues: readonly CheckIssue[]) => void;
  /**
   * Makes the listing source, once: when the first document needs a server (`needed`: the servers
   * that document needs; more may follow), or after the analysis with none.
   */
  readonly listingSource: (needed: readonly ServerDefinition[]) => Promise<Source>;
  /** Progress of the listing, for a terminal; called only when something is to be listed. */
  readonly progress?: (total: number) => ListingProgress;
  readonly now: () => number;
  /** Reads pin values imported from other modules of the workspace (io/sourceModules.ts); without it they are "cannot verify". */
  readonly modules?: ModuleAccess;
}

export interface WorkspaceCheck<Source extends ListingSource = ListingSource> {
  readonly workspaceFolder: string;
  readonly documents: readonly CheckedDocument[];
  readonly issues: readonly CheckIssue[];
  readonly registry: ServerRegistry;
  /** The (disposed) listing source, whose listings the report shows. */
  readonly listings: Source;
  readonly results: ReadonlyMap<string, VerificationResult>;
  /** The workspace folder's policy (`.toolpin/policy.jsonc`), applied to `results`. */
  readonly policy: PolicyFile;
  /** The pin store's content of the documents' pins (`.toolpin/store`), for diffs. */
  readonly pinnedContent: (pin: ParsedPin) => string | undefined;
  /**
   * Verifies a document again (its text changed since it was read) with the listings already
   * fetched; without the store or the policy, as only its drift and missing pins are asked for.
   */
  verifyAgain(document: AnalyzedDocument): VerificationResult;
  /** The module access the documents were analyzed with, to analyze one again the same way. */
  readonly modules?: ModuleAccess;
}

/**
 * Reads and analyzes the documents under `roots`. Files are read with bounded parallelism, then
 * analyzed in a stable (sorted) order.
 */
export async function readDocuments(roots: readonly string[], files: Pick<CheckFileAccess, 'readFile'>): Promise<{ documents: CheckedDocument[]; issues: CheckIssue[] }> {
  const read = await readTexts(roots, files);
  const documents: CheckedDocument[] = [];
  for (const entry of read.entries) documents.push(analyzeEntry(entry));
  return { documents, issues: read.issues };
}

/** A document file found and read, not yet analyzed. */
interface ReadEntry {
  readonly path: string;
  readonly kind: DocumentKind;
  readonly text: string;
}

/** Finds the documents under `roots` and reads them (16 at a time); what cannot be read is an issue. */
async function readTexts(roots: readonly string[], files: Pick<CheckFileAccess, 'readFile'>): Promise<{ entries: ReadEntry[]; issues: CheckIssue[] }> {
  const { files: found, unreadable } = await findDocuments(roots);
  const issues: CheckIssue[] = unreadable.map((missing) => ({ kind: 'unreadable', ...missing }));
  if (found.length === 0 && unreadable.length < roots.length) issues.push({ kind: 'nothing-found' });
  const texts = new Map<string, string | { readonly failed: string }>();
  const queue = found.filter((file) => documentKindOf(file));
  const readers = Array.from({ length: Math.min(16, queue.length) }, async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      try {
        texts.set(file, await files.readFile(file));
      } catch (error) {
        texts.set(file, { failed: errorMessage(error) });
      }
    }
  });
  await Promise.all(readers);
  const entries: ReadEntry[] = [];
  for (const file of found) {
    const kind = documentKindOf(file);
    if (!kind) {
      issues.push({ kind: 'not-a-document', path: file });
      continue;
    }
    const text = texts.get(file);
    if (typeof text !== 'string') {
      issues.push({ kind: 'read-failed', path: file, message: text?.failed ?? 'unknown error' });
      continue;
    }
    entries.push({ path: file, kind, text });
  }
  return { entries, issues };
}

function analyzeEntry(entry: ReadEntry, modules?: ModuleAccess): CheckedDocument {
  return { path: entry.path, ...analyzeDocument(entry.kind, entry.text, entry.path, undefined, modules), text: entry.text };
}

/**
 * A blueprint file's analysis as the check keeps it until its servers are listed: only the parts
 * of the parse tree verification reads (core/documents/blueprint.ts `withVerificationTreeOnly`).
 * Connector files and modules keep theirs: fixes (`toolpin pin`) edit them through the tree.
 */
function analyzeForCheck(entry: ReadEntry, modules?: ModuleAccess): CheckedDocument {
  const document = analyzeEntry(entry, modules);
  const blueprint = blueprintFileOf(document);
  return blueprint ? { ...document, model: withVerificationTreeOnly(blueprint) } : document;
}

/** True for the kinds of document that may declare servers (connector files, compiled stacks and modules). */
function declaresServers(kind: DocumentKind): boolean {
  return pinKind(kind).servers !== 'none';
}

/**
 * The registry of the workspace folder: the connectors among `documents`, those of every other
 * connector file and module of the folder (unless `scanFolder` is false: the documents are the
 * whole folder's already), its mcp.json files.
 */
export async function registryOfFolder(
  workspaceFolder: string,
  documents: readonly AnalyzedDocument[],
  files: Pick<CheckFileAccess, 'readIfPresent'>,
  variables: Omit<VariableContext, 'workspaceFolder'>,
  options: { readonly scanFolder?: boolean } = {},
): Promise<ServerRegistry> {
  const connectors: Array<{ path: string; model: ConnectorModel }> = documents.flatMap((document) => {
    const model = connectorOf(document);
    return model ? [{ path: document.path, model }] : [];
  });
  const given = new Set(documents.map((document) => document.path));
  const { files: workspaceFiles } = options.scanFolder === false ? { files: [] } : await findDocuments([workspaceFolder]);
  for (const file of workspaceFiles) {
    const kind = documentKindOf(file);
    if (given.has(file) || kind === undefined || !declaresServers(kind)) continue;
    const text = await files.readIfPresent(file);
    const model = text === undefined ? undefined : connectorOf(analyzeDocument(kind, text, file));
    if (model) connectors.push({ path: file, model });
  }
  return buildWorkspaceRegistry({ workspaceFolder, connectors, readFile: (file) => files.readIfPresent(file), variables });
}

/**
 * The registry the named documents need. Named files (`toolpin check some.connector.json`) whose
 * servers are all declared in them or in the folder's mcp.json files need no scan of the rest of
 * the folder (issue 26: reading every connector and module of a large folder took seconds and
 * hundreds of MB for one file). The folder is scanned when a blueprint step names a server found
 * nowhere else, or names none (then every named server is a candidate), and whenever a blueprint
 * file is named (`blueprintNamed`: it is analyzed after the registry is built). When the roots
 * cover the whole folder, its connectors are among the documents already.
 */
async function registryFor(options: WorkspaceCheckOptions<ListingSource>, analyzed: readonly AnalyzedDocument[], blueprintNamed: boolean): Promise<ServerRegistry> {
  const wholeFolder = options.roots.includes(options.workspaceFolder);
  const withoutScan = await registryOfFolder(options.workspaceFolder, analyzed, options.files, options.variables, { scanFolder: false });
  if (wholeFolder || (!blueprintNamed && !needsFolderScan(analyzed, withoutScan))) return withoutScan;
  return registryOfFolder(options.workspaceFolder, analyzed, options.files, options.variables);
}

function needsFolderScan(documents: readonly AnalyzedDocument[], registry: ServerRegistry): boolean {
  return documents.some((document) =>
    (blueprintOf(document)?.steps ?? []).some((step) => step.mcp?.pin !== undefined && step.mcp.serverComputed === undefined && (step.mcp.server === undefined || registry.get(step.mcp.server.value) === undefined)),
  );
}

/**
 * Lists every definition at once through the source, reporting each as it settles. The source
 * settles failures itself (an unavailable listing), so this never rejects for a server.
 */
export async function ensureListings(source: ListingSource, needed: readonly ServerDefinition[], progress?: (total: number) => ListingProgress): Promise<void> {
  if (needed.length === 0) return;
  const shown = progress?.(needed.length);
  try {
    await Promise.all(needed.map((definition) => source.ensure([definition]).then(() => shown?.settled())));
  } finally {
    shown?.finish();
  }
}

/** Documents analyzed between two turns of the event loop once servers are starting. */
const ANALYSIS_SLICE = 32;

/**
 * The listings of one check, asked for as documents need them: the source is made at the first
 * need (or at the end, with nothing, when none), each definition is ensured once, as soon as a
 * document needs it, and progress counts them as they settle (before the progress line exists
 * too, since it is shown only once the number of servers is known).
 */
class ListingsAsNeeded<Source extends ListingSource> {
  private making: Promise<Source> | undefined;
  private readonly asked = new Set<ServerDefinition>();
  private readonly listed: Array<Promise<void>> = [];
  private pending = 0;
  private shown: ListingProgress | undefined;
  private settledBeforeShown = 0;

  constructor(
    private readonly options: Pick<WorkspaceCheckOptions<Source>, 'listingSource' | 'progress' | 'firstPins'>,
    private readonly registry: ServerRegistry,
    /** The documents analyzed so far, whose argument validators a listing's arrival prepares. */
    private readonly documents: readonly AnalyzedDocument[],
  ) {}

  /** True once a server is starting (the analysis then yields between slices). */
  get started(): boolean {
    return this.making !== undefined;
  }

  /** Starts the listing of every server `document` needs that no earlier document asked for. */
  askFor(document: AnalyzedDocument): void {
    const fresh = definitionsNeeded([document], this.registry, { firstPins: this.options.firstPins === true }).filter((definition) => !this.asked.has(definition));
    if (fresh.length === 0) return;
    for (const definition of fresh) this.asked.add(definition);
    this.pending += fresh.length;
    const source = (this.making ??= this.options.listingSource(fresh));
    for (const definition of fresh) {
      const listing = source.then((ready) => ready.ensure([definition]).then(() => this.arrived(definition, ready)));
      // Awaited in `finish` with the others; a failure must not count as unhandled before that.
      listing.catch(() => undefined);
      this.listed.push(listing);
    }
  }

  /**
   * Waits for every listing asked for, showing progress, and disposes the source (made now, with
   * nothing to list, when no document needed a server). Returns the disposed source.
   */
  async finish(): Promise<Source> {
    const listings = await (this.making ?? this.options.listingSource([]));
    try {
      if (this.asked.size > 0) {
        this.shown = this.options.progress?.(this.asked.size);
        for (; this.settledBeforeShown > 0; this.settledBeforeShown--) this.shown?.settled();
      }
      try {
        await Promise.all(this.listed);
      } finally {
        this.shown?.finish();
      }
    } finally {
      await listings.dispose();
    }
    return listings;
  }

  /**
   * A listing arrived. While other servers are still starting, the argument validators it makes
   * needed are compiled now rather than all after the last listing (results unchanged:
   * core/verify/verify.ts prepareArgumentChecks); the last one leaves them to verification.
   */
  private arrived(definition: ServerDefinition, source: ListingSource): void {
    if (this.shown) this.shown.settled();
    else this.settledBeforeShown++;
    if (--this.pending === 0) return;
    const listing = source.listing(definition);
    if (!listing) return;
    for (const document of this.documents) {
      const blueprint = blueprintOf(document);
      if (blueprint) prepareArgumentChecks(blueprint, definition, this.registry, listing);
    }
  }
}

/**
 * The modules among `documents` that were named as roots themselves and hold no pin site: no
 * `defineConnector`, `defineStack` connector or `mcpInvoke$` call, and no pin in a part that could
 * not be read. Named explicitly, such a file is a mistake (a wrong file, an import Toolpin does not
 * recognise), so it is not a pass; found in a folder, it is simply not a document.
 */
function nothingToCheck(roots: readonly string[], documents: readonly CheckedDocument[]): CheckIssue[] {
  const named = new Set(roots);
  return documents.flatMap((document): CheckIssue[] => {
    return named.has(document.path) && holdsNoPinSite(document) ? [{ kind: 'nothing-to-check', path: document.path }] : [];
  });
}

/**
 * The whole check (see the contract at the top).
 *
 * The servers start while the documents are still being analyzed: the documents that can declare
 * servers are analyzed first, which gives the registry; then each blueprint as it is analyzed
 * asks for the servers it needs that no earlier one asked for, and their listing starts at once
 * ({@link ListingsAsNeeded}). Starting a server takes far longer than analyzing a file, so the
 * analysis of a large workspace is done by the time the listings arrive, instead of before the
 * first server starts (issue 13). Exactly the needed servers are started, as before. The analysis
 * yields to the event loop between slices so the servers' handshakes are answered meanwhile.
 */
export async function checkWorkspace<Source extends ListingSource>(options: WorkspaceCheckOptions<Source>): Promise<WorkspaceCheck<Source>> {
  const read = await readTexts(options.roots, options.files);
  options.onIssues?.(read.issues);
  const analyzed = new Map<string, CheckedDocument>();
  for (const entry of read.entries) if (declaresServers(entry.kind)) analyzed.set(entry.path, analyzeEntry(entry, options.modules));
  // A blueprint among the named files is analyzed later, so its servers may be anywhere: scan.
  const registry = await registryFor(options, [...analyzed.values()], read.entries.some((entry) => !declaresServers(entry.kind)));

  const documents: CheckedDocument[] = [];
  const needs = new ListingsAsNeeded(options, registry, documents);
  let sinceYield = 0;
  for (const entry of read.entries) {
    let document = analyzed.get(entry.path);
    if (!document) {
      document = analyzeForCheck(entry, options.modules);
      if (needs.started && ++sinceYield >= ANALYSIS_SLICE) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    documents.push(document);
    if (!options.offline) needs.askFor(document);
  }
  const nothing = nothingToCheck(options.roots, documents);
  if (nothing.length > 0) options.onIssues?.(nothing);
  const listings = await needs.finish();
  const store = new PinStoreReader(
    (file) => options.files.readIfPresent(file),
    (folder) => options.files.listFolder(folder),
  );
  const inputs = await readFolderInputs(store, new PolicyReader((file) => options.files.readIfPresent(file)), options.workspaceFolder, documents);
  const listingFor = listingsFrom(listings, options.offline ? OFFLINE : NOT_LISTED);
  const now = options.now();
  const results = new Map<string, VerificationResult>();
  for (const document of documents) {
    results.set(document.path, verifyDocument(document, { registry, listingFor, now, pinnedContent: inputs.pinnedContent, fullDefinition: inputs.fullDefinition, policy: inputs.policy.policy }));
  }
  return {
    workspaceFolder: options.workspaceFolder,
    documents,
    issues: [...read.issues, ...nothing],
    registry,
    listings,
    results,
    policy: inputs.policy,
    pinnedContent: inputs.pinnedContent,
    verifyAgain: (document) => verifyDocument(document, { registry, listingFor: listingsFrom(listings, NOT_LISTED), now: options.now() }),
    ...(options.modules ? { modules: options.modules } : {}),
  };
}

