/**
 * The team store of the dispatch history (issue 27, docs/history-store.md): a PostgreSQL database
 * holding the `MCP_DISPATCHED` projection of many runtimes' event logs. This file is the connection
 * and the schema: opening a store from a `postgres://` URL, creating and migrating its tables
 * (versioned and race-free), and the store's errors in words a user can act on.
 *
 * `pg` is loaded on first use ({@link pgModule}), never at start-up: every other command and the
 * language server without a configured store neither read nor compile it (in the bundle it is
 * dist/lib/pg.js, esbuild.mjs DEFERRED_LIBRARIES).
 *
 * Credentials: the URL may carry a password for the command line (libpq's rules); otherwise `pg`
 * takes PGPASSWORD or the `.pgpass` file, as libpq does. No message ever shows the password.
 */
import type * as Pg from 'pg';
import type * as PgCopyStreams from 'pg-copy-streams';
import { errorCode, errorMessage } from '../core/json/values';

/** The schema version this build writes and reads. A store at a newer version is refused. */
export const STORE_SCHEMA_VERSION = 1;
/** The channel `LISTEN`ers hear on when an ingest commits new dispatches (payload: the source). */
export const STORE_CHANNEL = 'toolpin_history';
/** Advisory lock keys: schema migrations (exclusive), and ingest (shared) versus resets (exclusive). */
const SCHEMA_LOCK = 0x746f6f6c; // "tool"
export const WRITE_LOCK = 0x70696e73; // "pins"

let pgLoaded: typeof Pg | undefined;
let copyStreamsLoaded: typeof PgCopyStreams | undefined;

// The two `require`s below are deferred imports, as in core/deferredLibraries.ts: the library is
// read and compiled at its first use, not when the command starts.

/** `pg`, loaded on first use. */
export function pgModule(): typeof Pg {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (pgLoaded ??= require('pg'));
}

/** `pg-copy-streams` (COPY … FROM STDIN as a writable stream), loaded on first use. */
export function copyStreamsModule(): typeof PgCopyStreams {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (copyStreamsLoaded ??= require('pg-copy-streams'));
}

/** A store error with a message complete on its own; the CLI exits 2 with it. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unreadable store URL)';
  }
}

/** Whether the URL carries a password (refused in settings files: credentials do not go there). */
export function urlHasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

/** Checks a store URL's shape before connecting; undefined when it is usable. */
export function storeUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `the store URL is not a URL (expected postgres://[user@]host[:port]/database)`;
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') return `the store URL must start with postgres:// or postgresql:// (it starts with ${parsed.protocol}//)`;
  return undefined;
}

