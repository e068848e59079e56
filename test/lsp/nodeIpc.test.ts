/**
 * `toolpin lsp --node-ipc`, the way VS Code starts the server: vscode-languageclient forks
 * dist/cli.js with `lsp` and appends `--node-ipc --clientProcessId=<pid>`, then speaks JSON-RPC
 * over the fork's IPC channel. The test does the same with the protocol library's IPC reader and
 * writer, so it covers what the extension runs without an editor; and the usage errors of `lsp`.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, fork, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import {
  createProtocolConnection,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  IPCMessageReader,
  IPCMessageWriter,
  PublishDiagnosticsNotification,
  type PublishDiagnosticsParams,
  ShutdownRequest,
} from 'vscode-languageserver-protocol/node';
import { repoRoot } from '../support/lspClient';

const cli = path.join(repoRoot(), 'dist', 'cli.js');

/** A blueprint whose only problem is a malformed schema pin (TP204). */
const MALFORMED_PIN = `{
  "blueprint": "triage",
  "formatVersion": 1,
  "steps": [
    { "id": "open-issue", "effect": "mcp.invoke", "input": { "toolName": "create_issue", "expectedSchemaHash": "fnv1a64:123" } }
  ]
}
`;

function exitOf(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(() => reject(new Error(`the server did not exit within ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('toolpin lsp --node-ipc (how VS Code starts the server)', () => {
  test('answers initialize, publishes diagnostics over IPC and exits 0 after shutdown and exit', async () => {
    const child = fork(cli, ['lsp', '--node-ipc', `--clientProcessId=${process.pid}`], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const connection = createProtocolConnection(new IPCMessageReader(child), new IPCMessageWriter(child));
    const uri = 'file:///ws/ipc.blueprint.jsonc';
    const published = new Promise<PublishDiagnosticsParams>((resolve) => {
      connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
        if (params.uri === uri) resolve(params);
      });
    });
    connection.onRequest('workspace/configuration', () => [{}]);
    connection.listen();
    try {
      const result = await connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: null,
        capabilities: {},
        initializationOptions: { trusted: false },
      });
      assert.equal(result.serverInfo?.name, 'toolpin');
      assert.match(result.serverInfo?.version ?? '', /^\d+\.\d+\.\d+/);
      await connection.sendNotification(InitializedNotification.type, {});
      await connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'jsonc', version: 1, text: MALFORMED_PIN } });
      const diagnostics = (await published).diagnostics;
      assert.deepEqual(
        diagnostics.map((diagnostic) => [String(diagnostic.code), diagnostic.range.start.line]),
        [['TP204', 4]],
        `stderr: ${stderr}`,
      );
      await connection.sendRequest(ShutdownRequest.type);
      await connection.sendNotification(ExitNotification.type);
      assert.equal(await exitOf(child, 10_000), 0);
      // Over IPC nothing of the protocol goes to standard output.
      assert.doesNotMatch(stdout, /Content-Length|jsonrpc/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      connection.dispose();
    }
  });

  test('exits by itself when the client process named by --clientProcessId is gone', async () => {
    // A process that has already ended: its pid names no running process.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    assert.equal(gone.status, 0);
    const child = fork(cli, ['lsp', '--node-ipc', `--clientProcessId=${gone.stdout}`], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'] });
    try {
      // vscode-languageserver checks the client every 3 seconds; it ends with 1 (no shutdown came).
      assert.equal(await exitOf(child, 15_000), 1);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('toolpin lsp usage errors', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [cli, 'lsp', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 });

  for (const [args, message] of [
    [[], /toolpin lsp: give exactly one of --stdio and --node-ipc/],
    [['--stdio', '--node-ipc'], /toolpin lsp: give exactly one of --stdio and --node-ipc/],
    [['--stdio', '--clientProcessId=abc'], /toolpin lsp: --clientProcessId takes a positive whole number, got "abc"/],
    // Not forked by a Node parent, so there is no IPC channel to talk over.
    [['--node-ipc'], /toolpin lsp: --node-ipc needs an IPC channel to the parent process/],
  ] as const) {
    test(`toolpin lsp ${args.join(' ') || '(no transport)'} exits 2 and says why`, () => {
      const result = run([...args]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    });
  }

  test('toolpin lsp --help names both transports', () => {
    const result = spawnSync(process.execPath, [cli, 'lsp', '--help'], { encoding: 'utf8' });
    assert.equal(result.status, 0);
    assert.match(result.stdout, /Usage: toolpin lsp --stdio\|--node-ipc/);
    assert.match(result.stdout, /--clientProcessId PID/);
  });
});
