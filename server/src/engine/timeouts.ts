/**
 * How long listing a server may take, shared by the language server's settings, the CLI's
 * `--timeout` and the MCP inventory. A module without imports, so the CLI's small entry bundle
 * (dist/cli.js) can read it without loading the engine.
 */

/** The timeout of one request to a server when nothing says otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** How many servers are listed at the same time when nothing says otherwise (`toolpin.verify.concurrency`, `--concurrency`). */
export const DEFAULT_CONCURRENCY = 4;

/** Servers `toolpin check` lists at the same time unless --concurrency says otherwise: a one-shot batch run lists more at once. */
export const CHECK_CONCURRENCY = 8;

/**
 * How long a stdio server may take to start: from spawning it to its answer to `initialize`.
 * Separate from, and longer than, the request timeout because `npx -y pkg` (or uvx, pipx …)
 * installs the package on first use, which takes tens of seconds on a cold cache (issue 26).
 * HTTP servers install nothing: their answers keep the request timeout.
 */
export const DEFAULT_START_TIMEOUT_MS = 60_000;

/**
 * How long a stdio server gets to end after SIGTERM before SIGKILL. A package manager killed
 * mid-install leaves its cache broken for the next run, so it gets time to stop on its own.
 */
export const STOP_GRACE_MS = 5_000;

/** Where a user raises each limit: the editor setting and the CLI option, named in every timeout message. */
export const LIMIT_HINTS = {
  start: 'raise it with the setting toolpin.verify.startTimeoutMs or the CLI option --start-timeout',
  request: 'raise it with the setting toolpin.verify.requestTimeoutMs or the CLI option --timeout',
} as const;

/**
 * The bound on a whole listing (connect, initialize, every page) for a given request timeout:
 * three requests' worth, never under 30 s.
 */
export function overallTimeoutFor(requestTimeoutMs: number): number {
  return Math.max(requestTimeoutMs * 3, 30_000);
}
