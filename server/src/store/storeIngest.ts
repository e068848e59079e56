/**
 * `toolpin history ingest`: projects the `MCP_DISPATCHED` events of a log into the store
 * (docs/history-store.md). One transaction per source:
 *
 * 1. lock the source (`pg_advisory_xact_lock`), so two ingests of one log take turns, while
 *    ingests of different logs run side by side;
 * 2. read its checkpoint; a log now shorter than the checkpoint, or whose first bytes changed
 *    (SHA-256 of up to {@link HEAD_BYTES}), was truncated or replaced: its rows are deleted and it is
 *    read again from the start;
 * 3. stream the lines after the checkpoint, parsed by the file reader's own line parser
 *    (`parseEventLine`, so malformed lines are the same problems at the same positions), into a
 *    temporary table with `COPY … FROM STDIN`;
 * 4. `INSERT … SELECT … ON CONFLICT DO NOTHING` into `toolpin_dispatch` (identity: executionId and
 *    seq), adding the rows really inserted to the per-key counts of `toolpin_key`;
 * 5. write the checkpoint (position after the last complete line, counters, first problems) and
 *    `NOTIFY`, and commit — rows and checkpoint together, so a run killed at any moment leaves the
 *    store as before that transaction or after it, never in between.
 *
 * Only the format's fields are stored: seq, at, executionId, blueprint, stepId and data's server,
 * toolName and schemaHash, plus where the line was. Anything else a line carries (principals,
 * credentials, arguments) is never read into a row.
 */
import { createHash } from 'node:crypto';
import type * as Pg from 'pg';
import { type DispatchEvent, type LineProblem, parseEventLine, TORN_LINE_MESSAGE } from '../core/history/history';
import { copyStreamsModule, STORE_CHANNEL } from './historyStore';
import { openRegularFile } from '../io/regularFile';

/** How many leading bytes identify a log's content (a replaced log differs there). */
export const HEAD_BYTES = 4096;
/** Line problems kept per source (all are counted), as the file reader keeps. */
const MAX_PROBLEMS = 100;
const CHUNK_BYTES = 1 << 20;
const COPY_BATCH_CHARS = 1 << 20;

export interface SourceCounters {
  lines: number;
  blank: number;
  dispatched: number;
  skipped: number;
  malformed: number;
}

export interface IngestResult {
  readonly source: string;
  /** True when the log was found truncated or replaced and read again from the start. */
  readonly reset: boolean;
  /** Lines read in this run. */
  readonly linesRead: number;
  /** Dispatch events read in this run, and how many of them were new to the store. */
  readonly dispatchesRead: number;
  readonly inserted: number;
  /** Problems found in this run (the first of them; `malformedRead` counts all). */
  readonly problems: readonly LineProblem[];
  readonly malformedRead: number;
  readonly torn: LineProblem | undefined;
}

/** Lines of a source, as bytes arrive: complete lines are handed on, the remainder kept. */
class LineSplitter {
  private carry: Buffer = Buffer.alloc(0);
  /** Byte offset (in the log) of the first byte of `carry`. */
  private carryOffset: number;
  line: number;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  constructor(
    offset: number,
    line: number,
    private readonly visit: (text: string, line: number, offset: number) => void,
  ) {
    this.carryOffset = offset;
    this.line = line;
  }

  /** The offset after the last complete line. */
  get position(): number {
    return this.carryOffset;
  }

  /** The unfinished remainder: its position, or undefined when there is none. */
  get remainder(): { line: number; offset: number } | undefined {
    return this.carry.length > 0 ? { line: this.line + 1, offset: this.carryOffset } : undefined;
  }

  push(chunk: Buffer): void {
    const bytes = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    let from = 0;
    for (;;) {
      const end = bytes.indexOf(10, from);
      if (end < 0) break;
      const contentEnd = end > from && bytes[end - 1] === 13 ? end - 1 : end;
      this.line++;
      this.visit(this.decoder.decode(bytes.subarray(from, contentEnd)), this.line, this.carryOffset + from);
      from = end + 1;
    }
    this.carryOffset += from;
    this.carry = Buffer.from(bytes.subarray(from));
  }
}

