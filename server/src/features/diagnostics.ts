/**
 * Diagnostics: the problems of every Toolpin document, open or not, published as they become
 * known.
 *
 * Contract: an open document is checked after `debounceMs` of quiet and its structure problems are
 * published at once; live verdicts join them as listings arrive (a pending server adds nothing, so
 * one slow server never delays or hides the findings of the others); a result computed for an
 * older version is dropped; documents that are not open are published from the disk when the
 * workspace scan is on; a closed document that is not scanned is cleared.
 *
 * Every publication also records the pin counts it was computed from (`published()`), and
 * `onDidPublish` listeners hear of it: status displays and code lenses follow the diagnostics the
 * editor shows, not a separate computation that could lag behind them. Editing a connector in an
 * editor so that its servers change re-checks the documents of its folder that use those servers
 * (the workspace names them through `onDidChange`).
 */
import type { Connection, Diagnostic, TextDocuments } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { documentKindOf } from '../core/documents/documents';
import { parsePolicy } from '../core/verify/policy';
import { isPolicyFile } from '../engine/policyFile';
import { capProblems } from '../core/problems';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import type { StatusParams } from '../protocol';
import type { SettingsView } from '../settings';
import type { ServerRuntime, Timer } from '../runtime';
import { redactKnownSecretsDeep } from '../mcp/credentials';
import { logSafely, notifySafely, runSafe } from '../util/runSafe';
import { problemToDiagnostic } from '../util/toLsp';
import { pathToUri, uriToPath } from '../util/uris';

/** The pin verdicts behind one document's published diagnostics, counted by state. */
export type PinCounts = StatusParams['pins'];

export function emptyPinCounts(): PinCounts {
  return { verified: 0, drifted: 0, missing: 0, ambiguous: 0, cannotVerify: 0 };
}

export interface DiagnosticsFeature {
  /** The pin counts of every document whose diagnostics are currently published, by URI. */
  published(): ReadonlyMap<string, PinCounts>;
  /** Called after every publication (a document's diagnostics set, changed or cleared). */
  onDidPublish(listener: (uri: string) => void): void;
  /** Re-checks every known document soon, e.g. after a settings change. */
  revalidateAll(): void;
  /** Re-checks the given documents (paths) soon. */
  revalidate(paths: readonly string[]): void;
}

export function registerDiagnostics(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  workspace: LiveWorkspace,
  runtime: ServerRuntime,
  settings: SettingsView,
): DiagnosticsFeature {
  const pending = new Map<string, Timer>();
  /** URIs that currently show diagnostics, so that dropping a document clears them. */
  const shown = new Set<string>();
  /** Pin counts per published URI; a document published with no diagnostics is still counted. */
  const counts = new Map<string, PinCounts>();
  const listeners: Array<(uri: string) => void> = [];
  const announce = (uri: string): void => {
    for (const listener of listeners) listener(uri);
  };

  const publishPolicy = (uri: string): void => publishPolicyProblems(connection, documents, shown, uri);

  const publish = async (uri: string): Promise<void> => {
    pending.delete(uri);
    const file = uriToPath(uri);
    if (isPolicyFile(file)) return publishPolicy(uri);
    if (!documentKindOf(file)) return;
    const open = documents.get(uri);
    const version = open?.version;
    const text = open ? open.getText() : workspace.text(file);
    const scanned = !open && settings.current().workspaceScan.enable && text !== undefined;
    if (!open && !scanned) {
      const hadCounts = counts.delete(uri);
      if (shown.delete(uri)) notifySafely(() => connection.sendDiagnostics({ uri, diagnostics: [] }));
      if (hadCounts) announce(uri);
      return;
    }
    const pins = emptyPinCounts();
    const diagnostics = await runSafe<Diagnostic[]>(connection.console, `checking ${uri}`, undefined, [], () =>
      checkDocument({ workspace, settings }, { uri, file, open, text }, pins),
    );
    if (!Array.isArray(diagnostics)) return;
    // The document may have changed while it was checked: publish only for the current version.
    if (open && documents.get(uri)?.version !== version) return;
    if (diagnostics.length > 0) shown.add(uri);
    else shown.delete(uri);
    counts.set(uri, pins);
    notifySafely(() => connection.sendDiagnostics({ uri, ...(version !== undefined ? { version } : {}), diagnostics }));
    announce(uri);
  };

  const publishSafely = (uri: string): void => {
    publish(uri).catch((error: unknown) => logSafely(connection.console, `toolpin: publishing ${uri} failed: ${String(error)}`));
  };

  const schedule = (uri: string, delay: number): void => {
    pending.get(uri)?.dispose();
    pending.set(uri, runtime.setTimeout(() => publishSafely(uri), delay));
  };

  listenToDocuments(documents, workspace, settings, {
    publishSafely,
    schedule,
    publishPolicy,
    forget: (uri) => {
      pending.get(uri)?.dispose();
      pending.delete(uri);
    },
    closeFailed: (file, error) => logSafely(connection.console, `toolpin: closing ${file} failed: ${String(error)}`),
  });
  workspace.onDidChange((paths) => {
    for (const file of paths) schedule(pathToUri(file), 0);
  });

  return {
    published: () => counts,
    onDidPublish: (listener) => void listeners.push(listener),
    revalidateAll: () => {
      for (const file of workspace.paths()) schedule(pathToUri(file), 0);
      for (const document of documents.all()) schedule(document.uri, 0);
    },
    revalidate: (paths) => {
      for (const file of paths) schedule(pathToUri(file), 0);
    },
  };
}

