/**
 * `toolpin history ingest`: projects the `MCP_DISPATCHED` events of a log into the store
 * (docs/history-store.md). One transaction per source:
 *
 * 1. lock the source (`pg_advisory_xact_lock`), so two ingests of one log take turns, while
 *    ingests of different logs run side by side;
 * 2. read its checkpoint; a log now shorter than the checkpoint, or whose first bytes changed
 *    (SHA-256 of up to {@link HEAD_BYTES}), was truncated or replaced: its rows are deleted and it is
 *    read again from the start;
 * 3. read the lines after the checkpoint with the file reader's own byte scanner (eventBytes.ts)
 *    and, for what it leaves, its line parser (`checkLine`), so malformed lines are the same
 *    problems at the same positions;
 * 4. `COPY` the dispatches, a batch at a time, straight into `toolpin_dispatch` (identity:
 *    executionId and seq); a batch that holds an event already stored goes through a temporary
 *    table and `INSERT … ON CONFLICT DO NOTHING` instead ({@link DispatchBatches}); the rows really
 *    inserted are added to the per-key counts of `toolpin_key`;
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
import { checkLine, type LineProblem, LineScratch, MAX_INTERNED, TORN_LINE_MESSAGE } from '../core/history/history';
import { parseCanonicalTimeBytes, SCAN_DISPATCH, SCAN_OTHER, ScannedEvent, scanEventBytes } from '../core/history/eventBytes';
import { errorCode } from '../core/json/values';
import { copyStreamsModule, STORE_CHANNEL } from './historyStore';
import { openRegularFile } from '../io/regularFile';

/** How many leading bytes identify a log's content (a replaced log differs there). */
export const HEAD_BYTES = 4096;
/** Line problems kept per source (all are counted), as the file reader keeps. */
const MAX_PROBLEMS = 100;
const CHUNK_BYTES = 1 << 20;

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

const EMPTY = Buffer.alloc(0);

/** Lines of a source, as bytes arrive: complete lines are handed on as byte ranges, the remainder kept. */
class LineSplitter {
  private carry: Buffer = EMPTY;
  /** Byte offset (in the log) of the first byte of `carry`. */
  private carryOffset: number;
  line: number;

  constructor(
    offset: number,
    line: number,
    private readonly visit: (bytes: Buffer, start: number, end: number, line: number, offset: number) => void,
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
    let bytes = chunk;
    if (this.carry.length > 0) {
      // Only the line the carry begins is joined (the chunk itself is not copied), unless the
      // chunk does not end it.
      const firstEnd = chunk.indexOf(10);
      if (firstEnd < 0) {
        this.carry = Buffer.concat([this.carry, chunk]);
        return;
      }
      const joined = Buffer.concat([this.carry, chunk.subarray(0, firstEnd + 1)]);
      const end = joined.length - 1;
      const contentEnd = end > 0 && joined[end - 1] === 13 ? end - 1 : end;
      this.line++;
      this.visit(joined, 0, contentEnd, this.line, this.carryOffset);
      this.carryOffset += joined.length;
      this.carry = EMPTY;
      bytes = chunk.subarray(firstEnd + 1);
    }
    let from = 0;
    for (;;) {
      const end = bytes.indexOf(10, from);
      if (end < 0) break;
      const contentEnd = end > from && bytes[end - 1] === 13 ? end - 1 : end;
      this.line++;
      this.visit(bytes, from, contentEnd, this.line, this.carryOffset + from);
      from = end + 1;
    }
    this.carryOffset += from;
    this.carry = from < bytes.length ? Buffer.from(bytes.subarray(from)) : EMPTY;
  }
}

/** A value for COPY's text format: backslash, tab, newline and carriage return escaped. */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : value;
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

/** Dispatches per batch: the rows of a batch are held in memory until they are copied. */
const BATCH_ROWS = 50_000;
const DISPATCH_COLUMNS = 'execution_id, seq, key_id, at, at_ms, blueprint, step_id, source, line, byte_offset';

/**
 * The rows of one source on their way to `toolpin_dispatch`, a batch at a time (issue 27, "fast"):
 *
 * - each batch's keys are made first (new ones inserted in one order, so that concurrent ingests
 *   never wait on each other in a cycle) and its rows carry their key's id;
 * - a batch is `COPY`'d straight into `toolpin_dispatch` under a savepoint: no staging table, no
 *   join. Almost every batch of a new log is new to the store and goes this way;
 * - a batch that holds an event already stored (the primary key refuses it: the same log again,
 *   a copy of it, standard input twice) is rolled back to the savepoint and goes through a
 *   temporary table and `INSERT … ON CONFLICT DO NOTHING` instead, which stores only the new ones;
 * - the keys' counts grow by the rows really inserted, in one statement at the end.
 */
