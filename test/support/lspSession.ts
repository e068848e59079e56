/**
 * The client side every LSP test speaks, whatever the server runs in: the built bundle as a child
 * process (test/support/lspClient.ts) or `startServer` in this process (inProcessServer.ts). One
 * typed API over a vscode-languageserver-protocol connection: initialize as an editor would, open
 * and change documents, wait for diagnostics with a predicate and a timeout (never a fixed sleep),
 * and the feature requests with their typed request objects. Toolpin's own requests are sent with
 * the request types of server/src/protocol.ts (`connection.sendRequest(PinDetailsRequest, …)`),
 * never by method name.
 */
import {
  type CodeAction,
  CodeActionRequest,
  type CodeLens,
  CodeLensRequest,
  type Command,
  type CompletionItem,
  CompletionRequest,
  type Diagnostic,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  type Hover,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  type InitializeResult,
  type Position,
  type ProtocolConnection,
  PublishDiagnosticsNotification,
  type PublishDiagnosticsParams,
  type Range,
  type RegistrationParams,
  RegistrationRequest,
  type TextDocumentContentChangeEvent,
  UnregistrationRequest,
} from 'vscode-languageserver-protocol';

export interface LspSession {
  readonly connection: ProtocolConnection;
  /** Every publication received so far, in order. */
  readonly published: PublishDiagnosticsParams[];
  open(uri: string, text: string, languageId?: string): void;
  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): void;
  close(uri: string): void;
  /** Resolves with the first publication for `uri` that satisfies `accept`, or rejects on timeout. */
  diagnostics(uri: string, accept?: (params: PublishDiagnosticsParams) => boolean, timeoutMs?: number): Promise<PublishDiagnosticsParams>;
  /** The last publication for `uri`, if any. */
  latest(uri: string): PublishDiagnosticsParams | undefined;
  hover(uri: string, position: Position): Promise<Hover | null>;
  /** The markdown (or plain) text of the hover at `position`; '' when there is none. */
  hoverText(uri: string, position: Position): Promise<string>;
  /** Code actions for `diagnostics` at `range` (bare commands left out), optionally of the kinds `only`. */
  codeActions(uri: string, range: Range, diagnostics: Diagnostic[], only?: string[]): Promise<CodeAction[]>;
  /** Completion items at `position` (a list's items, or the array the server sent). */
  completion(uri: string, position: Position): Promise<CompletionItem[]>;
  codeLens(uri: string): Promise<CodeLens[]>;
}

export interface ClientOptions {
  settings?: unknown;
  /** Whether the client answers workspace/configuration (pull) besides sending settings at start. */
  configuration?: boolean;
  rootUri?: string;
  capabilities?: { workspace?: Record<string, unknown>; textDocument?: Record<string, unknown>; experimental?: Record<string, unknown> };
  /**
   * What the client says about workspace trust, as VS Code does (default: trusted, since tests
   * run their own fixture servers); `null` says nothing, as Neovim and most clients do.
   */
  trusted?: boolean | null;
  /**
   * Whether client/registerCapability requests are accepted (default: not answered, as a client
   * that refuses them; test/lsp/firstOpen.test.ts relies on that).
   */
  acceptRegistrations?: boolean;
  /** Called with every accepted registration request's parameters (with `acceptRegistrations`). */
  onRegistration?: (params: RegistrationParams) => void;
}

/**
 * Sends initialize and initialized as an editor does, after installing the handlers an editor
 * has: workspace/configuration answers with `settings`, and capability registrations are accepted
 * when `acceptRegistrations` says so.
 * `processId` is the client's process id the server may watch (null: none to watch).
 */
export async function initializeClient(connection: ProtocolConnection, options: ClientOptions, processId: number | null): Promise<InitializeResult> {
  connection.onRequest('workspace/configuration', () => [options.settings ?? {}]);
  if (options.acceptRegistrations) {
    connection.onRequest(RegistrationRequest.type, (params) => {
      options.onRegistration?.(params);
    });
    connection.onRequest(UnregistrationRequest.type, () => undefined);
  }
  const result = await connection.sendRequest(InitializeRequest.type, {
    processId,
    rootUri: options.rootUri ?? null,
    capabilities: {
      workspace: { configuration: options.configuration ?? false, ...options.capabilities?.workspace },
      // Markdown hovers, as VS Code declares; a test of a plain-text client passes its own hover.
      textDocument: { publishDiagnostics: { versionSupport: true }, hover: { contentFormat: ['markdown', 'plaintext'] }, ...options.capabilities?.textDocument },
      ...(options.capabilities?.experimental ? { experimental: options.capabilities.experimental } : {}),
    },
    initializationOptions: {
      ...(options.trusted === null ? {} : { trusted: options.trusted ?? true }),
      ...(options.settings ? { settings: options.settings } : {}),
    },
  });
  await connection.sendNotification(InitializedNotification.type, {});
  return result;
}

