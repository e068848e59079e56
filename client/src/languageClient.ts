/**
 * Starts the Toolpin language server (dist/server.js, bundled beside this client) over Node IPC
 * and connects it to the Toolpin document languages.
 */
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { LanguageClient, type LanguageClientOptions, type ServerOptions, TransportKind } from 'vscode-languageclient/node';

/** The client id doubles as the settings prefix, so `toolpin.trace.server` traces this client. */
export const CLIENT_ID = 'toolpin';

export const DOCUMENT_SELECTOR = [
  { language: 'toolpin-blueprint' },
  { language: 'toolpin-connector' },
];

export function createLanguageClient(context: vscode.ExtensionContext, outputChannel: vscode.LogOutputChannel): LanguageClient {
  const serverModule = context.asAbsolutePath(path.join('dist', 'server.js'));
  const serverOptions: ServerOptions = {
    run: { module: serverModule, transport: TransportKind.ipc },
    debug: { module: serverModule, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6011'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel,
    synchronize: { configurationSection: 'toolpin' },
  };
  return new LanguageClient(CLIENT_ID, 'Toolpin', serverOptions, clientOptions);
}
