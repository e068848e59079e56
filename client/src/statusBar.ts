/**
 * The status bar item: servers reachable / unreachable and pins drifted, from the server's
 * `toolpin/status`. Clicking it opens a quick pick of the problems (drifted and missing pins,
 * unreachable servers); choosing one opens its location.
 *
 * The server derives the counts from the diagnostics it published (server/src/features/status.ts),
 * so the text follows the Problems panel within a fraction of a second of every change; the quick
 * pick reads `vscode.languages.getDiagnostics()` when it opens.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { StatusNotification, type StatusParams } from '../../server/src/protocol';

export const SHOW_PROBLEMS_COMMAND = 'toolpin.showProblems';

/** The status bar text for a status; exported for tests. */
export function statusText(status: StatusParams): { text: string; tooltip: string; warning: boolean } {
  if (status.verification === 'off') {
    return {
      text: '$(pin) Toolpin: verification off',
      tooltip: 'Toolpin: live verification is turned off (toolpin.verify.enable). Structure checks still run; no server is contacted and no pin is verified.',
      warning: false,
    };
  }
  const reachable = status.servers.filter((server) => server.state === 'listed').length;
  const unreachable = status.servers.filter((server) => server.state === 'unavailable').length;
  const broken = status.pins.drifted + status.pins.missing;
  const parts = [`$(pin) ${reachable}/${status.servers.length} servers`];
  if (broken > 0) parts.push(`$(warning) ${status.pins.drifted} drifted${status.pins.missing > 0 ? `, ${status.pins.missing} missing` : ''}`);
  else if (status.pins.verified > 0) parts.push(`$(check) ${status.pins.verified} verified`);
  const tooltip = [
    `Toolpin: ${status.pins.verified} verified, ${status.pins.drifted} drifted, ${status.pins.missing} missing, ${status.pins.cannotVerify + status.pins.ambiguous} unverified`,
    ...status.servers.map((server) => `${server.name}: ${server.state === 'listed' ? `${server.tools} tools` : server.state === 'pending' ? 'listing…' : server.state === 'off' ? 'not contacted (verification off)' : `cannot list — ${server.message ?? ''}`}`),
  ].join('\n');
  return { text: parts.join('  '), tooltip, warning: broken > 0 || unreachable > 0 };
}

type ProblemItem = vscode.QuickPickItem & { uri?: vscode.Uri; range?: vscode.Range };

/** The quick pick's items: Toolpin's errors and warnings as published now, then unreachable servers. */
export function problemItems(status: StatusParams | undefined): ProblemItem[] {
  const items: ProblemItem[] = [];
  for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
    for (const diagnostic of diagnostics) {
      if (diagnostic.source !== 'toolpin' || diagnostic.severity > vscode.DiagnosticSeverity.Warning) continue;
      items.push({ label: `$(${diagnostic.severity === vscode.DiagnosticSeverity.Error ? 'error' : 'warning'}) ${String(typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code)}`, description: vscode.workspace.asRelativePath(uri), detail: diagnostic.message, uri, range: diagnostic.range });
    }
  }
  for (const server of status?.servers ?? []) {
    if (server.state === 'unavailable') items.push({ label: `$(debug-disconnect) ${server.name}`, description: 'cannot list tools', detail: server.message ?? '' });
  }
  if (items.length === 0) items.push({ label: '$(check) No drifted or missing pins, and every server was listed' });
  return items;
}

/** What the status bar shows now, for the extension's API (in-host tests read it). */
export interface StatusBarState {
  readonly text: string;
  readonly tooltip: string;
  readonly status: StatusParams | undefined;
  /** The items the quick pick would show if opened now. */
  items(): vscode.QuickPickItem[];
}

export function registerStatusBar(context: vscode.ExtensionContext, client: LanguageClient): () => StatusBarState {
  const item = vscode.window.createStatusBarItem('toolpin.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'Toolpin';
  item.command = SHOW_PROBLEMS_COMMAND;
  item.text = '$(pin) Toolpin';
  let last: StatusParams | undefined;
  context.subscriptions.push(item);
  // While some server is being listed, a window progress says so (slow servers are visible).
  let listing: { done: () => void } | undefined;
  client.onNotification(StatusNotification, (status) => {
    last = status;
    const pending = status.servers.filter((server) => server.state === 'pending').map((server) => server.name);
    if (pending.length > 0 && !listing) {
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Toolpin: listing ${pending.join(', ')}` }, () => new Promise<void>((resolve) => (listing = { done: resolve })));
    } else if (pending.length === 0 && listing) {
      listing.done();
      listing = undefined;
    }
    const shown = statusText(status);
    item.text = shown.text;
    item.tooltip = shown.tooltip;
    item.backgroundColor = shown.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    item.show();
  });
  context.subscriptions.push(
    vscode.commands.registerCommand(SHOW_PROBLEMS_COMMAND, async () => {
      const picked = await vscode.window.showQuickPick(problemItems(last), { title: 'Toolpin problems', matchOnDetail: true });
      if (picked?.uri) await vscode.window.showTextDocument(picked.uri, { selection: picked.range });
    }),
  );
  return () => ({ text: item.text, tooltip: typeof item.tooltip === 'string' ? item.tooltip : (item.tooltip?.value ?? ''), status: last, items: () => problemItems(last) });
}
