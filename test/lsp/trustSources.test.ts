/**
 * What the language server may start, by where a server definition comes from (issue 22 §4),
 * through the real built server over stdio. Every server here is the fixture server with
 * `--pid-file`, so "nothing started" is checked on the disk. The server process runs in the
 * project folder, as Neovim and most clients start it.
 * - Documents that are not local files (git:, vscode-vfs:, untitled:) get structure checks only,
 *   even in a folder the client says is trusted.
 * - Servers from `workspace/configuration` and from `initializationOptions` (toolpin.servers) are
 *   workspace content: nothing of theirs starts in a folder that is not trusted.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { repoRoot, startTestServer } from '../support/lspClient';

const root = repoRoot();
const cli = path.join(root, 'dist', 'cli.js');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const TOOL_PIN = 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454';

const messageOf = (diagnostic: Diagnostic): string => (typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function project(): { folder: string; config: string; marker: string; cleanup: () => void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-lsp-sources-'));
  const config = `${folder}-config`;
  mkdirSync(config, { mode: 0o700 });
  return { folder, config, marker: path.join(folder, 'server-ran.pid'), cleanup: () => [folder, config].forEach((dir) => rmSync(dir, { recursive: true, force: true })) };
}

function connectorText(marker: string): string {
  return JSON.stringify({
    name: 'notes',
    type: 'api',
    provider: 'mcp',
    providerConfig: { transport: { kind: 'stdio', command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker] }, include: ['echo_upper'], toolsSnapshot: { echo_upper: TOOL_PIN } },
    auth: { type: 'none' },
  });
}

/** A blueprint step on server "demo", which only the toolpin.servers setting defines. */
const BLUEPRINT = JSON.stringify({ blueprint: 'shout', formatVersion: 1, steps: [{ id: 'shout', effect: 'mcp.invoke', input: { toolName: 'echo_upper', server: 'demo', expectedSchemaHash: 'fnv1a64:0000000000000000' } }] });

describe('documents that are not local files start nothing', () => {
  for (const scheme of ['git', 'vscode-vfs', 'untitled'] as const) {
    test(`a ${scheme}: connector in a folder the client trusts gets structure checks only`, async () => {
      const { folder, config, marker, cleanup } = project();
      const server = await startTestServer({ rootUri: `file://${folder}`, trusted: true, cwd: folder, env: { ...process.env, XDG_CONFIG_HOME: config } });
      try {
        const uri =
          scheme === 'git'
            ? `git:${folder}/notes.connector.jsonc`
            : scheme === 'vscode-vfs'
              ? 'vscode-vfs://github/someone/project/notes.connector.jsonc'
              : 'untitled:notes.connector.jsonc';
        // A structure problem too (a duplicate key), so the structure checks are seen to run.
        server.open(uri, connectorText(marker).replace('"type":"api"', '"type":"api","type":"api"'));
        const published = await server.diagnostics(uri, (params) => params.diagnostics.some((d) => /not a local file/.test(messageOf(d))), 15_000);
        const messages = published.diagnostics.map(messageOf);
        assert.ok(messages.some((m) => /cannot verify/.test(m) && /a document that is not a local file \(git:, vscode-vfs:, untitled:\) gets structure checks only/.test(m)), messages.join('\n'));
        assert.ok(published.diagnostics.some((d) => d.code === 'TP101'), `no structure check ran:\n${messages.join('\n')}`);
        await sleep(500);
        assert.equal(existsSync(marker), false, `a ${scheme}: document started its command`);
      } finally {
        await server.stop();
        cleanup();
      }
    });
  }

  test("a git: blueprint naming the trusted folder's .mcp.json server: its name resolves (no TP406), nothing starts", async () => {
    const { folder, config, marker, cleanup } = project();
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker] } } }));
    const server = await startTestServer({ rootUri: `file://${folder}`, trusted: true, cwd: folder, env: { ...process.env, XDG_CONFIG_HOME: config } });
    try {
      const uri = `git:${folder}/shout.blueprint.jsonc`;
      server.open(uri, BLUEPRINT);
      const published = await server.diagnostics(uri, (params) => params.diagnostics.length > 0, 15_000);
      const messages = published.diagnostics.map(messageOf);
      assert.ok(messages.some((m) => /"demo": a document that is not a local file/.test(m)), messages.join('\n'));
      assert.ok(!published.diagnostics.some((d) => d.code === 'TP406'), `a configured server was reported unknown:\n${messages.join('\n')}`);
      await sleep(500);
      assert.equal(existsSync(marker), false, 'a git: blueprint started the folder\'s server');
    } finally {
      await server.stop();
      cleanup();
    }
  });

  test('control: the same connector as a file: document in the trusted folder starts its server', async () => {
    const { folder, config, marker, cleanup } = project();
    const server = await startTestServer({ rootUri: `file://${folder}`, trusted: true, cwd: folder, env: { ...process.env, XDG_CONFIG_HOME: config } });
    try {
      const file = path.join(folder, 'notes.connector.jsonc');
      writeFileSync(file, connectorText(marker));
      server.open(`file://${file}`, connectorText(marker));
      for (let waited = 0; waited < 15_000 && !existsSync(marker); waited += 100) await sleep(100);
      assert.equal(existsSync(marker), true, 'the trusted file: document did not start its server');
    } finally {
      await server.stop();
      cleanup();
    }
  });
});

