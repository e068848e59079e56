/**
 * Commands, as a table of small factories: each entry names a command contributed in package.json
 * and builds its handler from what the extension holds.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { ClearCacheRequest, RefreshRequest, RepinEditsRequest, STORE_PASSWORD_CREDENTIAL } from '../../server/src/protocol';
import { credentialKey } from './languageClient';
import { comparePinnedAndLive, type ReviewContentProvider, reviewAndRepin, showLiveTool } from './review';

export interface CommandContext {
  readonly extension: vscode.ExtensionContext;
  readonly outputChannel: vscode.OutputChannel;
  readonly client: () => LanguageClient | undefined;
  readonly review: ReviewContentProvider;
}

/** The extension version the example workspace copy was made from (globalState). */
const EXAMPLE_VERSION_KEY = 'toolpin.exampleWorkspaceVersion';

/** The re-pins of one file (re-pins only, no other fix) as a VS Code edit, and how many there are. */
async function repinEditsOf(client: LanguageClient, uri: vscode.Uri): Promise<{ edit: vscode.WorkspaceEdit; repins: number } | undefined> {
  // Opened first, so the server answers from the editor's text (and the file's language is known).
  await vscode.workspace.openTextDocument(uri);
  const result = await client.sendRequest(RepinEditsRequest, { uri: client.code2ProtocolConverter.asUri(uri) });
  if (!result.edit || result.repins === 0) return undefined;
  return { edit: await client.protocol2CodeConverter.asWorkspaceEdit(result.edit), repins: result.repins };
}

async function repinFile(client: LanguageClient | undefined, uri: vscode.Uri): Promise<number> {
  const found = client ? await repinEditsOf(client, uri) : undefined;
  if (!found) return 0;
  // As a refactoring, like a quick fix: VS Code saves the files it touched (the store entries too).
  await vscode.workspace.applyEdit(found.edit, { isRefactoring: true });
  return found.repins;
}

/**
 * Re-pins everything drifted in the workspace as one edit that VS Code previews before applying
 * (every change needs confirmation), built from each file's re-pin edits.
 */
async function repinWorkspace(client: LanguageClient | undefined): Promise<number> {
  if (!client) return 0;
  const files = await vscode.workspace.findFiles('**/*.{blueprint,connector}.{json,jsonc}', '**/node_modules/**', 2000);
  const combined = new vscode.WorkspaceEdit();
  let count = 0;
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Toolpin: collecting re-pins…', cancellable: true }, async (progress, token) => {
    for (const [index, uri] of files.entries()) {
      if (token.isCancellationRequested) return;
      progress.report({ message: vscode.workspace.asRelativePath(uri), increment: 100 / Math.max(files.length, 1) });
      const found = await repinEditsOf(client, uri);
      if (!found) continue;
      count += found.repins;
      const label = { label: `Re-pin ${found.repins} drifted pin${found.repins === 1 ? '' : 's'}`, description: vscode.workspace.asRelativePath(uri), needsConfirmation: true };
      for (const [target, edits] of found.edit.entries()) {
        for (const edit of edits) combined.replace(target, edit.range, edit.newText, { ...label, label: `${index + 1}. ${vscode.workspace.asRelativePath(target)}` });
      }
    }
  });
  if (count === 0) {
    void vscode.window.showInformationMessage('Toolpin: nothing drifted in the workspace.');
    return 0;
  }
  // needsConfirmation makes VS Code show the refactor preview: every change is reviewed first.
  const applied = await vscode.workspace.applyEdit(combined, { isRefactoring: true });
  return applied ? count : 0;
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

  'toolpin.repinWorkspace': ({ client }) => () => repinWorkspace(client()),

  'toolpin.showLiveTool':
    ({ client, review }) =>
    async (uri?: unknown, position?: unknown) => {
      const languageClient = client();
      if (!languageClient) return undefined;
      return showLiveTool(languageClient, review, uri, position);
    },

  'toolpin.clearCache':
    ({ client }) =>
    async () => {
      await client()?.sendRequest(ClearCacheRequest);
      void vscode.window.showInformationMessage('Toolpin: cached tool listings cleared.');
    },

  'toolpin.repinFile': ({ client }) => async (uri?: unknown) => {
    const target = typeof uri === 'string' ? vscode.Uri.parse(uri) : uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
    if (!target) return 0;
    const count = await repinFile(client(), target);
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
      // The example is self-contained (the build bundles its MCP servers into it, and its stdio
      // servers start in the folder itself), so it runs wherever it is. It is opened from a copy in
      // the extension's storage, never in place: re-pinning edits its files, and the extension's own
      // files (or a development checkout's examples/) stay as shipped. The copy is kept across
      // openings, so edits survive, and replaced when the extension's version changes.
      const source = vscode.Uri.joinPath(extension.extensionUri, 'examples');
      const target = vscode.Uri.joinPath(extension.globalStorageUri, 'example-workspace');
      const manifest: unknown = extension.extension.packageJSON;
      const version = String((typeof manifest === 'object' && manifest !== null && 'version' in manifest ? manifest.version : undefined) ?? '');
      try {
        await vscode.workspace.fs.stat(vscode.Uri.joinPath(source, 'servers', 'bundled'));
      } catch {
        void vscode.window.showInformationMessage('Toolpin: the example workspace is not built. In a clone of Toolpin run "npm ci && npm run build", then open examples/.');
        return false;
      }
      const copied = extension.globalState.get<string>(EXAMPLE_VERSION_KEY);
      const present = await vscode.workspace.fs.stat(target).then(
        () => true,
        () => false,
      );
      if (!present || copied !== version) {
        if (present) await vscode.workspace.fs.delete(target, { recursive: true, useTrash: false });
        await vscode.workspace.fs.copy(source, target, { overwrite: true });
        await extension.globalState.update(EXAMPLE_VERSION_KEY, version);
      }
      await vscode.commands.executeCommand('vscode.openFolder', target, { forceNewWindow: true });
      return true;
    },

  // The team store's password goes to secret storage, never to the settings (docs/history-store.md).
  'toolpin.history.setStorePassword': () => () => vscode.commands.executeCommand('toolpin.setCredential', STORE_PASSWORD_CREDENTIAL),

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
