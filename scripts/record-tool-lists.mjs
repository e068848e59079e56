#!/usr/bin/env node
// Records the raw `tools/list` results of real MCP servers as test fixtures.
//
//   node scripts/record-tool-lists.mjs
//
// For each server below, this starts the server's own bin (from node_modules) over stdio with the
// MCP SDK client, lists ALL tools following `nextCursor`, and writes
// test/fixtures/tool-lists/<server>.json:
//
//   { "server": "...", "package": "<name>@<version>", "recordedWith": "...", "tools": [ ... ] }
//
//   node scripts/record-tool-lists.mjs --versions
//
// records older published versions of the same servers (VERSIONS below) into
// test/fixtures/tool-lists/versions/<server>@<version>.json, for the test that classifies every
// schema that drifted between versions. Each version is installed with npm into a scratch
// directory (its own dependencies, scripts not run) and removed afterwards.
//
// The tools are written exactly as served: they are taken from the raw JSON-RPC response as the
// transport received it, not from `client.listTools()`, whose strict Zod schema strips keys it does
// not know. The SDK's strict parse still runs on every page, and anything it rejects or strips is
// reported on the console (never silently hidden).
//
// The client declares no capabilities (like a pin checker does). Some servers register tools only
// for clients that declare e.g. sampling, elicitation or roots; those tools are not in the fixtures.
//
// Every client is closed and every child process is checked to be gone before the script exits.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const RECORDED_WITH = 'toolpin scripts/record-tool-lists.mjs';
const REQUEST_TIMEOUT_MS = 30_000;
/** How long to wait after a listing for a late `notifications/tools/list_changed`. */
const SETTLE_MS = 500;
const MAX_PAGES = 1000;
/** Servers whose process outlived client.close() (they were killed); any makes the run fail. */
const survivors = [];

const scriptDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = findRepoRoot(scriptDir);
const outDir = join(repoRoot, 'test', 'fixtures', 'tool-lists');

/**
 * The servers to record. `args` and `env` receive the per-run scratch directory; nothing that
 * depends on it may end up in a fixture (checked below).
 */
const SERVERS = [
  {
    server: 'everything',
    packageName: '@modelcontextprotocol/server-everything',
    args: () => ['stdio'],
    env: () => ({}),
  },
  {
    server: 'filesystem',
    packageName: '@modelcontextprotocol/server-filesystem',
    args: (scratch) => [scratch.fsRoot],
    env: () => ({}),
  },
  {
    server: 'memory',
    packageName: '@modelcontextprotocol/server-memory',
    args: () => [],
    env: (scratch) => ({ MEMORY_FILE_PATH: scratch.memoryFile }),
  },
];

/** Older versions to record with --versions (the newest is the devDependency, recorded above). */
const VERSIONS = {
  everything: ['0.6.2', '2025.1.14', '2025.4.8', '2025.7.1', '2025.8.4', '2025.9.25', '2025.11.25', '2026.1.14', '2026.7.4'],
  filesystem: ['0.6.2', '2025.3.28', '2025.7.1', '2025.8.21', '2025.11.25', '2026.1.14', '2026.7.4'],
  memory: ['0.6.2', '2025.4.25', '2025.8.4', '2025.11.25', '2026.1.26', '2026.7.4'],
};
const versionsMode = process.argv.includes('--versions');

function findRepoRoot(start) {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no package.json above the script');
    dir = parent;
  }
}

