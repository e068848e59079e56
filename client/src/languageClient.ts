/**
 * Starts the Toolpin language server (`toolpin lsp --node-ipc`, from dist/cli.js bundled beside this
 * client: one bundle serves the CLI and the editor) over Node IPC and connects it to the Toolpin
 * document languages, the workspace trust and the secret storage.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { type ClientCapabilities, LanguageClient, type LanguageClientOptions, type ServerOptions, type StaticFeature, TransportKind } from 'vscode-languageclient/node';
import { DidChangeTrustNotification, GetCredentialRequest } from '../../server/src/protocol';

/** The client id doubles as the settings prefix, so `toolpin.trace.server` traces this client. */
export const CLIENT_ID = 'toolpin';

/**
 * Toolpin's two JSON kinds, and TypeScript and JavaScript modules for the pins written in code
 * (`defineConnector`, `mcpInvoke$`; docs/formats.md "Source files"). The server reads a module
 * only when its text names a pin module, so ordinary modules cost a substring search.
 */
export const DOCUMENT_SELECTOR = [
  { language: 'toolpin-blueprint' },
  { language: 'toolpin-connector' },
  { scheme: 'file', language: 'typescript' },
  { scheme: 'file', language: 'typescriptreact' },
  { scheme: 'file', language: 'javascript' },
  { scheme: 'file', language: 'javascriptreact' },
  // ObjectStack's compiled stack stays a JSON document (VS Code's JSON support keeps working on it).
  { scheme: 'file', language: 'json', pattern: '**/objectstack.json' },
  // The repository's policy: its own mistakes (TP413) are shown where it is edited.
  { scheme: 'file', pattern: '**/.toolpin/policy.jsonc' },
];

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
