/**
 * The README's Neovim snippets, as a reader would use them. The Neovim 0.7 block is extracted from
 * README.md ("## Other editors") and loaded VERBATIM as init.lua into Debian's Neovim (0.7.x, from
 * scripts/install-test-deps.sh), with `toolpin` on PATH through a shim that runs the built
 * dist/cli.js, exactly as after the README's install step, and with the README's once-per-project
 * `toolpin trust` run in the project's root folder before Neovim starts (its record lives in the
 * test's own XDG_CONFIG_HOME, never the real user's). One test leaves that step out and checks
 * what the README says a user sees then: no server starts, and every pin says what did not run.
 *
 * The Neovim 0.11 block (vim.lsp.config / vim.lsp.enable) cannot run here: Debian ships 0.7, which
 * has neither function, and a stub of them would test the stub. It is only compiled (not run) by
 * the LuaJIT inside Neovim, so a syntax error in it fails this suite; whether 0.11 accepts the
 * configuration is NOT tested.
 *
 * This suite fails, never skips, when nvim is missing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const fixtureServer = path.join(root, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
const observer = path.join(root, 'test', 'nvim', 'observe_readme.lua');

/** How long Neovim is watched after the blueprint is opened: the README's promise to a user. */
const WINDOW_MS = 10_000;

interface Publication {
  at_ms: number;
  file: string;
  diagnostics: Array<{ code?: string; message: string; line: number }>;
}

interface Observation {
  publications: Publication[];
  notifications: Array<{ message: string; level?: number }>;
  unknown_server_seen: boolean;
  messages: string;
  clients: number;
  attached_first: number;
  attached_second?: number;
  open_error?: string;
  window_ended_ms: number;
}

/** The text of the README's "## Other editors" section. */
function readmeOtherEditors(): string {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Other editors\n');
  assert.notEqual(start, -1, 'README.md has no "## Other editors" section');
  const next = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, next === -1 ? undefined : next);
}

/** The ```lua blocks of the README's "## Other editors" section, in order. */
function readmeLuaBlocks(): { nvim07: string; nvim011: string } {
  const section = readmeOtherEditors();
  const blocks = [...section.matchAll(/^```lua\n([\s\S]*?)^```$/gm)].flatMap((match) => match[1] ?? []);
  assert.equal(blocks.length, 2, `"## Other editors" should hold two lua blocks (Neovim 0.7 and 0.11), found ${blocks.length}`);
  const nvim07 = blocks.find((block) => block.includes('vim.lsp.start_client'));
  const nvim011 = blocks.find((block) => block.includes('vim.lsp.enable'));
  assert.ok(nvim07, 'no lua block with vim.lsp.start_client (Neovim 0.7)');
  assert.ok(nvim011, 'no lua block with vim.lsp.enable (Neovim 0.11)');
  return { nvim07, nvim011 };
}

/** nvim's absolute path, so a test can give it a PATH without toolpin (or without anything). */
function nvimPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v nvim'], { encoding: 'utf8' });
  assert.equal(found.status, 0, 'nvim must be installed (scripts/install-test-deps.sh installs Debian\'s neovim)');
  const nvim = found.stdout.trim();
  const version = spawnSync(nvim, ['--version'], { encoding: 'utf8' });
  assert.match(version.stdout, /^NVIM v0\.7\./, 'these tests are written for Debian\'s Neovim 0.7');
  return nvim;
}

/** A bin folder holding only a `toolpin` that runs the built CLI, as `npm install -g .` would. */
function toolpinShim(dir: string): string {
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  const shim = path.join(bin, 'toolpin');
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${path.join(root, 'dist', 'cli.js')}' "$@"\n`);
  chmodSync(shim, 0o755);
  return bin;
}

/**
 * A user's home for one test: Neovim's state and Toolpin's trust record (XDG_CONFIG_HOME) live in
 * it, so nothing is read from or written to the real user's configuration.
 */
interface UserHome {
  readonly dir: string;
  readonly env: Record<string, string>;
}

function userHome(): UserHome {
  const dir = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-home-'));
  return {
    dir,
    env: {
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      XDG_DATA_HOME: path.join(dir, 'data'),
      XDG_STATE_HOME: path.join(dir, 'state'),
      XDG_CACHE_HOME: path.join(dir, 'cache'),
    },
  };
}

