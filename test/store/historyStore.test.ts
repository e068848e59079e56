/**
 * The team store of the dispatch history (issue 27) against a real PostgreSQL cluster
 * (test/support/postgres.ts): ingest (concurrent, idempotent, incremental, resumable, truncation,
 * malformed lines), prune, a store that is down or newer, and `toolpin history --store` answering
 * exactly what the same command answers from the log files, for every query option.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from 'pg';
import { type HistoryArgs, historyCommand } from '../../server/src/cli/historyCommand';
import type { CliIo } from '../../server/src/cli/io';
import type { HistoryReport } from '../../server/src/core/history/history';
import { startTestCluster, type TestCluster } from '../support/postgres';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureWorkspace = path.join(root, 'test', 'fixtures', 'history');

let cluster: TestCluster;
let databases = 0;

/** A fresh, empty database of the test cluster. */
function freshStore(): string {
  const name = `store_${++databases}`;
  cluster.createDatabase(name);
  return cluster.url(name);
}

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

async function run(cwd: string, args: Partial<HistoryArgs>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    readFile: (file) => fs.promises.readFile(file, 'utf8'),
    readStdin: async () => '',
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stderrIsTerminal: false,
    cwd,
  };
  const status = await historyCommand(io, { logs: [], format: 'json', workspace: cwd, trust: true, ...args });
  return { status, stdout, stderr };
}

async function ingest(cwd: string, store: string, logs: string[]): Promise<Run> {
  return run(cwd, { logs: ['ingest', ...logs], store });
}

async function query(client: Client, sql: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  return (await client.query(sql, values)).rows as Array<Record<string, unknown>>;
}

