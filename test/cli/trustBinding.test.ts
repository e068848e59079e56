/**
 * What a `toolpin trust` record binds (docs/trust.md), end to end through dist/cli.js: each case
 * is a way a pull changed what runs or what is sent after the folder was trusted, and each checks
 * where it would show (a marker file the stdio server writes when it starts, the request log of
 * an HTTP server), not Toolpin's own words alone. The user's configuration folder is temporary.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { canonicalJson } from '../../server/src/core/pins/canonicalJson';
import { sha256Hex } from '../../server/src/core/pins/sha256';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const SECRET_A = 'tok-a-4711';
const SECRET_B = 'aws-b-0815-never-sent';
const TOOL_PIN = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

let scratch: string;
let http: ChildProcess;
let port: number;
let httpLog: string;

before(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-trust-binding-'));
  httpLog = path.join(scratch, 'http-requests.jsonl');
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
});

after(() => {
  http.kill();
  rmSync(scratch, { recursive: true, force: true });
});

const requestsReceived = (): number => (existsSync(httpLog) ? readFileSync(httpLog, 'utf8').split('\n').filter(Boolean).length : 0);

/** A fresh folder and configuration home; `run` runs the CLI in `cwd` (default the folder). */
function workspace(name: string): { folder: string; config: string; marker: string; run: (args: string[], cwd?: string) => Run } {
  const folder = path.join(scratch, name);
  const config = path.join(scratch, `${name}-config`);
  mkdirSync(folder);
  mkdirSync(config, { mode: 0o700 });
  const marker = path.join(scratch, `${name}-server-ran.pid`);
  const run = (args: string[], cwd = folder): Run => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: config, TOKEN_A: SECRET_A, AWS_SECRET_ACCESS_KEY: SECRET_B };
    delete env.TOOLPIN_TRUST;
    const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, env, input: '' });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  return { folder, config, marker, run };
}

/** A connector whose stdio transport is `command args…`; its tool pin is echo_upper's, so a run verifies. */
function writeStdioConnector(folder: string, command: string, args: string[], env: Record<string, string> = {}): void {
  writeFileSync(
    path.join(folder, 'notes.connector.jsonc'),
    JSON.stringify({
      name: 'notes',
      type: 'api',
      provider: 'mcp',
      providerConfig: { transport: { kind: 'stdio', command, args, env }, include: ['echo_upper'], toolsSnapshot: { echo_upper: TOOL_PIN } },
      auth: { type: 'none' },
    }),
  );
}

/** A blueprint step on server `crm` of `.mcp.json`, so that check contacts it. */
function writeCrmStep(folder: string): void {
  writeFileSync(
    path.join(folder, 'flow.blueprint.jsonc'),
    JSON.stringify({ blueprint: 'flow', formatVersion: 1, steps: [{ id: 'look', effect: 'mcp.invoke', input: { toolName: 'echo_upper', server: 'crm', expectedSchemaHash: 'fnv1a64:a76fe8d6d023fca0' } }] }),
  );
}

