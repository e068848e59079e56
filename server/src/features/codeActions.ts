/**
 * Code actions: re-pin a drifted pin, re-pin everything drifted in the file, pin a selected tool
 * that has no pin, remove the pin of a tool that is no longer served, lower-case a pin written in
 * uppercase hex, correct a mistyped `server` or `include` entry, remove an `include` entry that is
 * not served or listed twice, and add a pinned tool to `include`. Quick fixes read their payload
 * from `Diagnostic.data` (set by the core, typed in core/verify/payloads.ts) or from the document itself,
 * so they need no server state; "re-pin all" re-verifies the document.
 *
 * The fix-all action (`source.fixAll.toolpin`, which editors run on save) holds the re-pins and
 * the lower-casings: fixes whose result is certain. A guess ("did you mean …?") and a choice
 * (remove the entry, or add it) are only ever offered one at a time.
 *
 * TypeScript and JavaScript sources get the same fixes: literals keep their quotes, and added
 * entries follow the call's own quotes, key style, indentation and trailing commas.
 *
 * No fix is ever offered for "cannot verify": an unreachable server says nothing about the pin.
 * Every re-pin also writes the pin-store entry of the new pin (docs/formats.md §6) through the
 * same WorkspaceEdit, so one undo takes both back.
 */
import * as path from 'node:path';
import {
  type CodeAction,
  CodeActionKind,
  type CodeActionParams,
  type Connection,
  type CreateFile,
  type Diagnostic,
  type TextDocumentEdit,
  type TextDocuments,
  type WorkspaceEdit,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { ConnectorModel } from '../core/documents/connector';
import { blueprintOf, connectorOf } from '../core/documents/documents';
import { pinKindOfFile } from '../core/documents/kinds/registry';
import {
  addIncludeEntryEdits,
  addSchemaPinEdits,
  lowercasePinEdit,
  removeIncludeEntryEdits,
  removeSnapshotEntryEdits,
  replacePinEdit,
  replaceStringEdit,
  setSnapshotEntryEdits,
  stringLiteral,
  type TextEdit,
} from '../core/documents/fixes';
import { foreignPinAt } from '../core/documents/source/analyzeSource';
import { type DriftData, isDriftData, isPinnableToolData, isUnknownServerData, isUnservedIncludeData, isUnservedPinData, renameOf, type UnservedPinData } from '../core/verify/payloads';
import type { PinAlgorithm } from '../core/pins/pins';
import { PIN_STORE_FOLDER } from '../core/pins/storeLayout';
import type { ProblemCode, Span } from '../core/problems';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { containsKnownSecret } from '../mcp/credentials';
import { isOutsideThePinData, readFullDefinition } from '../core/verify/fullDefinition';
import { firstSchemaPinOf } from '../core/verify/firstPins';
import { storeEntriesCommand, storeEntriesFor, type StorePayload } from './storeEntries';
import { RepinEditsRequest, type RepinEditsResult } from '../protocol';
import { checkWriteTarget } from '../io/safeWrite';
import { runSafe } from '../util/runSafe';
import { DIAGNOSTIC_SOURCE } from '../util/toLsp';
import { pathToUri, uriToPath } from '../util/uris';

/** The kind of the fix-all action, so editors can run it on save. */
export const FIX_ALL_KIND = `${CodeActionKind.SourceFixAll}.toolpin`;

export interface EditBuilder {
  /** Whether the client can create files through a WorkspaceEdit. */
  readonly canCreateFiles: boolean;
  /** Whether the client has the `toolpin.reviewRepin` command (the VS Code extension does). */
  readonly canReview?: boolean;
}

/** Edits of another module than the document: the module that writes a pin the document imports. */
export interface ElsewhereEdits {
  readonly uri: string;
  /** The editor's version of the module when one holds it, else null (the disk's text). */
  readonly version: number | null;
  /** The text the edits' offsets are in. */
  readonly text: string;
  readonly edits: readonly TextEdit[];
}

function toDocumentEdit(document: TextDocument, version: number | null, edits: readonly TextEdit[]): TextDocumentEdit {
  return {
    textDocument: { uri: document.uri, version },
    edits: edits.map((edit) => ({ range: { start: document.positionAt(edit.offset), end: document.positionAt(edit.offset + edit.length) }, newText: edit.content })),
  };
}

/**
 * A WorkspaceEdit with the document's edits, the edits of the modules that write the pins it
 * imports (`elsewhere`), and, when the client can, the store entries.
 */
export function buildWorkspaceEdit(
  document: TextDocument,
  edits: readonly TextEdit[],
  storeEntries: ReadonlyArray<{ folder: string; relativePath: string; content: string }>,
  options: EditBuilder,
  elsewhere: readonly ElsewhereEdits[] = [],
): WorkspaceEdit {
  const documentEdits: TextDocumentEdit[] = [
    ...(edits.length > 0 || elsewhere.length === 0 ? [toDocumentEdit(document, document.version, edits)] : []),
    ...elsewhere.map((other) => toDocumentEdit(TextDocument.create(other.uri, 'typescript', 0, other.text), other.version, other.edits)),
  ];
  if (!options.canCreateFiles || storeEntries.length === 0) return { documentChanges: documentEdits };
  const changes: Array<TextDocumentEdit | CreateFile> = [];
  const seen = new Set<string>();
  for (const entry of storeEntries) {
    const file = path.join(entry.folder, entry.relativePath);
    const uri = pathToUri(file);
    if (seen.has(uri)) continue;
    // The client creates or overwrites this file: never at a path a link leads out of the folder
    // from (the same check io/safeWrite.ts makes before the CLI writes an entry).
    if (!writableInside(file, entry.folder)) continue;
    seen.add(uri);
    // Pinned-content entries are content-addressed: overwriting one writes the same bytes it held.
    // A full-definition entry (core/verify/fullDefinition.ts) is keyed by its pin and is replaced on purpose.
    changes.push({ kind: 'create', uri, options: { overwrite: true } });
    changes.push({ textDocument: { uri, version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: entry.content }] });
  }
  changes.push(...documentEdits);
  return { documentChanges: changes };
}