/** Turns a driver error into a {@link StoreError} a user can act on. */
export function storeFailure(url: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const where = redactUrl(url);
  const code = errorCode(error);
  switch (code) {
    case 'ECONNREFUSED':
      return new StoreError(`the store ${where} is down or not listening (connection refused)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StoreError(`the store ${where}: its host is not known`);
    case 'ETIMEDOUT':
      return new StoreError(`the store ${where} did not answer in time`);
    case '28P01':
    case '28000':
      return new StoreError(`the store ${where} refused the credentials (${errorMessage(error)}); the password comes from PGPASSWORD or ~/.pgpass`);
    case '3D000':
      return new StoreError(`the store ${where}: ${errorMessage(error)} (create it with createdb)`);
    default:
      return new StoreError(`the store ${where}: ${errorMessage(error)}${code !== undefined ? ` (${String(code)})` : ''}`);
  }
}

/** An open store: one connection, its schema checked (and created or migrated when asked). */
export interface OpenStore {
  readonly client: Pg.Client;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The migrations, in order: migration N brings the schema from version N-1 to N. Each runs in the
 * transaction that holds the schema lock and records the new version, so a store is always at
 * exactly one version, and concurrent first ingests into an empty database create it once.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE toolpin_source (
    source       text COLLATE "C" PRIMARY KEY,
    position     bigint NOT NULL,
    line         bigint NOT NULL,
    head_length  integer NOT NULL,
    head_sha256  text NOT NULL,
    lines        bigint NOT NULL,
    blank        bigint NOT NULL,
    dispatched   bigint NOT NULL,
    skipped      bigint NOT NULL,
    malformed    bigint NOT NULL,
    torn         jsonb,
    problems     jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE toolpin_key (
    key_id       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    server       text COLLATE "C" NOT NULL,
    tool         text COLLATE "C" NOT NULL,
    schema_hash  text COLLATE "C" NOT NULL,
    count        bigint NOT NULL,
    UNIQUE (server, tool, schema_hash)
  );
  CREATE TABLE toolpin_dispatch (
    execution_id text COLLATE "C" NOT NULL,
    seq          double precision NOT NULL,
    key_id       integer NOT NULL,
    at           text NOT NULL,
    at_ms        double precision NOT NULL,
    blueprint    text,
    step_id      text,
    source       text COLLATE "C" NOT NULL,
    line         bigint NOT NULL,
    byte_offset  bigint NOT NULL,
    PRIMARY KEY (execution_id, seq)
  );
  CREATE INDEX toolpin_dispatch_by_key ON toolpin_dispatch (key_id, at_ms, seq);
  `,
];

async function schemaVersion(client: Pg.Client): Promise<number> {
  const exists = await client.query<{ present: boolean }>(`SELECT to_regclass('toolpin_schema') IS NOT NULL AS present`);
  if (!exists.rows[0]?.present) return 0;
  const row = await client.query<{ version: number }>(`SELECT version FROM toolpin_schema`);
  return row.rows[0]?.version ?? 0;
}

function newerSchema(url: string, version: number): StoreError {
  return new StoreError(`the store ${redactUrl(url)} has schema version ${version}, newer than this toolpin's (${STORE_SCHEMA_VERSION}); upgrade toolpin`);
}

/** Creates or migrates the schema to {@link STORE_SCHEMA_VERSION}, once, whoever else tries at the same time. */
async function migrate(client: Pg.Client, url: string): Promise<void> {
  const seen = await schemaVersion(client);
  if (seen === STORE_SCHEMA_VERSION) return;
  if (seen > STORE_SCHEMA_VERSION) throw newerSchema(url, seen);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS toolpin_schema (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)`);
    await client.query(`INSERT INTO toolpin_schema (version) VALUES (0) ON CONFLICT DO NOTHING`);
    const current = await schemaVersion(client);
    if (current > STORE_SCHEMA_VERSION) throw newerSchema(url, current);
    for (let version = current + 1; version <= STORE_SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!);
      await client.query('UPDATE toolpin_schema SET version = $1', [version]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Connects to the store at `url` (no schema check). `password`: the editor's secret, when it holds
 * one; otherwise `pg` takes PGPASSWORD or `.pgpass`, as libpq does. Errors are {@link StoreError}s.
 */
export async function connectStore(url: string, options: { readonly password?: string } = {}): Promise<Pg.Client> {
  const problem = storeUrlProblem(url);
  if (problem) throw new StoreError(problem);
  const pg = pgModule();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, application_name: 'toolpin', ...(options.password !== undefined ? { password: options.password } : {}) });
  // An error on an idle connection (the server went away) must not crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw storeFailure(url, error);
  }
  return client;
}

/**
 * Why a store at `version` cannot be read, or undefined when it can: a newer schema, or none yet
 * (nothing was ever ingested there).
 */
export function unreadableSchema(url: string, version: number): StoreError | undefined {
  if (version > STORE_SCHEMA_VERSION) return newerSchema(url, version);
  if (version === 0) return new StoreError(`the store ${redactUrl(url)} holds no dispatch history yet (run toolpin history ingest --store URL LOG… first)`);
  return undefined;
}

/** The schema version of a connected store (0: no schema yet). */
export function storeSchemaVersion(client: Pg.Client): Promise<number> {
  return schemaVersion(client);
}

/**
 * Opens the store at `url`. `create`: create or migrate the schema (ingest, prune); otherwise a
 * store without the schema is an error (nothing was ever ingested there), and so is a newer one.
 */
export async function openStore(url: string, options: { readonly create: boolean; readonly password?: string }): Promise<OpenStore> {
  const client = await connectStore(url, options.password !== undefined ? { password: options.password } : {});
  try {
    // An ingest stages its rows in a temporary table: with the default 8 MB of buffers for those,
    // a large log's rows would go to disk before they are read back (taken only as used).
    if (options.create) await client.query(`SET temp_buffers = '256MB'`);
    if (options.create) await migrate(client, url);
    else {
      const unreadable = unreadableSchema(url, await schemaVersion(client));
      if (unreadable) throw unreadable;
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw storeFailure(url, error);
  }
  return { client, url, close: () => client.end().catch(() => undefined) };
}