/**
 * What the README tells a Neovim user to do once, in the project's root folder: `toolpin trust`,
 * run through the `toolpin` on PATH (the shim) with the user's XDG_CONFIG_HOME.
 */
function toolpinTrust(home: UserHome, bin: string, folder: string): string {
  const run = spawnSync('toolpin', ['trust'], {
    cwd: folder,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...home.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  assert.equal(run.error, undefined, `toolpin trust failed to run: ${String(run.error)}`);
  assert.equal(run.status, 0, `toolpin trust exited ${run.status}; stdout: ${run.stdout}; stderr: ${run.stderr}`);
  return run.stdout;
}

/**
 * Runs Neovim with the README block as init.lua, started in `cwd`, opens `file`, and returns what
 * observe_readme.lua recorded. The window ends early only when `stopWhen` is given and the
 * opened file's latest publication has `count` diagnostics whose message contains `text`.
 */
function runReadmeSnippet(init: string, home: UserHome, cwd: string, file: string, env: Record<string, string>, windowMs: number, options: { thenOpen?: string; stopWhen?: { text: string; count: number } } = {}): Observation {
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-run-'));
  try {
    const initFile = path.join(scratch, 'init.lua');
    writeFileSync(initFile, init);
    const outFile = path.join(scratch, 'observation.json');
    const run = spawnSync(nvimPath(), ['--headless', '-u', initFile, '-i', 'NONE', '-n', '-c', `luafile ${observer}`], {
      cwd,
      encoding: 'utf8',
      timeout: windowMs + 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        // Neovim's own state (the LSP log among it) and Toolpin's trust record stay in the user's scratch home.
        ...home.env,
        TOOLPIN_NVIM_OUT: outFile,
        TOOLPIN_FILE: file,
        TOOLPIN_WINDOW_MS: String(windowMs),
        TOOLPIN_THEN_OPEN: options.thenOpen ?? '',
        TOOLPIN_STOP_TEXT: options.stopWhen?.text ?? '',
        TOOLPIN_STOP_COUNT: String(options.stopWhen?.count ?? 0),
        ...env,
      },
    });
    assert.equal(run.error, undefined, `nvim failed to run: ${String(run.error)}; stderr: ${run.stderr}`);
    let text: string;
    try {
      text = readFileSync(outFile, 'utf8');
    } catch {
      assert.fail(`Neovim wrote no observation (exit ${run.status}); stdout: ${run.stdout}; stderr: ${run.stderr}`);
    }
    return JSON.parse(text) as Observation;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One line per publication, for failure messages: when, which file, which codes. */
function timeline(observation: Observation, workspace: string): string {
  return observation.publications
    .map((publication) => `${publication.at_ms} ms ${path.relative(workspace, publication.file)}: ${publication.diagnostics.map((d) => `${d.code} ${d.message}`).join(' | ') || '(none)'}`)
    .join('\n');
}

/**
 * A folder laid out like examples/: blueprints/ and connectors/ side by side, .jsonc files, and a
 * .mcp.json. Server "demo" is declared ONLY in .mcp.json, server "notes_tools" ONLY in a connector
 * file; both are the fixture server, each started with a control file that has already rewritten
 * one tool when it starts, and each writing its pid to a marker file as it starts (`pidFiles`), so
 * a test can tell whether a server process ever ran.
 */
function examplesLikeWorkspace(): { workspace: string; blueprint: string; connector: string; pidFiles: string[] } {
  const workspace = realpathSync(mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-readme-')));
  mkdirSync(path.join(workspace, 'blueprints'));
  mkdirSync(path.join(workspace, 'connectors'));
  const changedSchema = { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } }, required: ['text', 'loud'] };
  // demo: echo_upper rewritten; add_numbers and reverse_text gone, so only notes_tools serves reverse_text.
  writeFileSync(path.join(workspace, 'demo-control.json'), JSON.stringify({ version: 1, rewrite: { echo_upper: { inputSchema: changedSchema } }, remove: ['add_numbers', 'reverse_text'] }));
  // notes_tools: add_numbers rewritten; reverse_text as at start-up.
  writeFileSync(path.join(workspace, 'notes-control.json'), JSON.stringify({ version: 1, rewrite: { add_numbers: { inputSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } } } }));
  const pidFiles = [path.join(workspace, 'demo.pid'), path.join(workspace, 'notes.pid')];
  writeFileSync(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [fixtureServer, '--stdio', '--control-file', path.join(workspace, 'demo-control.json'), '--pid-file', pidFiles[0]] } } }, null, 2));
  const connector = path.join(workspace, 'connectors', 'notes.connector.jsonc');
  writeFileSync(connector, [
    '// The notes tools, declared here and nowhere else.',
    '{',
    '  "name": "notes_tools",',
    '  "type": "api",',
    '  "provider": "mcp",',
    '  "providerConfig": {',
    `    "transport": { "kind": "stdio", "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(fixtureServer)}, "--stdio", "--control-file", ${JSON.stringify(path.join(workspace, 'notes-control.json'))}, "--pid-file", ${JSON.stringify(pidFiles[1])}] },`,
    '    "include": ["add_numbers", "reverse_text"]',
    '  },',
    '  "auth": { "type": "none" }',
    '}',
    '',
  ].join('\n'));
  const blueprint = path.join(workspace, 'blueprints', 'triage.blueprint.jsonc');
  writeFileSync(blueprint, [
    '// Pins taken before both servers moved.',
    '{',
    '  "blueprint": "triage",',
    '  "formatVersion": 1,',
    '  "steps": [',
    '    { "id": "shout", "effect": "mcp.invoke", "input": { "toolName": "echo_upper", "server": "demo", "expectedSchemaHash": "fnv1a64:a76fe8d6d023fca0" } },',
    '    { "id": "score", "effect": "mcp.invoke", "input": { "toolName": "add_numbers", "server": "notes_tools", "expectedSchemaHash": "fnv1a64:d21cac35ccab9a0e" } },',
    '    // No "server": looked up on every configured server; only notes_tools serves it.',
    '    { "id": "normalize", "effect": "mcp.invoke", "input": { "toolName": "reverse_text", "expectedSchemaHash": "fnv1a64:3712870629e19d1d" } }',
    '  ]',
    '}',
    '',
  ].join('\n'));
  return { workspace, blueprint, connector, pidFiles };
}

