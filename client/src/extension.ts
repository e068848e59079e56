/**
 * The extension's entry: activation only. Everything else lives in the files it wires together.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { registerCommands } from './commands';
import { followHistoryChanges, registerDispatchHistoryView } from './dispatchHistoryView';
import { createLanguageClient } from './languageClient';
import { modalPrompts, REVIEW_SCHEME, type RepinConfirmation, ReviewContentProvider, type ReviewPrompts } from './review';
import { registerStatusBar, type StatusBarState } from './statusBar';

let client: LanguageClient | undefined;

/** What `activate` returns to other extensions and to the in-host tests. */
export interface ToolpinApi {
  /** The running language client, for custom requests (`toolpin/pinDetails`, `toolpin/repin`, …). */
  readonly client: LanguageClient | undefined;
  /** Fires after "Review and Re-pin…" wrote a pin and showed its confirmation. */
  readonly onDidRepin: vscode.Event<RepinConfirmation>;
  /** What the status bar item shows now and the items its quick pick would list. */
  statusBar(): StatusBarState | undefined;
  /**
   * Replaces how a review asks before re-pinning (undefined: VS Code's modal dialog again). For
   * in-host tests, which cannot click a modal dialog.
   */
  setReviewPrompts(prompts: ReviewPrompts | undefined): void;
}

export async function activate(context: vscode.ExtensionContext): Promise<ToolpinApi> {
  const outputChannel = vscode.window.createOutputChannel('Toolpin', { log: true });
  context.subscriptions.push(outputChannel);
  const review = new ReviewContentProvider();
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, review));
  registerCommands({ extension: context, outputChannel, client: () => client, review });
  const history = registerDispatchHistoryView(context, () => client);
  client = createLanguageClient(context, outputChannel);
  const statusBar = registerStatusBar(context, client);
  followHistoryChanges(client, history);
  await client.start();
  return {
    get client() {
      return client;
    },
    onDidRepin: review.onDidRepin,
    statusBar,
    setReviewPrompts: (prompts) => {
      review.prompts = prompts ?? modalPrompts;
    },
  };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
