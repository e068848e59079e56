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
import { blueprintOf, connectorOf, documentKindOf } from '../core/documents/documents';
import {
  addIncludeEntryEdits,
  lowercasePinEdit,
  removeIncludeEntryEdits,
  removeSnapshotEntryEdits,
  replacePinEdit,
  replaceStringEdit,
  setSnapshotEntryEdits,
  storeEntries,
  type TextEdit,
} from '../core/documents/fixes';
import { type DriftData, isDriftData, isPinnableToolData, isUnknownServerData, isUnservedIncludeData, isUnservedPinData, renameOf, type UnservedPinData } from '../core/verify/payloads';
import { isParsedPin, parsePin, type PinAlgorithm } from '../core/pins/pins';
import type { ProblemCode, Span } from '../core/problems';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { containsKnownSecret } from '../mcp/credentials';
import { isOutsideThePinData, readFullDefinition } from '../core/verify/fullDefinition';
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

/** A WorkspaceEdit with the document's edits and, when the client can, the store entries. */
export function buildWorkspaceEdit(
  document: TextDocument,
  edits: readonly TextEdit[],
  storeEntries: ReadonlyArray<{ folder: string; relativePath: string; content: string }>,
  options: EditBuilder,
): WorkspaceEdit {
  const documentEdit: TextDocumentEdit = {
    textDocument: { uri: document.uri, version: document.version },
    edits: edits.map((edit) => ({ range: { start: document.positionAt(edit.offset), end: document.positionAt(edit.offset + edit.length) }, newText: edit.content })),
  };
  if (!options.canCreateFiles || storeEntries.length === 0) return { documentChanges: [documentEdit] };
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
  changes.push(documentEdit);
  return { documentChanges: changes };
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

/** The store entries of a re-pin: the pinned content and, when the payload has it, the full definition. */
function storeEntriesFor(data: { tool: string; server?: string; live: string; liveContent: string; liveDefinition?: unknown }): Array<{ relativePath: string; content: string }> {
  const algorithm = data.live.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256';
  const parsed = parsePin(data.live, algorithm);
  // A store entry is meant to be committed: content holding (or redacted of) a credential is not written.
  if (typeof data.liveContent !== 'string' || containsKnownSecret(data.liveContent) || !isParsedPin(parsed)) return [];
  // The definition comes back from the client: it is written only when it is an entry of this tool.
  const full = typeof data.liveDefinition === 'string' && !containsKnownSecret(data.liveDefinition) && readFullDefinition(data.liveDefinition, data.tool) ? data.liveDefinition : undefined;
  return storeEntries(parsed.algorithm, parsed.hex, data.liveContent, { tool: data.tool, server: typeof data.server === 'string' ? data.server : undefined, content: full });
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
      actions.push(...quickFixesFor(document, text, diagnostic, workspace, folder, options, reviewActions, securityOffsets));
    }
    actions.push(...reviewActions);
  }

  if (wants(CodeActionKind.QuickFix) || wants(FIX_ALL_KIND) || wants(CodeActionKind.Source)) {
    const { drifted, repins, entries } = await repinsOf(file, workspace, text);
    const repinTitle = `Re-pin all ${drifted.length} drifted pin${drifted.length === 1 ? '' : 's'}`;
    if (wants(CodeActionKind.QuickFix) && drifted.length > 1) {
      actions.push({ title: `${repinTitle} in this file`, kind: CodeActionKind.QuickFix, edit: buildWorkspaceEdit(document, repins, entries, options) });
    }
    if (wants(FIX_ALL_KIND)) {
      // A malformed pin has no verdict, so a lower-casing never touches a pin that is re-pinned.
      const lowercasings = lowercaseEditsOf(text, workspace.analysis(file)?.problems ?? []);
      if (repins.length + lowercasings.length > 0) {
        const parts = [
          ...(repins.length > 0 ? [repinTitle] : []),
          ...(lowercasings.length > 0 ? [`${repins.length > 0 ? 'lower' : 'Lower'}-case ${lowercasings.length} pin${lowercasings.length === 1 ? '' : 's'} written in uppercase hex`] : []),
        ];
        actions.push({ title: `${parts.join(' and ')} in this file`, kind: FIX_ALL_KIND, edit: buildWorkspaceEdit(document, [...repins, ...lowercasings], entries, options) });
      }
    }
  }
  return actions;
}

