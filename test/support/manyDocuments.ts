/**
 * A workspace of many connector documents for the open/close scaling test (test/lsp/manyDocuments)
 * and its benchmark (bench/manyDocuments.bench.ts): each connector declares its own HTTP server on
 * a port nothing listens on, and the editor opens every one, then closes every one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { HoverRequest } from 'vscode-languageserver-protocol';
import type { TestServer } from './lspClient';

/** The text of the `index`-th connector: one server, one pinned tool. */
export function connectorText(index: number): string {
  return `{
  "name": "tools_${index}",
  "type": "api",
  "provider": "mcp",
  "providerConfig": {
    "transport": { "kind": "http", "url": "http://127.0.0.1:9/mcp/${index}" },
    "include": ["search"],
    "toolsSnapshot": { "search": "sha256:${index.toString(16).padStart(64, '0')}" }
  },
  "auth": { "type": "none" }
}
`;
}

/** Writes `count` connector files under `workspace/connectors/`; returns their paths. */
export function writeConnectors(workspace: string, count: number): string[] {
  const folder = path.join(workspace, 'connectors');
  mkdirSync(folder, { recursive: true });
  const files: string[] = [];
  for (let index = 0; index < count; index++) {
    const file = path.join(folder, `c${index}.connector.jsonc`);
    writeFileSync(file, connectorText(index));
    files.push(file);
  }
  return files;
}

export interface OpenCloseTiming {
  /** From the first open until the server answered a request sent after the last open. */
  readonly openMs: number;
  /** From the first close until the server answered a request sent after the last close. */
  readonly closeMs: number;
  /** From the first close until a request sent once the closes were answered is answered too. */
  readonly settledMs: number;
}

/** A request every server answers: a hover at the start of a document. */
function ask(server: TestServer, uri: string): Promise<unknown> {
  return server.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 1, character: 4 } });
}

/**
 * Opens every file, waits until the server answers, closes every file and waits again; the
 * server must then also answer a second request (the work a close schedules runs in timers after
 * the first answer, so the second one waits behind it).
 */
export async function openAndCloseAll(server: TestServer, files: readonly string[], timeoutMs: number): Promise<OpenCloseTiming> {
  const uris = files.map((file) => `file://${file}`);
  const answered = async (what: string): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the server did not answer within ${timeoutMs} ms ${what}`)), timeoutMs)));
    try {
      await Promise.race([ask(server, uris[0]!), timeout]);
      // Timers the notifications scheduled run now; a request behind them shows they are done.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await Promise.race([ask(server, uris[0]!), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  const started = Date.now();
  uris.forEach((uri, index) => server.open(uri, connectorText(index)));
  await answered(`after ${uris.length} documents were opened`);
  const opened = Date.now();
  for (const uri of uris) server.close(uri);
  await answered(`after ${uris.length} documents were closed`);
  const closed = Date.now();
  await answered('a while after the closes');
  return { openMs: opened - started, closeMs: closed - opened, settledMs: Date.now() - opened };
}
