/**
 * Dispatch history, the summaries the model hands out: one key's count, first, last and most
 * recent executions, built from the slots the model kept on first use, and the newest-first order
 * every list of executions is in. See ./model.ts.
 */
import type { Execution } from './events';

/** What a summary needs of a slot of the model (model.ts): the execution it holds, for its key. */
export interface ExecutionSlot {
  toExecution(key: HistoryKey): Execution;
}

/** Newest first: by time, then sequence, then log, then line. */
export function newestFirst(a: Execution, b: Execution): number {
  return b.atMs - a.atMs || b.seq - a.seq || (a.log < b.log ? -1 : a.log > b.log ? 1 : 0) || b.line - a.line;
}

export interface HistoryKey {
  readonly server: string;
  readonly tool: string;
  readonly schemaHash: string;
}

/** Everything the model holds about one (server, tool, schemaHash), merged over all logs. */
export interface KeySummary extends HistoryKey {
  readonly count: number;
  readonly first: Execution;
  readonly last: Execution;
  /** The most recent executions in memory, newest first (at most `recentLimit`). */
  readonly recent: readonly Execution[];
}

/** What a summary reads of a key's entry: its kept slots (merged and ring), the first and the last. */
export interface EntrySlots {
  readonly recent: readonly ExecutionSlot[];
  readonly firstRef: ExecutionSlot;
  readonly lastRef: ExecutionSlot;
}

type Built = { readonly first: Execution; readonly last: Execution; readonly recent: readonly Execution[] };

/** The executions of one key's summary, built from the slots it kept, once, on first use. */
export class LazyExecutions {
  private result: Built | undefined;

  constructor(
    private readonly key: HistoryKey,
    private slots: EntrySlots | undefined,
    private readonly recentLimit: number,
  ) {}

  built(): Built {
    if (this.result) return this.result;
    const key = this.key;
    const { recent: slots, firstRef, lastRef } = this.slots!;
    const recent = slots.map((slot) => slot.toExecution(key));
    recent.sort(newestFirst);
    this.result = { first: firstRef.toExecution(key), last: lastRef.toExecution(key), recent: recent.slice(0, this.recentLimit) };
    // The slots are no longer needed.
    this.slots = undefined;
    return this.result;
  }
}

/** Sorts executions newest first (time, then sequence, then log, then line). */
export function sortNewestFirst(executions: Execution[]): Execution[] {
  return executions.sort(newestFirst);
}
