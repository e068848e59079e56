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
 * Time is virtual (test/support/virtualClock.ts): the server's timers run on a clock the test
 * holds, debounces fire as soon as the process is idle, and longer timers (the history poll) only
 * when the test lets time pass with `clock.advance(ms)`. Waits are for events: a publication
 * (`diagnostics`), or any notification the test did not handle itself (`notification`). The only
 * wall-clock timers left are the bounds after which such a wait fails.
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
  createMessageConnection,
  type MessageConnection,
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
import { VirtualClock } from './virtualClock';

export interface InProcessOptions extends ClientOptions {
  /** The fake MCP servers, by the name the workspace gives them: a tool list, or a failure. */
  servers?: Readonly<Record<string, FakeServerSpec>>;
  /** The server's environment (default: this process's, with an empty config home, so no trust record of the user's is read). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The server's clock (default: the virtual clock's time, `clock.now`). */
  now?: () => number;
}

export interface InProcessServer extends LspSession {
  /** The fake servers: change a listing with `setTools` to drive drift; `current.calls` counts. */
  readonly servers: FakeServers;
  /** Every window/logMessage the server sent, in order (console.log/warn/error). */
  readonly logs: string[];
  /** Sends new settings as an editor pushes them (workspace/didChangeConfiguration). */
  configure(settings: unknown): void;
  /** The clock of the server's timers: `advance(ms)` lets virtual time pass. */
  readonly clock: VirtualClock;
  /**
   * The first notification `method` (among those the test registered no handler of its own for)
   * that `accept`s (its params, and its index among that method's notifications), already received
   * or the next to come; rejects after `timeoutMs`.
   */
  notification<P>(method: string, accept?: (params: P, index: number) => boolean, timeoutMs?: number): Promise<P>;
  /** How many notifications `method` arrived so far (those the test registered no handler for). */
  notificationCount(method: string): number;
  stop(): Promise<void>;
}

export async function startInProcessServer(options: InProcessOptions = {}): Promise<InProcessServer> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const servers = new FakeServers(options.servers ?? {});

  // Every timer the server arms is on the virtual clock, so that stop() leaves none behind.
  const clock = new VirtualClock();
  const runtime: ServerRuntime = {
    setTimeout: clock.setTimeout,
    fileSystem: nodeFileSystem,
    // A config home that does not exist: no trust record of the user's is read.
    env: options.env ?? { ...process.env, XDG_CONFIG_HOME: path.join(tmpdir(), `toolpin-in-process-no-config-${process.pid}`) },
    now: options.now ?? clock.now,
    createListingSource: servers.createListingSource,
  };

  const serverConnection = createConnection(new ServerReader(toServer), new ServerWriter(toClient));
  startServer(serverConnection, runtime);

  // What createProtocolConnection makes, typed as the message connection it is, whose star handler
  // (notifications nobody else handles) the recorder below uses.
  const connection = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
  const logs: string[] = [];
  connection.onNotification(LogMessageNotification.type, (params) => {
    logs.push(params.message);
  });
  const session = createSession(connection, () => `; server log:\n${logs.join('\n')}`);
  const notifications = recordNotifications(connection);
  connection.listen();
  // No processId: vscode-languageserver would watch it with an interval that outlives the test.
  await initializeClient(connection, options, null);

  let stopped = false;
  return {
    ...session,
    servers,
    logs,
    configure: (settings) => void connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { toolpin: settings } }),
    clock,
    notification: notifications.wait,
    notificationCount: notifications.count,
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
        clock.dispose();
      }
    },
  };
}

interface NotificationRecorder {
  wait<P>(method: string, accept?: (params: P, index: number) => boolean, timeoutMs?: number): Promise<P>;
  count(method: string): number;
}

/**
 * Records every notification no specific handler takes (vscode-jsonrpc gives those to the star
 * handler), installed before initialize so that none is missed, and answers waits on them.
 */
function recordNotifications(connection: MessageConnection): NotificationRecorder {
  const received: Array<{ readonly method: string; readonly params: unknown; readonly index: number }> = [];
  const count = (method: string): number => received.filter((entry) => entry.method === method).length;
  const waiters = new Set<{ readonly method: string; readonly accept: (params: unknown, index: number) => boolean; readonly resolve: (params: unknown) => void }>();
  connection.onNotification((method: string, params: unknown) => {
    const index = count(method);
    received.push({ method, params, index });
    for (const waiter of [...waiters]) {
      if (waiter.method === method && waiter.accept(params, index)) {
        waiters.delete(waiter);
        waiter.resolve(params);
      }
    }
  });
  return {
    wait: <P>(method: string, accept: (params: P, index: number) => boolean = () => true, timeoutMs = 10_000): Promise<P> =>
      new Promise<P>((resolve, reject) => {
        // The params of a method are what its sender sends: the caller names their type.
        const accepts = (params: unknown, index: number): boolean => accept(params as P, index);
        const already = received.find((entry) => entry.method === method && accepts(entry.params, entry.index));
        if (already) return resolve(already.params as P);
        const waiter = {
          method,
          accept: accepts,
          resolve: (params: unknown) => {
            clearTimeout(timer);
            resolve(params as P);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no ${method} notification within ${timeoutMs} ms (${received.filter((entry) => entry.method === method).length} received, none accepted)`));
        }, timeoutMs);
        waiters.add(waiter);
      }),
    count,
  };
}
