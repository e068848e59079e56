/**
 * The dispatch-history tree: server → tool → schema hash (pinned / live / stale, count, last
 * seen) → executions (id, blueprint/step, time). Its data comes from the language server
 * (`toolpin/history`), never from parsing logs here. Selecting an execution opens its blueprint
 * step; a filter shows stale hashes only; executions' ids can be copied.
 *
 * Rows stay short enough for the default side bar width: a label names the thing (server, tool,
 * hash, execution id; long hashes and ids are shortened), the description holds a few words
 * (status and count, step and blueprint), and the tooltip holds everything (full hashes, blueprint, time,
 * log line). The stale filter is named in the view's description and a message above the tree, and when it hides every hash a
 * message row says so instead of the "no logs" welcome.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import {
  HistoryChangedNotification,
  type HistoryExecutionReport,
  HistoryExecutionsRequest,
  type HistoryHashReport,
  HistoryRequest,
  type HistoryToolReport,
  type HistoryViewReport,
  LocateStepRequest,
} from '../../server/src/protocol';

export const HISTORY_VIEW_ID = 'toolpin.dispatchHistory';
const STALE_CONTEXT = 'toolpin.history.staleOnly';

type Node =
  | { kind: 'server'; server: string; tools: HistoryToolReport[] }
  | { kind: 'tool'; server: string; tool: HistoryToolReport }
  | { kind: 'hash'; server: string; tool: string; hash: HistoryHashReport }
  | { kind: 'execution'; execution: HistoryExecutionReport }
  | { kind: 'more'; server: string; tool: string; hash: HistoryHashReport }
  | { kind: 'message'; label: string; tooltip: string }
  | { kind: 'storeProblem'; url: string; problem: string };

/**
 * A hash's status in a few words. "pinned" (a pin names it, the server serves something else) is
 * stale like any hash that is not live, and says so; with no live answer it is "live unknown".
 */
const STATUS_LABEL: Record<string, string> = { 'pinned+live': 'pinned · live', live: 'live', pinned: 'pinned · stale', stale: 'stale', unknown: 'live unknown' };

/** The view's description while the stale filter is on. */
export const STALE_ONLY_DESCRIPTION = 'stale only';
/** Shown above the tree while the stale filter is on. */
export const STALE_ONLY_MESSAGE = 'Showing stale hashes only: those the server no longer serves.';

/**
 * A hash shortened for a row: its first 8 hex digits, then "…". Schema hashes (`fnv1a64:`, all a
 * dispatch log holds) drop the algorithm; any other keeps it. Tooltips and aria labels have it whole.
 */
export function shortHash(hash: string): string {
  const match = /^([a-z0-9]+:)?([0-9a-f]+)$/i.exec(hash);
  if (!match) return hash;
  const algorithm = match[1] === 'fnv1a64:' ? '' : (match[1] ?? '');
  return match[2]!.length <= 8 ? `${algorithm}${match[2]}` : `${algorithm}${match[2]!.slice(0, 8)}…`;
}

/** An execution id shortened for a row (ids such as UUIDs are long); the tooltip has it whole. */
export function shortId(id: string): string {
  return id.length <= 16 ? id : `${id.slice(0, 12)}…`;
}

