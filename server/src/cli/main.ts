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
import { type CliIo, processIo } from './io';

const USAGE = `Usage: toolpin <command> [options]

Commands:
  hash <file|->          print the schema pin and tool pin of each MCP tool in a file (or stdin)
                         holding one tool, an array of tools, or a tools/list result
  check [paths…]         check blueprint and connector files (default: the current folder)
  lsp --stdio            run the language server over standard input/output

Options:
  --format text|json     output format (hash, check); default text
  -h, --help             show this help
  -v, --version          print the version
`;

function parseFormat(value: string | undefined, io: CliIo): 'text' | 'json' | undefined {
  if (value === undefined || value === 'text' || value === 'json') return value ?? 'text';
  io.stderr(`toolpin: unknown format "${value}"; use text or json\n`);
  return undefined;
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
  const format = parseFormat(values.format, io);
  if (!format) return 2;
  switch (command) {
    case 'hash':
      if (rest.length !== 1) {
        io.stderr('toolpin hash: give exactly one file, or - for standard input\n');
        return 2;
      }
      return hashCommand(io, { source: rest[0]!, format });
    case 'check':
      return checkCommand(io, { paths: rest, format });
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
