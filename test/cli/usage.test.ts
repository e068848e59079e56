/**
 * The CLI says what happened: each command takes only its own options (a wrong one fails with that
 * command's usage and a message naming the option), `toolpin <command> --help` prints that
 * command's help, a workspace folder that does not exist is said to not exist, a folder with no
 * blueprint or connector file is not a pass, and `history` says why a filter or a live status gave
 * nothing. Every test runs the built dist/cli.js under plain `node`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseCheckReport } from '../support/checkReport';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
/** The project's own fixtures are trusted for the run, as CI trusts its own branches (docs/formats.md §10). */
const TRUSTED_ENV = { ...process.env, TOOLPIN_TRUST: '1' };
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');

function run(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000, input: '', env: TRUSTED_ENV });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const DISPATCH = (seq: number, tool: string, hash: string) =>
  JSON.stringify({
    type: 'MCP_DISPATCHED',
    seq,
    at: `2026-11-20T10:${String(seq).padStart(2, '0')}:00.000Z`,
    executionId: `exec_${seq}`,
    blueprint: 'flow',
    stepId: 'shout',
    data: { toolName: tool, server: 'demo', schemaHash: hash },
  });

let scratch: string;
before(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-usage-'));
});
after(() => rmSync(scratch, { recursive: true, force: true }));

describe('each command takes only its own options', () => {
  test('hash --stale --yes --tool x fails with exit 2, names --stale and prints the usage of hash', () => {
    const result = run(root, 'hash', '--stale', '--yes', '--tool', 'x');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /^toolpin hash: unknown option --stale \(an option of toolpin history, not of toolpin hash\)/);
    assert.match(result.stderr, /Usage: toolpin hash <file\|->/);
    assert.doesNotMatch(result.stderr, /--concurrency/, 'only the options of hash are listed');
    assert.equal(result.stdout, '');
  });

  test('an option of another command is refused by each command', () => {
    const cases: Array<[string[], RegExp]> = [
      [['check', '--yes'], /toolpin check: unknown option --yes \(an option of toolpin pin, toolpin trust, not of toolpin check\)/],
      [['check', '--tool', 'x'], /toolpin check: unknown option --tool/],
      [['pin', '--format', 'json'], /toolpin pin: unknown option --format/],
      [['pin', '--offline'], /toolpin pin: unknown option --offline/],
      [['history', '--yes'], /toolpin history: unknown option --yes/],
      [['lsp', '--stdio', '--offline'], /toolpin lsp: unknown option --offline/],
      [['check', '--nonsense'], /toolpin check: unknown option --nonsense\n/],
    ];
    for (const [args, message] of cases) {
      const result = run(scratch, ...args);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
      assert.match(result.stderr, new RegExp(`Usage: toolpin ${args[0]} `), args.join(' '));
    }
  });

  test('a missing option value is a usage error naming the option', () => {
    const result = run(scratch, 'history', '--tool');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /toolpin history: .*--tool/);
    assert.match(result.stderr, /Usage: toolpin history /);
  });

  test('<command> --help prints that command\'s help and exits 0; help <command> too', () => {
    for (const command of ['hash', 'check', 'pin', 'history', 'lsp']) {
      const result = run(scratch, command, '--help');
      assert.equal(result.status, 0, command);
      assert.match(result.stdout, new RegExp(`^Usage: toolpin ${command}`), command);
      assert.equal(run(scratch, 'help', command).stdout, result.stdout);
    }
    const pin = run(scratch, 'pin', '-h').stdout;
    assert.match(pin, /--remove-missing/);
    assert.match(pin, /Exit status: 0 nothing drifted or missing/);
    assert.doesNotMatch(pin, /--stale/);
    const top = run(scratch, '--help');
    assert.equal(top.status, 0);
    assert.match(top.stdout, /toolpin <command> --help/);
  });

  test('options before the command, and unknown commands, are usage errors', () => {
    const early = run(scratch, '--format', 'json', 'check');
    assert.equal(early.status, 2);
    assert.match(early.stderr, /the command comes first/);
    const unknown = run(scratch, 'frobnicate');
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
  });
});