test('the README\'s Neovim 0.7 snippet, after `toolpin trust` in the project, opening only a blueprint, shows every drift from .mcp.json and connector servers and never an unknown server', () => {
  const { nvim07 } = readmeLuaBlocks();
  const { workspace, blueprint, connector, pidFiles } = examplesLikeWorkspace();
  const home = userHome();
  try {
    const bin = toolpinShim(workspace);
    // The README's once-per-project step, in the project's root folder, before Neovim starts.
    assert.match(readmeOtherEditors(), /^toolpin trust {2,}# or: toolpin trust path\/to\/project$/m, 'the README no longer tells Neovim users to run toolpin trust');
    const trusted = toolpinTrust(home, bin, workspace);
    assert.match(trusted, /^ {2}demo: .*demo-control\.json/m, `toolpin trust did not show the .mcp.json server:\n${trusted}`);
    assert.match(trusted, /^ {2}notes_tools: .*notes-control\.json/m, `toolpin trust did not show the connector server:\n${trusted}`);
    // Started in blueprints/, as a user may: the project root must come from the snippet's
    // marker search (.mcp.json), not from Neovim's current folder.
    const observation = runReadmeSnippet(nvim07, home, path.dirname(blueprint), blueprint, { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` }, WINDOW_MS, { thenOpen: connector });
    const seen = timeline(observation, workspace);
    assert.equal(observation.open_error, undefined);
    assert.doesNotMatch(observation.messages, /Error|E\d{3,4}:/, `Neovim reported an error:\n${observation.messages}`);
    assert.equal(observation.attached_first, 1, 'the snippet did not attach toolpin to the blueprint');

    // Never, in any publication for any file during the window: an unknown or absent server.
    const unknown = observation.publications.flatMap((publication) =>
      publication.diagnostics
        .filter((d) => d.code === 'TP406' || /no server named|no MCP server is configured/.test(d.message))
        .map((d) => `${publication.at_ms} ms ${path.relative(workspace, publication.file)}: ${d.code} ${d.message}`));
    assert.deepEqual(unknown, [], `unknown-server diagnostics were published:\n${seen}`);

    // Within the window: the blueprint's latest publication has one drift per drifted pin, naming the tool.
    const last = observation.publications.filter((publication) => publication.file === blueprint && publication.at_ms <= observation.window_ended_ms).at(-1);
    assert.ok(last, `no diagnostics were published for the blueprint:\n${seen}`);
    const drift = last.diagnostics.filter((d) => d.code === 'TP400').map((d) => [d.line, d.message.match(/tool "([^"]+)"/)?.[1]]);
    assert.deepEqual(drift.sort(), [[5, 'echo_upper'], [6, 'add_numbers']], `the blueprint's drift diagnostics:\n${seen}`);
    assert.match(last.diagnostics.find((d) => d.line === 5)!.message, /on server "demo"/);
    assert.match(last.diagnostics.find((d) => d.line === 6)!.message, /on server "notes_tools"/);
    assert.deepEqual(last.diagnostics.filter((d) => d.line === 8), [], `reverse_text is pinned right:\n${seen}`);
    // Both recorded servers really ran (the control for the untrusted test's "no process ran").
    for (const pidFile of pidFiles) assert.ok(existsSync(pidFile), `${path.basename(pidFile)} was never written: the trusted server did not start`);

    // A second file of the same project reuses the one client instead of starting another server.
    assert.equal(observation.attached_second, 1, 'the connector file was not attached');
    assert.equal(observation.clients, 1, 'the snippet started more than one toolpin client for one project');
  } finally {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home.dir, { recursive: true, force: true });
  }
});

test('the README\'s Neovim 0.7 snippet without `toolpin trust` starts no server: every pin says which command did not run and how to trust the folder, and no drift appears', () => {
  const { nvim07 } = readmeLuaBlocks();
  const { workspace, blueprint, pidFiles } = examplesLikeWorkspace();
  const home = userHome();
  try {
    const bin = toolpinShim(workspace);
    // The README quotes the message a user sees before trusting the project.
    assert.match(readmeOtherEditors(), /the folder is not trusted, so Toolpin did not run\s+`[^`]+`\s+\(run `toolpin trust \/path\/to\/project` to trust it\)/);
    // The window ends once all three pins say the folder is not trusted, or after WINDOW_MS.
    const observation = runReadmeSnippet(nvim07, home, workspace, blueprint, { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` }, WINDOW_MS, { stopWhen: { text: 'the folder is not trusted', count: 3 } });
    const seen = timeline(observation, workspace);
    assert.equal(observation.open_error, undefined);
    assert.doesNotMatch(observation.messages, /Error|E\d{3,4}:/, `Neovim reported an error:\n${observation.messages}`);
    assert.equal(observation.attached_first, 1, 'the snippet did not attach toolpin to the blueprint');

    // No drift and no unknown server in any publication: untrusted is "cannot verify", nothing else.
    const wrong = observation.publications.flatMap((publication) =>
      publication.diagnostics.filter((d) => d.code === 'TP400' || d.code === 'TP401' || d.code === 'TP406').map((d) => `${d.code} ${d.message}`));
    assert.deepEqual(wrong, [], `an untrusted folder published drift or unknown servers:\n${seen}`);

    const last = observation.publications.filter((publication) => publication.file === blueprint).at(-1);
    assert.ok(last, `no diagnostics were published for the blueprint:\n${seen}`);
    const byLine = new Map(last.diagnostics.map((d) => [d.line, d]));
    assert.deepEqual(last.diagnostics.map((d) => [d.line, d.code]).sort(), [[5, 'TP403'], [6, 'TP403'], [8, 'TP403']], `the blueprint's diagnostics:\n${seen}`);
    const howToTrust = `(run \`toolpin trust ${workspace}\` to trust it)`;
    const notRun = (control: string): RegExp => new RegExp(`the folder is not trusted, so Toolpin did not run \`[^\`]*fixture-server\\.mjs --stdio --control-file [^\`]*${control} --pid-file [^\`]*\``);
    assert.match(byLine.get(5)!.message, /^step "shout": cannot verify: "demo": /);
    assert.match(byLine.get(5)!.message, notRun('demo-control\\.json'));
    assert.ok(byLine.get(5)!.message.includes(howToTrust), byLine.get(5)!.message);
    assert.match(byLine.get(6)!.message, /^step "score": cannot verify: "notes_tools": /);
    assert.match(byLine.get(6)!.message, notRun('notes-control\\.json'));
    assert.ok(byLine.get(6)!.message.includes(howToTrust), byLine.get(6)!.message);

    // No server process ever started: neither fixture server wrote its pid marker. Neovim has
    // exited (and stopped the language server) by now, so nothing can still be starting one.
    for (const pidFile of pidFiles) assert.equal(existsSync(pidFile), false, `${path.basename(pidFile)} was written: an untrusted server ran`);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home.dir, { recursive: true, force: true });
  }
});

