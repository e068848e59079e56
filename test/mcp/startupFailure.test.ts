/**
 * A stdio server that fails to start is reported with the line of its standard error that says
 * why (for Node, `Error: Cannot find module '…'`), not with the last bytes it wrote (the closing
 * brace of the error's properties and the "Node.js v20" footer), not with the symptom seen on the
 * protocol stream ("write EPIPE", "the connection closed"), and with secrets redacted.
 *
 * The failing servers are real processes: plain `node` running a script that requires a module
 * that does not exist, which prints Node's own multi-line stack.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';

import type { ServerDefinition } from '../../server/src/core/verify/registry';
import { environmentCredentials, Redactor } from '../../server/src/mcp/credentials';
import { summarizeStderr } from '../../server/src/mcp/processTransport';
import { McpSession, SessionError } from '../../server/src/mcp/session';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'toolpin-startup-failure-'));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

function script(name: string, text: string): string {
  const file = path.join(scratch, name);
  fs.writeFileSync(file, text);
  return file;
}

function definition(name: string, args: readonly string[]): ServerDefinition {
  return { name, origin: { kind: 'user-setting' }, transport: { kind: 'stdio', command: process.execPath, args: [...args], env: {} }, auth: undefined, unusable: undefined, cwd: scratch };
}

/** Opens a session that must fail, and returns the failure. */
async function failedOpen(server: ServerDefinition, redactor = new Redactor()): Promise<{ error: SessionError; logs: string[] }> {
  const logs: string[] = [];
  try {
    const session = await McpSession.open(server, { credentials: environmentCredentials({}), redactor, requestTimeoutMs: 8000, maxPages: 10, clientVersion: '0.0.0-test', log: (line) => logs.push(line) });
    await session.close();
  } catch (error) {
    assert.ok(error instanceof SessionError, `a SessionError, got ${String(error)}`);
    return { error, logs };
  }
  assert.fail('the session opened, but the server cannot start');
}

describe('a stdio server that fails to start', () => {
  test('MODULE_NOT_FOUND (CommonJS) is reported with the "Cannot find module" line and the exit code', { timeout: 20_000 }, async () => {
    const missing = path.join(scratch, 'node_modules', 'no-such-server', 'dist', 'index.js');
    const entry = script('cjs-entry.cjs', `require(${JSON.stringify(missing)});\n`);
    const { error, logs } = await failedOpen(definition('cjs', [entry]));
    assert.equal(error.reason, 'crashed');
    assert.equal(error.message, `the server exited with code 1 before it answered (server said: Error: Cannot find module '${missing}')`);
    // The whole stack still reaches the log, line by line, for whoever needs more.
    assert.ok(logs.some((line) => line.startsWith('[cjs stderr] Require stack:')), logs.join('\n'));
    assert.ok(logs.some((line) => /^\[cjs stderr\] Node\.js v\d/.test(line)), logs.join('\n'));
  });

  test('a missing package of an ES module is reported with the ERR_MODULE_NOT_FOUND line', { timeout: 20_000 }, async () => {
    const entry = script('esm-entry.mjs', "import '@toolpin-test/no-such-package';\n");
    const { error } = await failedOpen(definition('esm', [entry]));
    assert.equal(error.reason, 'crashed');
    assert.match(error.message, /^the server exited with code 1 before it answered \(server said: Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package '@toolpin-test\/no-such-package' imported from .*esm-entry\.mjs\)$/);
    assert.doesNotMatch(error.message, /EPIPE|Node\.js v|\| \}/);
  });

  test('a secret in the error line is redacted', { timeout: 20_000 }, async () => {
    const secret = 'tp-secret-7f3a91c2';
    const entry = script('secret-entry.cjs', `console.error('starting');\nthrow new Error('the token ${secret} was refused');\n`);
    const redactor = new Redactor();
    redactor.add(secret);
    const { error, logs } = await failedOpen(definition('secret', [entry]), redactor);
    assert.equal(error.message, 'the server exited with code 1 before it answered (server said: Error: the token «redacted» was refused)');
    assert.ok(!logs.join('\n').includes(secret), 'the log is redacted too');
  });

  test('a server that exits without writing anything says only how it exited', { timeout: 20_000 }, async () => {
    const { error } = await failedOpen(definition('silent', ['-e', 'process.exit(3)']));
    assert.equal(error.reason, 'crashed');
    assert.equal(error.message, 'the server exited with code 3 before it answered');
  });
});

describe('summarizeStderr', () => {
  const NODE_CJS = [
    'node:internal/modules/cjs/loader:1210',
    '  throw err;',
    '  ^',
    '',
    "Error: Cannot find module '/x/node_modules/a/index.js'",
    '    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)',
    '    at node:internal/main/run_main_module:28:49 {',
    "  code: 'MODULE_NOT_FOUND',",
    '  requireStack: []',
    '}',
    '',
    'Node.js v20.20.2',
    '',
  ].join('\n');

  test('Node: the error line, not the footer', () => {
    assert.equal(summarizeStderr(NODE_CJS), "Error: Cannot find module '/x/node_modules/a/index.js'");
  });

  test('the error line wins over any line after it', () => {
    assert.equal(summarizeStderr("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'\nshutting down\n"), "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x'");
    assert.equal(summarizeStderr('listening\nUncaught TypeError: tools is not iterable\nbye\n'), 'Uncaught TypeError: tools is not iterable');
    assert.equal(summarizeStderr('ready\njava.lang.IllegalStateException: no config\n\tat Main.main(Main.java:3)\n'), 'java.lang.IllegalStateException: no config');
    // Words that merely end in "error" are not errors.
    assert.equal(summarizeStderr('terror: a word\nthe last word\n'), 'the last word');
  });

  test('a start-up banner before the error is passed over', () => {
    assert.equal(summarizeStderr(`Knowledge Graph MCP Server running on stdio\r\n${NODE_CJS}`), "Error: Cannot find module '/x/node_modules/a/index.js'");
  });

  test('Python: the exception line after the traceback frames', () => {
    const python = ['Traceback (most recent call last):', '  File "/srv/server.py", line 1, in <module>', '    import mcp', "ModuleNotFoundError: No module named 'mcp'", ''].join('\n');
    assert.equal(summarizeStderr(python), "ModuleNotFoundError: No module named 'mcp'");
  });

  test('command-line tools: "error:" after a program name', () => {
    assert.equal(summarizeStderr('usage: server.py [-h] [--port PORT]\nserver.py: error: unrecognized arguments: --stdio\n'), 'server.py: error: unrecognized arguments: --stdio');
  });

  test('no error line: the last line that is not noise', () => {
    assert.equal(summarizeStderr('Starting server...\nconfig file /etc/x.toml is unreadable\n}\n'), 'config file /etc/x.toml is unreadable');
  });

  test('nothing useful: undefined', () => {
    assert.equal(summarizeStderr(''), undefined);
    assert.equal(summarizeStderr('\n  \n}\n\nNode.js v20.20.2\n'), undefined);
  });

  test('a very long line is cut to 300 characters', () => {
    const summary = summarizeStderr(`Error: ${'x'.repeat(1000)}`);
    assert.equal(summary?.length, 300);
    assert.ok(summary?.endsWith('…'));
  });
});
