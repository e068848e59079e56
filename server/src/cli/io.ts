/**
 * The I/O the CLI commands use, injected so that commands are testable without a process.
 */
import { readFile } from 'node:fs/promises';

export interface CliIo {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
  /** True when standard error is a terminal (progress is shown only then). */
  readonly stderrIsTerminal: boolean;
  readonly cwd: string;
}

export const processIo: CliIo = {
  readFile: (path) => readFile(path, 'utf8'),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTerminal: process.stderr.isTTY === true,
  cwd: process.cwd(),
};
