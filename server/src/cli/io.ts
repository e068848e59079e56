/**
 * The I/O the CLI commands use, injected so that commands are testable without a process.
 */
import { redactKnownSecrets } from '../mcp/credentials';
import { isNotARegularFile, readRegularTextSync } from '../io/regularFile';

export interface CliIo {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when standard error is a terminal (progress is shown only then). */
  readonly stderrIsTerminal: boolean;
  /** True when standard input and output are a terminal, so a question can be asked (`toolpin trust`). */
  readonly stdinIsTerminal?: boolean;
  /** Asks one question on the terminal and returns the line answered (empty at end of input). */
  ask?(question: string): Promise<string>;
  readonly cwd: string;
}

/**
 * Reads a file that may be absent or unreadable (mcp.json files, store entries, the policy):
 * undefined then. A path that is there but is no regular file (a FIFO, a folder, a device) is
 * skipped with one line on standard error that names it, so that nothing is left out silently.
 */
export async function readIfPresent(io: CliIo, file: string): Promise<string | undefined> {
  try {
    return await io.readFile(file);
  } catch (error) {
    if (isNotARegularFile(error)) io.stderr(`toolpin: ${file}: ${error.message}\n`);
    return undefined;
  }
}

/**
 * Output whose reader went away (`toolpin check | head`) is dropped instead of crashing on EPIPE:
 * the command still runs to its end and exits with its own status, which is what a pipeline with
 * `pipefail` or a CI step reads. Any other write error is reported once on standard error.
 */
let stdoutClosed = false;
let watchingStdout = false;
function writeStdout(text: string): void {
  if (!watchingStdout) {
    watchingStdout = true;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      stdoutClosed = true;
      if (error.code !== 'EPIPE') process.stderr.write(`toolpin: cannot write the output: ${error.message}\n`);
    });
  }
  if (!stdoutClosed) process.stdout.write(text);
}

export const processIo: CliIo = {
  // Read synchronously: a command reads many small files with nothing else to do meanwhile, and
  // the promise-based readFile costs four thread-pool round trips per file (a cold check read its
  // 1,005 files in about 100 ms this way against 10 ms, issue 13). A failure still rejects.
  // Regular files only, opened without blocking (io/regularFile.ts): a FIFO is refused, not waited on.
  readFile: async (path) => readRegularTextSync(path),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    // Standard input has no encoding set, so it yields Buffers; anything else is taken as text.
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), 'utf8'));
    return Buffer.concat(chunks).toString('utf8');
  },
  // Every credential value resolved during the command (server env, headers, credentialRef) is
  // scrubbed from everything written, text, JSON and SARIF alike: a server may echo one anywhere.
  stdout: (text) => writeStdout(redactKnownSecrets(text)),
  stderr: (text) => void process.stderr.write(redactKnownSecrets(text)),
  stderrIsTerminal: process.stderr.isTTY === true,
  stdinIsTerminal: process.stdin.isTTY === true && process.stdout.isTTY === true,
  ask: async (question) => {
    // Loaded only when a question is asked: readline costs the batch commands nothing otherwise.
    const { createInterface } = await import('node:readline');
    const reader = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    try {
      return await new Promise<string>((resolve) => {
        reader.once('close', () => resolve(''));
        reader.question(question, resolve);
      });
    } finally {
      reader.close();
    }
  },
  cwd: process.cwd(),
};
