/**
 * A stdio transport for MCP that owns its whole process tree.
 *
 * The SDK's stdio transport kills only the direct child, so a server started through a wrapper
 * (`npx`, a shell script) leaves its real process behind. This transport starts the server with
 * `processTree.ts` (portably, as the leader of a new process group) and ends its whole tree there:
 * SIGTERM, then SIGKILL after a grace period, `taskkill /T /F` on Windows, and SIGKILL for every
 * tree still alive when this process exits. Standard error is captured in a bounded buffer for
 * diagnostics and never mixed into the protocol stream.
 */
import type { ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { endProcessTree, spawnServerProcess, trackProcessTree, untrackProcessTree } from './processTree';

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
}

const STDERR_TAIL_LIMIT = 16 * 1024;
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
  private readonly readBuffer = new ReadBuffer();
  private stderrTail = '';
  private closed = false;
  private closeRequested = false;
  private exit: (ProcessExit & { readonly requested: boolean }) | undefined;
  /** Resolves when the child's standard streams have all ended (or it never started). */
  private streamsEnded: Promise<void> = Promise.resolve();

  constructor(private readonly options: ProcessTransportOptions) {}

  /** The process id of the server (the process group leader), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
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
      child.stdout!.on('data', (chunk: Buffer) => {
        this.readBuffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.readBuffer.readMessage();
          } catch (error) {
            // A line that is not a JSON-RPC message: report it and keep reading the next ones.
            this.onerror?.(new Error(`the server wrote a line that is not a JSON-RPC message: ${(error as Error).message}`));
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_LIMIT);
        this.options.onStderr?.(text);
      });
    });
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
    this.readBuffer.clear();
    this.onclose?.();
  }
}
