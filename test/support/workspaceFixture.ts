/**
 * Fixture workspaces for LSP tests: a fresh folder in the system's temporary directory with the
 * files a test names (`.mcp.json`, blueprints, connectors, a fixture server's control file), and
 * the paths and `file://` URIs the test sends. `remove()` deletes it; nothing is written outside it.
 *
 * `fixtureServer(...)` is how an `.mcp.json` or a connector starts the fixture MCP server
 * (test/fixtures/servers/fixture-server.mjs, a real process) over stdio; the in-process tests,
 * whose listing source is a fake, may name any command, since nothing is started.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './lspClient';

/** The fixture MCP server's script (its options: test/fixtures/servers/README.md). */
export const FIXTURE_SERVER = path.join(repoRoot(), 'test', 'fixtures', 'servers', 'fixture-server.mjs');

/** A stdio server entry (`mcpServers` in `.mcp.json`): the fixture server with `options` after `--stdio`. */
export function fixtureServer(...options: string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [FIXTURE_SERVER, '--stdio', ...options] };
}

/** What a file holds: text as is, anything else as JSON. */
export type FileContent = string | object;

export interface WorkspaceFixture {
  /** The folder, absolute. */
  readonly root: string;
  /** The folder's `file://` URI (the rootUri a client sends). */
  readonly uri: string;
  /** The absolute path of a file in the workspace (`relative` uses forward slashes). */
  path(relative: string): string;
  /** The `file://` URI of a file in the workspace. */
  uriOf(relative: string): string;
  /** Writes a file (creating its folders); returns its `file://` URI. */
  write(relative: string, content: FileContent): string;
  read(relative: string): string;
  exists(relative: string): boolean;
  /** Writes `.mcp.json` with these `mcpServers`. */
  mcpServers(servers: Readonly<Record<string, { command: string; args?: readonly string[] }>>): string;
  /** Deletes the folder and everything in it. */
  remove(): void;
}

/**
 * A new workspace folder named `<prefix>XXXXXX` in the temporary directory, holding `files`
 * (relative path → content).
 */
export function createWorkspace(prefix: string, files: Readonly<Record<string, FileContent>> = {}): WorkspaceFixture {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  const resolve = (relative: string): string => {
    const absolute = path.resolve(root, relative);
    // A fixture never writes outside its folder, whatever path a test builds.
    if (absolute !== root && !absolute.startsWith(root + path.sep)) throw new Error(`${relative} is outside the fixture workspace`);
    return absolute;
  };
  const uriOf = (relative: string): string => pathToFileURL(resolve(relative)).href;
  const write = (relative: string, content: FileContent): string => {
    const absolute = resolve(relative);
    mkdirSync(path.dirname(absolute), { recursive: true });
    writeFileSync(absolute, typeof content === 'string' ? content : JSON.stringify(content));
    return uriOf(relative);
  };
  const fixture: WorkspaceFixture = {
    root,
    uri: pathToFileURL(root).href,
    path: resolve,
    uriOf,
    write,
    read: (relative) => readFileSync(resolve(relative), 'utf8'),
    exists: (relative) => existsSync(resolve(relative)),
    mcpServers: (servers) => write('.mcp.json', { mcpServers: servers }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
  for (const [relative, content] of Object.entries(files)) write(relative, content);
  return fixture;
}