/** Re-pins split by where they are written: edits of the document, and edits of the modules that write imported pins. */
export interface PlacedRepins {
  readonly local: TextEdit[];
  readonly elsewhere: ElsewhereEdits[];
  /** How many literals are rewritten in all (a literal several uses share counts once). */
  readonly count: number;
}

/**
 * Places the re-pins of `drifted` pins of the document `file`: a pin written where it is used is
 * rewritten there; a pin read from another module (core/documents/source/sourceModules.ts) is
 * rewritten where that module writes it, once however many uses share it. A module that cannot be
 * read, or that a link leads out of the folder from, gets no edit (its pins are left out).
 */
export async function placeRepins(file: string, workspace: LiveWorkspace, text: string, drifted: ReadonlyArray<{ span: Span; data: { tool: string; live: string } }>): Promise<PlacedRepins> {
  const analysis = workspace.analysis(file);
  const folder = workspace.folderOf(file);
  const local: TextEdit[] = [];
  const byFile = new Map<string, Map<number, TextEdit>>();
  for (const found of drifted) {
    const foreign = analysis ? foreignPinAt(analysis.model, found.span, found.data.tool) : undefined;
    if (!foreign) {
      local.push(replacePinEdit(found.span, found.data.live, text));
      continue;
    }
    const edits = byFile.get(foreign.file) ?? new Map<number, TextEdit>();
    byFile.set(foreign.file, edits);
    edits.set(foreign.literal.offset, { offset: foreign.literal.offset, length: foreign.literal.length, content: stringLiteral(found.data.live, foreign.quote) });
  }
  const elsewhere: ElsewhereEdits[] = [];
  for (const [other, edits] of byFile) {
    const otherText = writableInside(other, folder) ? await workspace.moduleText(other) : undefined;
    if (otherText === undefined) continue;
    const uri = pathToUri(other);
    // Unversioned: the module is edited in the text read now (an editor's, else the disk's).
    elsewhere.push({ uri, version: null, text: otherText, edits: [...edits.values()] });
  }
  return { local, elsewhere, count: local.length + elsewhere.reduce((sum, other) => sum + other.edits.length, 0) };
}

/** True when `file` may be written within `folder`: its real location, links resolved, is inside. */
export function writableInside(file: string, folder: string): boolean {
  try {
    checkWriteTarget(file, { root: folder });
    return true;
  } catch {
    return false;
  }
}