function age(at: string): string {
  const milliseconds = Date.now() - Date.parse(at);
  if (!Number.isFinite(milliseconds)) return at;
  const minutes = Math.round(milliseconds / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

export class DispatchHistoryProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private report: HistoryViewReport | null = null;
  private readonly expanded = new Map<string, HistoryExecutionReport[]>();
  staleOnly = false;

  constructor(private readonly client: () => LanguageClient | undefined) {}

  refresh(): void {
    this.report = null;
    this.expanded.clear();
    this.changed.fire(undefined);
  }

  private async load(): Promise<HistoryViewReport | null> {
    const client = this.client();
    if (!client) return null;
    this.report ??= await client.sendRequest(HistoryRequest, { staleOnly: this.staleOnly });
    return this.report;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      const report = await this.load();
      // The team store could not be read (or may not be contacted): say why, in full.
      if (report?.store?.problem) return [{ kind: 'storeProblem', url: report.store.url, problem: report.store.problem }];
      const servers: Node[] = (report?.servers ?? []).map((server) => ({ kind: 'server', server: server.server, tools: server.tools }));
      // Logs with executions, all hidden by the filter: say so (the welcome would claim no logs).
      if (servers.length === 0 && this.staleOnly && report && report.summary.dispatched > 0) {
        const unknown = report.summary.unknownExecutions;
        return [
          {
            kind: 'message',
            label: 'No stale hashes',
            tooltip: `None of the ${report.summary.dispatched} executions in the logs ran at a hash that is not live${unknown > 0 ? `; ${unknown} have no live answer, so they may or may not be stale` : ''}. Click to show all hashes.`,
          },
        ];
      }
      return servers;
    }
    switch (node.kind) {
      case 'server':
        return node.tools.map((tool) => ({ kind: 'tool', server: node.server, tool }));
      case 'tool':
        return node.tool.hashes.map((hash) => ({ kind: 'hash', server: node.server, tool: node.tool.tool, hash }));
      case 'hash': {
        const all = this.expanded.get(`${node.server}\u0000${node.tool}\u0000${node.hash.schemaHash}`);
        const executions: Node[] = (all ?? node.hash.executions).map((execution) => ({ kind: 'execution', execution }));
        if (!all && !node.hash.executionsComplete) executions.push({ kind: 'more', server: node.server, tool: node.tool, hash: node.hash });
        return executions;
      }
      default:
        return [];
    }
  }

  /** Loads every execution of a hash (beyond the most recent ones held in memory). */
  async showAll(node: Extract<Node, { kind: 'more' }>): Promise<void> {
    const client = this.client();
    if (!client) return;
    const all = await client.sendRequest(HistoryExecutionsRequest, { server: node.server, tool: node.tool, schemaHash: node.hash.schemaHash });
    this.expanded.set(`${node.server}\u0000${node.tool}\u0000${node.hash.schemaHash}`, all);
    this.changed.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'server': {
        const item = new vscode.TreeItem(node.server, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `server:${node.server}`;
        item.iconPath = new vscode.ThemeIcon('server');
        item.contextValue = 'server';
        return item;
      }
      case 'tool': {
        const item = new vscode.TreeItem(node.tool.tool, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `tool:${node.server}\u0000${node.tool.tool}`;
        item.iconPath = new vscode.ThemeIcon('tools');
        item.description = node.tool.liveState === 'served' ? `live ${shortHash(node.tool.liveHash ?? '')}` : node.tool.liveState === 'not-served' ? 'not served' : 'live unknown';
        item.tooltip = [
          `${node.tool.tool} on ${node.server}`,
          node.tool.liveState === 'served' ? `live ${node.tool.liveHash ?? ''}` : node.tool.liveState === 'not-served' ? 'not served by the server now' : 'live hash unknown',
          ...(node.tool.liveReason ? [node.tool.liveReason] : []),
        ].join('\n');
        return item;
      }
      case 'hash': {
        const stale = node.hash.live === false;
        const item = new vscode.TreeItem(shortHash(node.hash.schemaHash), vscode.TreeItemCollapsibleState.Collapsed);
        // Stable ids keep expansion and selection on the same hash when new executions arrive.
        item.id = `hash:${node.server}\u0000${node.tool}\u0000${node.hash.schemaHash}`;
        item.iconPath = new vscode.ThemeIcon(stale ? 'warning' : node.hash.live ? 'pass' : 'question', stale ? new vscode.ThemeColor('list.warningForeground') : undefined);
        // "pinned" alone means the pin matches and the live answer is missing or different: say which.
        const status = node.hash.status === 'pinned' && node.hash.live === null ? 'pinned · live unknown' : (STATUS_LABEL[node.hash.status] ?? node.hash.status);
        item.description = `${status} · ${node.hash.count}`;
        // Screen readers (and the UI test) get the whole hash, not the shortened label.
        item.accessibilityInformation = { label: `${node.hash.schemaHash}, ${status}, ${node.hash.count} execution${node.hash.count === 1 ? '' : 's'}` };
        item.tooltip = [
          node.hash.schemaHash,
          `${status}; ${node.hash.count} execution(s)${node.hash.ranAfterDrift ? `, ${node.hash.ranAfterDrift} after drift` : ''}`,
          `last seen ${age(node.hash.lastSeen.at)} (${node.hash.lastSeen.at})`,
        ].join('\n');
        item.contextValue = stale ? 'hash.stale' : 'hash';
        return item;
      }
      case 'execution': {
        const item = new vscode.TreeItem(shortId(node.execution.executionId), vscode.TreeItemCollapsibleState.None);
        item.id = `execution:${node.execution.log}:${node.execution.line}`;
        item.iconPath = new vscode.ThemeIcon(node.execution.ranAfterDrift ? 'error' : 'history');
        // The step first: where the row is cut, it loses the blueprint (the tooltip has both).
        item.description = `${node.execution.stepId ?? '?'} · ${node.execution.blueprint ?? '?'}`;
        item.accessibilityInformation = { label: `execution ${node.execution.executionId}, ${node.execution.blueprint ?? '?'}/${node.execution.stepId ?? '?'}` };
        item.tooltip = [
          node.execution.executionId,
          `${node.execution.blueprint ?? '?'}/${node.execution.stepId ?? '?'}, ${age(node.execution.at)} (${node.execution.at})`,
          `${node.execution.log}:${node.execution.line} (seq ${node.execution.seq})${node.execution.ranAfterDrift ? ' — ran after the server had moved on' : ''}`,
        ].join('\n');
        item.contextValue = 'execution';
        item.command = { command: 'toolpin.history.openStep', title: 'Open Step', arguments: [node] };
        return item;
      }
      case 'more': {
        const item = new vscode.TreeItem(`Show all ${node.hash.count} executions…`, vscode.TreeItemCollapsibleState.None);
        item.id = `more:${node.server}\u0000${node.tool}\u0000${node.hash.schemaHash}`;
        item.command = { command: 'toolpin.history.showAll', title: 'Show All', arguments: [node] };
        return item;
      }
      case 'storeProblem': {
        const item = new vscode.TreeItem('History store not read', vscode.TreeItemCollapsibleState.None);
        item.id = 'message:store-problem';
        item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'));
        item.description = node.problem;
        item.tooltip = `${node.url}\n${node.problem}\nClick to try again.`;
        item.contextValue = 'message';
        item.command = { command: 'toolpin.history.refresh', title: 'Refresh Dispatch History' };
        return item;
      }
      case 'message': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = 'message:stale-only';
        item.iconPath = new vscode.ThemeIcon('filter');
        item.description = 'show all hashes';
        item.tooltip = node.tooltip;
        item.contextValue = 'message';
        item.command = { command: 'toolpin.history.showAllHashes', title: 'Show All Hashes' };
        return item;
      }
    }
  }
}