class DispatchBatches {
  /** The held rows in COPY's text format, as bytes; `length` of them are used. */
  private bytes = Buffer.allocUnsafe(1 << 22);
  private length = 0;
  private rows = 0;
  /** Per held row: its key's id, or -1 while the key is new (its slot is then in `slots`). */
  private rowKeys: number[] = [];
  /** Where the key id of a row with a new key goes (10 digits, zero-padded), and the key. */
  private slots: Array<{ readonly at: number; readonly key: string }> = [];
  /** Key text → key id, for the keys this run has made or found. */
  private readonly keyIds = new Map<string, number>();
  private readonly pendingKeys = new Map<string, readonly [string, string, string]>();
  private readonly counts = new Map<number, number>();
  private staging = false;
  private readonly sourceBytes: Buffer;
  inserted = 0;

  constructor(
    private readonly client: Pg.Client,
    source: string,
  ) {
    this.sourceBytes = Buffer.from(copyText(source));
  }

  get full(): boolean {
    return this.rows >= BATCH_ROWS;
  }

  /**
   * A dispatch the byte scanner read (every value plain ASCII without escapes, `at` canonical):
   * its fields are copied from the line's bytes, with nothing decoded. False when the line needs
   * the text path after all (a value that is not ASCII, a schema hash not yet known to be valid).
   */
  addScanned(line: Buffer, event: ScannedEvent, atMs: number, knownHashes: ReadonlySet<string>, lineNumber: number, offset: number): boolean {
    if (!isAscii(line, event)) return false;
    const schemaHash = line.toString('latin1', event.schemaHashStart, event.schemaHashEnd);
    if (!knownHashes.has(schemaHash)) return false;
    const server = line.toString('latin1', event.serverStart, event.serverEnd);
    const tool = line.toString('latin1', event.toolNameStart, event.toolNameEnd);
    this.reserve(event.executionIdEnd - event.executionIdStart + (event.blueprintEnd - event.blueprintStart) + (event.stepIdEnd - event.stepIdStart) + 160);
    this.copyRange(line, event.executionIdStart, event.executionIdEnd);
    this.ascii(`\t${event.seq}\t`);
    this.keySlot(server, tool, schemaHash);
    this.ascii('\t');
    this.copyRange(line, event.atStart, event.atEnd);
    this.ascii(`\t${atMs}\t`);
    if (event.blueprintStart < 0) this.ascii('\\N');
    else this.copyRange(line, event.blueprintStart, event.blueprintEnd);
    this.ascii('\t');
    if (event.stepIdStart < 0) this.ascii('\\N');
    else this.copyRange(line, event.stepIdStart, event.stepIdEnd);
    this.endRow(lineNumber, offset);
    return true;
  }

  /** A dispatch read as text (`checkLine`): its fields escaped for COPY. */
  addParsed(scratch: LineScratch, lineNumber: number, offset: number): void {
    const head = `${copyText(scratch.executionId)}\t${scratch.seq}\t`;
    const middle = `\t${copyText(scratch.at)}\t${scratch.atMs}\t${scratch.blueprint === undefined ? '\\N' : copyText(scratch.blueprint)}\t${scratch.stepId === undefined ? '\\N' : copyText(scratch.stepId)}`;
    this.reserve(3 * (head.length + middle.length) + 160);
    this.length += this.bytes.write(head, this.length, 'utf8');
    this.keySlot(scratch.server, scratch.toolName, scratch.schemaHash);
    this.length += this.bytes.write(middle, this.length, 'utf8');
    this.endRow(lineNumber, offset);
  }

  private endRow(lineNumber: number, offset: number): void {
    this.ascii('\t');
    this.length += this.sourceBytes.copy(this.bytes, this.length);
    this.ascii(`\t${lineNumber}\t${offset}\n`);
    this.rows++;
  }

  private keySlot(server: string, tool: string, schemaHash: string): void {
    const key = `${server}\u0000${tool}\u0000${schemaHash}`;
    const keyId = this.keyIds.get(key);
    if (keyId !== undefined) {
      this.rowKeys.push(keyId);
      this.ascii(String(keyId));
      return;
    }
    if (!this.pendingKeys.has(key)) this.pendingKeys.set(key, [server, tool, schemaHash]);
    this.rowKeys.push(-1);
    this.slots.push({ at: this.length, key });
    this.ascii('0000000000');
  }