/** Reads a package's manifest from node_modules (exports maps may hide package.json from require). */
function readPackage(packageName, from = repoRoot) {
  let dir = from;
  for (;;) {
    const manifestPath = join(dir, 'node_modules', ...packageName.split('/'), 'package.json');
    if (existsSync(manifestPath)) {
      return { dir: dirname(manifestPath), manifest: JSON.parse(readFileSync(manifestPath, 'utf8')) };
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${packageName} is not installed (npm install first)`);
    dir = parent;
  }
}

/** The package's single bin entry, as a path to run with this Node. */
function binEntry(packageName, from) {
  const { dir, manifest } = readPackage(packageName, from);
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (!bin) throw new Error(`${packageName} has no bin`);
  return { entry: join(dir, bin), spec: `${manifest.name}@${manifest.version}` };
}

function isAlive(pid) {
  if (pid === undefined || pid === null) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Keys present in `raw` but missing or different in `parsed`, as JSON Pointers (for the report). */
function differences(raw, parsed, path = '') {
  if (isDeepStrictEqual(raw, parsed)) return [];
  if (raw && parsed && typeof raw === 'object' && typeof parsed === 'object' && !Array.isArray(raw)) {
    const found = [];
    for (const key of new Set([...Object.keys(raw), ...Object.keys(parsed)])) {
      if (!(key in parsed)) found.push(`${path}/${key} (dropped by the SDK)`);
      else if (!(key in raw)) found.push(`${path}/${key} (added by the SDK)`);
      else found.push(...differences(raw[key], parsed[key], `${path}/${key}`));
    }
    return found;
  }
  return [`${path} (changed by the SDK)`];
}

/**
 * Every page of tools/list, as served: the raw results the transport captured (`rawResults`, by
 * request id), with a note for each difference the SDK's strict parse made.
 */
async function listAllPages(client, rawResults, notes) {
  const tools = [];
  const seenCursors = new Set();
  let cursor;
  let pages = 0;
  do {
    if (++pages > MAX_PAGES) throw new Error(`more than ${MAX_PAGES} pages of tools`);
    const before = new Set(rawResults.keys());
    const params = cursor === undefined ? {} : { cursor };
    let parsed;
    try {
      parsed = await client.listTools(params, { timeout: REQUEST_TIMEOUT_MS });
    } catch (error) {
      // The raw result (if any) was captured before the SDK rejected it.
      notes.push(`the SDK's strict validation rejected page ${pages}: ${error.message.split('\n')[0]}`);
    }
    const newIds = [...rawResults.keys()].filter((id) => !before.has(id));
    if (newIds.length !== 1) throw new Error(`expected one raw tools/list result, captured ${newIds.length}`);
    const raw = rawResults.get(newIds[0]);
    if (!Array.isArray(raw.tools)) throw new Error('tools/list result has no tools array');
    if (parsed) {
      for (let index = 0; index < raw.tools.length; index++) {
        for (const diff of differences(raw.tools[index], parsed.tools[index])) {
          notes.push(`tool ${JSON.stringify(raw.tools[index]?.name)}: ${diff}`);
        }
      }
    }
    tools.push(...raw.tools);
    cursor = raw.nextCursor;
    if (cursor !== undefined) {
      if (seenCursors.has(cursor)) throw new Error(`server repeated nextCursor ${JSON.stringify(cursor)}`);
      seenCursors.add(cursor);
    }
  } while (cursor !== undefined);
  return { tools, pages };
}

