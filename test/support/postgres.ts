/**
 * A throwaway PostgreSQL cluster for the store tests: `initdb` and `pg_ctl` on a fresh temporary
 * folder and a free port, stopped and deleted by `stop()`. Real PostgreSQL, never a mock
 * (scripts/install-test-deps.sh installs the Debian `postgresql` package when it is absent).
 *
 * PostgreSQL refuses to run as root: as root, the folder is given to the `postgres` user and the
 * programs run as that user (`runuser -u postgres --`). Connections are local (127.0.0.1) with
 * `trust` authentication, as a test cluster's are; `url(database)` names a database of it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface TestCluster {
  readonly port: number;
  /** A URL of `database` on the cluster (created by {@link TestCluster.createDatabase}). */
  url(database: string): string;
  createDatabase(database: string): void;
  stop(): void;
}

/** The folder of PostgreSQL's server programs (the newest installed version), or undefined. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (existsSync(path.join(bin, 'initdb'))) return bin;
  }
  return undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startTestCluster(): Promise<TestCluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed (scripts/install-test-deps.sh installs the Debian package "postgresql")');
  const asRoot = process.getuid?.() === 0;
  const base = mkdtempSync(path.join(os.tmpdir(), 'toolpin-pg-'));
  const data = path.join(base, 'data');
  const run = (program: string, args: string[]): void => {
    const command = asRoot ? 'runuser' : path.join(bin, program);
    const argv = asRoot ? ['-u', 'postgres', '--', path.join(bin, program), ...args] : args;
    execFileSync(command, argv, { stdio: 'pipe', cwd: base });
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(base, uid, gid);
    chmodSync(base, 0o700);
  }
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${base} -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  run('pg_ctl', ['-D', data, '-o', options, '-l', path.join(base, 'log'), '-w', 'start']);
  let stopped = false;
  return {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    createDatabase: (database) => run('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', database]),
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
  };
}
