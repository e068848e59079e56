/**
 * The language server in this process, for feature tests, as compose-language-service tests its
 * features: two in-memory streams connect a vscode-languageserver connection (server side) to a
 * vscode-languageserver-protocol connection (client side), and `startServer(connection, runtime)`
 * from server/src/server.ts runs on it, with a runtime whose listing source is a FAKE that answers
 * from in-memory tool lists (test/support/fakeListingSource.ts: why a fake, and what it keeps of
 * the real contract). No process is started, no MCP server is contacted, a listing changes exactly
 * when the test changes it, so these tests are fast and deterministic. The spawned-bundle tests
 * (test/support/lspClient.ts, real MCP servers) stay as the outer layer.
 *
 * The client side is the same typed session API the spawned-bundle tests use
 * (test/support/lspSession.ts).
 *
 * Two things the in-process connection must avoid, because vscode-languageserver/node would end
 * the test process: the `exit` notification (its handler calls process.exit), and a numeric
 * `processId` at initialize (it starts a watchdog interval that is never cleared). `stop()` sends
 * `shutdown` only and then disposes both ends.
 *
 * `startServer` registers no process-wide listener (the unhandledRejection handler belongs to the
 * process entry, server/src/main.ts), so a stray rejection in a test file that starts these
 * servers fails the run as any other would, however many servers the file starts.
 */
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { createConnection, StreamMessageReader as ServerReader, StreamMessageWriter as ServerWriter } from 'vscode-languageserver/node';
import {
  createProtocolConnection,
  DidChangeConfigurationNotification,
  LogMessageNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { nodeFileSystem } from '../../server/src/engine/nodeFileSystem';
import type { ServerRuntime } from '../../server/src/runtime';
import { startServer } from '../../server/src/server';
import { FakeServers, type FakeServerSpec } from './fakeListingSource';
import { type ClientOptions, createSession, initializeClient, type LspSession } from './lspSession';

export interface InProcessOptions extends ClientOptions {
  /** The fake MCP servers, by the name the workspace gives them: a tool list, or a failure. */
  servers?: Readonly<Record<string, FakeServerSpec>>;
  /** The server's environment (default: this process's, with an empty config home, so no trust record of the user's is read). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The server's clock (default: Date.now). */
  now?: () => number;
}

export interface InProcessServer extends LspSession {
  /** The fake servers: change a listing with `setTools` to drive drift; `current.calls` counts. */
  readonly servers: FakeServers;
  /** Every window/logMessage the server sent, in order (console.log/warn/error). */
  readonly logs: string[];
  /** Sends new settings as an editor pushes them (workspace/didChangeConfiguration). */
  configure(settings: unknown): void;
  stop(): Promise<void>;
}

export async function startInProcessServer(options: InProcessOptions = {}): Promise<InProcessServer> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const servers = new FakeServers(options.servers ?? {});

  // Every timer the server arms is tracked, so that stop() leaves none behind.
  const timers = new Set<NodeJS.Timeout>();
  const runtime: ServerRuntime = {
    setTimeout: (callback, milliseconds) => {
      const handle = setTimeout(() => {
        timers.delete(handle);
        callback();
      }, milliseconds);
      timers.add(handle);
      return {
        dispose: () => {
          clearTimeout(handle);
          timers.delete(handle);
        },
      };
    },
    fileSystem: nodeFileSystem,
    // A config home that does not exist: no trust record of the user's is read.
    env: options.env ?? { ...process.env, XDG_CONFIG_HOME: path.join(tmpdir(), `toolpin-in-process-no-config-${process.pid}`) },
    now: options.now ?? (() => Date.now()),
    createListingSource: servers.createListingSource,
  };

  const serverConnection = createConnection(new ServerReader(toServer), new ServerWriter(toClient));
  startServer(serverConnection, runtime);

  const connection = createProtocolConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  const logs: string[] = [];
  connection.onNotification(LogMessageNotification.type, (params) => {
    logs.push(params.message);
  });
  const session = createSession(connection, () => `; server log:\n${logs.join('\n')}`);
  connection.listen();
  // No processId: vscode-languageserver would watch it with an interval that outlives the test.
  await initializeClient(connection, options, null);

  let stopped = false;
  return {
    ...session,
    servers,
    logs,
    configure: (settings) => void connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { toolpin: settings } }),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      try {
        await connection.sendRequest(ShutdownRequest.type);
      } finally {
        // Never `exit`: vscode-languageserver/node answers it with process.exit.
        connection.dispose();
        serverConnection.dispose();
        toServer.end();
        toClient.end();
        for (const handle of timers) clearTimeout(handle);
        timers.clear();
      }
    },
  };
}
