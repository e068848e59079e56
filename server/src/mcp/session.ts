/**
 * One live MCP session with one server definition: transport choice (stdio through
 * {@link ProcessTreeStdioTransport}; Streamable HTTP with a fallback to legacy SSE), credentials,
 * timeouts, and the translation of every failure into a {@link UnavailableReason}.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { z } from 'zod';
import { errorCode, isRecord } from '../core/json/values';
import { type CollectedListing, collectListing } from '../core/verify/listing';
import type { ServerDefinition } from '../core/verify/registry';
import { authHeaders, type CredentialResolver, type Redactor } from './credentials';
import { ProcessTreeStdioTransport, summarizeStderr } from './processTransport';
import { SessionError } from './sessionError';
import { AnswerLimit, MAX_ANSWER_BYTES } from './answerLimit';
import { DEFAULT_START_TIMEOUT_MS, LIMIT_HINTS, STOP_GRACE_MS } from '../engine/timeouts';
import { scanningResponse } from './wireScan';

/**
 * The SDK's client validates the structured output of a tool call against the tool's
 * `outputSchema`, and by default makes an Ajv instance with every format for that in each client
 * it constructs. Toolpin lists tools and never calls one (its listing is a plain `tools/list`
 * request, which compiles nothing), so each session would pay for an instance it never uses
 * (issue 13: five of them in a cold check). This provider makes nothing; were a tool ever called,
 * its output would read as invalid rather than unchecked.
 */
const NO_OUTPUT_VALIDATION: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'Toolpin does not validate tool output: it never calls a tool' }),
};

/**
 * How long a failed start waits for the rest of the server's standard error. A process that has
 * exited delivers it within milliseconds; the bound only matters when a grandchild holds the pipe.
 */
const STDERR_SETTLE_MS = 1000;

export interface SessionOptions {
  readonly credentials: CredentialResolver;
  readonly redactor: Redactor;
  /** Timeout of one request (initialize over HTTP, one page of tools/list). */
  readonly requestTimeoutMs: number;
  /**
   * A stdio server's start: spawn to its answer to `initialize` (engine/timeouts.ts
   * DEFAULT_START_TIMEOUT_MS when not given). HTTP servers use the request timeout.
   */
  readonly startTimeoutMs?: number;
  readonly maxPages: number;
  readonly clientVersion: string;
  /** Lines of server standard error and transport notes, already redacted. */
  readonly log: (line: string) => void;
  /** Called when the server says its tool list changed. */
  readonly onToolsChanged?: () => void;
  /** Called when the connection ends on its own (the server exited or the stream closed). */
  readonly onClosed?: () => void;
  /** Aborted when the owner shuts down: a server that is still starting is ended at once. */
  readonly signal?: AbortSignal;
}

export { SessionError } from './sessionError';

/** What the last HTTP response said, for telling 401 from 403 from an OAuth-only server. */
interface HttpObservation {
  status?: number;
  wwwAuthenticate?: string;
}

// Reads any JSON-RPC result as it is: Toolpin hashes what the server sent, and core/verify/listing.ts
// reads pages leniently, so the SDK's strict result validation must not run here.
const ANY_RESULT = z.any();

/** Environment variable and header names that hold credentials. */
const CREDENTIAL_NAME = /authorization|api-?key|token|secret|password|passwd|credential|private-?key/i;

/** The SDK's own "Connection closed" (the transport ended), as opposed to a server's -32000 error. */
function isLocalConnectionClosed(error: McpError): boolean {
  return error.code === ErrorCode.ConnectionClosed && error.message === 'MCP error -32000: Connection closed';
}

/** The stdio transport of a server definition. */
type StdioTransportDefinition = Extract<NonNullable<ServerDefinition['transport']>, { kind: 'stdio' }>;

export class McpSession {
  private closing = false;

  private constructor(
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly options: SessionOptions,
    /** Which transport was used, for logs: "stdio", "streamable-http" or "sse". */
    readonly transportName: string,
    /** HTTP: tools whose bytes read differently in different JSON readers, filled as answers arrive. */
    private readonly wireFindings: Map<string, string> = new Map(),
    /** HTTP: the bound on each answer's inflated size, and whether an answer passed it. */
    private readonly answerLimit?: AnswerLimit,
  ) {}