test('the README\'s Neovim 0.7 snippet without toolpin on PATH says how to install it instead of failing with a nil client id', () => {
  const { nvim07 } = readmeLuaBlocks();
  const { workspace, blueprint } = examplesLikeWorkspace();
  try {
    // A PATH with nothing on it: nvim is started by its absolute path, toolpin cannot be found.
    const empty = path.join(workspace, 'empty-bin');
    mkdirSync(empty);
    const home = userHome();
    let observation: Observation;
    try {
      observation = runReadmeSnippet(nvim07, home, workspace, blueprint, { PATH: empty }, 0);
    } finally {
      rmSync(home.dir, { recursive: true, force: true });
    }
    assert.doesNotMatch(observation.messages, /client_id: expected number, got nil/);
    assert.doesNotMatch(observation.messages, /Error executing lua/, observation.messages);
    assert.equal(observation.attached_first, 0);
    assert.equal(observation.clients, 0);
    const errors = observation.notifications.filter((notification) => notification.level === 4);
    const [error, ...moreErrors] = errors;
    assert.ok(error !== undefined && moreErrors.length === 0, `expected one error notification, got: ${JSON.stringify(observation.notifications)}`);
    assert.match(error.message, /^toolpin: could not start `toolpin lsp --stdio`; is toolpin installed and on PATH\?/);
    assert.match(error.message, /npm install -g \. in a Toolpin clone, or npm install -g toolpin\)$/);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});