async function record(config, scratch, installDir) {
  const { entry, spec } = binEntry(config.packageName, installDir);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [entry, ...config.args(scratch)],
    env: config.env(scratch),
    cwd: scratch.dir,
    stderr: 'pipe',
  });
  let stderrText = '';
  transport.stderr?.on('data', (chunk) => {
    stderrText += chunk.toString();
  });

  // Capture the raw result of every tools/list request, before the SDK's strict parse.
  const toolsListIds = new Set();
  const rawResults = new Map();
  const originalSend = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message && message.method === 'tools/list' && message.id !== undefined) toolsListIds.add(message.id);
    return originalSend(message, options);
  };
  transport.onmessage = (message) => {
    if (message && 'id' in message && toolsListIds.has(message.id) && 'result' in message) {
      // A copy, so that nothing downstream can change what is recorded (it came from JSON.parse).
      rawResults.set(message.id, JSON.parse(JSON.stringify(message.result)));
    }
  };

  const client = new Client({ name: 'toolpin-recorder', version: '0.1.0' }, { capabilities: {} });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });

  // Remember the child's pid as soon as it exists, to check after close() that it is gone.
  let pid;
  const originalStart = transport.start.bind(transport);
  transport.start = async () => {
    await originalStart();
    pid = transport.pid;
  };

  const notes = [];
  try {
    await client.connect(transport);
    const serverInfo = client.getServerVersion();

    const listAll = () => listAllPages(client, rawResults, notes);

    // A server may register tools right after initialization and announce it with
    // notifications/tools/list_changed; list again until a listing is followed by a quiet period.
    let listing;
    for (let attempt = 1; ; attempt++) {
      const seen = listChanged;
      const previous = listing;
      listing = await listAll();
      if (previous) {
        notes.push(
          `server sent notifications/tools/list_changed; listed again: ${previous.tools.length} -> ${listing.tools.length} tools`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      if (listChanged === seen) break;
      if (attempt >= 4) throw new Error('the tool list kept changing');
    }

    const names = listing.tools.map((tool) => tool.name);
    const duplicates = names.filter((name, index) => names.indexOf(name) !== index);
    if (duplicates.length > 0) notes.push(`duplicate tool names: ${duplicates.join(', ')}`);

    return { spec, serverInfo, tools: listing.tools, pages: listing.pages, notes, stderrText };
  } catch (error) {
    if (stderrText) console.error(`--- ${config.server} stderr ---\n${stderrText}`);
    throw error;
  } finally {
    await client.close();
    // StdioClientTransport.close ends stdin, then SIGTERM, then SIGKILL; make sure it worked.
    for (let wait = 0; wait < 50 && isAlive(pid); wait++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (isAlive(pid)) {
      process.kill(pid, 'SIGKILL');
      survivors.push(`${config.server} (pid ${pid})`);
    }
  }
}

async function main() {
  const scratchDir = mkdtempSync(join(tmpdir(), 'toolpin-record-'));
  const scratch = {
    dir: scratchDir,
    fsRoot: join(scratchDir, 'fs-root'),
    memoryFile: join(scratchDir, 'memory.jsonl'),
  };
  mkdirSync(scratch.fsRoot);
  mkdirSync(outDir, { recursive: true });
  // Strings that must never reach a committed fixture.
  const forbidden = [scratchDir, repoRoot, homedir()].filter((text) => text.length > 1);

  const jobs = [];
  for (const config of SERVERS) {
    if (!versionsMode) jobs.push({ config, file: join(outDir, `${config.server}.json`) });
    else for (const version of VERSIONS[config.server] ?? []) jobs.push({ config, version, file: join(outDir, 'versions', `${config.server}@${version}.json`) });
  }
  if (versionsMode) mkdirSync(join(outDir, 'versions'), { recursive: true });

  let failed = false;
  try {
    for (const { config, version, file } of jobs) {
      let installDir;
      try {
        if (version !== undefined) {
          installDir = join(scratchDir, `install-${config.server}-${version}`);
          mkdirSync(installDir);
          writeFileSync(join(installDir, 'package.json'), '{"private":true}\n');
          execFileSync('npm', ['install', `${config.packageName}@${version}`, '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'], { cwd: installDir, stdio: ['ignore', 'ignore', 'inherit'] });
        }
        const result = await record(config, scratch, installDir);
        const fixture = {
          server: config.server,
          package: result.spec,
          recordedWith: RECORDED_WITH,
          tools: result.tools,
        };
        const text = `${JSON.stringify(fixture, null, 2)}\n`;
        const leaked = forbidden.find((path) => text.includes(path));
        if (leaked !== undefined) {
          throw new Error(`${config.server}: the listing contains a machine path; not written`);
        }
        writeFileSync(file, text);
        const info = result.serverInfo ? `${result.serverInfo.name} ${result.serverInfo.version}` : 'unknown';
        console.log(
          `${config.server}: ${result.tools.length} tools in ${result.pages} page(s), ` +
            `${Buffer.byteLength(text)} bytes (server reports ${info}) -> ${file.slice(repoRoot.length + 1)}`,
        );
        for (const note of result.notes) console.log(`  note: ${note}`);
      } catch (error) {
        failed = true;
        console.error(`${config.server}: FAILED: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } finally {
    rmSync(scratchDir, { recursive: true, force: true });
  }
  if (survivors.length > 0) {
    failed = true;
    console.error(`server processes outlived client.close() and were killed: ${survivors.join(', ')}`);
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