  /** The pid of a stdio server (the leader of its process group). */
  get pid(): number | undefined {
    return this.transport instanceof ProcessTreeStdioTransport ? this.transport.pid : undefined;
  }

  /** Connects and initializes. Throws {@link SessionError} with a classified reason. */
  static async open(definition: ServerDefinition, options: SessionOptions): Promise<McpSession> {
    if (definition.unusable || !definition.transport) {
      throw new SessionError('unusable-definition', `the definition of "${definition.name}" cannot be used: ${definition.unusable ?? 'no transport'}`);
    }
    const transport = definition.transport;
    // Values resolved from `${env:…}` and `${input:…}` (tokens, keys), and env values under a
    // credential-like name, are registered before the server starts: a server that prints its
    // token on standard error, in an error or in a tool description never gets it into any output.
    for (const value of definition.secrets ?? []) options.redactor.add(value);
    if (transport.kind === 'stdio') return McpSession.openStdio(definition, transport, options);

    const auth = await authHeaders(definition.auth, options.credentials, options.redactor);
    if ('missing' in auth) {
      throw new SessionError('credential-missing', `the credential ${auth.missing} is not set (set the environment variable or store it in the editor)`);
    }
    for (const value of Object.values(transport.headers)) options.redactor.add(value);
    const headers = { ...transport.headers, ...auth.headers };
    const sentCredential = Object.keys(auth.headers).length > 0 || Object.keys(transport.headers).some((name) => /authorization|api-?key|token/i.test(name));
    const observed: HttpObservation = {};
    // Every answer's bytes are scanned for duplicate members and lone surrogates before the SDK
    // parses them (wireScan.ts); the session reads the findings after each tools/list page.
    const wire = new Map<string, string>();
    const noteWire = (tool: string, reason: string): void => void (wire.has(tool) || wire.set(tool, reason));
    // Every answer's inflated size is bounded (answerLimit.ts); past the bound the transport is
    // closed, so a request waiting on an event stream fails now, and the session reports the size.
    let openTransport: Transport | undefined;
    const answerLimit = new AnswerLimit(MAX_ANSWER_BYTES, () => void openTransport?.close().catch(() => undefined));
    const oversized = (): SessionError => new SessionError('protocol-error', `the server's ${answerLimit.exceeded ?? 'answer is too large'}`);
    const observingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
      const response = await fetch(url, init);
      observed.status = response.status;
      observed.wwwAuthenticate = response.headers.get('www-authenticate') ?? undefined;
      return scanningResponse(answerLimit.wrap(response), noteWire);
    };
    let url: URL;
    try {
      url = new URL(transport.url);
    } catch {
      // Named as declared: a URL built from ${env:…} would otherwise print the variable's value.
      const declared = definition.declared?.kind === 'http' ? definition.declared.url : transport.url;
      throw new SessionError('unusable-definition', `"${options.redactor.redact(declared)}" is not a valid URL`);
    }
    try {
      const streamable = new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: observingFetch });
      openTransport = streamable;
      return await McpSession.initialize(definition, streamable, options, 'streamable-http', observed, wire, answerLimit);
    } catch (error) {
      if (answerLimit.exceeded !== undefined) throw oversized();
      // Servers of the 2024-11-05 protocol answer a POST with 4xx (often 404 or 405): try the
      // legacy HTTP+SSE transport before giving up, as the specification's compatibility note says.
      const status = observed.status;
      const legacyCandidate = status === 404 || status === 405 || status === 400;
      if (!legacyCandidate) throw McpSession.classify(error, definition, observed, undefined, sentCredential);
      options.log(`[${definition.name}] Streamable HTTP answered ${status}; trying the legacy SSE transport`);
      const legacyObserved: HttpObservation = {};
      const legacyFetch = async (target: string | URL, init?: RequestInit): Promise<Response> => {
        const response = await fetch(target, init);
        legacyObserved.status = response.status;
        legacyObserved.wwwAuthenticate = response.headers.get('www-authenticate') ?? undefined;
        return scanningResponse(answerLimit.wrap(response), noteWire);
      };
      try {
        const sse = new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch: (target, init) => legacyFetch(target, { ...init, headers: { ...init?.headers, ...headers } }) }, fetch: legacyFetch });
        openTransport = sse;
        return await McpSession.initialize(definition, sse, options, 'sse', legacyObserved, wire, answerLimit);
      } catch (legacyError) {
        if (answerLimit.exceeded !== undefined) throw oversized();
        throw McpSession.classify(legacyError, definition, legacyObserved, undefined, sentCredential);
      }
    }
  }

  /** Starts a stdio server in its own process group, connects and initializes. */
  private static async openStdio(definition: ServerDefinition, transport: StdioTransportDefinition, options: SessionOptions): Promise<McpSession> {
    for (const [name, value] of Object.entries(transport.env)) if (CREDENTIAL_NAME.test(name)) options.redactor.add(value);
    const stdio = new ProcessTreeStdioTransport({
      command: transport.command,
      args: transport.args,
      env: { ...getDefaultEnvironment(), ...transport.env },
      cwd: definition.cwd,
      killGraceMs: STOP_GRACE_MS,
      onStderr: (text) => {
        for (const line of text.split(/\r?\n/)) if (line.trim()) options.log(`[${definition.name} stderr] ${options.redactor.redact(line)}`);
      },
    });
    if (options.signal?.aborted) throw new SessionError('unreachable', 'Toolpin is shutting down');
    const onAbort = (): void => void stdio.close();
    options.signal?.addEventListener('abort', onAbort);
    try {
      return await McpSession.initialize(definition, stdio, options, 'stdio', {});
    } catch (error) {
      if (options.signal?.aborted) throw new SessionError('unreachable', 'Toolpin is shutting down');
      if (stdio.protocolFailure) throw new SessionError('protocol-error', stdio.protocolFailure);
      // The reason a server did not start is in what it wrote to standard error, which may
      // still be on its way when the failed write or the closed connection is noticed.
      await stdio.stderrSettled(STDERR_SETTLE_MS);
      const said = summarizeStderr(stdio.stderr);
      const stderr = said === undefined ? undefined : options.redactor.redact(said);
      const classified = McpSession.classify(error, definition, {}, stderr);
      const exit = stdio.exitedOnItsOwn;
      if (exit && classified.reason === 'crashed') {
        // "write EPIPE" and "the connection closed" are symptoms; the exit is what happened.
        const how = exit.signal ? `on signal ${exit.signal}` : `with code ${exit.code}`;
        throw new SessionError('crashed', `the server exited ${how} before it answered${stderr ? ` (server said: ${stderr})` : ''}`);
      }
      throw classified;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  private static async initialize(
    definition: ServerDefinition,
    transport: Transport,
    options: SessionOptions,
    transportName: string,
    observed: HttpObservation,
    wireFindings?: Map<string, string>,
    answerLimit?: AnswerLimit,
  ): Promise<McpSession> {
    // No capabilities are declared: a pin checker neither samples nor elicits. Some servers serve
    // more tools to clients that declare more (documented in docs/formats.md §5).
    const client = new Client({ name: 'toolpin', version: options.clientVersion }, { capabilities: {}, jsonSchemaValidator: NO_OUTPUT_VALIDATION });
    const session = new McpSession(client, transport, options, transportName, wireFindings, answerLimit);
    // A stdio server may be installed by a package manager on its first start (engine/timeouts.ts).
    const startTimeout = transportName === 'stdio' ? (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS) : options.requestTimeoutMs;
    client.onerror = (error) => options.log(`[${definition.name}] ${options.redactor.redact(error.message)}`);
    client.onclose = () => {
      if (!session.closing) options.onClosed?.();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolsChanged?.());
    try {
      await client.connect(transport, { timeout: startTimeout });
    } catch (error) {
      session.closing = true;
      await transport.close().catch(() => undefined);
      if (transportName === 'stdio' && error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new SessionError('timeout', `the server did not start (answer initialize) within ${startTimeout} ms; ${LIMIT_HINTS.start}`);
      }
      // The server answered initialize with a JSON-RPC error: its own message says why, and it
      // must not be read as "the connection closed" (the SDK's local ConnectionClosed shares the
      // code -32000 that servers use for their own errors).
      if (error instanceof McpError && error.code !== ErrorCode.RequestTimeout && !isLocalConnectionClosed(error)) {
        throw new SessionError('protocol-error', `the server refused to initialize: ${error.message}`);
      }
      throw error;
    }
    void observed;
    return session;
  }

  /** Lists every tool, following cursors. Throws {@link SessionError} on failure. */
  async listTools(definition: ServerDefinition): Promise<CollectedListing> {
    const stdio = this.transport instanceof ProcessTreeStdioTransport ? this.transport : undefined;
    stdio?.takeToolFindings();
    this.wireFindings.clear();
    // Tools whose bytes read differently in different JSON readers (duplicate members, lone
    // surrogates): the listing keeps them, but they can never be verified.
    const ambiguous = new Map<string, string>();
    try {
      const collected = await collectListing(
        async (cursor) => {
          const page = await this.client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ANY_RESULT, { timeout: this.options.requestTimeoutMs });
          for (const [name, reason] of [...(stdio?.takeToolFindings() ?? []), ...this.wireFindings]) if (!ambiguous.has(name)) ambiguous.set(name, reason);
          this.wireFindings.clear();
          return page;
        },
        { maxPages: this.options.maxPages },
      );
      if (ambiguous.size === 0) return collected;
      return { ...collected, tools: collected.tools.map((tool) => (ambiguous.has(tool.name) ? { ...tool, unpinnable: ambiguous.get(tool.name)! } : tool)) };
    } catch (error) {
      if (stdio?.protocolFailure) throw new SessionError('protocol-error', stdio.protocolFailure);
      if (this.answerLimit?.exceeded !== undefined) throw new SessionError('protocol-error', `the server's ${this.answerLimit.exceeded}`);
      throw McpSession.classify(error, definition, {});
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
  }

  /** Turns any failure into a reason and a message a user can act on. */
  static classify(error: unknown, definition: ServerDefinition, observed: HttpObservation, stderr?: string, sentCredential = false): SessionError {
    if (error instanceof SessionError) return error;
    const message = error instanceof Error ? error.message : String(error);
    // A JSON-RPC or HTTP error's numeric code, or a Node system error's code such as 'ENOENT'.
    const code = errorCode(error);
    const status = typeof code === 'number' && code >= 100 && code < 600 ? code : observed.status;
    const suffix = stderr ? ` (server said: ${stderr})` : '';
    if (status === 401) {
      if (!sentCredential) {
        // Nothing was sent, so this is not a rejected credential: the server wants authorization.
        const oauth = /resource_metadata|oauth/i.test(observed.wwwAuthenticate ?? '');
        const scheme = observed.wwwAuthenticate?.split(/[ ,]/)[0];
        return new SessionError(
          'authorization-required',
          `authorization required: the server answered HTTP 401${oauth ? ' and offers only OAuth, which Toolpin does not perform' : scheme ? ` and asks for ${scheme} authorization` : ''}; configure "auth" with a credentialRef`,
        );
      }
      return new SessionError('unauthorized', 'HTTP 401: the server rejected the credential');
    }
    if (status === 403) return new SessionError('forbidden', 'HTTP 403: the credential is not allowed to list tools');
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      const timeout = isRecord(error.data) ? error.data.timeout : undefined;
      return new SessionError('timeout', `the server did not answer within ${typeof timeout === 'number' ? `${timeout} ms` : 'the request timeout'}; ${LIMIT_HINTS.request}${suffix}`);
    }
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return new SessionError(definition.transport?.kind === 'stdio' ? 'crashed' : 'unreachable', `the connection closed${suffix}`);
    }
    // fetch() rejects with a TypeError whose cause is the system error.
    const cause = errorCode(isRecord(error) ? error.cause : undefined);
    if (code === 'ENOENT') return new SessionError('unreachable', `cannot start "${definition.transport?.kind === 'stdio' ? definition.transport.command : definition.name}": command not found`);
    if (code === 'EACCES') return new SessionError('unreachable', 'cannot start the server: permission denied');
    if (cause === 'ECONNREFUSED' || /ECONNREFUSED|fetch failed/.test(message)) return new SessionError('unreachable', `cannot connect: ${cause ?? 'connection refused'}`);
    if (cause === 'ENOTFOUND' || cause === 'EAI_AGAIN') return new SessionError('unreachable', `cannot resolve the host (${cause})`);
    if (typeof status === 'number' && status >= 400) return new SessionError('protocol-error', `HTTP ${status}: ${message}`);
    if (error instanceof SyntaxError || /JSON/.test(message)) return new SessionError('protocol-error', `the server's answer is not valid JSON-RPC: ${message}`);
    return new SessionError(definition.transport?.kind === 'stdio' ? 'crashed' : 'protocol-error', `${message}${suffix}`);
  }
}
