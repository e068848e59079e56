/**
 * A code lens per blueprint and per connector instance: "N pins · M drifted · verified 2 min ago",
 * with "Re-pin all" (when something drifted) and "Refresh". The commands are the client's
 * (`toolpin.repinFile`, `toolpin.refresh`); other editors can ignore them.
 *
 * Lenses are computed when the editor asks, from the same verification the diagnostics use. The
 * editor asks again on its own only after an edit of that document, so after every publication
 * (a listing arrived, another document changed what this one sees) the server sends
 * `workspace/codeLens/refresh` when the client supports it: the lenses then follow the Problems
 * panel within one short debounce.
 */
import { type CodeLens, CodeLensRefreshRequest, type Connection, type TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { blueprintFileOf, connectorOf, sourceOf } from '../core/documents/documents';
import { readsPins } from '../core/documents/connector';
import type { Span } from '../core/problems';
import { describeAge, type PinVerdict } from '../core/verify/verify';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import type { ServerRuntime, Timer } from '../runtime';
import { runSafe } from '../util/runSafe';
import { spanToRange } from '../util/toLsp';
import { uriToPath } from '../util/uris';
import type { DiagnosticsFeature } from './diagnostics';

/** Publications of one burst ask the editor for fresh lenses once. */
export const CODE_LENS_REFRESH_DEBOUNCE_MS = 50;

export interface CodeLensOptions {
  readonly now: () => number;
  readonly setTimeout: ServerRuntime['setTimeout'];
  /** Whether the client announced `workspace.codeLens.refreshSupport`. */
  readonly canRefresh: () => boolean;
}

export function registerCodeLens(connection: Connection, documents: TextDocuments<TextDocument>, workspace: LiveWorkspace, diagnostics: DiagnosticsFeature, options: CodeLensOptions): void {
  const { now } = options;
  let timer: Timer | undefined;
  diagnostics.onDidPublish(() => {
    if (!options.canRefresh()) return;
    timer?.dispose();
    timer = options.setTimeout(() => {
      timer = undefined;
      connection.sendRequest(CodeLensRefreshRequest.type).catch((error: unknown) => connection.console.warn(`toolpin: code lens refresh failed: ${String(error)}`));
    }, CODE_LENS_REFRESH_DEBOUNCE_MS);
  });
  connection.onCodeLens((params, token) =>
    runSafe<CodeLens[]>(connection.console, 'codeLens', token, [], async () => {
      const document = documents.get(params.textDocument.uri);
      if (!document) return [];
      return computeCodeLenses(document, workspace, now());
    }),
  );
}

function summary(verdicts: readonly PinVerdict[], listedAt: number | undefined, now: number): string {
  const drifted = verdicts.filter((verdict) => verdict.state === 'drifted').length;
  const missing = verdicts.filter((verdict) => verdict.state === 'missing').length;
  const unverified = verdicts.filter((verdict) => verdict.state === 'cannot-verify' || verdict.state === 'ambiguous').length;
  const parts = [`${verdicts.length} pin${verdicts.length === 1 ? '' : 's'}`];
  if (drifted > 0) parts.push(`${drifted} drifted`);
  if (missing > 0) parts.push(`${missing} missing`);
  if (unverified > 0) parts.push(`${unverified} unverified`);
  if (drifted + missing + unverified === 0 && verdicts.length > 0) parts.push('all verified');
  if (listedAt !== undefined) parts.push(`verified ${describeAge(now - listedAt)}`);
  return parts.join(' · ');
}

export async function computeCodeLenses(document: TextDocument, workspace: LiveWorkspace, now: number): Promise<CodeLens[]> {
  const file = uriToPath(document.uri);
  const analysis = workspace.setOpenDocument(file, document.getText()) ?? workspace.analysis(file);
  if (!analysis) return [];
  const verification = await workspace.verification(file);
  const groups: Array<{ anchor: Span; verdicts: PinVerdict[]; servers: string[] }> = [];
  const serversOf = (verdicts: readonly PinVerdict[]): string[] => [...new Set(verdicts.flatMap((verdict) => (verdict.server ? [verdict.server] : [])))];
  const blueprintFile = blueprintFileOf(analysis);
  const source = sourceOf(analysis);
  if (blueprintFile) {
    if (!blueprintFile.name) return [];
    groups.push({ anchor: blueprintFile.name.span, verdicts: verification.verdicts, servers: serversOf(verification.verdicts) });
  } else if (source) {
    // A source file has no blueprint name to stand on: each pinned mcpInvoke$ call gets its lens.
    for (const step of source.blueprint.steps) {
      const pin = step.mcp?.expectedSchemaHash;
      if (!pin || !step.effect) continue;
      const verdicts = verification.verdicts.filter((verdict) => verdict.span.offset === pin.span.offset);
      groups.push({ anchor: step.effect.span, verdicts, servers: serversOf(verdicts) });
    }
  }
  for (const instance of connectorOf(analysis)?.instances ?? []) {
    if (!readsPins(instance) || !instance.name) continue;
    const spans = new Set(instance.snapshot.map((entry) => entry.pin.span.offset));
    groups.push({ anchor: instance.name.span, verdicts: verification.verdicts.filter((verdict) => spans.has(verdict.span.offset)), servers: [instance.name.value] });
  }
  const lenses: CodeLens[] = [];
  for (const group of groups) {
    if (group.verdicts.length === 0) continue;
    const range = spanToRange(document, group.anchor);
    let listedAt: number | undefined;
    for (const server of group.servers) {
      const { listing } = await workspace.serverFor(file, group.verdicts[0]?.kind === 'tool' ? 'tool' : 'schema', '', server);
      if (listing?.status === 'listed') listedAt = Math.min(listedAt ?? Infinity, listing.listedAt);
    }
    lenses.push({ range, command: { title: summary(group.verdicts, listedAt, now), command: 'toolpin.showOutput', arguments: [] } });
    if (group.verdicts.some((verdict) => verdict.state === 'drifted')) {
      lenses.push({ range, command: { title: 'Re-pin all', command: 'toolpin.repinFile', arguments: [document.uri] } });
    }
    lenses.push({ range, command: { title: 'Refresh', command: 'toolpin.refresh', arguments: [group.servers] } });
  }
  return lenses;
}