async function withClient<T>(url: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** The file reader's and the store's answers to the same options: equal, status and report. */
async function assertSameAnswer(cwd: string, store: string, options: Partial<HistoryArgs>, logs: string[] = []): Promise<void> {
  const files = await run(cwd, { ...options, logs });
  const stored = await run(cwd, { ...options, store });
  assert.equal(stored.status, files.status, `status for ${JSON.stringify(options)}: ${stored.stderr}`);
  if (options.format === 'text') {
    assert.equal(stored.stdout, files.stdout, `text for ${JSON.stringify(options)}`);
    assert.equal(stored.stderr, files.stderr, `line problems for ${JSON.stringify(options)}`);
  } else assert.deepEqual(JSON.parse(stored.stdout) as HistoryReport, JSON.parse(files.stdout) as HistoryReport, `report for ${JSON.stringify(options)}`);
}

/** A deterministic pseudo-random generator (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HASHES = ['fnv1a64:a76fe8d6d023fca0', 'fnv1a64:d21cac35ccab9a0e', 'fnv1a64:3712870629e19d1d', 'fnv1a64:9e3779b97f4a7c15'];

/** A log of `events` lines in time order: dispatches, other events, blank and malformed lines, maybe a torn end. */
function generatedLog(next: () => number, name: string, events: number, startMs: number, torn: boolean): string {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const lines: string[] = [];
  let at = startMs;
  for (let index = 0; index < events; index++) {
    at += Math.floor(next() * 3) * 1000;
    const roll = next();
    const seq = index + 1;
    const time = new Date(at).toISOString();
    if (roll < 0.05) lines.push('{"type":"MCP_DISPATCHED","seq":"x"}');
    else if (roll < 0.08) lines.push('not json at all');
    else if (roll < 0.1) lines.push('');
    else if (roll < 0.2) lines.push(JSON.stringify({ type: 'STEP_COMPLETED', seq, at: time, executionId: `${name}_${index}` }));
    else {
      const event: Record<string, unknown> = {
        type: 'MCP_DISPATCHED',
        seq,
        at: time,
        executionId: `${name}_${index % 7}`,
        ...(next() < 0.8 ? { blueprint: pick(['flow', 'other', 'tab\there']) } : {}),
        ...(next() < 0.8 ? { stepId: pick(['a', 'b', 'back\\slash']) } : {}),
        principal: 'alice',
        credential: 'secret-token-123',
        data: { toolName: pick(['echo', 'add', 'ümlaut']), server: pick(['demo', 'other']), schemaHash: pick(HASHES), arguments: { password: 'hunter2' } },
      };
      lines.push(JSON.stringify(event));
    }
  }
  const text = lines.join('\n') + '\n';
  return torn ? `${text}{"type":"MCP_DISPATCHED","seq":99999,"at":"2026` : text;
}

before(async () => {
  cluster = await startTestCluster();
});

after(() => {
  cluster?.stop();
});

describe('history ingest', () => {
  test('the fixture workspace: the store answers what the files answer, for every option, text and json', async () => {
    const store = freshStore();
    const logs = ['logs/archive/2026-08-19.events.jsonl', 'logs/runtime.events.jsonl'];
    const ingested = await ingest(fixtureWorkspace, store, logs);
    assert.equal(ingested.status, 0, ingested.stderr);
    for (const options of [{}, { format: 'text' as const }, { tool: 'reverse_text' }, { hash: 'fnv1a64:3712870629e19d1d' }, { stale: true }, { limit: 1 }, { limit: null }, { tool: 'nope' }, { offline: true }]) {
      await assertSameAnswer(fixtureWorkspace, store, options);
    }
  });

  test('generated logs (property): every query option answers the same from the store as from the files', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const next = random(seed);
      const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
      try {
        const names: string[] = [];
        const count = 1 + Math.floor(next() * 3);
        for (let index = 0; index < count; index++) {
          const name = `run${index}.events.jsonl`;
          fs.writeFileSync(path.join(folder, name), generatedLog(next, `s${seed}l${index}`, 20 + Math.floor(next() * 120), Date.UTC(2026, 0, 1 + index), next() < 0.3));
          names.push(name);
        }
        const store = freshStore();
        assert.equal((await ingest(folder, store, names)).status, 0);
        const optionSets: Array<Partial<HistoryArgs>> = [
          {},
          { tool: 'echo' },
          { tool: 'ümlaut', limit: null },
          { hash: HASHES[Math.floor(next() * HASHES.length)]!.slice('fnv1a64:'.length) },
          { stale: true },
          { limit: 1 + Math.floor(next() * 30) },
          { format: 'text' },
        ];
        for (const options of optionSets) await assertSameAnswer(folder, store, { offline: true, ...options });
      } finally {
        fs.rmSync(folder, { recursive: true, force: true });
      }
    }
  });

  test('three ingests at once into an empty database: one schema, every event once', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
    try {
      const next = random(99);
      const names = ['a', 'b', 'c'].map((name) => {
        fs.writeFileSync(path.join(folder, `${name}.events.jsonl`), generatedLog(next, name, 3000, Date.UTC(2026, 1, 1), false));
        return `${name}.events.jsonl`;
      });
      const store = freshStore();
      const runs = await Promise.all(
        names.map(
          (name) =>
            new Promise<Run>((resolve) => {
              const child = spawn(process.execPath, [cli, 'history', 'ingest', '--store', store, name], { cwd: folder });
              let stdout = '';
              let stderr = '';
              child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
              child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
              child.on('close', (status) => resolve({ status: status ?? -1, stdout, stderr }));
            }),
        ),
      );
      for (const result of runs) assert.equal(result.status, 0, result.stderr);
      await withClient(store, async (client) => {
        assert.deepEqual(await query(client, 'SELECT version FROM toolpin_schema'), [{ version: 1 }]);
        assert.equal((await query(client, 'SELECT source FROM toolpin_source ORDER BY source')).length, 3);
      });
      await assertSameAnswer(folder, store, { offline: true, limit: null });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('the same log twice stores nothing twice; an appended log is read from its checkpoint', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
    try {
      const file = path.join(folder, 'run.events.jsonl');
      const next = random(7);
      fs.writeFileSync(file, generatedLog(next, 'first', 200, Date.UTC(2026, 2, 1), true));
      const store = freshStore();
      const first = await ingest(folder, store, ['run.events.jsonl']);
      assert.equal(first.status, 0, first.stderr);
      const again = await ingest(folder, store, ['run.events.jsonl']);
      assert.match(again.stdout, /run\.events\.jsonl: 0 lines read, 0 dispatches stored/);
      await assertSameAnswer(folder, store, { offline: true, limit: null });
      // The same events under another name: every one is already stored (identity: executionId, seq).
      fs.copyFileSync(file, path.join(folder, 'copy.jsonl'));
      const copy = await ingest(folder, store, ['copy.jsonl']);
      assert.match(copy.stdout, /copy\.jsonl: 200 lines read, 0 dispatches stored, [1-9]\d* already stored/);
      await withClient(store, (client) => client.query(`DELETE FROM toolpin_source WHERE source = 'copy.jsonl'`));

      // Complete the torn line and append more: only the new lines are read.
      fs.appendFileSync(file, `-03-09T00:00:00.000Z","executionId":"torn_1","data":{"toolName":"echo","server":"demo","schemaHash":"${HASHES[0]}"}}\n`);
      fs.appendFileSync(file, generatedLog(next, 'second', 50, Date.UTC(2026, 2, 10), false));
      const appended = await ingest(folder, store, ['run.events.jsonl']);
      assert.match(appended.stdout, /run\.events\.jsonl: 51 lines read/);
      await assertSameAnswer(folder, store, { offline: true, limit: null });
      await assertSameAnswer(folder, store, { offline: true });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('a truncated or replaced log is detected and read again', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
    try {
      const file = path.join(folder, 'run.events.jsonl');
      fs.writeFileSync(file, generatedLog(random(3), 'old', 300, Date.UTC(2026, 3, 1), false));
      const store = freshStore();
      assert.equal((await ingest(folder, store, ['run.events.jsonl'])).status, 0);
      fs.writeFileSync(file, generatedLog(random(4), 'new', 40, Date.UTC(2026, 3, 2), false));
      const shorter = await ingest(folder, store, ['run.events.jsonl']);
      assert.match(shorter.stdout, /truncated or replaced/);
      await assertSameAnswer(folder, store, { offline: true, limit: null });
      // Same length or longer, other content: replaced.
      const replacement = generatedLog(random(5), 'other', 400, Date.UTC(2026, 3, 3), false);
      fs.writeFileSync(file, replacement);
      assert.match((await ingest(folder, store, ['run.events.jsonl'])).stdout, /truncated or replaced/);
      await assertSameAnswer(folder, store, { offline: true, limit: null });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('an ingest killed mid-way (kill -9) and run again loses and duplicates nothing', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
    try {
      const names = ['big.events.jsonl', 'second.events.jsonl'];
      fs.writeFileSync(path.join(folder, names[0]!), generatedLog(random(11), 'big', 150_000, Date.UTC(2026, 4, 1), false));
      fs.writeFileSync(path.join(folder, names[1]!), generatedLog(random(12), 'second', 100_000, Date.UTC(2026, 4, 2), false));
      const store = freshStore();
      // Killed while the first log's rows are being copied (its output line not yet written).
      const child = spawn(process.execPath, [cli, 'history', 'ingest', '--store', store, ...names], { cwd: folder });
      const killed = await new Promise<string>((resolve) => {
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          // After the first log committed, during the second one.
          if (stdout.includes('big.events.jsonl:')) child.kill('SIGKILL');
        });
        child.on('close', () => resolve(stdout));
      });
      assert.doesNotMatch(killed, /second\.events\.jsonl:/, 'the kill came after the whole ingest; the log is too small to be killed mid-way');
      await withClient(store, async (client) => {
        assert.deepEqual(await query(client, 'SELECT source FROM toolpin_source'), [{ source: 'big.events.jsonl' }]);
      });
      const rerun = spawnSync(process.execPath, [cli, 'history', 'ingest', '--store', store, ...names], { cwd: folder, encoding: 'utf8' });
      assert.equal(rerun.status, 0, rerun.stderr);
      assert.match(rerun.stdout, /big\.events\.jsonl: 0 lines read/);
      await assertSameAnswer(folder, store, { offline: true });
      await withClient(store, async (client) => {
        const [{ rows, distinct }] = (await query(client, 'SELECT count(*)::int AS rows, count(DISTINCT (execution_id, seq))::int AS distinct FROM toolpin_dispatch')) as [{ rows: number; distinct: number }];
        assert.equal(rows, distinct);
        const [{ total }] = (await query(client, 'SELECT sum(count)::int AS total FROM toolpin_key')) as [{ total: number }];
        assert.equal(total, rows);
      });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('malformed lines are reported with their position; only the format fields are stored', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
    try {
      const dispatch = { type: 'MCP_DISPATCHED', seq: 2, at: '2026-05-01T00:00:00.000Z', executionId: 'e1', principal: 'alice@example.com', credential: 'sk-live-secret', data: { toolName: 'echo', server: 'demo', schemaHash: HASHES[0], token: 'tok-secret' } };
      fs.writeFileSync(path.join(folder, 'run.events.jsonl'), `{"type":"X","seq":1}\nnot json\n${JSON.stringify(dispatch)}\n{"type":"MCP_DISPATCHED","seq":3}\n`);
      const store = freshStore();
      const result = await ingest(folder, store, ['run.events.jsonl']);
      assert.equal(result.status, 0);
      assert.match(result.stderr, /run\.events\.jsonl:2 \(byte 21\): not-json: /);
      assert.match(result.stderr, /run\.events\.jsonl:4 \(byte \d+\): missing-field: /);
      assert.match(result.stdout, /4 lines read, 1 dispatch stored, 0 already stored, 2 malformed lines/);
      await withClient(store, async (client) => {
        const everything = JSON.stringify(await query(client, 'SELECT * FROM toolpin_dispatch')) + JSON.stringify(await query(client, 'SELECT * FROM toolpin_source'));
        for (const secret of ['alice@example.com', 'sk-live-secret', 'tok-secret', 'principal', 'credential']) assert.ok(!everything.includes(secret), secret);
      });
      await assertSameAnswer(folder, store, { offline: true });
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('standard input (-) is ingested, and the same stream again stores nothing twice', async () => {
    const store = freshStore();
    const text = generatedLog(random(21), 'piped', 100, Date.UTC(2026, 5, 1), false);
    const first = spawnSync(process.execPath, [cli, 'history', 'ingest', '--store', store, '-'], { input: text, encoding: 'utf8' });
    assert.equal(first.status, 0, first.stderr);
    const second = spawnSync(process.execPath, [cli, 'history', 'ingest', '--store', store, '-'], { input: text, encoding: 'utf8' });
    assert.match(second.stdout, /\(stdin\): 100 lines read, 0 dispatches stored/);
  });
});

describe('history prune and store failures', () => {
  test('prune deletes the dispatches before a date, and the counts follow', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-store-'));
    try {
      fs.writeFileSync(path.join(folder, 'run.events.jsonl'), generatedLog(random(31), 'p', 400, Date.UTC(2026, 6, 1), false));
      const store = freshStore();
      await ingest(folder, store, ['run.events.jsonl']);
      const cut = Date.UTC(2026, 6, 1) + 200_000;
      const pruned = await run(folder, { logs: ['prune'], store, before: new Date(cut).toISOString() });
      assert.equal(pruned.status, 0, pruned.stderr);
      await withClient(store, async (client) => {
        const [{ before: older, rows }] = (await query(client, 'SELECT count(*) FILTER (WHERE at_ms < $1)::int AS before, count(*)::int AS rows FROM toolpin_dispatch', [cut])) as [{ before: number; rows: number }];
        assert.equal(older, 0);
        assert.ok(rows > 0);
        const [{ total }] = (await query(client, 'SELECT sum(count)::int AS total FROM toolpin_key')) as [{ total: number }];
        assert.equal(total, rows);
      });
      assert.equal((await run(folder, { logs: ['prune'], store, before: 'yesterday' })).status, 2);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  test('a store that is down, empty or newer exits 2 with a clear message', async () => {
    const down = `postgres://postgres@127.0.0.1:1/nothing`;
    const queried = await run(fixtureWorkspace, { store: down, offline: true });
    assert.equal(queried.status, 2);
    assert.match(queried.stderr, /is down or not listening \(connection refused\)/);
    const ingested = await ingest(fixtureWorkspace, down, ['logs/runtime.events.jsonl']);
    assert.equal(ingested.status, 2);
    assert.match(ingested.stderr, /is down or not listening/);

    const empty = freshStore();
    const none = await run(fixtureWorkspace, { store: empty, offline: true });
    assert.equal(none.status, 2);
    assert.match(none.stderr, /holds no dispatch history yet/);

    const newer = freshStore();
    await ingest(fixtureWorkspace, newer, ['logs/runtime.events.jsonl']);
    await withClient(newer, (client) => client.query('UPDATE toolpin_schema SET version = 99'));
    for (const result of [await run(fixtureWorkspace, { store: newer, offline: true }), await ingest(fixtureWorkspace, newer, ['logs/runtime.events.jsonl'])]) {
      assert.equal(result.status, 2);
      assert.match(result.stderr, /has schema version 99, newer than this toolpin's \(1\); upgrade toolpin/);
    }
    const missingDatabase = await run(fixtureWorkspace, { store: cluster.url('no_such_database'), offline: true });
    assert.equal(missingDatabase.status, 2);
    assert.match(missingDatabase.stderr, /does not exist/);
  });
});
