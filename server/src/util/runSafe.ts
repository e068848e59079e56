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
    logger.error(`toolpin: ${what} failed: ${describe(error)}`);
    return fallback;
  }
}

/** Runs a fire-and-forget task (a notification handler), logging instead of throwing. */
export function runSafeVoid(logger: Logger, what: string, work: () => void): void {
  try {
    work();
  } catch (error) {
    logger.error(`toolpin: ${what} failed: ${describe(error)}`);
  }
}

function cancelled(): ResponseError<void> {
  return new ResponseError(LSPErrorCodes.RequestCancelled, 'request cancelled');
}
