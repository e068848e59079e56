/**
 * How long listing a server may take, shared by the language server's settings, the CLI's
 * `--timeout` and the MCP inventory. A module without imports, so the CLI's small entry bundle
 * (dist/cli.js) can read it without loading the engine.
 */

/** The timeout of one request to a server when nothing says otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The bound on a whole listing (connect, initialize, every page) for a given request timeout:
 * three requests' worth, never under 30 s.
 */
export function overallTimeoutFor(requestTimeoutMs: number): number {
  return Math.max(requestTimeoutMs * 3, 30_000);
}
