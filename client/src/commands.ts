/**
 * Commands, as a table of small factories: each entry names a command contributed in package.json
 * and builds its handler from what the extension holds.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ClearCacheRequest, RefreshRequest } from '../../server/src/protocol';
import { credentialKey } from './languageClient';
import { comparePinnedAndLive, type ReviewContentProvider, reviewAndRepin } from './review';

export interface CommandContext {
  readonly extension: vscode.ExtensionContext;
  readonly outputChannel: vscode.OutputChannel;
  readonly client: () => LanguageClient | undefined;
  readonly review: ReviewContentProvider;
}

const FIX_ALL_KIND = vscode.CodeActionKind.SourceFixAll.append('toolpin');

async function repinFile(uri: vscode.Uri): Promise<number> {
  const document = await vscode.workspace.openTextDocument(uri);
  const range = new vscode.Range(0, 0, document.lineCount, 0);
  const actions = (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', uri, range, FIX_ALL_KIND.value)) ?? [];
  const fixAll = actions.find((action) => action.kind?.value === FIX_ALL_KIND.value && action.edit);
  if (!fixAll?.edit) return 0;
  // As a refactoring, like a quick fix: VS Code saves the files it touched (the store entries too).
  await vscode.workspace.applyEdit(fixAll.edit, { isRefactoring: true });
  return Number(/Re-pin all (\d+)/.exec(fixAll.title)?.[1] ?? 1);
}

const COMMANDS: Record<string, (context: CommandContext) => (...args: unknown[]) => unknown> = {
  'toolpin.showOutput': ({ outputChannel }) => () => outputChannel.show(true),

  'toolpin.refresh':
    ({ client }) =>
    async (servers?: unknown) => {
      const names = Array.isArray(servers) ? servers.filter((name): name is string => typeof name === 'string') : undefined;
      await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Toolpin: listing tools of the MCP servers…' }, () =>
        client()?.sendRequest(RefreshRequest, names ? { servers: names } : {}) ?? Promise.resolve(),
      );
    },

  'toolpin.clearCache':
    ({ client }) =>
    async () => {
      await client()?.sendRequest(ClearCacheRequest);
      void vscode.window.showInformationMessage('Toolpin: cached tool listings cleared.');
    },

  'toolpin.repinFile': () => async (uri?: unknown) => {
    const target = typeof uri === 'string' ? vscode.Uri.parse(uri) : uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
    if (!target) return 0;
    const count = await repinFile(target);
    if (count === 0) void vscode.window.showInformationMessage('Toolpin: nothing drifted in this file.');
    return count;
  },

  'toolpin.reviewRepin':
    ({ client, review }) =>
    async (uri?: unknown, position?: unknown) => {
      const languageClient = client();
      return languageClient ? reviewAndRepin(languageClient, review, uri, position) : 'cancelled';
    },

  'toolpin.comparePinnedAndLive':
    ({ client, review }) =>
    async (uri?: unknown, position?: unknown) => {
      const languageClient = client();
      return languageClient ? comparePinnedAndLive(languageClient, review, uri, position) : undefined;
    },

  'toolpin.openExample':
    ({ extension }) =>
    async () => {
      // The example needs the MCP servers installed next to it (npm ci in a clone of Toolpin), so it
      // opens from a development checkout; an installed extension says how to get it.
      const folder = vscode.Uri.joinPath(extension.extensionUri, 'examples');
      try {
        await vscode.workspace.fs.stat(folder);
        await vscode.commands.executeCommand('vscode.openFolder', folder, { forceNewWindow: true });
        return true;
      } catch {
        void vscode.window.showInformationMessage('Toolpin: the example workspace lives in Toolpin\'s repository under examples/. Clone it, run "npm ci && npm run demo", then open the examples folder.');
        return false;
      }
    },

  'toolpin.setCredential':
    ({ extension, client }) =>
    async (name?: unknown) => {
      const credentialRef =
        typeof name === 'string'
          ? name
          : await vscode.window.showInputBox({ title: 'Toolpin: credential name', prompt: 'The credentialRef of a connector, e.g. GITHUB_MCP_TOKEN', validateInput: (value) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(value) ? undefined : 'Letters, digits and underscores') });
      if (!credentialRef) return;
      const value = await vscode.window.showInputBox({ title: `Toolpin: value of ${credentialRef}`, prompt: 'Stored in VS Code\'s secret storage; never written to a file', password: true, ignoreFocusOut: true });
      if (value === undefined) return;
      await extension.secrets.store(credentialKey(credentialRef), value);
      await client()?.sendRequest(ClearCacheRequest);
      void vscode.window.showInformationMessage(`Toolpin: ${credentialRef} stored in secret storage.`);
    },
};

export function registerCommands(context: CommandContext): void {
  for (const [id, factory] of Object.entries(COMMANDS)) {
    context.extension.subscriptions.push(vscode.commands.registerCommand(id, factory(context)));
  }
}