test('both README Neovim snippets are valid Lua (compiled, not run, by Neovim 0.7\'s LuaJIT); the 0.11 one is not run here', () => {
  const { nvim07, nvim011 } = readmeLuaBlocks();
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-nvim-syntax-'));
  try {
    const files = {
      nvim07: path.join(scratch, 'nvim07.lua'),
      nvim011: path.join(scratch, 'nvim011.lua'),
      // The control: the check must be able to fail.
      broken: path.join(scratch, 'broken.lua'),
    };
    writeFileSync(files.nvim07, nvim07);
    writeFileSync(files.nvim011, nvim011);
    writeFileSync(files.broken, nvim011.replace(/\bend\b(?![\s\S]*\bend\b)/, ''));
    const outFile = path.join(scratch, 'syntax.json');
    const run = spawnSync(nvimPath(), ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${path.join(root, 'test', 'nvim', 'check_lua_syntax.lua')}`], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, TOOLPIN_NVIM_OUT: outFile, TOOLPIN_LUA_FILES: Object.values(files).join('\n') },
    });
    assert.equal(run.error, undefined, `nvim failed to run: ${String(run.error)}`);
    const result = JSON.parse(readFileSync(outFile, 'utf8')) as Record<string, true | string>;
    assert.equal(result[files.nvim07], true, `the Neovim 0.7 snippet: ${String(result[files.nvim07])}`);
    assert.equal(result[files.nvim011], true, `the Neovim 0.11 snippet: ${String(result[files.nvim011])}`);
    assert.match(String(result[files.broken]), /expected|near/, 'the syntax check accepted a block with a missing `end`');
    // Both blocks start the same command and attach to the same files.
    for (const block of [nvim07, nvim011]) assert.match(block, /cmd = \{ 'toolpin', 'lsp', '--stdio' \}/);
    assert.match(nvim011, /blueprint%\.jsonc\?\$/);
    assert.match(nvim011, /connector%\.jsonc\?\$/);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