/** The re-pins of every drifted pin of a file, with the store entries that record their content. */
async function repinsOf(file: string, workspace: LiveWorkspace, text: string): Promise<{ drifted: unknown[]; repins: TextEdit[]; entries: Array<{ folder: string; relativePath: string; content: string }> }> {
  const folder = workspace.folderOf(file);
  const verification = await workspace.verification(file);
  const security = new Set(verification.problems.filter((found) => found.code === 'TP407').map((found) => found.span.offset));
  // A security-class drift is left out of every bulk re-pin: it is accepted one tool at a time.
  const drifted = verification.problems.flatMap((found) => (found.code === 'TP400' && isDriftData(found.data) && !security.has(found.span.offset) ? [{ span: found.span, data: found.data }] : []));
  // The pin literal keeps its own quote (a source file's '…' or `…`).
  const repins = drifted.map((found) => replacePinEdit(found.span, found.data.live, text));
  const entries = drifted.flatMap((found) => storeEntriesFor(found.data).map((entry) => ({ folder, ...entry })));
  return { drifted, repins, entries };
}

/** The `toolpin/repinEdits` answer: re-pins only, and their count. */
export async function computeRepinEdits(document: TextDocument, workspace: LiveWorkspace, options: EditBuilder): Promise<RepinEditsResult> {
  const file = uriToPath(document.uri);
  if (document.uri.startsWith('file:') && !writableInside(file, workspace.folderOf(file))) return { edit: null, repins: 0 };
  const { repins, entries } = await repinsOf(file, workspace, document.getText());
  return { edit: repins.length > 0 ? buildWorkspaceEdit(document, repins, entries, options) : null, repins: repins.length };
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
): CodeAction[] {
  const data: unknown = diagnostic.data;
  const span = spanOf(document, diagnostic);
  const start = span.offset;
  const fix = (title: string, edits: readonly TextEdit[], preferred = false): CodeAction[] =>
    edits.length === 0 ? [] : [{ title, kind: CodeActionKind.QuickFix, diagnostics: [diagnostic], ...(preferred ? { isPreferred: true } : {}), edit: buildWorkspaceEdit(document, edits, [], options) }];
  // A TypeScript or JavaScript source gets the same fixes; new literals follow its own quotes and
  // key style (core/documents/fixes.ts).
  const editOptions = { source: documentKindOf(uriToPath(document.uri)) === 'source' };
  switch (diagnostic.code) {
    case 'TP400':
      return isDriftData(data) ? driftFixes(document, diagnostic, data, folder, options, reviewActions, securityOffsets.has(start)) : [];
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
        },
      ];
    }
    case 'TP408':
    case 'TP409': {
      // A verified pin whose tool changed outside the pinned fields: accepting the change records
      // the live definition under the same pin. Nothing in the document changes.
      if (!options.canCreateFiles || !isOutsideThePinData(data) || containsKnownSecret(data.entry.content) || !readFullDefinition(data.entry.content, data.tool)) return [];
      return [
        {
          title: `Accept the new definition of "${data.tool}" (record it in .toolpin/store)`,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diagnostic],
          edit: buildWorkspaceEdit(document, [], [{ folder, relativePath: data.entry.relativePath, content: data.entry.content }], options),
        },
      ];
    }
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
 * A drift's fixes (TP400): re-pin to the live value with its store entries, and the review action
 * where the client can review. The title of a security-class re-pin (`security`) says what it
 * accepts, and it is never the preferred fix.
 */
function driftFixes(document: TextDocument, diagnostic: Diagnostic, data: DriftData, folder: string, options: EditBuilder, reviewActions: CodeAction[], security: boolean): CodeAction[] {
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
      edit: buildWorkspaceEdit(document, [replacePinEdit(spanOf(document, diagnostic), data.live, document.getText())], entries, options),
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
    edits.push(replaceStringEdit(mcp.toolName.span, rename.tool, text));
    if (mcp.expectedSchemaHash.value !== rename.live) edits.push(replacePinEdit(mcp.expectedSchemaHash.span, rename.live, text));
  } else if (data.kind === 'tool') {
    const instance = instanceAt(workspace, document, start);
    const entry = instance?.snapshot.find((candidate) => candidate.tool.span.offset === start && candidate.tool.value === data.tool);
    if (!instance || !entry) return [];
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
    },
  ];
}

function instanceAt(workspace: LiveWorkspace, document: TextDocument, offset: number): ConnectorModel['instances'][number] | undefined {
  const analysis = workspace.analysis(uriToPath(document.uri));
  const model = analysis ? connectorOf(analysis) : undefined;
  return model?.instances.find((instance) => offset >= instance.node.offset && offset <= instance.node.offset + instance.node.length);
}