/**
 * The session API over a connection that is listening. Install before initializing, so that no
 * publication is missed. `context` adds what helps a timeout message (the server's stderr).
 */
export function createSession(connection: ProtocolConnection, context: () => string = () => ''): LspSession {
  const published: PublishDiagnosticsParams[] = [];
  const waiters: Array<{ uri: string; accept: (params: PublishDiagnosticsParams) => boolean; resolve: (params: PublishDiagnosticsParams) => void }> = [];
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.push(params);
    for (const waiter of [...waiters]) {
      if (waiter.uri === params.uri && waiter.accept(params)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(params);
      }
    }
  });
  const hover = (uri: string, position: Position): Promise<Hover | null> => connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position });
  return {
    connection,
    published,
    open: (uri, text, languageId = 'jsonc') =>
      void connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId, version: 1, text } }),
    change: (uri, version, contentChanges) =>
      void connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges }),
    close: (uri) => void connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } }),
    diagnostics: (uri, accept = () => true, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const already = published.find((params) => params.uri === uri && accept(params));
        if (already) return resolve(already);
        const timer = setTimeout(() => {
          const index = waiters.findIndex((waiter) => waiter.resolve === done);
          if (index !== -1) waiters.splice(index, 1);
          const last = published.filter((params) => params.uri === uri).at(-1);
          reject(new Error(`no matching diagnostics for ${uri} within ${timeoutMs} ms; last published: ${last ? JSON.stringify(last.diagnostics.map((d) => [d.code, d.message])) : 'nothing'}${context()}`));
        }, timeoutMs);
        const done = (params: PublishDiagnosticsParams): void => {
          clearTimeout(timer);
          resolve(params);
        };
        waiters.push({ uri, accept, resolve: done });
      }),
    latest: (uri) => published.filter((params) => params.uri === uri).at(-1),
    hover,
    hoverText: async (uri, position) => {
      const found = await hover(uri, position);
      if (!found) return '';
      const contents = found.contents;
      if (typeof contents === 'string') return contents;
      if (Array.isArray(contents)) return contents.map((part) => (typeof part === 'string' ? part : part.value)).join('\n');
      return contents.value;
    },
    codeActions: async (uri, range, diagnostics, only) => {
      const actions = await connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range, context: { diagnostics, ...(only ? { only } : {}) } });
      // A bare Command has a string `command`; a CodeAction's `command`, if any, is an object.
      return (actions ?? []).filter((action): action is CodeAction => typeof (action as Command).command !== 'string');
    },
    completion: async (uri, position) => {
      const result = await connection.sendRequest(CompletionRequest.type, { textDocument: { uri }, position });
      if (!result) return [];
      return Array.isArray(result) ? result : result.items;
    },
    codeLens: async (uri) => (await connection.sendRequest(CodeLensRequest.type, { textDocument: { uri } })) ?? [],
  };
}

/** The position `delta` UTF-16 units into the `n`-th (0-based) occurrence of `needle` in `text`. */
export function positionOf(text: string, needle: string, delta = 0, n = 0): Position {
  let at = -1;
  for (let i = 0; i <= n; i++) {
    at = text.indexOf(needle, at + 1);
    if (at === -1) throw new Error(`the text has fewer than ${n + 1} occurrence(s) of ${JSON.stringify(needle)}`);
  }
  const before = text.slice(0, at + delta).split('\n');
  return { line: before.length - 1, character: before.at(-1)!.length };
}

/** The text a range covers in `text` (lines split on \n, characters in UTF-16 units). */
export function textAt(text: string, range: Range): string {
  const lines = text.split('\n');
  const offsetOf = (position: Position): number => lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  return text.slice(offsetOf(range.start), offsetOf(range.end));
}

/** Applies LSP text edits to a text as an editor does (positions in UTF-16 units, against the original text). */
export function applyTextEdits(text: string, edits: ReadonlyArray<{ range: Range; newText: string }>): string {
  const lines = text.split('\n');
  const offsetOf = (position: Position): number => lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
  let result = text;
  for (const edit of [...edits].sort((a, b) => offsetOf(b.range.start) - offsetOf(a.range.start))) {
    result = result.slice(0, offsetOf(edit.range.start)) + edit.newText + result.slice(offsetOf(edit.range.end));
  }
  return result;
}
