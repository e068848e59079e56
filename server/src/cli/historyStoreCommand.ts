/**
 * The store side of `toolpin history` (issue 27, docs/history-store.md):
 *
 * - `toolpin history ingest --store URL LOG…` projects logs (`-`: standard input) into the store;
 * - `toolpin history prune --store URL --before DATE` deletes the dispatches before DATE;
 * - `toolpin history --store URL [--tool …]` reads the model from the store
 *   ({@link openStoreModel}); the rest of the command (pins, live hashes, report) is the file
 *   reader's.
 *
 * Exit status: 0 done; 2 the store is down, refuses the credentials, has a newer schema, or a
 * usage error, or a log could not be read (the others are still ingested). Malformed and torn
 * lines are reported with their position and never change the status.
 */
import * as path from 'node:path';
import type * as Pg from 'pg';
import type { Execution, HistoryKey } from '../core/history/history';
import { errorCode, errorMessage } from '../core/json/values';
import { openStore, type OpenStore, redactUrl, storeFailure } from '../store/historyStore';
import { ingestSource, type IngestInput, type IngestResult, pruneStore } from '../store/storeIngest';
import { allExecutionsOf, StoreModel } from '../store/storeModel';
import type { CliIo } from './io';

const PROBLEMS_SHOWN = 10;
/** Transactions that lost a deadlock or a serialization race are run again, this many times. */
const RETRIES = 5;
/** The name standard input has in the store. */
export const STDIN_SOURCE = '(stdin)';

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

function display(cwd: string, file: string): string {
  return path.relative(cwd, file).split(path.sep).join('/') || '.';
}

async function withStore<T>(io: CliIo, command: string, url: string, create: boolean, run: (store: OpenStore) => Promise<T>): Promise<T | 2> {
  let store: OpenStore;
  try {
    store = await openStore(url, { create });
  } catch (error) {
    io.stderr(`toolpin ${command}: ${errorMessage(storeFailure(url, error))}\n`);
    return 2;
  }
  try {
    return await run(store);
  } catch (error) {
    io.stderr(`toolpin ${command}: ${errorMessage(storeFailure(url, error))}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

function isRetryable(error: unknown): boolean {
  const code = errorCode(error);
  return code === '40P01' || code === '40001';
}

async function ingestWithRetries(client: Pg.Client, source: string, input: IngestInput): Promise<IngestResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ingestSource(client, source, input);
    } catch (error) {
      if (!isRetryable(error) || attempt >= RETRIES || input.kind === 'stream') throw error;
    }
  }
}

function reportIngest(io: CliIo, result: IngestResult): void {
  for (const found of result.problems.slice(0, PROBLEMS_SHOWN)) {
    io.stderr(`toolpin history ingest: ${result.source}:${found.line} (byte ${found.offset}): ${found.reason}: ${found.message}\n`);
  }
  if (result.malformedRead > PROBLEMS_SHOWN) io.stderr(`toolpin history ingest: ${result.source}: … ${result.malformedRead - PROBLEMS_SHOWN} more malformed line(s)\n`);
  if (result.torn) io.stderr(`toolpin history ingest: ${result.source}:${result.torn.line} (byte ${result.torn.offset}): torn: ${result.torn.message}\n`);
  io.stdout(
    `${result.source}: ${result.reset ? 'truncated or replaced, read again from the start; ' : ''}${plural(result.linesRead, 'line')} read, ` +
      `${plural(result.inserted, 'dispatch', 'dispatches')} stored, ${result.dispatchesRead - result.inserted} already stored, ` +
      `${plural(result.malformedRead, 'malformed line')}${result.torn ? ', 1 torn line left for the next ingest' : ''}\n`,
  );
}

export interface HistoryIngestArgs {
  readonly store: string;
  /** Log files; `-` is standard input. */
  readonly logs: readonly string[];
  readonly stdin?: AsyncIterable<Buffer | string>;
}

export async function historyIngestCommand(io: CliIo, args: HistoryIngestArgs): Promise<number> {
  if (args.logs.length === 0) {
    io.stderr('toolpin history ingest: give the logs to ingest (files, or - for standard input)\n');
    return 2;
  }
  if (args.logs.filter((log) => log === '-').length > 1) {
    io.stderr('toolpin history ingest: standard input (-) can be given once\n');
    return 2;
  }
  return withStore(io, 'history ingest', args.store, true, async ({ client }) => {
    let status = 0;
    for (const log of args.logs) {
      const input: IngestInput = log === '-' ? { kind: 'stream', stream: args.stdin ?? process.stdin } : { kind: 'file', path: path.resolve(io.cwd, log) };
      const source = log === '-' ? STDIN_SOURCE : display(io.cwd, path.resolve(io.cwd, log));
      try {
        reportIngest(io, await ingestWithRetries(client, source, input));
      } catch (error) {
        // A log that cannot be read (a file system error names its path) is said and skipped;
        // anything else is the store's and ends the run.
        if (typeof (error as { path?: unknown } | null)?.path !== 'string') throw error;
        io.stderr(`toolpin history ingest: cannot read ${source}: ${String(errorCode(error) ?? errorMessage(error))}\n`);
        status = 2;
      }
    }
    return status;
  });
}

/** `--before DATE`: a calendar date (midnight UTC) or an RFC 3339 date-time; undefined when unreadable. */
export function parseBefore(text: string): number | undefined {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(date)) return undefined;
  const ms = Date.parse(date);
  return Number.isNaN(ms) ? undefined : ms;
}

export async function historyPruneCommand(io: CliIo, args: { readonly store: string; readonly before?: string }): Promise<number> {
  if (args.before === undefined) {
    io.stderr('toolpin history prune: give --before DATE (YYYY-MM-DD or an RFC 3339 date-time)\n');
    return 2;
  }
  const beforeMs = parseBefore(args.before);
  if (beforeMs === undefined) {
    io.stderr(`toolpin history prune: --before ${JSON.stringify(args.before)} is not a date (YYYY-MM-DD or an RFC 3339 date-time)\n`);
    return 2;
  }
  return withStore(io, 'history prune', args.store, true, async ({ client }) => {
    const removed = await pruneStore(client, beforeMs);
    io.stdout(`${plural(removed, 'dispatch', 'dispatches')} before ${new Date(beforeMs).toISOString()} deleted from ${redactUrl(args.store)}\n`);
    return 0;
  });
}

/** The model of `toolpin history --store`, and the executions of a key beyond the K it holds. */
export interface StoreAnswer {
  readonly model: StoreModel;
  allExecutions(key: HistoryKey): Promise<Execution[]>;
  close(): Promise<void>;
}

/** Opens the store and loads its model; undefined after saying why on standard error (exit 2). */
export async function openStoreModel(io: CliIo, url: string, options: { readonly recentLimit: number; readonly tool?: string }): Promise<StoreAnswer | undefined> {
  let store: OpenStore;
  try {
    store = await openStore(url, { create: false });
  } catch (error) {
    io.stderr(`toolpin history: ${errorMessage(storeFailure(url, error))}\n`);
    return undefined;
  }
  try {
    const model = await StoreModel.load(store.client, options);
    return {
      model,
      allExecutions: async (key) => {
        try {
          return await allExecutionsOf(store.client, key);
        } catch (error) {
          throw storeFailure(url, error);
        }
      },
      close: () => store.close(),
    };
  } catch (error) {
    io.stderr(`toolpin history: ${errorMessage(storeFailure(url, error))}\n`);
    await store.close();
    return undefined;
  }
}
