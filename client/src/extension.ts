/**
 * The extension's entry: activation only. Everything else lives in the files it wires together.
 */
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { registerCommands } from './commands';
import { createLanguageClient } from './languageClient';

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const outputChannel = vscode.window.createOutputChannel('Toolpin', { log: true });
  context.subscriptions.push(outputChannel);
  registerCommands({ extension: context, outputChannel, client: () => client });
  client = createLanguageClient(context, outputChannel);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
