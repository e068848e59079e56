/**
 * The `toolpin` command line: the same core as the language server, without an editor.
 *
 *   toolpin <command> [options] [arguments]      (toolpin <command> --help for one command)
 *
 * Each command has its own options, parsed strictly with `util.parseArgs`: an option another
 * command takes (`toolpin hash --stale`), an unknown option or a missing value is a usage error.
 * Usage errors exit with status 2, a message naming what was wrong and that command's usage on
 * standard error. `--help` prints the help (of the command, when one is given) and exits 0.
 */
import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { errorCode, isOneOf } from '../core/json/values';
import type { FailOn } from '../core/report/report';
import { TOOLPIN_VERSION } from '../version';
import { overallTimeoutFor } from '../engine/timeouts';
import { HASH_PROFILES, hashCommand } from './hashCommand';
import { codeCacheFolder, installCodeCache } from './codeCache';
import { type CliIo, processIo } from './io';

/**
 * Everything but `hash`, `--version` and the help: the other commands and the language server,
 * loaded only when one of them runs (issue 13: start-up). dist/cli.js holds this file, `hash` and
 * the core modules `hash` needs; the build (esbuild.mjs) bundles ./commands separately into
 * dist/commands.js and leaves this `require('./commands')` to find it beside dist/cli.js at run
 * time. Node compiles the whole of a script it loads, so `toolpin hash` would otherwise pay to
 * compile the MCP SDK, vscode-languageserver and ajv that it never runs.
 */
function commands(): typeof import('./commands') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loading on demand is the point (above).
  const loaded: typeof import('./commands') = require('./commands');
  // Every command that can start a server runs through here: a signal (Ctrl-C, a CI job
  // cancelled, a closed terminal, an editor stopping `toolpin lsp`) then ends every server this
  // process started before it exits with 128 + the signal's number. Installing twice is a no-op.
  loaded.endProcessTreesOnSignals();
  return loaded;
}

type OptionSpec = NonNullable<ParseArgsConfig['options']>[string];

interface CommandSpec {
  /** The usage line after `toolpin `. */
  readonly usage: string;
  readonly summary: string;
  /** Option name → its parseArgs spec and its help line (value placeholder, description). */
  readonly options: Readonly<Record<string, OptionSpec & { readonly help: string; readonly value?: string }>>;
  /** Extra paragraphs of the command's help (exit status). */
  readonly notes: string;
}

const HELP_OPTION = { type: 'boolean', short: 'h', help: 'show this help' } as const;
const WORKSPACE_OPTION = {
  type: 'string',
  value: 'DIR',
  help: 'the folder stdio servers start in and .vscode/mcp.json and .mcp.json are read from (default: the current folder)',
} as const;
const TIMEOUT_OPTION = { type: 'string', value: 'MS', help: 'timeout of one request to a server (default 10000)' } as const;
const START_TIMEOUT_OPTION = {
  type: 'string',
  value: 'MS',
  help: 'how long a stdio server may take to start, up to its answer to initialize (default 60000: npx -y and the like install the package on first use)',
} as const;
const CONCURRENCY_OPTION = { type: 'string', value: 'N', help: 'servers listed at the same time (default 8)' } as const;
const TRUST_OPTION = {
  type: 'boolean',
  help: "trust the workspace folder for this run: start its stdio servers and send credentials to its URLs (TOOLPIN_TRUST=1 does the same; without either, only what `toolpin trust` recorded runs)",
} as const;

