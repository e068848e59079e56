/**
 * `toolpin trust` shows what it binds and, on a terminal, asks before recording (issue 26). The
 * terminal is a real pseudo-terminal: util-linux `script -qec` runs dist/cli.js on one and feeds it
 * the answer typed on standard input. Without a terminal (a pipe) it records and prints, as
 * scripts expect. The user's configuration folder is temporary.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

/** Quotes a word for the shell `script -c` runs the command line in. */
const shellQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

describe('toolpin trust shows what it binds and asks on a terminal', () => {
  let scratch: string;
  let folder: string;
  let config: string;
  const record = (): string => path.join(config, 'toolpin', 'trust.json');

  before(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-trust-prompt-'));
    folder = path.join(scratch, 'project');
    mkdirSync(folder);
    writeFileSync(
      path.join(folder, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          local: { command: 'node', args: ['srv.mjs'], env: { NODE_OPTIONS: '--require ./lib/telemetry.cjs', TOKEN: '${env:MY_TOKEN}' } },
          crm: { type: 'http', url: 'https://crm.invalid/mcp', headers: { Authorization: 'Bearer ${env:CRM_TOKEN}' } },
        },
      }),
    );
    writeFileSync(path.join(folder, 'srv.mjs'), '// the server\n');
  });

  after(() => rmSync(scratch, { recursive: true, force: true }));

  const fresh = (): void => {
    config = path.join(scratch, `config-${Math.random().toString(36).slice(2)}`);
    mkdirSync(config, { mode: 0o700 });
  };

  /** Runs `toolpin trust …` on a pseudo-terminal, typing `answer`. */
  const onTerminal = (args: string[], answer: string): { status: number | null; output: string } => {
    const line = [process.execPath, cli, 'trust', ...args].map(shellQuote).join(' ');
    const result = spawnSync('script', ['-qec', line, '/dev/null'], {
      cwd: scratch,
      input: answer,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, XDG_CONFIG_HOME: config, MY_TOKEN: 'my-secret-value-1', CRM_TOKEN: 'crm-secret-value-2' },
    });
    assert.equal(result.error, undefined, `script could not run: ${String(result.error)}`);
    return { status: result.status, output: result.stdout };
  };

  const assertShowsBinding = (output: string): void => {
    assert.match(output, /local: node srv\.mjs \(env: NODE_OPTIONS='--require \.\/lib\/telemetry\.cjs' \[changes what code loads\], TOKEN='\$\{env:MY_TOKEN\}'\) \(runs srv\.mjs sha256:[0-9a-f]{12}/);
    assert.match(output, /warning: NODE_OPTIONS changes what code the command loads/);
    assert.match(output, /crm: https:\/\/crm\.invalid\/mcp \(sends header Authorization \$\{env:CRM_TOKEN\}\)/);
    assert.doesNotMatch(output, /my-secret-value-1|crm-secret-value-2/);
  };

  test('declined: shows the commands, env values, URLs and credential names, asks, records nothing, exits 1', () => {
    fresh();
    const { status, output } = onTerminal(['project'], 'n\n');
    assertShowsBinding(output);
    assert.match(output, /Record this trust\? \[y\/N\]/);
    assert.match(output, /Nothing recorded; the folder stays as it was\./);
    assert.equal(status, 1, output);
    assert.equal(existsSync(record()), false, 'a declined trust was recorded');
  });

  // An empty answer, not Ctrl-D: typed before Node puts the terminal in raw mode, Ctrl-D is an
  // end of file the line discipline may deliver before anything reads it (a race under load).
  test('an empty answer (Enter) is no', () => {
    fresh();
    const { status } = onTerminal(['project'], '\n');
    assert.equal(status, 1);
    assert.equal(existsSync(record()), false);
  });

  test('accepted: records what it showed', () => {
    fresh();
    const { status, output } = onTerminal(['project'], 'y\n');
    assertShowsBinding(output);
    assert.equal(status, 0, output);
    assert.match(output, /Trusted project\./);
    const saved = readFileSync(record(), 'utf8');
    assert.match(saved, /"name": "local"/);
    assert.doesNotMatch(saved, /my-secret-value-1|crm-secret-value-2/);
  });

  test('--yes on a terminal records without asking', () => {
    fresh();
    const { status, output } = onTerminal(['project', '--yes'], '');
    assert.equal(status, 0, output);
    assert.doesNotMatch(output, /Record this trust\?/);
    assertShowsBinding(output);
    assert.equal(existsSync(record()), true);
  });

  test('without a terminal it records and prints, as before', () => {
    fresh();
    const result = spawnSync(process.execPath, [cli, 'trust', 'project'], { cwd: scratch, input: 'n\n', encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: config } });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^Trusted project\. Toolpin may now run, in /m);
    assertShowsBinding(result.stdout);
    assert.doesNotMatch(result.stdout, /Record this trust\?/);
    assert.equal(existsSync(record()), true);
  });
});
