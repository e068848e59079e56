/**
 * The extension's entry: activation only. Everything else lives in the files it wires together.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { registerCommands } from './commands';
import { followHistoryChanges, registerDispatchHistoryView } from './dispatchHistoryView';
import { createLanguageClient } from './languageClient';
import { REVIEW_SCHEME, ReviewContentProvider } from './review';
import { registerStatusBar } from './statusBar';

let client: LanguageClient | undefined;

/** What `activate` returns to other extensions and to the in-host tests. */
export interface ToolpinApi {
  /** The running language client, for custom requests (`toolpin/pinDetails`, `toolpin/repin`, …). */
  readonly client: LanguageClient | undefined;
}

export async function activate(context: vscode.ExtensionContext): Promise<ToolpinApi> {
  const outputChannel = vscode.window.createOutputChannel('Toolpin', { log: true });
  context.subscriptions.push(outputChannel);
  const review = new ReviewContentProvider();
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, review));
  registerCommands({ extension: context, outputChannel, client: () => client, review });
  const history = registerDispatchHistoryView(context, () => client);
  client = createLanguageClient(context, outputChannel);
  registerStatusBar(context, client);
  followHistoryChanges(client, history);
  await client.start();
  return {
    get client() {
      return client;
    },
  };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
