/**
 * Dispatch-history event logs (`*.events.jsonl`, docs/formats.md §7): discovery and sets of logs
 * feeding one {@link HistoryModel}. Reading one log is ./logFile.ts (re-exported here).
 *
 * - {@link findLogFiles} discovers logs by glob (default `**\/*.events.jsonl`) with the one file
 *   finder of server/src/io/fileFinder.ts (its skipped folders, minimatch globs with braces).
 * - {@link LogSet} ties discovery, readers and one model together.
 */
import type { Execution, HistoryKey, HistoryModel } from '../core/history/history';
import { findFiles, globMatcher, type WalkBudget, type WalkCut } from '../io/fileFinder';
import { DEFAULT_LOG_GLOB, errorCode, LogReader, type LogReaderOptions, NotARegularFile, type ResetReason } from './logFile';

export * from './logFile';

// ---------------------------------------------------------------------------------------------
// Discovery

export { globToRegExp, isGlob, splitGlob } from '../io/fileFinder';

/**
 * Files under `root` whose path relative to it (with `/`) matches any of the globs (minimatch's
 * dialect: braces, `**`, classes), sorted. The walk is the one file finder's
 * (server/src/io/fileFinder.ts): it never enters its skipped folders (`node_modules`, `.git`,
 * `.cache`, `dist`, …) nor follows symbolic links to folders. `.gitignore` is not honoured here:
 * dispatch logs are runtime output, which projects usually keep out of version control.
 */
export async function findLogFiles(root: string, globs: readonly string[] = [DEFAULT_LOG_GLOB], walk?: { readonly budget: WalkBudget; readonly onCut: (cut: WalkCut) => void }): Promise<string[]> {
  return findFiles(root, { match: globMatcher(globs), gitignore: false, ...(walk ? { budget: walk.budget, onCut: walk.onCut } : {}) });
}

// ---------------------------------------------------------------------------------------------
// A set of logs

export interface LogSetUpdate {
  readonly files: readonly string[];
  readonly bytesRead: number;
  readonly resets: ReadonlyArray<{ readonly log: string; readonly reason: ResetReason }>;
  readonly removed: readonly string[];
  readonly unreadable: ReadonlyArray<{ readonly file: string; readonly reason: string }>;
}

/**
 * Several logs feeding one model: the files come from `discover` (called at every update, so new
 * logs are picked up and vanished ones removed from the model).
 */
export class LogSet {
  private readonly readers = new Map<string, LogReader>();

  constructor(
    readonly model: HistoryModel,
    private readonly discover: () => Promise<string[]>,
    /** The id of a file in the model and in reports (e.g. its path relative to the workspace). */
    private readonly idOf: (file: string) => string = (file) => file,
    private readonly options: LogReaderOptions = {},
  ) {}

  reader(file: string): LogReader | undefined {
    return this.readers.get(file);
  }

  files(): string[] {
    return [...this.readers.keys()].sort();
  }

  private discovered = false;

  /**
   * Reads what each log gained, and first looks for logs again (a walk of the folders) unless
   * `rediscover` is false and the logs were discovered before: a file event for a known log needs
   * no walk. Unreadable logs are reported, not fatal.
   */
  async update(options: { readonly rediscover?: boolean } = {}): Promise<LogSetUpdate> {
    const rediscover = options.rediscover !== false || !this.discovered;
    const files = rediscover ? [...new Set(await this.discover())].sort() : this.files();
    this.discovered = true;
    const removed: string[] = [];
    for (const [file, reader] of this.readers) {
      if (!files.includes(file)) {
        this.model.removeLog(reader.log);
        this.readers.delete(file);
        removed.push(reader.log);
      }
    }
    let bytesRead = 0;
    const resets: Array<{ log: string; reason: ResetReason }> = [];
    let unreadable: Array<{ file: string; reason: string }> = [];
    // A log that contributed executions and was reset or removed makes the model drop every log's
    // (HistoryModel.generation): the logs read before it in this pass are read again.
    let generation: number;
    do {
      generation = this.model.generation;
      unreadable = [];
      bytesRead += await this.readAll(files, resets, unreadable);
    } while (generation !== this.model.generation);
    return { files, bytesRead, resets, removed, unreadable };
  }

  /** Reads what each of `files` gained; returns the bytes read. */
  private async readAll(files: readonly string[], resets: Array<{ log: string; reason: ResetReason }>, unreadable: Array<{ file: string; reason: string }>): Promise<number> {
    let bytesRead = 0;
    for (const file of files) {
      let reader = this.readers.get(file);
      if (!reader) this.readers.set(file, (reader = new LogReader(file, this.idOf(file), this.model, this.options)));
      try {
        const result = await reader.update();
        bytesRead += result.bytesRead;
        if (result.reset) resets.push({ log: reader.log, reason: result.reset });
        if (result.missing) unreadable.push({ file, reason: 'ENOENT' });
      } catch (error) {
        unreadable.push({ file, reason: error instanceof NotARegularFile ? error.message : (errorCode(error) ?? (error instanceof Error ? error.message : String(error))) });
      }
    }
    return bytesRead;
  }

  /** Every execution at one key in every log, re-read from the files (logs in order). */
  async *streamExecutions(key: HistoryKey): AsyncIterable<Execution> {
    for (const file of this.files()) yield* this.readers.get(file)!.streamExecutions(key);
  }
}
