/**
 * "Review and re-pin…" and "Compare Pinned and Live": a diff editor of the pinned content (from
 * the pin store) and the live content, then — for review — a modal confirmation, and a re-pin the
 * server applies only if the live hash is still the one shown. After a re-pin the diff editor is
 * closed and an information message says what was written.
 *
 * The two sides are read-only virtual documents (scheme `toolpin-review`) in the language
 * `toolpin-review`: JSON with comments, highlighted like a blueprint, that no language server
 * validates. (As `json` documents, VS Code's JSON validation reported the explanatory comments as
 * errors, and a `$schema` key in a live schema would make it fetch and apply that schema.) Their
 * paths have no extension, so VS Code never opens them as JSON even for a moment.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PinDetailsRequest, type PinDetails, RepinRequest } from '../../server/src/protocol';

export const REVIEW_SCHEME = 'toolpin-review';
export const REVIEW_LANGUAGE = 'toolpin-review';

/** What a review re-pin wrote: the extension's API fires it after the confirmation is shown. */
export interface RepinConfirmation {
  readonly tool: string;
  readonly server: string | null;
  readonly pin: string;
  /** The information message shown. */
  readonly message: string;
}

/** The questions a review asks; the extension uses VS Code's modal dialog, in-host tests answer it. */
export interface ReviewPrompts {
  /** Resolves true only when the person chose "Re-pin". */
  confirm(message: string, detail: string): Promise<boolean>;
}

export const modalPrompts: ReviewPrompts = {
  confirm: async (message, detail) => (await vscode.window.showWarningMessage(message, { modal: true, detail }, 'Re-pin')) === 'Re-pin',
};

/** Serves the two sides of a review as read-only virtual documents. */
export class ReviewContentProvider implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly repinned = new vscode.EventEmitter<RepinConfirmation>();
  /** Fires after a review re-pin was applied and its confirmation shown. */
  readonly onDidRepin = this.repinned.event;
  /** How a review asks before re-pinning; replaceable for in-host tests only. */
  prompts: ReviewPrompts = modalPrompts;

  set(uri: vscode.Uri, content: string): void {
    this.contents.set(uri.toString(), content);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  /** Reports a re-pin (the caller has shown its message). */
  didRepin(confirmation: RepinConfirmation): void {
    this.repinned.fire(confirmation);
  }
}

/** The URIs of a pin's two review documents (stable per server, tool and hashes). */
export function reviewUris(details: Pick<PinDetails, 'server' | 'tool' | 'pinned' | 'live'>): { left: vscode.Uri; right: vscode.Uri } {
  const base = `${details.server ?? 'server'}/${encodeURIComponent(details.tool)}`;
  return {
    left: vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${base}/pinned`, query: details.pinned ?? 'unpinned' }),
    right: vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${base}/live`, query: details.live ?? 'not-served' }),
  };
}

async function sides(details: PinDetails, provider: ReviewContentProvider): Promise<{ left: vscode.Uri; right: vscode.Uri }> {
  const { left, right } = reviewUris(details);
  provider.set(
    left,
    details.pinnedContent ??
      `// The pinned content of ${details.tool} (${details.pinned ?? 'no pin'}) is not in .toolpin/store:\n// the pin was written by hand or by another tool. Re-pinning with Toolpin records it,\n// so the next change shows a real diff.\n`,
  );
  provider.set(right, details.liveContent ?? `// ${details.tool} is not served by ${details.server ?? 'any configured server'} right now.\n`);
  // Opened and given their language before the diff shows them, so no JSON validator sees them.
  for (const uri of [left, right]) {
    const document = await vscode.workspace.openTextDocument(uri);
    if (document.languageId !== REVIEW_LANGUAGE) await vscode.languages.setTextDocumentLanguage(document, REVIEW_LANGUAGE);
  }
  return { left, right };
}

async function details(client: LanguageClient, uri: vscode.Uri, position: vscode.Position): Promise<PinDetails | null> {
  return client.sendRequest(PinDetailsRequest, { uri: uri.toString(), position: { line: position.line, character: position.character } });
}

/** A position as a command argument carries it: a vscode.Position, or its JSON form `{line, character}`. */
function isPositionLike(value: unknown): value is { readonly line: number; readonly character: number } {
  return typeof value === 'object' && value !== null && 'line' in value && typeof value.line === 'number' && 'character' in value && typeof value.character === 'number';
}