  private reserve(extra: number): void {
    if (this.length + extra + this.sourceBytes.length <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + extra + this.sourceBytes.length));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  private ascii(text: string): void {
    this.length += this.bytes.write(text, this.length, 'latin1');
  }

  private copyRange(line: Buffer, start: number, end: number): void {
    this.length += line.copy(this.bytes, this.length, start, end);
  }

  /** Copies the held rows (see the class comment). */
  async flush(): Promise<void> {
    if (this.rows === 0) return;
    await this.makeKeys();
    for (const slot of this.slots) this.bytes.write(String(this.keyIds.get(slot.key)!).padStart(10, '0'), slot.at, 'latin1');
    const batchCounts = new Map<number, number>();
    let slot = 0;
    for (const known of this.rowKeys) {
      const keyId = known >= 0 ? known : this.keyIds.get(this.slots[slot++]!.key)!;
      batchCounts.set(keyId, (batchCounts.get(keyId) ?? 0) + 1);
    }
    const payload = this.bytes.subarray(0, this.length);
    this.rows = 0;
    this.rowKeys = [];
    this.slots = [];

    await this.client.query('SAVEPOINT toolpin_batch');
    try {
      await copyInto(this.client, `COPY toolpin_dispatch (${DISPATCH_COLUMNS}) FROM STDIN`, payload);
      await this.client.query('RELEASE SAVEPOINT toolpin_batch');
      for (const [keyId, count] of batchCounts) {
        this.counts.set(keyId, (this.counts.get(keyId) ?? 0) + count);
        this.inserted += count;
      }
      this.length = 0;
      return;
    } catch (error) {
      if (errorCode(error) !== '23505') throw error;
      await this.client.query('ROLLBACK TO SAVEPOINT toolpin_batch');
    }
    // Some of these events are stored already: only the new ones go in.
    if (!this.staging) {
      await this.client.query(
        `CREATE TEMP TABLE toolpin_staging (execution_id text COLLATE "C", seq double precision, key_id integer, at text, at_ms double precision, blueprint text, step_id text,
           source text COLLATE "C", line bigint, byte_offset bigint) ON COMMIT DROP`,
      );
      this.staging = true;
    } else await this.client.query('TRUNCATE toolpin_staging');
    await copyInto(this.client, `COPY toolpin_staging FROM STDIN`, payload);
    const inserted = await this.client.query<{ key_id: number; n: string }>(
      `WITH inserted AS (INSERT INTO toolpin_dispatch (${DISPATCH_COLUMNS}) SELECT ${DISPATCH_COLUMNS} FROM toolpin_staging ON CONFLICT DO NOTHING RETURNING key_id)
       SELECT key_id, count(*) AS n FROM inserted GROUP BY key_id`,
    );
    for (const row of inserted.rows) {
      this.counts.set(row.key_id, (this.counts.get(row.key_id) ?? 0) + Number(row.n));
      this.inserted += Number(row.n);
    }
    this.length = 0;
  }

  /** Adds what the rows gave to the keys' counts (in key order, as every ingest locks them). */
  async countKeys(): Promise<void> {
    const entries = [...this.counts].filter(([, count]) => count !== 0).sort((a, b) => a[0] - b[0]);
    if (entries.length === 0) return;
    await this.client.query(
      `UPDATE toolpin_key k SET count = k.count + c.n FROM unnest($1::integer[], $2::bigint[]) AS c(key_id, n) WHERE k.key_id = c.key_id`,
      [entries.map(([keyId]) => keyId), entries.map(([, count]) => count)],
    );
  }

  /** Inserts the batch's new keys (sorted, so concurrent ingests lock them in one order) and reads their ids. */
  private async makeKeys(): Promise<void> {
    if (this.pendingKeys.size === 0) return;
    const keys = [...this.pendingKeys.values()].sort((a, b) => byCodeUnits(a[0], b[0]) || byCodeUnits(a[1], b[1]) || byCodeUnits(a[2], b[2]));
    this.pendingKeys.clear();
    const columns = [keys.map((key) => key[0]), keys.map((key) => key[1]), keys.map((key) => key[2])];
    await this.client.query(
      `INSERT INTO toolpin_key (server, tool, schema_hash, count) SELECT s, t, h, 0 FROM unnest($1::text[], $2::text[], $3::text[]) AS k(s, t, h) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING`,
      columns,
    );
    const found = await this.client.query<{ key_id: number; server: string; tool: string; schema_hash: string }>(
      `SELECT k.key_id, k.server, k.tool, k.schema_hash FROM toolpin_key k JOIN unnest($1::text[], $2::text[], $3::text[]) AS u(s, t, h) ON k.server = u.s AND k.tool = u.t AND k.schema_hash = u.h`,
      columns,
    );
    for (const row of found.rows) this.keyIds.set(`${row.server}\u0000${row.tool}\u0000${row.schema_hash}`, row.key_id);
  }
}