export function registerDispatchHistoryView(context: vscode.ExtensionContext, client: () => LanguageClient | undefined): DispatchHistoryProvider {
  const provider = new DispatchHistoryProvider(client);
  const view = vscode.window.createTreeView(HISTORY_VIEW_ID, { treeDataProvider: provider, showCollapseAll: true });
  void vscode.commands.executeCommand('setContext', STALE_CONTEXT, false);
  const setStaleOnly = async (value: boolean): Promise<void> => {
    provider.staleOnly = value;
    // The description shows in a pane header; a container with this one view shows only a title,
    // cut short beside the title actions. The message shows above the tree, whatever the layout.
    view.description = value ? STALE_ONLY_DESCRIPTION : undefined;
    view.message = value ? STALE_ONLY_MESSAGE : undefined;
    await vscode.commands.executeCommand('setContext', STALE_CONTEXT, value);
    provider.refresh();
  };
  context.subscriptions.push(
    view,
    vscode.commands.registerCommand('toolpin.history.refresh', () => provider.refresh()),
    vscode.commands.registerCommand('toolpin.history.showStaleOnly', () => setStaleOnly(true)),
    vscode.commands.registerCommand('toolpin.history.showAllHashes', () => setStaleOnly(false)),
    vscode.commands.registerCommand('toolpin.history.showAll', (node: Parameters<DispatchHistoryProvider['showAll']>[0]) => provider.showAll(node)),
    vscode.commands.registerCommand('toolpin.history.copyExecutionId', async (node?: { kind: string; execution?: HistoryExecutionReport }) => {
      const id = node?.execution?.executionId;
      if (id) await vscode.env.clipboard.writeText(id);
      return id;
    }),
    vscode.commands.registerCommand('toolpin.history.openStep', async (node?: { execution?: HistoryExecutionReport }) => {
      const execution = node?.execution;
      const languageClient = client();
      if (!execution?.blueprint || !execution.stepId || !languageClient) return false;
      const location = await languageClient.sendRequest(LocateStepRequest, { blueprint: execution.blueprint, stepId: execution.stepId });
      if (!location) {
        void vscode.window.showWarningMessage(`Toolpin: no blueprint "${execution.blueprint}" with step "${execution.stepId}" in the workspace.`);
        return false;
      }
      const range = new vscode.Range(location.range.start.line, location.range.start.character, location.range.end.line, location.range.end.character);
      await vscode.window.showTextDocument(vscode.Uri.parse(location.uri), { selection: range });
      return true;
    }),
  );
  return provider;
}

/** Wires the server's change notification to the tree (once the client is running). */
export function followHistoryChanges(client: LanguageClient, provider: DispatchHistoryProvider): void {
  client.onNotification(HistoryChangedNotification, () => provider.refresh());
}
