/**
 * Code actions: re-pin a drifted pin, re-pin everything drifted in the file (also as
 * `source.fixAll.toolpin`), pin a selected tool that has no pin, remove the pin of a tool that is
 * no longer served. Quick fixes read their payload from `Diagnostic.data` (set by the core's
 * verification), so they need no server state; "re-pin all" re-verifies the document.
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
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { ConnectorModel } from '../core/connector';
import { removeSnapshotEntryEdits, replacePinEdit, setSnapshotEntryEdits, storeEntry, type TextEdit } from '../core/fixes';
import { isParsedPin, parsePin } from '../core/pins';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { runSafe } from '../util/runSafe';
import { DIAGNOSTIC_SOURCE } from '../util/toLsp';
import { pathToUri, uriToPath } from '../util/uris';

/** The kind of the fix-all action, so editors can run it on save. */
export const FIX_ALL_KIND = `${CodeActionKind.SourceFixAll}.toolpin`;

interface DriftData {
  kind: 'schema' | 'tool';
  tool: string;
  server: string;
  pinned: string;
  live: string;
  liveContent: string;
}

function isDriftData(data: unknown): data is DriftData {
  const candidate = data as Partial<DriftData> | undefined;
  return typeof candidate?.tool === 'string' && typeof candidate.live === 'string' && typeof candidate.liveContent === 'string' && (candidate.kind === 'schema' || candidate.kind === 'tool');
}

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
    const uri = pathToUri(path.join(entry.folder, entry.relativePath));
    if (seen.has(uri)) continue;
    seen.add(uri);
    // Store entries are content-addressed: overwriting one writes the same bytes it held.
    changes.push({ kind: 'create', uri, options: { overwrite: true } });
    changes.push({ textDocument: { uri, version: null }, edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: entry.content }] });
  }
  changes.push(documentEdit);
  return { documentChanges: changes };
}

function storeEntryFor(data: { live: string; liveContent: string }): { relativePath: string; content: string } | undefined {
  const algorithm = data.live.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256';
  const parsed = parsePin(data.live, algorithm);
  return isParsedPin(parsed) ? storeEntry(parsed.algorithm, parsed.hex, data.liveContent) : undefined;
}

export function registerCodeActions(connection: Connection, documents: TextDocuments<TextDocument>, workspace: LiveWorkspace, options: () => EditBuilder): void {
  connection.onCodeAction((params, token) =>
    runSafe<CodeAction[]>(connection.console, 'codeAction', token, [], async () => {
      const document = documents.get(params.textDocument.uri);
      if (!document) return [];
      return computeCodeActions(document, params, workspace, options());
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
      const action = quickFixFor(document, text, diagnostic, workspace, folder, options, reviewActions);
      if (action) actions.push(action);
    }
    actions.push(...reviewActions);
  }

  if (wants(CodeActionKind.QuickFix) || wants(FIX_ALL_KIND) || wants(CodeActionKind.Source)) {
    const verification = await workspace.verification(file);
    const drifted = verification.problems.filter((found) => found.code === 'TP400' && isDriftData(found.data));
    if (drifted.length > 0) {
      const edits = drifted.map((found) => replacePinEdit(found.span, (found.data as unknown as DriftData).live));
      const entries = drifted.flatMap((found) => {
        const entry = storeEntryFor(found.data as unknown as DriftData);
        return entry ? [{ folder, ...entry }] : [];
      });
      const edit = buildWorkspaceEdit(document, edits, entries, options);
      const title = `Re-pin all ${drifted.length} drifted pin${drifted.length === 1 ? '' : 's'} in this file`;
      if (wants(CodeActionKind.QuickFix) && drifted.length > 1) actions.push({ title, kind: CodeActionKind.QuickFix, edit });
      if (wants(FIX_ALL_KIND)) actions.push({ title, kind: FIX_ALL_KIND, edit });
    }
  }
  return actions;
}

function quickFixFor(
  document: TextDocument,
  text: string,
  diagnostic: Diagnostic,
  workspace: LiveWorkspace,
  folder: string,
  options: EditBuilder,
  reviewActions: CodeAction[],
): CodeAction | undefined {
  const data = diagnostic.data as Record<string, unknown> | undefined;
  const offsetOf = (position: { line: number; character: number }): number => document.offsetAt(position);
  switch (diagnostic.code) {
    case 'TP400': {
      if (!isDriftData(data)) return undefined;
      const span = { offset: offsetOf(diagnostic.range.start), length: offsetOf(diagnostic.range.end) - offsetOf(diagnostic.range.start) };
      const entry = storeEntryFor(data);
      if (options.canReview) {
        reviewActions.push({
          title: `Review and re-pin "${data.tool}"…`,
          kind: CodeActionKind.QuickFix,
          diagnostics: [diagnostic],
          command: { title: 'Review and re-pin', command: 'toolpin.reviewRepin', arguments: [document.uri, diagnostic.range.start] },
        });
      }
      return {
        title: `Re-pin "${data.tool}" to ${data.live}`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        isPreferred: true,
        edit: buildWorkspaceEdit(document, [replacePinEdit(span, data.live)], entry ? [{ folder, ...entry }] : [], options),
      };
    }
    case 'TP405': {
      if (typeof data?.tool !== 'string' || typeof data.live !== 'string' || typeof data.liveContent !== 'string') return undefined;
      const instance = instanceAt(workspace, document, offsetOf(diagnostic.range.start));
      if (!instance) return undefined;
      const entry = storeEntryFor({ live: data.live, liveContent: data.liveContent });
      return {
        title: `Pin "${data.tool}" at ${data.live}`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        edit: buildWorkspaceEdit(document, setSnapshotEntryEdits(text, instance, data.tool, data.live), entry ? [{ folder, ...entry }] : [], options),
      };
    }
    case 'TP401': {
      if (data?.kind !== 'tool' || typeof data.tool !== 'string') return undefined;
      const instance = instanceAt(workspace, document, offsetOf(diagnostic.range.start));
      if (!instance) return undefined;
      return {
        title: `Remove the pin of "${data.tool}" (no longer served)`,
        kind: CodeActionKind.QuickFix,
        diagnostics: [diagnostic],
        edit: buildWorkspaceEdit(document, removeSnapshotEntryEdits(text, instance, data.tool), [], options),
      };
    }
    default:
      return undefined;
  }
}

function instanceAt(workspace: LiveWorkspace, document: TextDocument, offset: number): ConnectorModel['instances'][number] | undefined {
  const analysis = workspace.analysis(uriToPath(document.uri));
  if (analysis?.kind !== 'connector') return undefined;
  return (analysis.model as ConnectorModel).instances.find((instance) => offset >= instance.node.offset && offset <= instance.node.offset + instance.node.length);
}