/** A value for COPY's text format: backslash, tab, newline and carriage return escaped. */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
}

function copyRow(event: DispatchEvent, source: string): string {
  return (
    `${copyText(event.executionId)}\t${event.seq}\t${copyText(event.at)}\t${event.atMs}\t${event.blueprint === null ? '\\N' : copyText(event.blueprint)}\t` +
    `${event.stepId === null ? '\\N' : copyText(event.stepId)}\t${copyText(event.server)}\t${copyText(event.toolName)}\t${copyText(event.schemaHash)}\t` +
    `${source}\t${event.line}\t${event.offset}\n`
  );
}

interface Checkpoint extends SourceCounters {
  position: number;
  line: number;
  headLength: number;
  headSha256: string;
  problems: LineProblem[];
}

const EMPTY_COUNTERS = (): SourceCounters => ({ lines: 0, blank: 0, dispatched: 0, skipped: 0, malformed: 0 });

async function readCheckpoint(client: Pg.Client, source: string): Promise<Checkpoint | undefined> {
  const result = await client.query(`SELECT position, line, head_length, head_sha256, lines, blank, dispatched, skipped, malformed, problems FROM toolpin_source WHERE source = $1`, [source]);
  const row = result.rows[0] as Record<string, unknown> | undefined;
  if (!row) return undefined;
  return {
    position: Number(row.position),
    line: Number(row.line),
    headLength: Number(row.head_length),
    headSha256: String(row.head_sha256),
    lines: Number(row.lines),
    blank: Number(row.blank),
    dispatched: Number(row.dispatched),
    skipped: Number(row.skipped),
    malformed: Number(row.malformed),
    problems: row.problems as LineProblem[],
  };
}

/** Deletes a source's rows and their counts (the source is read again from the start). */
async function dropSourceRows(client: Pg.Client, source: string): Promise<void> {
  await client.query(
    `WITH gone AS (DELETE FROM toolpin_dispatch WHERE source = $1 RETURNING key_id),
          counts AS (SELECT key_id, count(*) AS n FROM gone GROUP BY key_id ORDER BY key_id)
     UPDATE toolpin_key k SET count = k.count - c.n FROM counts c WHERE k.key_id = c.key_id`,
    [source],
  );
  await client.query(`DELETE FROM toolpin_key WHERE count <= 0`);
}

/** The bytes a log is read from: a file from an offset, or a stream (standard input). */
export type IngestInput = { readonly kind: 'file'; readonly path: string } | { readonly kind: 'stream'; readonly stream: AsyncIterable<Buffer | string> };