describe('what a trust record binds', () => {
  test('${env:…} in a URL: a server added after trust that puts a secret in its query is not contacted', () => {
    const { folder, run } = workspace('url-query');
    writeCrmStep(folder);
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: {} }));
    assert.equal(run(['trust']).status, 0);
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { crm: { type: 'http', url: `http://127.0.0.1:${port}/mcp?k=\${env:TOKEN_A}` } } }));
    const before = requestsReceived();
    const result = run(['check']);
    assert.equal(requestsReceived(), before, 'the URL carrying ${env:TOKEN_A} was contacted unapproved');
    assert.match(result.stdout, /server "crm" is new or changed since this folder was trusted, so Toolpin did not contact http:\/\/127\.0\.0\.1:\d+\/mcp\?k=\$\{env:TOKEN_A\} \(sends url \$\{env:TOKEN_A\}\)/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(SECRET_A));
    // Trusted again, it is contacted: the record binds it now.
    assert.match(run(['trust']).stdout, /crm: http:\/\/127\.0\.0\.1:\d+\/mcp\?k=\$\{env:TOKEN_A\} \(sends url \$\{env:TOKEN_A\}\)/);
    run(['check']);
    assert.ok(requestsReceived() > before, 'the approved URL was not contacted');
  });

  test('which variable a header sends: TOKEN_A edited to AWS_SECRET_ACCESS_KEY is asked again', () => {
    const { folder, run } = workspace('header-variable');
    writeCrmStep(folder);
    const mcp = (variable: string): string => JSON.stringify({ mcpServers: { crm: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer \${env:${variable}}` } } } });
    writeFileSync(path.join(folder, '.mcp.json'), mcp('TOKEN_A'));
    assert.match(run(['trust']).stdout, /sends header Authorization \$\{env:TOKEN_A\}/);
    writeFileSync(path.join(folder, '.mcp.json'), mcp('AWS_SECRET_ACCESS_KEY'));
    const before = requestsReceived();
    const result = run(['check']);
    assert.equal(requestsReceived(), before, 'the second secret was sent to the recorded URL');
    assert.match(result.stdout, /server "crm" is new or changed since this folder was trusted, so Toolpin did not contact .*\(sends header Authorization \$\{env:AWS_SECRET_ACCESS_KEY\}\)/);
    assert.doesNotMatch(result.stdout + result.stderr, new RegExp(`${SECRET_A}|${SECRET_B}`));
  });

  test('the script an interpreter is given: node srv.mjs rewritten by a pull does not run', () => {
    const { folder, marker, run } = workspace('script');
    writeFileSync(path.join(folder, 'srv.mjs'), `import ${JSON.stringify(fixtureServer)};\n`);
    writeStdioConnector(folder, process.execPath, ['srv.mjs', '--stdio', '--pid-file', marker]);
    const trusted = run(['trust']);
    assert.match(trusted.stdout, /notes: .* srv\.mjs --stdio .*\(runs srv\.mjs sha256:[0-9a-f]{12}\)/);
    assert.equal(run(['check']).status, 0);
    assert.equal(existsSync(marker), true, 'the recorded script did not run');
    rmSync(marker);
    writeFileSync(path.join(folder, 'srv.mjs'), `import ${JSON.stringify(fixtureServer)};\n// a pull changed this file\n`);
    const result = run(['check']);
    assert.equal(result.status, 2, result.stdout);
    assert.match(result.stdout, /server "notes" is new or changed since this folder was trusted, so Toolpin did not run `.*srv\.mjs --stdio/);
    assert.equal(existsSync(marker), false, 'the rewritten script ran unapproved');
  });

  test('a script named through ${workspaceFolder} in .mcp.json is bound too', () => {
    const { folder, marker, run } = workspace('workspace-variable');
    writeFileSync(path.join(folder, 'srv.mjs'), `import ${JSON.stringify(fixtureServer)};\n`);
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { local: { command: process.execPath, args: ['${workspaceFolder}/srv.mjs', '--stdio', '--pid-file', marker] } } }));
    writeFileSync(
      path.join(folder, 'flow.blueprint.jsonc'),
      JSON.stringify({ blueprint: 'flow', formatVersion: 1, steps: [{ id: 'look', effect: 'mcp.invoke', input: { toolName: 'echo_upper', server: 'local', expectedSchemaHash: 'fnv1a64:a76fe8d6d023fca0' } }] }),
    );
    assert.match(run(['trust']).stdout, /\(runs srv\.mjs sha256:[0-9a-f]{12}/);
    run(['check']);
    assert.equal(existsSync(marker), true, 'the recorded script did not run');
    rmSync(marker);
    writeFileSync(path.join(folder, 'srv.mjs'), `import ${JSON.stringify(fixtureServer)};\n// changed\n`);
    const result = run(['check']);
    assert.match(result.stdout, /server "local" is new or changed since this folder was trusted/);
    assert.equal(existsSync(marker), false, 'the rewritten script ran unapproved');
  });

  test('a relative executable: ./bin/server replaced does not run', () => {
    const { folder, marker, run } = workspace('executable');
    mkdirSync(path.join(folder, 'bin'));
    const server = path.join(folder, 'bin', 'server');
    const script = (extra: string): string => `#!/bin/sh\n${extra}exec ${JSON.stringify(process.execPath)} ${JSON.stringify(fixtureServer)} "$@"\n`;
    writeFileSync(server, script(''), { mode: 0o755 });
    writeStdioConnector(folder, './bin/server', ['--stdio', '--pid-file', marker]);
    assert.match(run(['trust']).stdout, /\(runs bin\/server sha256:/);
    run(['check']);
    assert.equal(existsSync(marker), true, 'the recorded executable did not run');
    rmSync(marker);
    writeFileSync(server, script('echo replaced >&2\n'), { mode: 0o755 });
    const result = run(['check']);
    assert.match(result.stdout, /server "notes" is new or changed since this folder was trusted/);
    assert.equal(existsSync(marker), false, 'the replaced executable ran unapproved');
  });

  test('env values are shown and bound; loader variables are flagged', () => {
    const { folder, marker, run } = workspace('env-values');
    writeStdioConnector(folder, process.execPath, [fixtureServer, '--stdio', '--pid-file', marker], { NODE_OPTIONS: '--require ./lib/telemetry.cjs', API_KEY: '${env:TOKEN_A}' });
    const trusted = run(['trust']);
    assert.match(trusted.stdout, /\(env: API_KEY='\$\{env:TOKEN_A\}', NODE_OPTIONS='--require \.\/lib\/telemetry\.cjs' \[changes what code loads\]\)/);
    assert.match(trusted.stdout, /warning: NODE_OPTIONS changes what code the command loads/);
    assert.doesNotMatch(trusted.stdout, new RegExp(SECRET_A), 'a ${env:…} reference is shown as the reference, never its value');
    writeStdioConnector(folder, process.execPath, [fixtureServer, '--stdio', '--pid-file', marker], { NODE_OPTIONS: '--require ./lib/other.cjs', API_KEY: '${env:TOKEN_A}' });
    const result = run(['check']);
    assert.match(result.stdout, /server "notes" is new or changed since this folder was trusted/);
    assert.equal(existsSync(marker), false);
  });

  test('a folder reached through a symbolic link matches its record, and toolpin trust <link> works', () => {
    const { folder, marker, run } = workspace('linked');
    writeStdioConnector(folder, process.execPath, [fixtureServer, '--stdio', '--pid-file', marker]);
    const link = path.join(scratch, 'linked-link');
    symlinkSync(folder, link);
    const trusted = run(['trust', link], scratch);
    assert.equal(trusted.status, 0, trusted.stderr);
    // Checked through the link (named as the workspace), and through the real path, the record covers it.
    for (const args of [['check', '--workspace', 'linked-link', 'linked-link'], ['check', '--workspace', folder, folder]]) {
      rmSync(marker, { force: true });
      const result = run(args, scratch);
      assert.equal(result.status, 0, `${args.join(' ')}: ${result.stdout}`);
      assert.equal(existsSync(marker), true, `${args.join(' ')}: the recorded server did not run`);
    }
    // Trusted through the real path, checked through the link: the same.
    assert.equal(run(['trust', '--revoke']).status, 0);
    assert.equal(run(['trust']).status, 0);
    rmSync(marker, { force: true });
    const throughLink = run(['check', '--workspace', link, link], scratch);
    assert.equal(throughLink.status, 0, throughLink.stdout);
    assert.equal(existsSync(marker), true);
  });

  test('a record writable by others (or owned by another user) is ignored, saying why', () => {
    const { folder, config, marker, run } = workspace('record-mode');
    writeStdioConnector(folder, process.execPath, [fixtureServer, '--stdio', '--pid-file', marker]);
    assert.equal(run(['trust']).status, 0);
    const record = path.join(config, 'toolpin', 'trust.json');
    chmodSync(record, 0o666);
    const result = run(['check']);
    assert.match(result.stderr, /ignoring the trust record .*trust\.json: it is writable by its group \(mode 666\)/);
    assert.match(result.stdout, /the folder is not trusted/);
    assert.equal(existsSync(marker), false, 'a record others can write was honoured');
    chmodSync(record, 0o600);
    if (process.getuid?.() === 0) {
      // Only root can give a file away; as root, a record owned by another user is ignored too.
      chownSync(record, 65534, 65534);
      const foreign = run(['check']);
      assert.match(foreign.stderr, /ignoring the trust record .*: it is owned by user 65534, not by you \(0\)/);
      assert.equal(existsSync(marker), false, "another user's record was honoured");
      chownSync(record, 0, 0);
    }
    run(['check']);
    assert.equal(existsSync(marker), true, 'the control: the user\'s own record is honoured');
  });

  test('a record made before this change asks again, saying why', () => {
    const { folder, config, marker, run } = workspace('outdated');
    const args = [fixtureServer, '--stdio', '--pid-file', marker];
    writeStdioConnector(folder, process.execPath, args);
    // The record as the earlier Toolpin wrote it: its fingerprint over command, args, env, cwd and credentials.
    const oldFingerprint = `sha256:${sha256Hex(canonicalJson({ kind: 'stdio', command: process.execPath, args, env: {}, cwd: folder, credentials: [] }))}`;
    mkdirSync(path.join(config, 'toolpin'), { mode: 0o700 });
    const oldRecord = { version: 1, folders: { [folder]: { trustedAt: '2026-01-01T00:00:00.000Z', servers: [{ fingerprint: oldFingerprint, display: 'node fixture-server.mjs', name: 'notes' }] } } };
    writeFileSync(path.join(config, 'toolpin', 'trust.json'), JSON.stringify(oldRecord), { mode: 0o600 });
    const result = run(['check']);
    assert.match(result.stdout, /server "notes" is asked again because the record was made by an earlier Toolpin, which did not bind the scripts a command runs, its env values, or the variables a URL, header or auth sends, so Toolpin did not run/);
    assert.equal(existsSync(marker), false);
    assert.equal(run(['trust']).status, 0);
    run(['check']);
    assert.equal(existsSync(marker), true, 'trusted again, the server runs');
  });
});