/**
 * The command of an action whose edit pins something, when the client cannot create files: the
 * server then writes the store entries once the client has applied the edit (features/storeEntries.ts).
 */
function storeCommandOf(document: TextDocument, payloads: readonly StorePayload[], options: EditBuilder): { command?: CodeAction['command'] } {
  const command = storeEntriesCommand(document.uri, payloads, options.canCreateFiles);
  return command ? { command } : {};
}

/**
 * Actions said once: a client that sends two diagnostics on one pin (a source file's constant shared
 * by two calls) would otherwise get the same re-pin twice. Only the same title with the same edit
 * is one action; two entries of one name listed twice stay two fixes.
 */
function distinctActions(actions: readonly CodeAction[]): CodeAction[] {
  const seen = new Set<string>();
  return actions.filter((action) => {
    const key = `${action.kind ?? ''}\u0000${action.title}\u0000${JSON.stringify(action.edit ?? null)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function registerCodeActions(connection: Connection, documents: TextDocuments<TextDocument>, workspace: LiveWorkspace, options: () => EditBuilder): void {
  connection.onCodeAction((params, token) =>
    runSafe<CodeAction[]>(connection.console, 'codeAction', token, [], async () => {
      const document = documents.get(params.textDocument.uri);
      if (!document) return [];
      return computeCodeActions(document, params, workspace, options());
    }),
  );
  connection.onRequest(RepinEditsRequest, (params, token) =>
    runSafe<RepinEditsResult>(connection.console, 'toolpin/repinEdits', token, { edit: null, repins: 0 }, async () => {
      const file = uriToPath(params.uri);
      const text = documents.get(params.uri)?.getText() ?? workspace.text(file);
      if (text === undefined) return { edit: null, repins: 0 };
      const document = documents.get(params.uri) ?? TextDocument.create(params.uri, 'jsonc', 0, text);
      return computeRepinEdits(document, workspace, options());
    }),
  );
}

export async function computeCodeActions(document: TextDocument, params: CodeActionParams, workspace: LiveWorkspace, options: EditBuilder): Promise<CodeAction[]> {
  const file = uriToPath(document.uri);
  const folder = workspace.folderOf(file);
  const only = params.context.only;
  const wants = (kind: string): boolean => !only || only.some((requested) => kind === requested || kind.startsWith(`${requested}.`));
  const actions: CodeAction[] = [];
  const reviewActions: CodeAction[] = [];
  const text = document.getText();
  // A document that is a link leading out of its folder gets no edit: applying one would write
  // the file the link points to.
  if (document.uri.startsWith('file:') && !writableInside(file, folder)) return [];

  // A drift of the security class (TP407 on the same pin) is reviewed one tool at a time: its
  // re-pin is never preferred nor part of a bulk re-pin (issue 22 §5).
  const securityOffsets = new Set((await workspace.verification(file)).problems.filter((found) => found.code === 'TP407').map((found) => found.span.offset));
  if (wants(CodeActionKind.QuickFix)) {
    // Some clients (Neovim 0.7) do not send Diagnostic.data back: such a diagnostic is matched
    // with the current verification by code and start position instead.
    let current: Awaited<ReturnType<LiveWorkspace['verification']>> | undefined;
    for (const received of params.context.diagnostics) {
      if (!received?.range) continue;
      if (received.source !== undefined && received.source !== DIAGNOSTIC_SOURCE) continue;
      let diagnostic = received;
      if (received.data === undefined && typeof received.code === 'string' && received.code.startsWith('TP4')) {
        current ??= await workspace.verification(file);
        const offset = document.offsetAt(received.range.start);
        const match = current.problems.find((found) => found.code === received.code && found.span.offset === offset);
        if (match?.data) diagnostic = { ...received, data: match.data };
      }
      const drift = diagnostic.code === 'TP400' && isDriftData(diagnostic.data) ? diagnostic.data : undefined;
      const start = document.offsetAt(diagnostic.range.start);
      const placed = drift ? await placeRepins(file, workspace, text, [{ span: { offset: start, length: document.offsetAt(diagnostic.range.end) - start }, data: drift }]) : undefined;
      if (diagnostic.code === 'TP206') actions.push(...(await firstPinActions(document, diagnostic, workspace, folder, options)));
      else actions.push(...quickFixesFor(document, text, diagnostic, workspace, folder, options, reviewActions, securityOffsets, placed));
    }
    actions.push(...reviewActions);
  }

  if (wants(CodeActionKind.QuickFix) || wants(FIX_ALL_KIND) || wants(CodeActionKind.Source)) {
    const { drifted, repins, entries } = await repinsOf(file, workspace, text);
    const repinTitle = `Re-pin all ${drifted.length} drifted pin${drifted.length === 1 ? '' : 's'}`;
    if (wants(CodeActionKind.QuickFix) && drifted.length > 1) {
      actions.push({ title: `${repinTitle} in this file`, kind: CodeActionKind.QuickFix, edit: buildWorkspaceEdit(document, repins.local, entries, options, repins.elsewhere), ...storeCommandOf(document, drifted.map((found) => found.data), options) });
    }
    if (wants(FIX_ALL_KIND)) {
      // A malformed pin has no verdict, so a lower-casing never touches a pin that is re-pinned.
      const lowercasings = lowercaseEditsOf(text, workspace.analysis(file)?.problems ?? []);
      if (repins.count + lowercasings.length > 0) {
        const parts = [
          ...(repins.count > 0 ? [repinTitle] : []),
          ...(lowercasings.length > 0 ? [`${repins.count > 0 ? 'lower' : 'Lower'}-case ${lowercasings.length} pin${lowercasings.length === 1 ? '' : 's'} written in uppercase hex`] : []),
        ];
        actions.push({ title: `${parts.join(' and ')} in this file`, kind: FIX_ALL_KIND, edit: buildWorkspaceEdit(document, [...repins.local, ...lowercasings], entries, options, repins.elsewhere), ...storeCommandOf(document, drifted.map((found) => found.data), options) });
      }
    }
  }
  return distinctActions(actions);
}

/**
 * The first pin of a step that names a tool without `expectedSchemaHash` (TP206), from the live
 * listing of its server (core/verify/firstPins.ts): the hash added after the step's `server` (or
 * `toolName`), and its store entries. The listing is asked for when it is not held yet (an
 * unpinned step does not make its server listed). No action when the step cannot get one: an
 * unknown or ambiguous server, a tool not served, a server that could not be listed. A first pin
 * accepts the tool as it is served now, unseen, so it is never preferred, never part of fix-all or
 * "Re-pin all", and its title says when the live text carries cues of tool poisoning.
 */
async function firstPinActions(document: TextDocument, diagnostic: Diagnostic, workspace: LiveWorkspace, folder: string, options: EditBuilder): Promise<CodeAction[]> {
  const file = uriToPath(document.uri);
  const start = document.offsetAt(diagnostic.range.start);
  const step = (workspace.analysis(file) ? blueprintOf(workspace.analysis(file)!) : undefined)?.steps.find((candidate) => candidate.mcp?.toolName?.span.offset === start);
  if (!step?.mcp?.toolName || step.mcp.expectedSchemaHash || !workspace.liveVerification()) return [];
  const registry = await workspace.registry(folder);
  const candidates = step.mcp.server ? [registry.get(step.mcp.server.value)].flatMap((definition) => (definition ? [definition] : [])) : registry.named();
  const listingFor = await workspace.listingsOf(file, candidates);
  const pin = firstSchemaPinOf(step, { registry, listingFor });
  if (!('live' in pin)) return [];
  const text = document.getText();
  const entries = storeEntriesFor(pin).map((entry) => ({ folder, ...entry }));
  const warning = pin.cues.length > 0 ? ', whose live schema carries cues of tool poisoning: review it first' : '';
  return [
    {
      title: `Pin "${pin.tool}" at ${pin.live} (first pin, from the live listing of "${pin.server}"${warning})`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      edit: buildWorkspaceEdit(document, addSchemaPinEdits(text, step, pin.live), entries, options),
      ...storeCommandOf(document, [pin], options),
    },
  ];
}

/** The re-pins of every drifted pin of a file, with the store entries that record their content. */
async function repinsOf(file: string, workspace: LiveWorkspace, text: string): Promise<{ drifted: Array<{ data: StorePayload }>; repins: PlacedRepins; entries: Array<{ folder: string; relativePath: string; content: string }> }> {
  const folder = workspace.folderOf(file);
  const verification = await workspace.verification(file);
  const security = new Set(verification.problems.filter((found) => found.code === 'TP407').map((found) => found.span.offset));
  // A security-class drift is left out of every bulk re-pin: it is accepted one tool at a time.
  // One re-pin per pin literal: two problems on one pin (a source file's constant shared by two
  // calls) are one re-pin, counted once.
  const seen = new Set<number>();
  const drifted = verification.problems.flatMap((found) => {
    if (found.code !== 'TP400' || !isDriftData(found.data) || security.has(found.span.offset) || seen.has(found.span.offset)) return [];
    seen.add(found.span.offset);
    return [{ span: found.span, data: found.data }];
  });
  // The pin literal keeps its own quote (a source file's '…' or `…`), where it is written.
  const repins = await placeRepins(file, workspace, text, drifted);
  const entries = drifted.flatMap((found) => storeEntriesFor(found.data).map((entry) => ({ folder, ...entry })));
  return { drifted, repins, entries };
}

/** The `toolpin/repinEdits` answer: re-pins only, and their count. */
export async function computeRepinEdits(document: TextDocument, workspace: LiveWorkspace, options: EditBuilder): Promise<RepinEditsResult> {
  const file = uriToPath(document.uri);
  if (document.uri.startsWith('file:') && !writableInside(file, workspace.folderOf(file))) return { edit: null, repins: 0 };
  const { repins, entries } = await repinsOf(file, workspace, document.getText());
  return { edit: repins.count > 0 ? buildWorkspaceEdit(document, repins.local, entries, options, repins.elsewhere) : null, repins: repins.count };
}

/** The algorithm of the pins a malformed-pin code is about. */
const MALFORMED_PIN: Partial<Record<ProblemCode, PinAlgorithm>> = { TP204: 'fnv1a64', TP306: 'sha256' };

/** Lower-casing edits for every malformed pin that lower-casing alone makes well formed. */
function lowercaseEditsOf(text: string, problems: ReadonlyArray<{ code: ProblemCode; span: Span }>): TextEdit[] {
  return problems.flatMap((found) => {
    const algorithm = MALFORMED_PIN[found.code];
    const edit = algorithm ? lowercasePinEdit(text, found.span, algorithm) : undefined;
    return edit ? [edit] : [];
  });
}

function quickFixesFor(
  document: TextDocument,
  text: string,
  diagnostic: Diagnostic,
  workspace: LiveWorkspace,
  folder: string,
  options: EditBuilder,
  reviewActions: CodeAction[],
  securityOffsets: ReadonlySet<number> = new Set(),
  placed?: PlacedRepins,
): CodeAction[] {
  const data: unknown = diagnostic.data;
  const span = spanOf(document, diagnostic);
  const start = span.offset;
  const fix = (title: string, edits: readonly TextEdit[], preferred = false): CodeAction[] =>
    edits.length === 0 ? [] : [{ title, kind: CodeActionKind.QuickFix, diagnostics: [diagnostic], ...(preferred ? { isPreferred: true } : {}), edit: buildWorkspaceEdit(document, edits, [], options) }];
  // A TypeScript or JavaScript source gets the same fixes; new literals follow its own quotes and
  // key style (core/documents/fixes.ts).
  const editOptions = { source: pinKindOfFile(uriToPath(document.uri))?.pinEdits === 'source-style' };
  switch (diagnostic.code) {
    case 'TP400':
      return isDriftData(data) && placed?.count !== 0 ? driftFixes(document, diagnostic, data, folder, options, reviewActions, securityOffsets.has(start), placed) : [];
    case 'TP405': {
      if (!isPinnableToolData(data)) return [];
      const instance = instanceAt(workspace, document, start);
      if (!instance) return [];
      const entries = storeEntriesFor({ tool: data.tool, server: data.server, live: data.live, liveContent: data.liveContent, liveDefinition: data.liveDefinition }).map((entry) => ({ folder, ...entry }));
      return [
        {
          title: `Pin "${data.tool}" at ${data.live}`,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diagnostic],
          edit: buildWorkspaceEdit(document, setSnapshotEntryEdits(text, instance, data.tool, data.live, editOptions), entries, options),
          ...storeCommandOf(document, [data], options),
        },
      ];
    }
    case 'TP408':
    case 'TP409':
      return acceptDefinitionFixes(document, diagnostic, data, folder, options);
    case 'TP401': {
      if (!isUnservedPinData(data)) return [];
      const rename = renameActions(document, diagnostic, data, workspace, folder, options, start);
      if (data.kind !== 'tool') return rename;
      const instance = instanceAt(workspace, document, start);
      if (!instance) return rename;
      return [...rename, ...fix(`Remove the pin of "${data.tool}" (no longer served)`, removeSnapshotEntryEdits(text, instance, data.tool))];
    }
    case 'TP204':
    case 'TP306': {
      // Read from the document, not from data: the literal at the range is the pin reported.
      const edit = lowercasePinEdit(text, span, MALFORMED_PIN[diagnostic.code]!);
      return edit ? fix('Lower-case the pin', [edit], true) : [];
    }
    case 'TP406': {
      if (!isUnknownServerData(data) || data.suggestion === undefined) return [];
      return fix(`Change server to "${data.suggestion}"`, [replaceStringEdit(span, data.suggestion, text)], true);
    }
    case 'TP404': {
      if (!isUnservedIncludeData(data)) return [];
      const instance = instanceAt(workspace, document, start);
      if (!instance) return [];
      // A likely typo is corrected first; removing the entry changes nothing the runtime does
      // (it drops the entry already), so it is offered too, for an entry that is simply obsolete.
      return [
        ...(data.suggestion !== undefined ? fix(`Change "${data.tool}" to "${data.suggestion}"`, [replaceStringEdit(span, data.suggestion, text)], true) : []),
        ...fix(`Remove "${data.tool}" from include`, removeIncludeEntryEdits(text, instance, start)),
      ];
    }
    case 'TP308': {
      // The duplicate is the entry reported; the first one stays.
      const instance = instanceAt(workspace, document, start);
      const entry = instance?.include?.find((candidate) => candidate.span.offset === start);
      if (!instance || !entry) return [];
      return fix(`Remove the duplicate "${entry.value}" from include`, removeIncludeEntryEdits(text, instance, start), true);
    }
    case 'TP305': {
      // A pin outside include: either the tool should be selected, or the pin is left over. Which
      // one is the author's call, so both are offered and neither is preferred.
      const instance = instanceAt(workspace, document, start);
      const entry = instance?.snapshot.find((candidate) => candidate.tool.span.offset === start);
      if (!instance || !entry) return [];
      return [
        ...fix(`Add "${entry.tool.value}" to include`, addIncludeEntryEdits(text, instance, entry.tool.value, editOptions)),
        ...fix(`Remove the pin of "${entry.tool.value}"`, removeSnapshotEntryEdits(text, instance, entry.tool.value)),
      ];
    }
    default:
      return [];
  }
}

/**
 * TP408/TP409: a verified pin whose tool changed outside the pinned fields. Accepting the change
 * records the live definition under the same pin; nothing in the document changes. Only for a
 * client that can create files, and never for a definition holding a known secret.
 */
function acceptDefinitionFixes(document: TextDocument, diagnostic: Diagnostic, data: unknown, folder: string, options: EditBuilder): CodeAction[] {
  if (!options.canCreateFiles || !isOutsideThePinData(data) || containsKnownSecret(data.entry.content) || !readFullDefinition(data.entry.content, data.tool)) return [];
  return [
    {
      title: `Accept the new definition of "${data.tool}" (record it in ${PIN_STORE_FOLDER})`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      edit: buildWorkspaceEdit(document, [], [{ folder, relativePath: data.entry.relativePath, content: data.entry.content }], options),
    },
  ];
}

/**
 * A drift's fixes (TP400): re-pin to the live value with its store entries, and the review action
 * where the client can review. The title of a security-class re-pin (`security`) says what it
 * accepts, and it is never the preferred fix.
 */
function driftFixes(document: TextDocument, diagnostic: Diagnostic, data: DriftData, folder: string, options: EditBuilder, reviewActions: CodeAction[], security: boolean, placed?: PlacedRepins): CodeAction[] {
  const entries = storeEntriesFor(data).map((entry) => ({ folder, ...entry }));
  if (options.canReview) {
    reviewActions.push({
      title: `Review and re-pin "${data.tool}"…`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      command: { title: 'Review and re-pin', command: 'toolpin.reviewRepin', arguments: [document.uri, diagnostic.range.start] },
    });
  }
  return [
    {
      title: security ? `Re-pin "${data.tool}" to ${data.live}, accepting its new text that carries cues of tool poisoning (TP407)` : `Re-pin "${data.tool}" to ${data.live}`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      ...(security ? {} : { isPreferred: true }),
      // Where the pin is written: here, or in the module it is imported from.
      edit: placed ? buildWorkspaceEdit(document, placed.local, entries, options, placed.elsewhere) : buildWorkspaceEdit(document, [replacePinEdit(spanOf(document, diagnostic), data.live, document.getText())], entries, options),
      ...storeCommandOf(document, [data], options),
    },
  ];
}

/** The span of a diagnostic's range in its document. */
function spanOf(document: TextDocument, diagnostic: Diagnostic): Span {
  const start = document.offsetAt(diagnostic.range.start);
  return { offset: start, length: document.offsetAt(diagnostic.range.end) - start };
}

/**
 * The rename fix of a TP401 whose tool looks renamed (core/verify/verify.ts): the step's `toolName`, or
 * the snapshot key and its `include` entry, become the new name, and the pin becomes the renamed
 * tool's live pin, with its store entry. It is a guess from matching content, so it is never
 * preferred nor part of fix-all, and its title asks for a review of the live tool first. The
 * spans come from the current analysis, not from the payload.
 */
function renameActions(
  document: TextDocument,
  diagnostic: Diagnostic,
  data: UnservedPinData,
  workspace: LiveWorkspace,
  folder: string,
  options: EditBuilder,
  start: number,
): CodeAction[] {
  const rename = renameOf(data);
  if (!rename) return [];
  const analysis = workspace.analysis(uriToPath(document.uri));
  const text = document.getText();
  const edits: TextEdit[] = [];
  const blueprint = analysis ? blueprintOf(analysis) : undefined;
  if (data.kind === 'schema' && blueprint) {
    const step = blueprint.steps.find((candidate) => candidate.mcp?.toolName?.span.offset === start);
    const mcp = step?.mcp;
    if (!mcp?.toolName || mcp.toolName.value !== data.tool || !mcp.expectedSchemaHash) return [];
    // A pin written in another module is not renamed from here: the module may pin other uses too.
    if (analysis && foreignPinAt(analysis.model, mcp.expectedSchemaHash.span)) return [];
    edits.push(replaceStringEdit(mcp.toolName.span, rename.tool, text));
    if (mcp.expectedSchemaHash.value !== rename.live) edits.push(replacePinEdit(mcp.expectedSchemaHash.span, rename.live, text));
  } else if (data.kind === 'tool') {
    const instance = instanceAt(workspace, document, start);
    const entry = instance?.snapshot.find((candidate) => candidate.tool.span.offset === start && candidate.tool.value === data.tool);
    if (!instance || !entry || (analysis && foreignPinAt(analysis.model, entry.pin.span, data.tool))) return [];
    edits.push(replaceStringEdit(entry.tool.span, rename.tool, text), replacePinEdit(entry.pin.span, rename.live, text));
    // A renamed pin outside include would be a new finding (TP305): its include entry follows it.
    for (const included of instance.include ?? []) if (included.value === data.tool) edits.push(replaceStringEdit(included.span, rename.tool, text));
  } else {
    return [];
  }
  const entries = storeEntriesFor(rename).map((entry) => ({ folder, ...entry }));
  return [
    {
      title: `Rename "${data.tool}" to "${rename.tool}" and re-pin (${rename.match === 'content' ? 'same content' : `same ${rename.match}`}; review the live tool first)`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      edit: buildWorkspaceEdit(document, edits, entries, options),
      ...storeCommandOf(document, [rename], options),
    },
  ];
}

function instanceAt(workspace: LiveWorkspace, document: TextDocument, offset: number): ConnectorModel['instances'][number] | undefined {
  const analysis = workspace.analysis(uriToPath(document.uri));
  const model = analysis ? connectorOf(analysis) : undefined;
  return model?.instances.find((instance) => offset >= instance.node.offset && offset <= instance.node.offset + instance.node.length);
}
