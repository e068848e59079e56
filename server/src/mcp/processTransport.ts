/**
 * A stdio transport for MCP that owns its whole process tree.
 *
 * The SDK's stdio transport kills only the direct child, so a server started through a wrapper
 * (`npx`, a shell script) leaves its real process behind. This transport starts the server with
 * `processTree.ts` (portably, as the leader of a new process group) and ends its whole tree there:
 * SIGTERM, then SIGKILL after a grace period, `taskkill /T /F` on Windows, and SIGKILL for every
 * tree still alive when this process exits. Standard error is captured in a bounded buffer for
 * diagnostics and never mixed into the protocol stream.
 *
 * Framing is done here, not by the SDK's read buffer: a line longer than {@link MAX_LINE_BYTES}
 * (a 20 MB description, or endless output without a newline) ends the session as a protocol error
 * ({@link ProcessTreeStdioTransport.protocolFailure}) instead of throwing out of a stream handler,
 * and each tools/list answer is scanned for duplicate members and lone surrogates
 * ({@link ProcessTreeStdioTransport.takeToolFindings}) before `JSON.parse` picks a reading.
 */
import type { ChildProcess } from 'node:child_process';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, isRecord } from '../core/json/values';
import { endProcessTree, spawnServerProcess, trackProcessTree, untrackProcessTree } from './processTree';
import { toolFindingsOf } from './wireScan';

export interface ProcessTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The complete environment of the server process. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Receives standard error text as it arrives (the caller redacts secrets before logging). */
  readonly onStderr?: (text: string) => void;
  /** How long to wait after SIGTERM before SIGKILL. */
  readonly killGraceMs?: number;
  /** The longest message line accepted, in bytes (default {@link MAX_LINE_BYTES}). */
  readonly maxLineBytes?: number;
}

const STDERR_TAIL_LIMIT = 16 * 1024;
/** The longest message line a server may send: the SDK's own read-buffer limit, 10 MiB. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** The longest stderr line a failure message quotes; the full text is in the server's log. */
const SUMMARY_LIMIT = 300;

/**
 * A line that states an error: `Error: …`, `TypeError: …`, `Error [ERR_MODULE_NOT_FOUND]: …`,
 * Python's `ModuleNotFoundError: …`, Java's `java.lang.IllegalStateException: …` (case matters:
 * a word that only ends in "error" is not one).
 */
const ERROR_LINE = /^(?:Uncaught\s+)?(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)\b(?:\s*\[[^\]]*\])?:\s*\S/;
/** The `error:` / `fatal:` / `panic:` prefixes of command-line tools, also after a program name. */
const PREFIXED_ERROR_LINE = /^(?:[\w./-]+:\s+)?(?:error|fatal|panic)(?:\[[^\]]*\])?:/i;

/**
 * Lines that never explain a failure on their own: stack frames, the source excerpt and caret
 * Node prints above an uncaught error, the braces of the error's properties, the runtime's
 * version footer, and the frames of a Python traceback.
 */