describe('servers from the client settings are workspace content', () => {
  const servers = (marker: string): unknown => ({ demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--pid-file', marker] } });

  for (const source of ['workspace/configuration', 'initializationOptions'] as const) {
    test(`toolpin.servers from ${source} starts nothing in a folder that is not trusted`, async () => {
      const { folder, config, marker, cleanup } = project();
      const blueprint = path.join(folder, 'shout.blueprint.jsonc');
      writeFileSync(blueprint, BLUEPRINT);
      const server = await startTestServer({
        rootUri: `file://${folder}`,
        trusted: null,
        cwd: folder,
        settings: { servers: servers(marker) },
        configuration: source === 'workspace/configuration',
        env: { ...process.env, XDG_CONFIG_HOME: config },
      });
      try {
        server.open(`file://${blueprint}`, BLUEPRINT);
        const published = await server.diagnostics(`file://${blueprint}`, (params) => params.diagnostics.length > 0, 15_000);
        const messages = published.diagnostics.map(messageOf);
        assert.ok(messages.some((m) => /the folder is not trusted, so Toolpin did not run `.*fixture-server\.mjs --stdio --pid-file /.test(m)), messages.join('\n'));
        await sleep(500);
        assert.equal(existsSync(marker), false, `a ${source} server started in an untrusted folder`);
      } finally {
        await server.stop();
        cleanup();
      }
    });
  }

  test('control: once the folder is recorded with toolpin trust, the setting\'s server starts', async () => {
    const { folder, config, marker, cleanup } = project();
    const blueprint = path.join(folder, 'shout.blueprint.jsonc');
    writeFileSync(blueprint, BLUEPRINT);
    const trusted = spawnSync(process.execPath, [cli, 'trust', folder], { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: config }, input: '' });
    assert.equal(trusted.status, 0, trusted.stderr);
    const server = await startTestServer({ rootUri: `file://${folder}`, trusted: null, cwd: folder, settings: { servers: servers(marker) }, configuration: true, env: { ...process.env, XDG_CONFIG_HOME: config } });
    try {
      server.open(`file://${blueprint}`, BLUEPRINT);
      for (let waited = 0; waited < 15_000 && !existsSync(marker); waited += 100) await sleep(100);
      assert.equal(existsSync(marker), true, 'the recorded folder\'s setting server did not start');
    } finally {
      await server.stop();
      cleanup();
    }
  });
});

describe('a recorded folder in the language server binds the scripts a command runs', () => {
  test('node srv.mjs runs as recorded; rewritten by a pull, it does not run and the pin says why', async () => {
    const { folder, config, marker, cleanup } = project();
    const script = path.join(folder, 'srv.mjs');
    writeFileSync(script, `import ${JSON.stringify(fixtureServer)};\n`);
    writeFileSync(path.join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: ['srv.mjs', '--stdio', '--pid-file', marker] } } }));
    const blueprint = path.join(folder, 'shout.blueprint.jsonc');
    writeFileSync(blueprint, BLUEPRINT);
    const trusted = spawnSync(process.execPath, [cli, 'trust', folder], { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: config }, input: '' });
    assert.match(trusted.stdout, /runs srv\.mjs sha256:/);
    const open = async (): Promise<string[]> => {
      const server = await startTestServer({ rootUri: `file://${folder}`, trusted: null, cwd: folder, env: { ...process.env, XDG_CONFIG_HOME: config } });
      try {
        server.open(`file://${blueprint}`, BLUEPRINT);
        return (await server.diagnostics(`file://${blueprint}`, (params) => params.diagnostics.length > 0, 15_000)).diagnostics.map(messageOf);
      } finally {
        await server.stop();
      }
    };
    try {
      const recorded = await open();
      assert.ok(recorded.some((m) => /changed since it was pinned/.test(m)), `the recorded script was not listed:\n${recorded.join('\n')}`);
      assert.equal(existsSync(marker), true, 'the recorded script did not run');
      rmSync(marker);
      writeFileSync(script, `import ${JSON.stringify(fixtureServer)};\n// a pull changed this file\n`);
      const refused = await open();
      assert.ok(refused.some((m) => /server "demo" is new or changed since this folder was trusted, so Toolpin did not run `.*srv\.mjs --stdio/.test(m)), refused.join('\n'));
      await sleep(300);
      assert.equal(existsSync(marker), false, 'the rewritten script ran');
    } finally {
      cleanup();
    }
  });
});
