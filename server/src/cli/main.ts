/**
 * The `toolpin` command line: the same core as the language server, without an editor.
 *
 *   toolpin hash <file|-> [--format text|json]
 *   toolpin check [paths…] [--format text|json]
 *   toolpin lsp --stdio
 *
 * Usage errors exit with status 2 and a message on standard error.
 */
import { parseArgs } from 'node:util';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer, TOOLPIN_VERSION } from '../server';
import { checkCommand } from './checkCommand';
import { hashCommand } from './hashCommand';
import { historyCommand } from './historyCommand';
import { pinCommand } from './pinCommand';
import { type CliIo, processIo } from './io';

const USAGE = `Usage: toolpin <command> [options]

Commands:
  hash <file|->          print the schema pin and tool pin of each MCP tool in a file (or stdin)
                         holding one tool, an array of tools, or a tools/list result
  check [paths…]         check blueprint and connector files (default: the current folder) and
                         verify every pin against the live MCP servers
  pin [paths…]           show the re-pin of every drifted pin (with what changed); write
                         them and their pin-store entries with --yes
  history [logs…]        which executions called which MCP tool at which schema hash (from
                         *.events.jsonl logs; files, folders or globs; default: the workspace),
                         and whether each hash is pinned, live or stale
  lsp --stdio            run the language server over standard input/output

Options:
  --format FORMAT        text (default) or json for hash and history; text, json or sarif for check
  --workspace DIR        check, pin, history: the folder stdio servers start in and .vscode/mcp.json and
                         .mcp.json are read from (default: the current folder)
  --offline              check, history: do not contact servers; pins are reported as cannot verify
  --timeout MS           check: timeout of one request to a server (default 10000)
  --concurrency N        check: servers listed at the same time (default 4)
  -y, --yes              pin: write without asking
  --tool NAME            pin, history: only this tool
  --hash H               history: only this schema hash (fnv1a64:<hex> or the 16 hex digits)
  --stale                history: only executions at hashes the live server no longer serves
  --limit N|all          history: executions listed per hash (default 20; all with --stale/--hash)
  -h, --help             show this help

Exit status of check: 0 every pin verified and no error; 1 drift, a missing tool or an error;
2 nothing drifted, but something could not be verified.
Exit status of history: 0 nothing ran at a schema that is not live; 1 some executions did;
2 none did, but something could not be checked (offline, a server not listed, a log unreadable).
  -v, --version          print the version
`;

function parseFormat<F extends string>(value: string | undefined, allowed: readonly F[], io: CliIo): F | 'text' | undefined {
  if (value === undefined) return 'text';
  if ((allowed as readonly string[]).includes(value)) return value as F;
  io.stderr(`toolpin: unknown format "${value}"; use ${allowed.join(', ')}\n`);
  return undefined;
}

function parsePositiveInteger(value: string | undefined, name: string, io: CliIo): number | undefined | false {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) {
    io.stderr(`toolpin: --${name} takes a positive whole number, got "${value}"\n`);
    return false;
  }
  return parsed;
}

async function askAtTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        format: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        stdio: { type: 'boolean' },
        workspace: { type: 'string' },
        offline: { type: 'boolean' },
        timeout: { type: 'string' },
        concurrency: { type: 'string' },
        yes: { type: 'boolean', short: 'y' },
        tool: { type: 'string' },
        hash: { type: 'string' },
        stale: { type: 'boolean' },
        limit: { type: 'string' },
      },
    });
  } catch (error) {
    io.stderr(`toolpin: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version) {
    io.stdout(`${TOOLPIN_VERSION}\n`);
    return 0;
  }
  if (values.help || command === undefined || command === 'help') {
    (command === undefined && !values.help ? io.stderr : io.stdout)(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'hash': {
      const format = parseFormat(values.format, ['text', 'json'] as const, io);
      if (!format) return 2;
      if (rest.length !== 1) {
        io.stderr('toolpin hash: give exactly one file, or - for standard input\n');
        return 2;
      }
      return hashCommand(io, { source: rest[0]!, format });
    }
    case 'check': {
      const format = parseFormat(values.format, ['text', 'json', 'sarif'] as const, io);
      const timeout = parsePositiveInteger(values.timeout, 'timeout', io);
      const concurrency = parsePositiveInteger(values.concurrency, 'concurrency', io);
      if (!format || timeout === false || concurrency === false) return 2;
      return checkCommand(io, {
        paths: rest,
        format,
        ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
        offline: values.offline === true,
        ...(timeout !== undefined ? { requestTimeoutMs: timeout, overallTimeoutMs: Math.max(timeout * 3, 30_000) } : {}),
        ...(concurrency !== undefined ? { concurrency } : {}),
      });
    }
    case 'pin': {
      const timeout = parsePositiveInteger(values.timeout, 'timeout', io);
      if (timeout === false) return 2;
      return pinCommand(io, {
        paths: rest,
        yes: values.yes === true,
        ...(values.tool !== undefined ? { tool: values.tool } : {}),
        ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
        ...(timeout !== undefined ? { requestTimeoutMs: timeout, overallTimeoutMs: Math.max(timeout * 3, 30_000) } : {}),
        ...(process.stdin.isTTY && process.stdout.isTTY ? { confirm: askAtTerminal } : {}),
      });
    }
    case 'history': {
      const format = parseFormat(values.format, ['text', 'json'] as const, io);
      const timeout = parsePositiveInteger(values.timeout, 'timeout', io);
      const concurrency = parsePositiveInteger(values.concurrency, 'concurrency', io);
      const limit = values.limit === 'all' ? null : parsePositiveInteger(values.limit, 'limit', io);
      if (!format || timeout === false || concurrency === false || limit === false) return 2;
      return historyCommand(io, {
        logs: rest,
        format,
        ...(values.tool !== undefined ? { tool: values.tool } : {}),
        ...(values.hash !== undefined ? { hash: values.hash } : {}),
        stale: values.stale === true,
        ...(limit !== undefined ? { limit } : {}),
        ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
        offline: values.offline === true,
        ...(timeout !== undefined ? { requestTimeoutMs: timeout, overallTimeoutMs: Math.max(timeout * 3, 30_000) } : {}),
        ...(concurrency !== undefined ? { concurrency } : {}),
      });
    }
    case 'lsp':
      if (!values.stdio) {
        io.stderr('toolpin lsp: only --stdio is supported\n');
        return 2;
      }
      startServer(createConnection(ProposedFeatures.all, process.stdin, process.stdout));
      return new Promise<number>(() => {
        // The server runs until the client sends exit; vscode-languageserver ends the process.
      });
    default:
      io.stderr(`toolpin: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2), processIo).then(
    (status) => {
      process.exitCode = status;
    },
    (error: unknown) => {
      process.stderr.write(`toolpin: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 3;
    },
  );
}
