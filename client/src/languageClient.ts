/**
 * Starts the Toolpin language server (`toolpin lsp --node-ipc`, from dist/cli.js bundled beside this
 * client: one bundle serves the CLI and the editor) over Node IPC and connects it to the Toolpin
 * document languages, the workspace trust and the secret storage.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type ClientCapabilities, LanguageClient, type LanguageClientOptions, type ServerOptions, type StaticFeature, TransportKind } from 'vscode-languageclient/node';
import { DidChangeTrustNotification, GetCredentialRequest } from '../../server/src/protocol';
import { DOCUMENT_SELECTOR } from './documentSelector';

/** The client id doubles as the settings prefix, so `toolpin.trace.server` traces this client. */
export const CLIENT_ID = 'toolpin';

/** The secret-storage key of a credential named by a connector's `credentialRef`. */
export function credentialKey(name: string): string {
  return `toolpin.credential.${name}`;
}

/**
 * Tells the server that this client answers toolpin/getCredential from VS Code's secret storage and
 * has the toolpin.reviewRepin command.
 */
class CredentialFeature implements StaticFeature {
  fillClientCapabilities(capabilities: ClientCapabilities): void {
    // Other features may have declared experimental capabilities of their own: they are kept.
    const declared = capabilities.experimental;
    capabilities.experimental = { ...(typeof declared === 'object' && declared !== null ? declared : {}), toolpinCredentials: true, toolpinReview: true };
  }
  getState(): { kind: 'static' } {
    return { kind: 'static' };
  }
  initialize(): void {}
  clear(): void {}
}

export function createLanguageClient(context: vscode.ExtensionContext, outputChannel: vscode.LogOutputChannel): LanguageClient {
  const serverModule = context.asAbsolutePath(path.join('dist', 'cli.js'));
  // vscode-languageclient forks the module with these arguments followed by `--node-ipc` and
  // `--clientProcessId=<pid>`, which `toolpin lsp` takes. The debug options go to node itself.
  const serverOptions: ServerOptions = {
    run: { module: serverModule, args: ['lsp'], transport: TransportKind.ipc },
    debug: { module: serverModule, args: ['lsp'], transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6011'] } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel,
    synchronize: { configurationSection: 'toolpin' },
    initializationOptions: () => ({ trusted: vscode.workspace.isTrusted, settings: vscode.workspace.getConfiguration('toolpin') }),
  };
  const client = new LanguageClient(CLIENT_ID, 'Toolpin', serverOptions, clientOptions);
  client.registerFeature(new CredentialFeature());
  client.onRequest(GetCredentialRequest, async ({ name }) => ({ value: (await context.secrets.get(credentialKey(name))) ?? null }));
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      void client.sendNotification(DidChangeTrustNotification, { trusted: true });
    }),
  );
  return client;
}