function target(uriArg: unknown, positionArg: unknown): { uri: vscode.Uri; position: vscode.Position } | undefined {
  const editor = vscode.window.activeTextEditor;
  const uri = typeof uriArg === 'string' ? vscode.Uri.parse(uriArg) : uriArg instanceof vscode.Uri ? uriArg : editor?.document.uri;
  const position = isPositionLike(positionArg) ? new vscode.Position(positionArg.line, positionArg.character) : editor?.selection.active;
  return uri && position ? { uri, position } : undefined;
}

/** The details of the pin at a position (the cursor by default), or a hint when there is none. */
async function detailsAt(client: LanguageClient, uriArg: unknown, positionArg: unknown): Promise<PinDetails | undefined> {
  const at = target(uriArg, positionArg);
  if (!at) return undefined;
  const found = await details(client, at.uri, at.position);
  if (!found) void vscode.window.showInformationMessage('Toolpin: put the cursor on a pin, a toolName or a toolsSnapshot key.');
  return found ?? undefined;
}

/** Closes every diff editor showing exactly these two review documents. */
async function closeDiff(left: vscode.Uri, right: vscode.Uri): Promise<void> {
  const tabs = vscode.window.tabGroups.all
    .flatMap((group) => group.tabs)
    .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.original.toString() === left.toString() && tab.input.modified.toString() === right.toString());
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
}

/** Opens the pinned ↔ live diff of the pin at a position; returns the details shown. */
export async function comparePinnedAndLive(client: LanguageClient, provider: ReviewContentProvider, uriArg?: unknown, positionArg?: unknown): Promise<PinDetails | undefined> {
  const found = await detailsAt(client, uriArg, positionArg);
  if (!found) return undefined;
  const { left, right } = await sides(found, provider);
  const title = `${found.tool}: pinned ${found.pinned ?? '—'} ↔ live ${found.live ?? '—'}`;
  await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  return found;
}

/** Shows the diff, asks, and re-pins only if the server still serves the reviewed hash. */
export async function reviewAndRepin(client: LanguageClient, provider: ReviewContentProvider, uriArg?: unknown, positionArg?: unknown): Promise<'applied' | 'refused' | 'cancelled'> {
  const at = target(uriArg, positionArg);
  if (!at) return 'cancelled';
  const shown = await comparePinnedAndLive(client, provider, at.uri, at.position);
  if (!shown?.live) return 'cancelled';
  const detail = [
    `Pinned: ${shown.pinned ?? '—'}`,
    `Live:   ${shown.live}`,
    shown.change ? `What changed: ${shown.change}` : 'What changed: unknown (the pinned content is not in the store)',
    ...(shown.writtenIn ? [`Written in: ${shown.writtenIn} (imported; the pin is rewritten there)`] : []),
  ].join('\n');
  const approved = await provider.prompts.confirm(`Re-pin "${shown.tool}" on ${shown.server ?? 'its server'} to the reviewed live hash?`, detail);
  if (!approved) return 'cancelled';
  const result = await client.sendRequest(RepinRequest, { uri: at.uri.toString(), position: { line: at.position.line, character: at.position.character }, expectedLive: shown.live });
  if (!result.applied) {
    void vscode.window.showErrorMessage(`Toolpin did not re-pin: ${result.reason}`);
    return 'refused';
  }
  const edit = await client.protocol2CodeConverter.asWorkspaceEdit(result.edit);
  // As a refactoring, like a quick fix: VS Code saves the files it touched (the store entry too).
  if (!(await vscode.workspace.applyEdit(edit, { isRefactoring: true }))) {
    void vscode.window.showErrorMessage(`Toolpin did not re-pin "${shown.tool}": the editor refused the edit.`);
    return 'refused';
  }
  // The review is over: its diff goes, and a message says what was written where.
  const { left, right } = reviewUris(shown);
  await closeDiff(left, right);
  const message = `Toolpin: re-pinned "${shown.tool}"${shown.server ? ` on ${shown.server}` : ''} to ${shown.live} in ${shown.writtenIn ?? vscode.workspace.asRelativePath(at.uri)}.`;
  void vscode.window.showInformationMessage(message);
  provider.didRepin({ tool: shown.tool, server: shown.server, pin: shown.live, message });
  return 'applied';
}

/** Opens the live tool of the pin at a position (its canonical content, readable) as a read-only document. */
export async function showLiveTool(client: LanguageClient, provider: ReviewContentProvider, uriArg?: unknown, positionArg?: unknown): Promise<PinDetails | undefined> {
  const found = await detailsAt(client, uriArg, positionArg);
  if (!found) return undefined;
  const { right } = await sides(found, provider);
  await vscode.window.showTextDocument(right, { preview: true });
  return found;
}