const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  hash: {
    usage: 'hash <file|-> [--format text|json] [--profile toolpin|mcp-pin|all]',
    summary: 'print the schema pin and tool pin of each MCP tool in a file (or stdin) holding one tool, an array of tools, or a tools/list result',
    options: {
      format: { type: 'string', value: 'FORMAT', help: 'text (default) or json' },
      profile: { type: 'string', value: 'NAME', help: "whose hashes: toolpin (default: schema pin and tool pin), mcp-pin (its tool definition hash v1 of each whole definition, the set hash, the instructions hash of an initialize result), or all" },
      help: HELP_OPTION,
    },
    notes: 'Exit status: 0 every tool hashed; 1 some entry could not be hashed; 2 the input could not be read or is not JSON, or a usage error.',
  },
  check: {
    usage:
      'check [paths…] [--format text|json|sarif|markdown] [--sarif-file FILE] [--workspace DIR] [--offline|--structure-only] [--fail-on security|drift|warning] [--trust] [--timeout MS] [--start-timeout MS] [--concurrency N]',
    summary: 'check blueprint and connector files (default: the current folder) and verify every pin against the live MCP servers',
    options: {
      format: { type: 'string', value: 'FORMAT', help: 'text (default), json, sarif, or markdown (a GitHub job summary or pull-request comment: per file the drifted tools, what changed and the diffs)' },
      'sarif-file': { type: 'string', value: 'FILE', help: 'also write the SARIF report to FILE (one run gives both a summary and SARIF)' },
      workspace: WORKSPACE_OPTION,
      offline: { type: 'boolean', help: 'do not contact servers; pins are reported as cannot verify' },
      'structure-only': {
        type: 'boolean',
        help: 'like --offline, but pins left unverified do not make the exit status 2: for commit hooks, which check structure and start no server',
      },
      'fail-on': { type: 'string', value: 'LEVEL', help: 'what exits 1: security (only tool-poisoning cues, TP407), drift (default: any drift, missing tool or error) or warning (also warnings)' },
      trust: TRUST_OPTION,
      timeout: TIMEOUT_OPTION,
      'start-timeout': START_TIMEOUT_OPTION,
      concurrency: CONCURRENCY_OPTION,
      help: HELP_OPTION,
    },
    notes:
      'Exit status: 0 every pin verified and no error; 1 drift, a missing tool or an error; 2 nothing drifted, ' +
      'but something could not be verified, no blueprint or connector file was found, or a usage error.',
  },
  pin: {
    usage: 'pin [paths…] [--tool NAME] [--yes] [--remove-missing] [--workspace DIR] [--trust] [--timeout MS] [--start-timeout MS]',
    summary: 'show the re-pin of every drifted pin (with what changed) and every missing pin; write them with --yes',
    options: {
      tool: { type: 'string', value: 'NAME', help: 'only this tool' },
      yes: { type: 'boolean', short: 'y', help: 'write without asking' },
      'remove-missing': {
        type: 'boolean',
        help: "also remove the snapshot entries of connector tools the server no longer serves (a blueprint step's tool must be replaced by hand)",
      },
      workspace: WORKSPACE_OPTION,
      trust: TRUST_OPTION,
      timeout: TIMEOUT_OPTION,
      'start-timeout': START_TIMEOUT_OPTION,
      help: HELP_OPTION,
    },
    notes:
      'Exit status: 0 nothing drifted or missing, or every change shown was written; 1 re-pins or missing pins shown ' +
      'but not written (a dry run), or missing pins left that only a manual edit can fix; 2 nothing drifted or ' +
      'missing, but something could not be verified, no blueprint or connector file was found, or a usage error.',
  },
  history: {
    usage: 'history [logs…] [--tool NAME] [--hash H] [--stale] [--limit N|all] [--format text|json] [--workspace DIR] [--offline] [--store URL] [--before DATE] [--trust] [--timeout MS] [--start-timeout MS] [--concurrency N]',
    summary:
      'which executions called which MCP tool at which schema hash (from *.events.jsonl logs; files, folders or globs; default: the workspace), and whether each hash is pinned, live or stale',
    options: {
      tool: { type: 'string', value: 'NAME', help: 'only this tool' },
      hash: { type: 'string', value: 'H', help: 'only this schema hash (fnv1a64:<hex> or the 16 hex digits)' },
      stale: { type: 'boolean', help: 'only executions at hashes the live server no longer serves' },
      limit: { type: 'string', value: 'N|all', help: 'executions listed per hash (default 20; all with --stale or --hash)' },
      format: { type: 'string', value: 'FORMAT', help: 'text (default) or json' },
      workspace: WORKSPACE_OPTION,
      offline: { type: 'boolean', help: 'do not contact servers; live status is unknown' },
      store: { type: 'string', value: 'URL', help: 'the team store (postgres://[user@]host[:port]/database; password from PGPASSWORD or ~/.pgpass): read it, or ingest or prune it' },
      before: { type: 'string', value: 'DATE', help: 'prune: delete the dispatches before this date (YYYY-MM-DD or an RFC 3339 date-time)' },
      trust: TRUST_OPTION,
      timeout: TIMEOUT_OPTION,
      'start-timeout': START_TIMEOUT_OPTION,
      concurrency: CONCURRENCY_OPTION,
      help: HELP_OPTION,
    },
    notes:
      'Exit status: 0 nothing ran at a schema that is not live; 1 some executions did; 2 none did, but something ' +
      'could not be checked (offline, a server not listed, a log unreadable), --tool or --hash matched no execution, ' +
      'or a usage error. The team store (docs/history-store.md): `toolpin history ingest --store URL LOG…` (- for standard ' +
      'input) projects logs into it, `toolpin history prune --store URL --before DATE` deletes older dispatches, and ' +
      '`--store URL` reads it instead of logs; a store that is down, refuses the password or has a newer schema exits 2.',
  },
  trust: {
    usage: 'trust [DIR] [--yes] [--list] [--revoke]',
    summary:
      'record a folder (default: the current one) as trusted for what it would run now: each stdio command line and each URL a credential is sent to; a server added or changed later stays untrusted until you trust the folder again',
    options: {
      list: { type: 'boolean', help: 'list the trusted folders and what each may run' },
      revoke: { type: 'boolean', help: 'remove the folder from the trusted folders' },
      yes: { type: 'boolean', short: 'y', help: 'record without asking (on a terminal, toolpin trust shows what it binds and asks first)' },
      help: HELP_OPTION,
    },
    notes: 'The record is kept in $XDG_CONFIG_HOME/toolpin/trust.json (else ~/.config/toolpin/trust.json), outside every repository. Exit status: 0 done; 1 the question was declined (nothing recorded); 2 the folder does not exist, or a usage error.',
  },
  lsp: {
    usage: 'lsp --stdio|--node-ipc [--clientProcessId PID]',
    summary: 'run the language server, over standard input/output (any editor) or a Node IPC channel (VS Code)',
    options: {
      stdio: { type: 'boolean', help: 'talk LSP over standard input and output' },
      'node-ipc': { type: 'boolean', help: 'talk LSP over the IPC channel of a parent Node process that forked this one (as VS Code does)' },
      clientProcessId: {
        type: 'string',
        value: 'PID',
        help: "the editor's process id: the server exits when that process is gone (vscode-languageclient passes it)",
      },
      help: HELP_OPTION,
    },
    notes: 'Give exactly one of --stdio and --node-ipc. The server runs until the client sends exit.',
  },
};

