/**
 * The I/O the CLI commands use, injected so that commands are testable without a process.
 */
import { readFile } from 'node:fs/promises';
import { redactKnownSecrets } from '../mcp/credentials';

export interface CliIo {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when standard error is a terminal (progress is shown only then). */
  readonly stderrIsTerminal: boolean;
  readonly cwd: string;
}

/** Reads a file that may be absent or unreadable (mcp.json files, store entries): undefined then. */
export async function readIfPresent(io: CliIo, file: string): Promise<string | undefined> {
  try {
    return await io.readFile(file);
  } catch {
    return undefined;
  }
}

export const processIo: CliIo = {
  readFile: (path) => readFile(path, 'utf8'),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    // Standard input has no encoding set, so it yields Buffers; anything else is taken as text.
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), 'utf8'));
    return Buffer.concat(chunks).toString('utf8');
  },
  // Every credential value resolved during the command (server env, headers, credentialRef) is
  // scrubbed from everything written, text, JSON and SARIF alike: a server may echo one anywhere.
  stdout: (text) => void process.stdout.write(redactKnownSecrets(text)),
  stderr: (text) => void process.stderr.write(redactKnownSecrets(text)),
  stderrIsTerminal: process.stderr.isTTY === true,
  cwd: process.cwd(),
};