/**
 * An open policy file (`.toolpin/policy.jsonc`) gets its own problems (TP413: a bad severity, an
 * unknown code, an expiry that is not a day), from the text being edited. Which policy applies
 * to the findings is the saved file's (the watcher reports saves).
 */
function publishPolicyProblems(connection: Connection, documents: TextDocuments<TextDocument>, shown: Set<string>, uri: string): void {
  const open = documents.get(uri);
  if (!open) {
    if (shown.delete(uri)) notifySafely(() => connection.sendDiagnostics({ uri, diagnostics: [] }));
    return;
  }
  const diagnostics = parsePolicy(open.getText(), Date.now()).problems.map((found) => redactKnownSecretsDeep(problemToDiagnostic(open, found)));
  if (diagnostics.length > 0) shown.add(uri);
  else shown.delete(uri);
  notifySafely(() => connection.sendDiagnostics({ uri, version: open.version, diagnostics }));
}

/**
 * One document's problems as diagnostics (analysis and verification, capped, credentials redacted),
 * tallying its pins into `pins`; none when validation is off for its folder.
 */
async function checkDocument(
  { workspace, settings }: { readonly workspace: LiveWorkspace; readonly settings: SettingsView },
  { uri, file, open, text }: { readonly uri: string; readonly file: string; readonly open: TextDocument | undefined; readonly text: string | undefined },
  pins: PinCounts,
): Promise<Diagnostic[]> {
  if (open) workspace.setOpenDocument(file, text!);
  // validate.enable is resource-scoped: the document's workspace folder decides.
  if (!(await settings.forFolder(workspace.folderOf(file))).validate.enable) return [];
  const analysis = workspace.analysis(file);
  if (!analysis) return [];
  const verification = await workspace.verification(file);
  for (const verdict of verification.verdicts) {
    if (verdict.state === 'verified') pins.verified++;
    else if (verdict.state === 'drifted') pins.drifted++;
    else if (verdict.state === 'missing') pins.missing++;
    else if (verdict.state === 'ambiguous') pins.ambiguous++;
    else pins.cannotVerify++;
  }
  const document = open ?? TextDocument.create(uri, 'jsonc', 0, text!);
  // At most MAX_PROBLEMS_PER_FILE (+ one TP106) per publication, verification included.
  return capProblems([...analysis.problems, ...verification.problems])
    // A server may echo a credential it was given into a tool description or an error: no
    // published message or data carries one (the store-entry guard refuses redacted content).
    .map((found) => redactKnownSecretsDeep(problemToDiagnostic(document, found)));
}

/** What the document events do to the feature's state. */
interface DocumentEventHandlers {
  publishSafely(uri: string): void;
  schedule(uri: string, delay: number): void;
  publishPolicy(uri: string): void;
  /** A document closed: its pending check is dropped. */
  forget(uri: string): void;
  closeFailed(file: string, error: unknown): void;
}

/** Open, edit and close of documents: a check at once, after the debounce, and on close. */
function listenToDocuments(documents: TextDocuments<TextDocument>, workspace: LiveWorkspace, settings: SettingsView, handlers: DocumentEventHandlers): void {
  documents.onDidOpen((event) => handlers.publishSafely(event.document.uri));
  // An edited connector whose servers changed has the workspace announce the documents those
  // servers serve (LiveWorkspace.setOpenDocument); they are checked again as every announced one is.
  documents.onDidChangeContent((event) => handlers.schedule(event.document.uri, settings.current().validate.debounceMs));
  documents.onDidClose((event) => {
    handlers.forget(event.document.uri);
    const file = uriToPath(event.document.uri);
    if (isPolicyFile(file)) return handlers.publishPolicy(event.document.uri);
    if (!documentKindOf(file)) return;
    void workspace.closeDocument(file).then(() => handlers.publishSafely(event.document.uri), (error: unknown) => handlers.closeFailed(file, error));
  });
}
