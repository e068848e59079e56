/**
 * "Review and re-pin…" and "Compare Pinned and Live": a diff editor of the pinned content (from
 * the pin store) and the live content, then — for review — a modal confirmation, and a re-pin the
 * server applies only if the live hash is still the one shown.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { PinDetailsRequest, type PinDetails, RepinRequest } from '../../server/src/protocol';

export const REVIEW_SCHEME = 'toolpin-review';

/** Serves the two sides of a review as read-only virtual documents. */
export class ReviewContentProvider implements vscode.TextDocumentContentProvider {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, content: string): void {
    this.contents.set(uri.toString(), content);
    this.changed.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }
}

function sides(details: PinDetails, provider: ReviewContentProvider): { left: vscode.Uri; right: vscode.Uri } {
  const base = `${details.server ?? 'server'}/${encodeURIComponent(details.tool)}`;
  const left = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${base}/pinned.json`, query: details.pinned ?? 'unpinned' });
  const right = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${base}/live.json`, query: details.live ?? 'not-served' });
  provider.set(
    left,
    details.pinnedContent ??
      `// The pinned content of ${details.tool} (${details.pinned ?? 'no pin'}) is not in .toolpin/store:\n// the pin was written by hand or by another tool. Re-pinning with Toolpin records it,\n// so the next change shows a real diff.\n`,
  );
  provider.set(right, details.liveContent ?? `// ${details.tool} is not served by ${details.server ?? 'any configured server'} right now.\n`);
  return { left, right };
}

async function details(client: LanguageClient, uri: vscode.Uri, position: vscode.Position): Promise<PinDetails | null> {
  return client.sendRequest(PinDetailsRequest, { uri: uri.toString(), position: { line: position.line, character: position.character } });
}

function target(uriArg: unknown, positionArg: unknown): { uri: vscode.Uri; position: vscode.Position } | undefined {
  const editor = vscode.window.activeTextEditor;
  const uri = typeof uriArg === 'string' ? vscode.Uri.parse(uriArg) : uriArg instanceof vscode.Uri ? uriArg : editor?.document.uri;
  const raw = positionArg as { line?: number; character?: number } | undefined;
  const position = raw && typeof raw.line === 'number' && typeof raw.character === 'number' ? new vscode.Position(raw.line, raw.character) : editor?.selection.active;
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

/** Opens the pinned ↔ live diff of the pin at a position; returns the details shown. */
export async function comparePinnedAndLive(client: LanguageClient, provider: ReviewContentProvider, uriArg?: unknown, positionArg?: unknown): Promise<PinDetails | undefined> {
  const found = await detailsAt(client, uriArg, positionArg);
  if (!found) return undefined;
  const { left, right } = sides(found, provider);
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
  const detail = [`Pinned: ${shown.pinned ?? '—'}`, `Live:   ${shown.live}`, shown.change ? `What changed: ${shown.change}` : 'What changed: unknown (the pinned content is not in the store)'].join('\n');
  const choice = await vscode.window.showWarningMessage(`Re-pin "${shown.tool}" on ${shown.server ?? 'its server'} to the reviewed live hash?`, { modal: true, detail }, 'Re-pin');
  if (choice !== 'Re-pin') return 'cancelled';
  const result = await client.sendRequest(RepinRequest, { uri: at.uri.toString(), position: { line: at.position.line, character: at.position.character }, expectedLive: shown.live });
  if (!result.applied) {
    void vscode.window.showErrorMessage(`Toolpin did not re-pin: ${result.reason}`);
    return 'refused';
  }
  const edit = await client.protocol2CodeConverter.asWorkspaceEdit(result.edit);
  // As a refactoring, like a quick fix: VS Code saves the files it touched (the store entry too).
  await vscode.workspace.applyEdit(edit, { isRefactoring: true });
  return 'applied';
}

/** Opens the live tool of the pin at a position (its canonical content, readable) as a read-only document. */
export async function showLiveTool(client: LanguageClient, provider: ReviewContentProvider, uriArg?: unknown, positionArg?: unknown): Promise<PinDetails | undefined> {
  const found = await detailsAt(client, uriArg, positionArg);
  if (!found) return undefined;
  const { right } = sides(found, provider);
  await vscode.window.showTextDocument(right, { preview: true });
  return found;
}