async function headOf(path: string, length: number): Promise<{ size: number; sha256: string; length: number }> {
  const handle = await openRegularFile(path);
  try {
    const size = (await handle.stat()).size;
    const wanted = Math.min(length, size);
    const buffer = Buffer.alloc(wanted);
    let read = 0;
    while (read < wanted) {
      const { bytesRead } = await handle.read(buffer, read, wanted - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return { size, sha256: createHash('sha256').update(buffer.subarray(0, read)).digest('hex'), length: read };
  } finally {
    await handle.close();
  }
}

async function* fileChunks(path: string, from: number): AsyncIterable<Buffer> {
  const handle = await openRegularFile(path);
  try {
    let position = from;
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Ingests one source in one transaction (see the module comment). `source` is the log's name in
 * the store (what the report shows). Errors of the store propagate (the caller turns them into a
 * message); a malformed line never does.
 */
export async function ingestSource(client: Pg.Client, source: string, input: IngestInput): Promise<IngestResult> {
  const { from: copyFrom } = copyStreamsModule();
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(1, hashtext($1))`, [source]);
    const saved = input.kind === 'file' ? await readCheckpoint(client, source) : undefined;
    let checkpoint = saved;
    let reset = false;
    if (input.kind === 'file' && saved) {
      const head = await headOf(input.path, saved.headLength);
      if (head.size < saved.position || head.length < saved.headLength || head.sha256 !== saved.headSha256) {
        await dropSourceRows(client, source);
        checkpoint = undefined;
        reset = true;
      }
    }
    const counters: SourceCounters = checkpoint ? { lines: checkpoint.lines, blank: checkpoint.blank, dispatched: checkpoint.dispatched, skipped: checkpoint.skipped, malformed: checkpoint.malformed } : EMPTY_COUNTERS();
    const keptProblems: LineProblem[] = checkpoint ? [...checkpoint.problems] : [];
    const newProblems: LineProblem[] = [];
    let linesRead = 0;
    let dispatchesRead = 0;
    let malformedRead = 0;

    await client.query(
      `CREATE TEMP TABLE toolpin_staging (execution_id text COLLATE "C", seq double precision, at text, at_ms double precision, blueprint text, step_id text,
         server text COLLATE "C", tool text COLLATE "C", schema_hash text COLLATE "C", source text COLLATE "C", line bigint, byte_offset bigint) ON COMMIT DROP`,
    );
    const copy = client.query(copyFrom('COPY toolpin_staging FROM STDIN'));
    const copied = new Promise<void>((resolve, reject) => {
      copy.on('finish', resolve);
      copy.on('error', reject);
    });
    const sourceText = copyText(source);
    const knownHashes = new Set<string>();
    let batch = '';
    const splitter = new LineSplitter(checkpoint?.position ?? 0, checkpoint?.line ?? 0, (text, line, offset) => {
      linesRead++;
      counters.lines++;
      const parsed = parseEventLine(text, { line, offset }, knownHashes);
      switch (parsed.kind) {
        case 'dispatch':
          counters.dispatched++;
          dispatchesRead++;
          batch += copyRow(parsed.event, sourceText);
          return;
        case 'other':
          counters.skipped++;
          return;
        case 'blank':
          counters.blank++;
          return;
        case 'problem':
          counters.malformed++;
          malformedRead++;
          if (keptProblems.length < MAX_PROBLEMS) keptProblems.push(parsed.problem);
          if (newProblems.length < MAX_PROBLEMS) newProblems.push(parsed.problem);
      }
    });
    const chunks = input.kind === 'file' ? fileChunks(input.path, checkpoint?.position ?? 0) : input.stream;
    for await (const chunk of chunks) {
      splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (batch.length >= COPY_BATCH_CHARS) {
        const text = batch;
        batch = '';
        if (!copy.write(text)) await new Promise((resolve) => copy.once('drain', resolve));
      }
    }
    copy.end(batch);
    await copied;

    const remainder = splitter.remainder;
    const torn: LineProblem | undefined = remainder ? { line: remainder.line, offset: remainder.offset, reason: 'torn', message: TORN_LINE_MESSAGE } : undefined;
    const insertedCount = await insertStagedRows(client);

    await saveSource(client, source, input, { position: splitter.position, line: splitter.line }, counters, torn, keptProblems);
    if (insertedCount > 0 || reset) await client.query('SELECT pg_notify($1, $2)', [STORE_CHANNEL, source]);
    await client.query('COMMIT');
    return { source, reset, linesRead, dispatchesRead, inserted: insertedCount, problems: newProblems, malformedRead, torn };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Moves the staged rows into the store: the keys, the dispatches with their key's id, the keys' counts; returns how many dispatches were new. */
async function insertStagedRows(client: Pg.Client): Promise<number> {
  // The keys first (a handful of rows, in one order, so that concurrent ingests never wait on
  // each other in a cycle), then the rows with their key's id, and the keys' counts.
  await client.query(
    `INSERT INTO toolpin_key (server, tool, schema_hash, count)
     SELECT DISTINCT server, tool, schema_hash, 0 FROM toolpin_staging ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING`,
  );
  const inserted = await client.query<{ n: string }>(
    `WITH inserted AS (
       INSERT INTO toolpin_dispatch (execution_id, seq, key_id, at, at_ms, blueprint, step_id, source, line, byte_offset)
       SELECT s.execution_id, s.seq, k.key_id, s.at, s.at_ms, s.blueprint, s.step_id, s.source, s.line, s.byte_offset
         FROM toolpin_staging s JOIN toolpin_key k ON k.server = s.server AND k.tool = s.tool AND k.schema_hash = s.schema_hash
       ON CONFLICT DO NOTHING RETURNING key_id),
     counted AS (
       UPDATE toolpin_key k SET count = k.count + c.n
         FROM (SELECT key_id, count(*) AS n FROM inserted GROUP BY key_id ORDER BY key_id) c WHERE k.key_id = c.key_id)
     SELECT count(*) AS n FROM inserted`,
  );
  return Number(inserted.rows[0]?.n ?? 0);
}

/**
 * Writes the source's counters and problems; for a file also the checkpoint the next ingest resumes
 * from (`read`: the byte position and line reached, and the head of the file that far).
 */
async function saveSource(
  client: Pg.Client,
  source: string,
  input: IngestInput,
  read: { readonly position: number; readonly line: number },
  counters: SourceCounters,
  torn: LineProblem | undefined,
  keptProblems: readonly LineProblem[],
): Promise<void> {
  if (input.kind === 'file') {
    const head = await headOf(input.path, Math.min(HEAD_BYTES, read.position));
    await client.query(
      `INSERT INTO toolpin_source (source, position, line, head_length, head_sha256, lines, blank, dispatched, skipped, malformed, torn, problems, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now())
       ON CONFLICT (source) DO UPDATE SET position = excluded.position, line = excluded.line, head_length = excluded.head_length,
         head_sha256 = excluded.head_sha256, lines = excluded.lines, blank = excluded.blank, dispatched = excluded.dispatched,
         skipped = excluded.skipped, malformed = excluded.malformed, torn = excluded.torn, problems = excluded.problems, updated_at = now()`,
      [source, read.position, read.line, head.length, head.sha256, counters.lines, counters.blank, counters.dispatched, counters.skipped, counters.malformed, torn ? JSON.stringify(torn) : null, JSON.stringify(keptProblems)],
    );
  } else {
    // A stream has no position to resume from: its counters add up run after run, and the
    // identity of each event keeps the rows free of duplicates.
    await client.query(
      `INSERT INTO toolpin_source AS s (source, position, line, head_length, head_sha256, lines, blank, dispatched, skipped, malformed, torn, problems, updated_at)
       VALUES ($1, 0, 0, 0, '', $2, $3, $4, $5, $6, $7, $8, now())
       ON CONFLICT (source) DO UPDATE SET lines = s.lines + excluded.lines, blank = s.blank + excluded.blank, dispatched = s.dispatched + excluded.dispatched,
         skipped = s.skipped + excluded.skipped, malformed = s.malformed + excluded.malformed, torn = excluded.torn, updated_at = now()`,
      [source, counters.lines, counters.blank, counters.dispatched, counters.skipped, counters.malformed, torn ? JSON.stringify(torn) : null, JSON.stringify(keptProblems)],
    );
  }
}

/** Deletes the dispatches before `beforeMs` (epoch milliseconds) and their counts; returns how many. */
export async function pruneStore(client: Pg.Client, beforeMs: number): Promise<number> {
  await client.query('BEGIN');
  try {
    const result = await client.query<{ n: string }>(
      `WITH gone AS (DELETE FROM toolpin_dispatch WHERE at_ms < $1 RETURNING key_id),
            counts AS (SELECT key_id, count(*) AS n FROM gone GROUP BY key_id ORDER BY key_id),
            updated AS (UPDATE toolpin_key k SET count = k.count - c.n FROM counts c WHERE k.key_id = c.key_id RETURNING c.n)
       SELECT coalesce(sum(n), 0) AS n FROM updated`,
      [beforeMs],
    );
    await client.query(`DELETE FROM toolpin_key WHERE count <= 0`);
    await client.query('SELECT pg_notify($1, $2)', [STORE_CHANNEL, '']);
    await client.query('COMMIT');
    return Number(result.rows[0]?.n ?? 0);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
