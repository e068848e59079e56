/**
 * Runs request and notification handlers so that no exception ever reaches the connection: a
 * failing handler logs the error and answers with a fallback value, and a cancelled request
 * answers with the LSP cancellation error. The server keeps serving whatever one handler does.
 */
import { type CancellationToken, LSPErrorCodes, ResponseError } from 'vscode-languageserver';

export interface Logger {
  error(message: string): void;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error);
}

export async function runSafe<T>(
  logger: Logger,
  what: string,
  token: CancellationToken | undefined,
  fallback: T,
  work: () => T | Promise<T>,
): Promise<T | ResponseError<void>> {
  if (token?.isCancellationRequested) return cancelled();
  try {
    const result = await work();
    if (token?.isCancellationRequested) return cancelled();
    return result;
  } catch (error) {
    logSafely(logger, `toolpin: ${what} failed: ${describe(error)}`);
    return fallback;
  }
}

/** Runs a fire-and-forget task (a notification handler), logging instead of throwing. */
export function runSafeVoid(logger: Logger, what: string, work: () => void): void {
  try {
    work();
  } catch (error) {
    logSafely(logger, `toolpin: ${what} failed: ${describe(error)}`);
  }
}

function cancelled(): ResponseError<void> {
  return new ResponseError(LSPErrorCodes.RequestCancelled, 'request cancelled');
}

/**
 * Logs an error; a logger that cannot log (the connection's console once the connection is
 * disposed throws) never turns the failure being reported into another one.
 */
export function logSafely(logger: Logger, message: string): void {
  try {
    logger.error(message);
  } catch {
    // No client is left to read it.
  }
}

/**
 * Sends a notification without waiting for it. Sending fails only when the connection is closing
 * or closed (a publication racing shutdown; the connection then throws at once or rejects), and
 * then there is no client left to tell: the failure is dropped here instead of becoming an
 * uncaught exception or an unhandled rejection.
 */
export function notifySafely(send: () => Promise<void>): void {
  try {
    send().catch(() => undefined);
  } catch {
    // The connection is disposed: nobody to notify.
  }
}
