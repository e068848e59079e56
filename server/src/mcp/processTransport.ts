/**
 * A stdio transport for MCP that owns its whole process tree.
 *
 * The SDK's stdio transport kills only the direct child, so a server started through a wrapper
 * (`npx`, a shell script) leaves its real process behind. This transport starts the server as the
 * leader of a new process group and ends the group: SIGTERM, then SIGKILL after a grace period,
 * and SIGKILL for every group still alive when this process exits. Standard error is captured in
 * a bounded buffer for diagnostics and never mixed into the protocol stream.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * True while a process group has a member that has not exited. Signal 0 also succeeds for zombies
 * (exited, not yet reaped by whoever adopted them), which would make every close wait out the
 * whole grace period where orphans are reaped slowly; on Linux the members' states are read from
 * /proc to tell them apart.
 */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pid && fields[0] !== 'Z') return true;
  }
  return false;
}

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

export class ProcessTreeStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly readBuffer = new ReadBuffer();
  private stderrTail = '';
  private closed = false;

  constructor(private readonly options: ProcessTransportOptions) {}

  /** The process id of the server (the process group leader), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last 16 KiB of the server's standard error. */
  get stderr(): string {
    return this.stderrTail;
  }

  start(): Promise<void> {
    installExitHook();
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        cwd: this.options.cwd,
        env: { ...this.options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        windowsHide: true,
      });
      this.child = child;
      child.once('error', (error) => {
        if (child.pid !== undefined) liveGroups.delete(child.pid);
        reject(error);
        this.onerror?.(error);
        this.finish();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) liveGroups.add(child.pid);
        resolve();
      });
      // The leader exited on its own (a crash): report the close at once, then end the rest of the
      // group, so a grandchild it started does not outlive it.
      child.once('exit', () => {
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

  /** Ends the whole process group: SIGTERM, then SIGKILL after the grace period. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) {
      this.finish();
      return;
    }
    const pid = child.pid;
    child.stdin?.end();
    killGroup(pid, 'SIGTERM');
    const grace = this.options.killGraceMs ?? 2000;
    const deadline = Date.now() + grace;
    while (groupAlive(pid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (groupAlive(pid)) killGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.readBuffer.clear();
    this.onclose?.();
  }
}
