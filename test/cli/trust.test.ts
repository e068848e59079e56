/**
 * Trust in the CLI (docs/formats.md §10), end to end through dist/cli.js. A checked-out folder's
 * stdio command would create a marker file and its HTTP server logs every request it receives,
 * so "nothing ran" and "no credential was sent" are checked where they would show, not by
 * reading Toolpin's own output. The user's configuration folder is a temporary one.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const SECRET = 'tok-4711-never-sent';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

describe('toolpin check on a folder it does not trust', () => {
  let folder: string;
  let config: string;
  let marker: string;
  let httpLog: string;
  let http: ChildProcess;
  let port: number;

  /** The environment of a user with a secret in it and nothing trusted yet. */
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: config, CRM_TOKEN: SECRET, ...extra };
    if (!('TOOLPIN_TRUST' in extra)) delete base.TOOLPIN_TRUST;
    return base;
  };
  const run = (args: string[], extra: Record<string, string> = {}): Run => {
    const result = spawnSync(process.execPath, [cli, ...args], { cwd: folder, encoding: 'utf8', timeout: 60_000, env: env(extra), input: '' });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const writeConnector = (extraArgs: string[]): void => {
    writeFileSync(
      path.join(folder, 'notes.connector.jsonc'),
      JSON.stringify({
        name: 'notes',
        type: 'api',
        provider: 'mcp',
        providerConfig: {
          transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker, ...extraArgs] },
          include: ['echo_upper'],
          toolsSnapshot: { echo_upper: 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454' },
        },
        auth: { type: 'none' },
      }),
    );
  };

  before(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'toolpin-cli-trust-'));
    config = path.join(folder, '..', `${path.basename(folder)}-config`);
    mkdirSync(config);
    marker = path.join(folder, 'stdio-server-ran.pid');
    httpLog = path.join(folder, 'http-requests.jsonl');
    http = spawn(process.execPath, [fixtureServer, '--http', '--port', '0', '--host', '127.0.0.1', '--log-requests', httpLog], { stdio: ['ignore', 'pipe', 'inherit'] });
    port = await new Promise<number>((resolve, reject) => {
      let seen = '';
      http.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const match = /^LISTENING (\d+)\n/m.exec(seen);
        if (match) resolve(Number(match[1]));
      });
      http.once('exit', () => reject(new Error(`the HTTP fixture exited: ${seen}`)));
    });
    writeConnector([]);
    // An HTTP server that would be sent the user's CRM_TOKEN through a ${env:…} header.
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { crm: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer ${env:CRM_TOKEN}' } } } }));
    writeFileSync(
      path.join(folder, 'flow.blueprint.jsonc'),
      JSON.stringify({ blueprint: 'flow', formatVersion: 1, steps: [{ id: 'look', effect: 'mcp.invoke', input: { toolName: 'echo_upper', server: 'crm', expectedSchemaHash: 'fnv1a64:a76fe8d6d023fca0' } }] }),
    );
  });

  after(() => {
    http.kill();
    rmSync(folder, { recursive: true, force: true });
    rmSync(config, { recursive: true, force: true });
  });

  const requestsReceived = (): number => (existsSync(httpLog) ? readFileSync(httpLog, 'utf8').split('\n').filter(Boolean).length : 0);

  test('untrusted: every pin is cannot verify, naming the command it did not run; exit 2; nothing ran, nothing was sent', () => {
    const result = run(['check', '--format', 'json']);
    assert.equal(result.status, 2, result.stderr);
    const report = parseCheckReport(result.stdout) as { files: Array<{ pins: Array<{ state: string; reason: string | null }> }> };
    const pins = report.files.flatMap((file) => file.pins);
    assert.equal(pins.length, 2);
    for (const pin of pins) assert.equal(pin.state, 'cannot-verify');
    const reasons = pins.map((pin) => pin.reason ?? '').join('\n');
    assert.match(reasons, /the folder is not trusted, so Toolpin did not run `.*fixture-server\.mjs --stdio --pid-file /);
    assert.match(reasons, /did not contact http:\/\/127\.0\.0\.1:\d+\/mcp \(sends header Authorization \$\{env:CRM_TOKEN\}\)/);
    assert.match(reasons, /pass --trust to trust it for this run, or run `toolpin trust \.` to record it/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(SECRET));
    assert.equal(existsSync(marker), false, 'the stdio command did not run');
    assert.equal(requestsReceived(), 0, 'the HTTP server received no request, so no credential');
  });

  test('toolpin trust records what the folder would run; check then runs exactly that', () => {
    const trusted = run(['trust']);
    assert.equal(trusted.status, 0, trusted.stderr);
    assert.match(trusted.stdout, /^Trusted the current folder\. Toolpin may now run, in /m);
    assert.match(trusted.stdout, /notes: .*fixture-server\.mjs --stdio --pid-file /);
    assert.match(trusted.stdout, /crm: http:\/\/127\.0\.0\.1:\d+\/mcp \(sends header Authorization \$\{env:CRM_TOKEN\}\)/);
    assert.doesNotMatch(trusted.stdout, new RegExp(SECRET), 'the record shows the header, never its value');
    assert.doesNotMatch(readFileSync(path.join(config, 'toolpin', 'trust.json'), 'utf8'), new RegExp(SECRET));
    const listed = run(['trust', '--list']);
    assert.match(listed.stdout, /notes: .*fixture-server\.mjs/);

    const checked = run(['check', '--format', 'json']);
    const pins = (parseCheckReport(checked.stdout) as { files: Array<{ pins: Array<{ state: string; reason: string | null }> }> }).files.flatMap((file) => file.pins);
    assert.ok(pins.every((pin) => !/not trusted/.test(pin.reason ?? '')), JSON.stringify(pins));
    assert.equal(existsSync(marker), true, 'the recorded command ran');
    assert.ok(requestsReceived() > 0, 'the recorded credential URL was contacted');
  });

  test('a changed command is untrusted again, and the message shows the new command', () => {
    rmSync(marker, { force: true });
    writeConnector(['--log-requests', path.join(folder, 'stdio-requests.jsonl')]);
    const result = run(['check']);
    assert.equal(result.status, 2, result.stdout);
    assert.match(result.stdout, /server "notes" is new or changed since this folder was trusted, so Toolpin did not run `.*--log-requests .*stdio-requests\.jsonl`/);
    assert.equal(existsSync(marker), false, 'the changed command did not run');
  });

  test('--trust and TOOLPIN_TRUST=1 trust the folder for one run; --revoke removes the record', () => {
    for (const [args, extra] of [[['check', '--trust'], {}], [['check'], { TOOLPIN_TRUST: '1' }]] as const) {
      rmSync(marker, { force: true });
      const result = run([...args], extra);
      assert.doesNotMatch(result.stdout, /not trusted|new or changed/, result.stdout);
      assert.equal(existsSync(marker), true, `${args.join(' ')} ran the command`);
    }
    const revoked = run(['trust', '--revoke']);
    assert.match(revoked.stdout, /^The current folder is no longer trusted\.$/m);
    rmSync(marker, { force: true });
    const after = run(['check']);
    assert.equal(after.status, 2);
    assert.match(after.stdout, /the folder is not trusted/);
    assert.equal(existsSync(marker), false);
  });

  test('pin and history start nothing in an untrusted folder either', () => {
    rmSync(marker, { force: true });
    const before = requestsReceived();
    const pin = run(['pin']);
    assert.equal(existsSync(marker), false, `pin ran nothing: ${pin.stdout}${pin.stderr}`);
    mkdirSync(path.join(folder, 'logs'), { recursive: true });
    writeFileSync(
      path.join(folder, 'logs', 'run.events.jsonl'),
      `${JSON.stringify({ type: 'MCP_DISPATCHED', seq: 1, at: '2026-08-20T10:15:02.118Z', executionId: 'exec_1', blueprint: 'flow', stepId: 'look', data: { toolName: 'echo_upper', server: 'crm', schemaHash: 'fnv1a64:a76fe8d6d023fca0' } })}\n`,
    );
    const history = run(['history']);
    assert.match(history.stdout + history.stderr, /not trusted/);
    assert.equal(requestsReceived(), before, 'history sent nothing to the credential URL');
  });
});