/** Whether every byte of the values the store keeps is ASCII (then copied as they are). */
function isAscii(line: Buffer, event: ScannedEvent): boolean {
  return (
    asciiRange(line, event.executionIdStart, event.executionIdEnd) &&
    asciiRange(line, event.serverStart, event.serverEnd) &&
    asciiRange(line, event.toolNameStart, event.toolNameEnd) &&
    asciiRange(line, event.schemaHashStart, event.schemaHashEnd) &&
    asciiRange(line, event.blueprintStart, event.blueprintEnd) &&
    asciiRange(line, event.stepIdStart, event.stepIdEnd)
  );
}

function asciiRange(line: Buffer, start: number, end: number): boolean {
  for (let index = start; index < end; index++) if (line[index]! >= 0x80) return false;
  return true;
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Runs `COPY … FROM STDIN` with `payload` as its data. */
async function copyInto(client: Pg.Client, sql: string, payload: Buffer): Promise<void> {
  const { from: copyFrom } = copyStreamsModule();
  const copy = client.query(copyFrom(sql));
  await new Promise<void>((resolve, reject) => {
    copy.on('finish', resolve);
    copy.on('error', reject);
    copy.end(payload);
  });
}

/**
 * Ingests one source in one transaction (see the module comment). `source` is the log's name in
 * the store (what the report shows). Errors of the store propagate (the caller turns them into a
 * message); a malformed line never does.
 */
export async function ingestSource(client: Pg.Client, source: string, input: IngestInput): Promise<IngestResult> {
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

    const batches = new DispatchBatches(client, source);
    const knownHashes = new Set<string>();
    const scratch = new LineScratch();
    const scanned = new ScannedEvent();
    const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
    const splitter = new LineSplitter(checkpoint?.position ?? 0, checkpoint?.line ?? 0, (bytes, start, end, line, offset) => {
      linesRead++;
      counters.lines++;
      // The byte scanner first (the file reader's, eventBytes.ts); the text path for what it leaves.
      const outcome = scanEventBytes(bytes, start, end, scanned);
      if (outcome === SCAN_OTHER) {
        counters.skipped++;
        return;
      }
      if (outcome === SCAN_DISPATCH) {
        const atMs = parseCanonicalTimeBytes(bytes, scanned.atStart, scanned.atEnd);
        if (!Number.isNaN(atMs) && batches.addScanned(bytes, scanned, atMs, knownHashes, line, offset)) {
          counters.dispatched++;
          dispatchesRead++;
          return;
        }
      }
      const parsed = checkLine(decoder.decode(bytes.subarray(start, end)), line, offset, knownHashes, scratch);
      if (parsed === undefined) {
        // A valid dispatch: its hash is well-formed, and need not be checked again.
        if (knownHashes.size < MAX_INTERNED) knownHashes.add(scratch.schemaHash);
        counters.dispatched++;
        dispatchesRead++;
        batches.addParsed(scratch, line, offset);
        return;
      }
      switch (parsed.kind) {
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
          return;
        case 'dispatch':
          // checkLine gives a dispatch back as undefined (above); never here.
          return;
      }
    });
    const chunks = input.kind === 'file' ? fileChunks(input.path, checkpoint?.position ?? 0) : input.stream;
    for await (const chunk of chunks) {
      splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (batches.full) await batches.flush();
    }
    await batches.flush();
    await batches.countKeys();
    const insertedCount = batches.inserted;

    const remainder = splitter.remainder;
    const torn: LineProblem | undefined = remainder ? { line: remainder.line, offset: remainder.offset, reason: 'torn', message: TORN_LINE_MESSAGE } : undefined;

    await saveSource(client, source, input, { position: splitter.position, line: splitter.line }, counters, torn, keptProblems);
    if (insertedCount > 0 || reset) await client.query('SELECT pg_notify($1, $2)', [STORE_CHANNEL, source]);
    await client.query('COMMIT');
    return { source, reset, linesRead, dispatchesRead, inserted: insertedCount, problems: newProblems, malformedRead, torn };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
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