function wrap(text: string, indent: number, width = 100): string {
  const words = text.split(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

const USAGE = `Usage: toolpin <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, spec]) => `  ${name.padEnd(10)} ${wrap(spec.summary, 13)}`)
  .join('\n')}

Each command has its own options: toolpin <command> --help (or toolpin help <command>).
  -h, --help     show this help
  -v, --version  print the version
`;

function commandHelp(name: string): string {
  const spec = COMMANDS[name]!;
  const options = Object.entries(spec.options).map(([option, value]) => {
    const flag = `${value.short ? `-${value.short}, ` : '    '}--${option}${value.value ? ` ${value.value}` : ''}`;
    return `  ${flag.padEnd(26)} ${wrap(value.help, 29)}`;
  });
  return `Usage: toolpin ${spec.usage}\n\n${wrap(spec.summary, 0)}\n\nOptions:\n${options.join('\n')}\n${spec.notes ? `\n${wrap(spec.notes, 0)}\n` : ''}`;
}

/**
 * What a usage error prints after the line that says what was wrong: the command's usage line and
 * where the rest is, not the whole help (issue 26: the one wrong line got lost in it).
 */
function shortUsage(name: string): string {
  return `Usage: toolpin ${COMMANDS[name]!.usage}\n(toolpin ${name} --help describes every option)\n`;
}

const TOP_USAGE = `Usage: toolpin <command> [options]   (commands: ${Object.keys(COMMANDS).join(', ')}; toolpin --help describes them)\n`;

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short words. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/** The closest of `candidates` to a misspelt `word`, when it is close enough to be meant (a third of its length, at least 1). */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** The levels of `--fail-on` (declared here, not imported, so dist/cli.js stays free of the report module). */
const FAIL_ON_LEVELS: readonly FailOn[] = ['security', 'drift', 'warning'];

function parseFormat<F extends string>(command: string, value: string | undefined, allowed: readonly F[], io: CliIo): F | 'text' | undefined {
  if (value === undefined) return 'text';
  if (isOneOf(allowed, value)) return value;
  io.stderr(`toolpin ${command}: unknown format "${value}"; use ${allowed.join(', ')}\n`);
  return undefined;
}

function parsePositiveInteger(command: string, value: string | undefined, name: string, io: CliIo): number | undefined | false {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed <= 0) {
    io.stderr(`toolpin ${command}: --${name} takes a positive whole number, got "${value}"\n`);
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

/** The message of a parseArgs error, in the command's words (it names the offending option). */
function usageMessage(command: string, error: unknown): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-[^']*)'/.exec(message)?.[1]?.replace(/^(--?[^\s=]+).*$/, '$1');
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) {
    const owners = Object.entries(COMMANDS)
      .filter(([, spec]) => Object.keys(spec.options).some((name) => `--${name}` === option || `-${spec.options[name]!.short}` === option))
      .map(([name]) => name);
    if (owners.length > 0) return `toolpin ${command}: unknown option ${option} (an option of ${owners.map((name) => `toolpin ${name}`).join(', ')}, not of toolpin ${command})`;
    const meant = option.startsWith('--') ? closestName(option.slice(2), Object.keys(COMMANDS[command]!.options)) : undefined;
    return `toolpin ${command}: unknown option ${option}${meant ? `; did you mean --${meant}?` : ''}`;
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `toolpin ${command}: takes no arguments: ${message.replace(/^Unexpected argument /, '')}`;
  return `toolpin ${command}: ${message}`;
}

const TIMEOUTS = (timeout: number | undefined, startTimeout: number | undefined) => ({
  ...(timeout !== undefined ? { requestTimeoutMs: timeout, overallTimeoutMs: overallTimeoutFor(timeout) } : {}),
  ...(startTimeout !== undefined ? { startTimeoutMs: startTimeout } : {}),
});

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [first, ...afterCommand] = argv;
  if (first === undefined) {
    io.stderr(USAGE);
    return 2;
  }
  const topLevel = runTopLevel(first, afterCommand, io);
  if (topLevel !== undefined) return topLevel;
  const command = first;
  const spec = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!spec) {
    const meant = closestName(command, Object.keys(COMMANDS));
    io.stderr(`toolpin: unknown command "${command}"${meant ? `; did you mean ${meant}?` : ''}\n${TOP_USAGE}`);
    return 2;
  }
  const args = parseCommandArgs(command, spec, afterCommand, io);
  if (args === undefined) return 2;
  if (args.flag('help')) {
    io.stdout(commandHelp(command));
    return 0;
  }
  const workspace = args.text('workspace');
  if (workspace !== undefined && !(await commands().checkWorkspaceFolder(io, command, workspace))) return 2;
  // A run reads one workspace: its .toolpin/sources.jsonc names the modules that re-export the pin calls.
  const folder = command === 'trust' ? args.rest[0] : workspace;
  if (['check', 'pin', 'history', 'trust'].includes(command) && !(await commands().useWorkspaceSourceNames((line) => io.stderr(line), command, io.cwd, folder))) return 2;
  const run = Object.hasOwn(RUNNERS, command) ? RUNNERS[command] : undefined;
  return run ? run(args, io) : 2; // every name in COMMANDS has a runner
}

/** `--version`, `--help`, `help [command]` and an option where the command belongs; undefined for a command. */
function runTopLevel(first: string, afterCommand: readonly string[], io: CliIo): number | undefined {
  if (first === '-v' || first === '--version') {
    io.stdout(`${TOOLPIN_VERSION}\n`);
    return 0;
  }
  if (first === '-h' || first === '--help') {
    io.stdout(USAGE);
    return 0;
  }
  if (first === 'help') {
    const topic = afterCommand[0];
    if (topic !== undefined && !(topic in COMMANDS)) {
      const meant = closestName(topic, Object.keys(COMMANDS));
      io.stderr(`toolpin help: unknown command "${topic}"${meant ? `; did you mean ${meant}?` : ''}\n${TOP_USAGE}`);
      return 2;
    }
    io.stdout(topic !== undefined ? commandHelp(topic) : USAGE);
    return 0;
  }
  if (first.startsWith('-')) {
    io.stderr(`toolpin: the command comes first (toolpin <command> ${first} …)\n${TOP_USAGE}`);
    return 2;
  }
  return undefined;
}

/** A command's options and arguments as parsed, read by name. */
interface CommandArgs {
  readonly command: string;
  readonly rest: readonly string[];
  /** An option read as text (declared `type: 'string'`, so parseArgs gives a string or nothing). */
  text(name: string): string | undefined;
  flag(name: string): boolean;
  /** `{ [field]: value }` when the option was given, `{}` when not, for a command's optional fields. */
  given<F extends string>(option: string, field: F): { [P in F]?: string };
}

/** The command's options parsed strictly; undefined (after a usage message) when they do not parse. */
function parseCommandArgs(command: string, spec: CommandSpec, afterCommand: string[], io: CliIo): CommandArgs | undefined {
  let values: Readonly<Record<string, unknown>>;
  let rest: string[];
  try {
    const options = Object.fromEntries(Object.entries(spec.options).map(([name, { type, short }]) => [name, short ? { type, short } : { type }]));
    const parsed = parseArgs({ args: afterCommand, allowPositionals: command !== 'lsp', strict: true, options });
    values = parsed.values;
    rest = parsed.positionals;
  } catch (error) {
    io.stderr(`${usageMessage(command, error)}\n${shortUsage(command)}`);
    return undefined;
  }
  return {
    command,
    rest,
    text: (name) => {
      const value = values[name];
      return typeof value === 'string' ? value : undefined;
    },
    flag: (name) => values[name] === true,
    given: <F extends string>(option: string, field: F): { [P in F]?: string } => {
      const value = values[option];
      const entry: { [P in F]?: string } = {};
      if (typeof value === 'string') entry[field] = value;
      return entry;
    },
  };
}

/** How each command runs once its options are parsed. */
const RUNNERS: Readonly<Record<string, (args: CommandArgs, io: CliIo) => Promise<number>>> = {
  hash: runHash,
  check: runCheck,
  pin: runPin,
  history: runHistory,
  trust: async ({ command, rest, flag }, io) => {
    if (rest.length > 1) {
      io.stderr(`toolpin trust: give at most one folder\n${shortUsage(command)}`);
      return 2;
    }
    return commands().trustCommand(io, { folder: rest[0], list: flag('list'), revoke: flag('revoke'), yes: flag('yes') });
  },
  lsp: runLsp,
};

async function runHash({ command, rest, text }: CommandArgs, io: CliIo): Promise<number> {
  const format = parseFormat(command, text('format'), ['text', 'json'] as const, io);
  if (!format) return 2;
  const source = rest[0];
  if (rest.length !== 1 || source === undefined) {
    io.stderr(`toolpin hash: give exactly one file, or - for standard input\n${shortUsage(command)}`);
    return 2;
  }
  const profile = text('profile') ?? 'toolpin';
  if (!isOneOf(HASH_PROFILES, profile)) {
    io.stderr(`toolpin hash: unknown profile "${profile}"; use ${HASH_PROFILES.join(', ')}\n`);
    return 2;
  }
  return hashCommand(io, { source, format, profile });
}

async function runCheck({ command, rest, text, flag, given }: CommandArgs, io: CliIo): Promise<number> {
  const format = parseFormat(command, text('format'), ['text', 'json', 'sarif', 'markdown'] as const, io);
  const timeout = parsePositiveInteger(command, text('timeout'), 'timeout', io);
  const startTimeout = parsePositiveInteger(command, text('start-timeout'), 'start-timeout', io);
  if (startTimeout === false) return 2;
  const concurrency = parsePositiveInteger(command, text('concurrency'), 'concurrency', io);
  const failOn = text('fail-on') ?? 'drift';
  if (!isOneOf(FAIL_ON_LEVELS, failOn)) {
    io.stderr(`toolpin check: --fail-on takes security, drift or warning, got "${failOn}"\n`);
    return 2;
  }
  if (!format || timeout === false || concurrency === false) return 2;
  return commands().checkCommand(io, {
    failOn,
    paths: [...rest],
    ...given('sarif-file', 'sarifFile'),
    format,
    ...given('workspace', 'workspace'),
    offline: flag('offline'),
    structureOnly: flag('structure-only'),
    trust: flag('trust'),
    ...TIMEOUTS(timeout, startTimeout),
    ...(concurrency !== undefined ? { concurrency } : {}),
  });
}

async function runPin({ command, rest, text, flag, given }: CommandArgs, io: CliIo): Promise<number> {
  const timeout = parsePositiveInteger(command, text('timeout'), 'timeout', io);
  const startTimeout = parsePositiveInteger(command, text('start-timeout'), 'start-timeout', io);
  if (startTimeout === false) return 2;
  if (timeout === false) return 2;
  return commands().pinCommand(io, {
    paths: [...rest],
    yes: flag('yes'),
    removeMissing: flag('remove-missing'),
    trust: flag('trust'),
    ...given('tool', 'tool'),
    ...given('workspace', 'workspace'),
    ...TIMEOUTS(timeout, startTimeout),
    ...(process.stdin.isTTY && process.stdout.isTTY ? { confirm: askAtTerminal } : {}),
  });
}

async function runHistory({ command, rest, text, flag, given }: CommandArgs, io: CliIo): Promise<number> {
  const format = parseFormat(command, text('format'), ['text', 'json'] as const, io);
  const timeout = parsePositiveInteger(command, text('timeout'), 'timeout', io);
  const startTimeout = parsePositiveInteger(command, text('start-timeout'), 'start-timeout', io);
  if (startTimeout === false) return 2;
  const concurrency = parsePositiveInteger(command, text('concurrency'), 'concurrency', io);
  const limit = text('limit') === 'all' ? null : parsePositiveInteger(command, text('limit'), 'limit', io);
  if (!format || timeout === false || concurrency === false || limit === false) return 2;
  return commands().historyCommand(io, {
    logs: [...rest],
    format,
    ...given('tool', 'tool'),
    ...given('hash', 'hash'),
    stale: flag('stale'),
    ...(limit !== undefined ? { limit } : {}),
    ...given('workspace', 'workspace'),
    offline: flag('offline'),
    trust: flag('trust'),
    ...TIMEOUTS(timeout, startTimeout),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...given('store', 'store'),
    ...given('before', 'before'),
  });
}

async function runLsp({ command, text, flag }: CommandArgs, io: CliIo): Promise<number> {
  const ipc = flag('node-ipc');
  if (ipc === flag('stdio')) {
    io.stderr(`toolpin lsp: give exactly one of --stdio and --node-ipc\n${shortUsage(command)}`);
    return 2;
  }
  // vscode-languageserver reads --clientProcessId from the command line itself; it is parsed
  // here only so that a malformed one is a usage error rather than silently ignored.
  if (parsePositiveInteger(command, text('clientProcessId'), 'clientProcessId', io) === false) return 2;
  if (ipc && typeof process.send !== 'function') {
    io.stderr('toolpin lsp: --node-ipc needs an IPC channel to the parent process (start it with child_process.fork, as VS Code does), or use --stdio\n');
    return 2;
  }
  commands().startLanguageServer(ipc ? 'node-ipc' : 'stdio');
  return new Promise<number>(() => {
    // The server runs until the client sends exit; vscode-languageserver ends the process.
  });
}

/**
 * Commands that read a workspace or a log in one go and exit. They load the bundles through the
 * user's code cache; the language server does not (it starts once a session, and the cache's
 * effect on its memory was not measured).
 */
const BATCH_COMMANDS: ReadonlySet<string> = new Set(['check', 'pin', 'history', 'trust']);

/**
 * Sets up this process before dist/commands.js loads. This is the one place that sets V8 flags
 * or hooks module loading: every command that loads dist/commands.js runs through it, the
 * language server too (an editor starts `dist/cli.js lsp`).
 * - The young generation stays at its first size, for the batch commands and the language server
 *   alike (the flags must be the same in every process that uses a code cache: V8 keeps one only
 *   for the flags it was made with). V8 grows it up to 2 x 16 MiB when many young objects survive,
 *   as a check's documents do while the servers are listed and a scanned and verified workspace's
 *   trees do in the editor, and a process keeps that committed (issue 13): a cold check peaked at
 *   122 MiB, 94 with the bound, at no measurable CPU cost; the language server held 140 MiB with
 *   the 10,000-step file open, about 118 with it, and typing stayed as fast. Lifting the bound again
 *   at the first edit was tried and made memory after edits worse (1.60 of the JSON language
 *   server's, against 0.76): what the small young generation had promoted stayed, and the young
 *   generation grew on top of it. V8 reads the factor each time it would grow the space, so
 *   setting it now takes effect; other flags set at run time can crash V8, so none is.
 * - The batch commands' bundles load through the user's code cache (codeCache.ts), only in the
 *   shipped bundle (dist/cli.js), not in the modules the tests import from out/.
 */
function prepareProcess(command: string | undefined): void {
  if (command === undefined) return;
  const batch = BATCH_COMMANDS.has(command);
  if (!batch && command !== 'lsp') return;
  setFlagsFromString('--semi-space-growth-factor=1');
  if (batch && basename(__filename) === 'cli.js') installCodeCache(codeCacheFolder(process.env), __dirname);
}

if (require.main === module) {
  prepareProcess(process.argv[2]);
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