const NOISE_LINE = /^(?:at\s|\^+$|[{}[\]()]+[,;]?$|Node\.js v\d|node:internal\/|Require stack:|- |code: |requireStack: |Traceback \(most recent call last\):|File "|throw\s)/;

/**
 * The one line of a server's standard error that best says why it failed, or undefined when it
 * wrote nothing useful. A crashed Node server ends its output with a stack, the error's
 * properties and a version footer, so the LAST bytes say nothing ("} | | Node.js v20"); the
 * answer is the first line that reads as an error (for Node, Python and most CLIs that is the
 * line naming the cause), and failing that the last line that is not runtime noise (the most
 * recent thing the server said, after any start-up banner). The text is not redacted here.
 */
export function summarizeStderr(text: string): string | undefined {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const chosen = lines.find((line) => ERROR_LINE.test(line) || PREFIXED_ERROR_LINE.test(line)) ?? lines.filter((line) => !NOISE_LINE.test(line)).pop();
  if (chosen === undefined) return undefined;
  return chosen.length > SUMMARY_LIMIT ? `${chosen.slice(0, SUMMARY_LIMIT - 1)}…` : chosen;
}

/** How a server process ended. */
export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class ProcessTreeStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  /** The chunks of the line being read (no newline yet) and their total size. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderrTail = '';
  private closed = false;
  private failure: string | undefined;
  /** Tool names of tools/list answers whose bytes read differently in different readers, and why. */
  private toolFindings = new Map<string, string>();
  private closeRequested = false;
  private exit: (ProcessExit & { readonly requested: boolean }) | undefined;
  /** Resolves when the child's standard streams have all ended (or it never started). */
  private streamsEnded: Promise<void> = Promise.resolve();

  constructor(private readonly options: ProcessTransportOptions) {}

  /** The process id of the server (the process group leader), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Why the transport gave up on the server's output (a line too long), once it did. */
  get protocolFailure(): string | undefined {
    return this.failure;
  }

  /**
   * The tools of the tools/list answers received since the last call whose bytes hold a duplicate
   * member or a lone surrogate, by (last-wins) name, with the reason; clears them.
   */
  takeToolFindings(): Map<string, string> {
    const found = this.toolFindings;
    this.toolFindings = new Map();
    return found;
  }

  /** The last 16 KiB of the server's standard error. */
  get stderr(): string {
    return this.stderrTail;
  }

  /**
   * Set when the server exited on its own: it crashed or refused to start. An exit with a code
   * counts even when it was reported after this transport asked it to end: a process that failed
   * at start-up has often exited already, only its exit event has not been handled yet, and the
   * signals this transport sends end a process by signal, not with a code.
   */
  get exitedOnItsOwn(): ProcessExit | undefined {
    const exit = this.exit;
    if (!exit) return undefined;
    return !exit.requested || exit.code !== null ? { code: exit.code, signal: exit.signal } : undefined;
  }

  /**
   * Waits until everything the server wrote to standard error has been read, at most `timeoutMs`.
   * A server that fails at start-up often dies before its error text arrives here (the first
   * write to it fails with EPIPE first), so a failure message must wait for the streams to end.
   * The bound covers a grandchild that keeps the pipe open after the server itself exited.
   */
  async stderrSettled(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([this.streamsEnded, bound]);
    clearTimeout(timer);
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawnServerProcess(this.options.command, this.options.args, { cwd: this.options.cwd, env: this.options.env });
      this.child = child;
      this.streamsEnded = new Promise<void>((resolve) => child.once('close', () => resolve()));
      child.once('error', (error) => {
        if (child.pid !== undefined) untrackProcessTree(child.pid);
        reject(error);
        this.onerror?.(error);
        this.finish();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) trackProcessTree(child.pid, () => this.close());
        resolve();
      });
      // The leader exited on its own (a crash): report the close at once, then end the rest of the
      // group, so a grandchild it started does not outlive it.
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, requested: this.closeRequested };
        this.finish();
        void this.close();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_LIMIT);
        this.options.onStderr?.(text);
      });
    });
  }

  /** Splits standard output into lines without ever holding more than one bounded line. */
  private receive(chunk: Buffer): void {
    if (this.closed || this.failure) return;
    const limit = this.options.maxLineBytes ?? MAX_LINE_BYTES;
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (this.pendingBytes + piece.length > limit) return this.overflow(limit);
      const line = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.pending = [];
      this.pendingBytes = 0;
      this.deliver(line.toString('utf8').replace(/\r$/, ''));
      if (this.closed || this.failure) return;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    if (this.pendingBytes + rest.length > limit) return this.overflow(limit);
    this.pending.push(rest);
    this.pendingBytes += rest.length;
  }

  private overflow(limit: number): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.failure = `the server sent a message line longer than ${formatBytes(limit)}`;
    this.onerror?.(new Error(this.failure));
    // Ending the process closes the connection, which fails the request that is waiting.
    void this.close();
  }

  private deliver(line: string): void {
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      // A line that is not a JSON-RPC message: report it and keep reading the next ones.
      this.onerror?.(new Error(`the server wrote a line that is not a JSON-RPC message: ${errorMessage(error)}`));
      return;
    }
    if ('result' in message && isRecord(message.result) && Array.isArray(message.result.tools)) this.noteFindings(line);
    this.onmessage?.(message);
  }

  /** Records, by tool, the duplicate members and lone surrogates of a tools/list answer's bytes. */
  private noteFindings(line: string): void {
    for (const [name, reason] of toolFindingsOf(line)) if (!this.toolFindings.has(name)) this.toolFindings.set(name, reason);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.closed) {
        reject(new Error('the server process is not running'));
        return;
      }
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Ends the server's whole tree (processTree.ts): SIGTERM, then SIGKILL after the grace period.
   * Calls made while an earlier one is ending the tree wait for that one.
   */
  close(): Promise<void> {
    this.closing ??= this.endTree();
    return this.closing;
  }

  private closing: Promise<void> | undefined;

  private async endTree(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) {
      this.finish();
      return;
    }
    this.closeRequested = true;
    child.stdin?.end();
    await endProcessTree(child.pid, this.options.killGraceMs ?? 2000, (message) => this.onerror?.(new Error(message)));
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.onclose?.();
  }
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