describe('a usage error is short and suggests what was meant (issue 26)', () => {
  test('a misspelt option: the wrong option, a did-you-mean and the usage line, not the whole help', () => {
    const result = run(scratch, 'check', '--ofline');
    assert.equal(result.status, 2);
    assert.equal(
      result.stderr,
      'toolpin check: unknown option --ofline; did you mean --offline?\n' +
        'Usage: toolpin check [paths…] [--format text|json|sarif|markdown] [--sarif-file FILE] [--workspace DIR] [--offline|--structure-only] [--fail-on security|drift|warning] [--trust] [--timeout MS] [--start-timeout MS] [--concurrency N]\n' +
        '(toolpin check --help describes every option)\n',
    );
    assert.match(run(scratch, 'pin', '--remove-mising').stderr, /unknown option --remove-mising; did you mean --remove-missing\?/);
    assert.match(run(scratch, 'history', '--timout', '5').stderr, /unknown option --timout; did you mean --timeout\?/);
  });

  test('a misspelt command: a did-you-mean and the list of commands', () => {
    const result = run(scratch, 'chekc', 'x.connector.json');
    assert.equal(result.status, 2);
    assert.match(result.stderr, /^toolpin: unknown command "chekc"; did you mean check\?\nUsage: toolpin <command> \[options\] {3}\(commands: hash, check, pin, history, trust, lsp/);
    assert.doesNotMatch(result.stderr, /Each command has its own options/, 'not the whole help');
    assert.match(run(scratch, 'help', 'pinn').stderr, /unknown command "pinn"; did you mean pin\?/);
    assert.doesNotMatch(run(scratch, 'frobnicate').stderr, /did you mean/, 'nothing is suggested for a word close to no command');
  });

  test("every command's usage line lists every option its help describes", () => {
    for (const command of ['hash', 'check', 'pin', 'history', 'trust', 'lsp']) {
      const help = run(scratch, command, '--help').stdout;
      const [usageLine] = help.split('\n');
      const optionsPart = help.slice(help.indexOf('Options:\n'));
      const described = new Set([...optionsPart.matchAll(/^ {2}(?:-\w, )? *--([\w-]+)/gm)].map((match) => match[1]!).filter((name) => name !== 'help'));
      const inUsage = new Set([...usageLine!.matchAll(/--([\w-]+)/g)].map((match) => match[1]!));
      assert.ok(described.size > 0, `${command}: the help describes options`);
      assert.deepEqual([...inUsage].sort(), [...described].sort(), `${command}: ${usageLine}`);
    }
  });
});

describe('the CLI says what happened', () => {
  test('--workspace naming a folder that does not exist says so (exit 2) and starts nothing', () => {
    const missing = path.join(scratch, 'no-such-folder');
    for (const command of ['check', 'pin', 'history']) {
      const result = run(scratch, command, '--workspace', missing);
      assert.equal(result.status, 2, command);
      assert.match(result.stderr, new RegExp(`toolpin ${command}: the workspace folder .*no-such-folder does not exist`), command);
      assert.doesNotMatch(result.stdout + result.stderr, /cannot start/, command);
    }
  });

  test('a folder with no blueprint or connector file: check and pin say so and exit 2', () => {
    const empty = path.join(scratch, 'empty');
    mkdirSync(path.join(empty, 'docs'), { recursive: true });
    writeFileSync(path.join(empty, 'docs', 'notes.json'), '{}');
    const check = run(empty, 'check');
    assert.equal(check.status, 2);
    assert.match(check.stderr, /toolpin check: no blueprint or connector file \(\*\.blueprint\.json\[c\], \*\.connector\.json\[c\]\) under the current folder; nothing was verified/);
    const named = run(scratch, 'check', 'empty');
    assert.equal(named.status, 2);
    assert.match(named.stderr, /under empty;/);
    const json = run(empty, 'check', '--format', 'json');
    assert.equal(json.status, 2);
    assert.equal(parseCheckReport(json.stdout).files.length, 0);
    const pin = run(empty, 'pin');
    assert.equal(pin.status, 2);
    assert.match(pin.stderr, /toolpin pin: no blueprint or connector file/);
  });

  test('history --tool naming no tool of the logs says so, lists the tools, and exits 2', () => {
    const logs = path.join(scratch, 'history-tools');
    mkdirSync(logs, { recursive: true });
    writeFileSync(path.join(logs, 'run.events.jsonl'), `${DISPATCH(1, 'echo_upper', 'fnv1a64:a76fe8d6d023fca0')}\n${DISPATCH(2, 'add_numbers', 'fnv1a64:d21cac35ccab9a0e')}\n`);
    const result = run(logs, 'history', '--offline', '--tool', 'nope');
    assert.equal(result.status, 2, result.stdout + result.stderr);
    assert.match(result.stderr, /toolpin history: no execution called tool "nope"; tools in the logs: add_numbers, echo_upper/);
    const empty = path.join(scratch, 'history-empty');
    mkdirSync(empty, { recursive: true });
    writeFileSync(path.join(empty, 'run.events.jsonl'), '');
    const none = run(empty, 'history', '--offline', '--tool', 'nope');
    assert.equal(none.status, 2);
    assert.match(none.stderr, /no execution called tool "nope"; the logs hold no executions \(1 log read\)/);
  });

  test('history outside the workspace says why the live status is unknown and where it looked', () => {
    const workspace = path.join(scratch, 'history-workspace');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio'] } } }));
    writeFileSync(path.join(workspace, 'run.events.jsonl'), `${DISPATCH(1, 'echo_upper', 'fnv1a64:a76fe8d6d023fca0')}\n`);
    const elsewhere = path.join(scratch, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const outside = run(elsewhere, 'history', path.join(workspace, 'run.events.jsonl'));
    assert.equal(outside.status, 2, outside.stdout + outside.stderr);
    assert.match(outside.stdout, /live unknown: no server named "demo" is configured for the workspace \(the current folder\) \(it configures none\)/);
    assert.match(outside.stderr, /the live status of 1 server is unknown: "demo" is not configured for the workspace \(the current folder\) .*--workspace DIR/);
    const inside = run(elsewhere, 'history', '--workspace', workspace, path.join(workspace, 'run.events.jsonl'));
    assert.equal(inside.status, 0, inside.stdout + inside.stderr);
    assert.match(inside.stdout, /pinned\+live|live /);
    assert.doesNotMatch(inside.stderr, /live status/);
  });
});
