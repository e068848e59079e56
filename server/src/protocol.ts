/**
 * The one typed file of Toolpin's custom LSP messages, shared by the server and every client.
 * It imports only `vscode-languageserver-protocol` types, so the VS Code client can import it
 * without pulling server code. Each message says who sends it.
 */
import { RequestType0 } from 'vscode-languageserver-protocol';

/** Settings the server reads under the `toolpin` section (workspace/configuration). */
export interface ToolpinSettings {
  validate: {
    /** Check documents and publish problems. */
    enable: boolean;
    /** Milliseconds between the last change of a document and its check. */
    debounceMs: number;
  };
}

export const DEFAULT_SETTINGS: ToolpinSettings = {
  validate: { enable: true, debounceMs: 200 },
};

/** What the server reports about itself: used by clients for status displays and by tests. */
export interface ServerInfoResult {
  /** The Toolpin version the server was built from. */
  version: string;
  /** Problem codes the server can publish, with their default severity and title. */
  problemCodes: Array<{ code: string; severity: string; title: string }>;
}

/** Client → server: describe the server. */
export const ServerInfoRequest = new RequestType0<ServerInfoResult, void>('toolpin/serverInfo');
