/**
 * The user's record of trusted folders: `$XDG_CONFIG_HOME/toolpin/trust.json`, else
 * `~/.config/toolpin/trust.json`. It lives outside every repository, so no repository can trust
 * itself, and it holds fingerprints and secret-free descriptions only (core/trust.ts).
 *
 * Format (version 1):
 *   { "version": 1, "folders": { "<absolute folder>": { "trustedAt": "<ISO time>",
 *       "servers": [ { "fingerprint": "sha256:…", "display": "node servers/x.mjs", "name": "x" } ] } } }
 *
 * Contract: reading never throws (a missing or malformed file is an empty record, and a malformed
 * one is reported through `problem`); writing replaces the file atomically (a temporary file in
 * the same folder, then a rename), so a crash never leaves half a record.
 */
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isArray, isRecord } from '../core/json/values';
import { isNotARegularFile, readRegularText } from './regularFile';
import type { FolderTrust } from '../core/trust';

export interface TrustedServer {
  readonly fingerprint: string;
  readonly display: string;
  readonly name: string;
}

export interface TrustedFolder {
  readonly trustedAt: string;
  readonly servers: readonly TrustedServer[];
}

export interface TrustRecord {
  readonly version: 1;
  readonly folders: Readonly<Record<string, TrustedFolder>>;
}

const EMPTY: TrustRecord = { version: 1, folders: {} };

/** Where the record lives for this user, from the environment given (never the repository's). */
export function trustFilePath(env: Readonly<Record<string, string | undefined>>, home: string = os.homedir()): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(home, '.config');
  return path.join(base, 'toolpin', 'trust.json');
}

/** The folder as the record keys it: absolute, symbolic links resolved when it exists. */
export function canonicalFolder(folder: string): string {
  const absolute = path.resolve(folder);
  try {
    return realpathSync.native(absolute);
  } catch {
    return absolute;
  }
}

function isTrustedServer(value: unknown): value is TrustedServer {
  return isRecord(value) && typeof value.fingerprint === 'string' && typeof value.display === 'string' && typeof value.name === 'string';
}

/** Parses the record's text; anything unreadable yields the empty record and a problem. */
export function parseTrustRecord(text: string): { record: TrustRecord; problem?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { record: EMPTY, problem: `it is not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (!isRecord(parsed) || parsed.version !== 1 || typeof parsed.folders !== 'object' || parsed.folders === null) {
    return { record: EMPTY, problem: 'it is not a version 1 trust record' };
  }
  const folders: Record<string, TrustedFolder> = {};
  const entries: Array<[string, unknown]> = Object.entries(parsed.folders);
  for (const [folder, value] of entries) {
    if (!isRecord(value) || !isArray(value.servers)) continue;
    folders[folder] = { trustedAt: typeof value.trustedAt === 'string' ? value.trustedAt : '', servers: value.servers.filter(isTrustedServer) };
  }
  return { record: { version: 1, folders } };
}

export class TrustStore {
  constructor(
    readonly file: string,
    private readonly problem: (message: string) => void = () => undefined,
  ) {}

  async read(): Promise<TrustRecord> {
    let text: string;
    try {
      text = await readRegularText(this.file);
    } catch (error) {
      if (isNotARegularFile(error)) this.problem(`toolpin: ignoring the trust record ${this.file}: ${error.message}`);
      return EMPTY;
    }
    const { record, problem } = parseTrustRecord(text);
    if (problem) this.problem(`toolpin: ignoring the trust record ${this.file}: ${problem}`);
    return record;
  }

  /** The trust of a folder: recorded (with its approved fingerprints) or untrusted. */
  async folderTrust(folder: string, howToTrust: string): Promise<FolderTrust> {
    const entry = (await this.read()).folders[canonicalFolder(folder)];
    if (!entry) return { kind: 'untrusted', howToTrust };
    return { kind: 'recorded', approved: new Set(entry.servers.map((server) => server.fingerprint)), howToApprove: howToTrust };
  }

  /** Records a folder as trusted for exactly these servers (replacing what was recorded). */
  async trust(folder: string, servers: readonly TrustedServer[], now: Date = new Date()): Promise<void> {
    const record = await this.read();
    await this.write({ version: 1, folders: { ...record.folders, [canonicalFolder(folder)]: { trustedAt: now.toISOString(), servers } } });
  }

  /** Removes a folder's record; returns false when it had none. */
  async revoke(folder: string): Promise<boolean> {
    const record = await this.read();
    const key = canonicalFolder(folder);
    if (!(key in record.folders)) return false;
    const folders = { ...record.folders };
    delete folders[key];
    await this.write({ version: 1, folders });
    return true;
  }

  private async write(record: TrustRecord): Promise<void> {
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    await fs.rename(temporary, this.file);
  }
}
