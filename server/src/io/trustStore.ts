/**
 * The user's record of trusted folders: `$XDG_CONFIG_HOME/toolpin/trust.json`, else
 * `~/.config/toolpin/trust.json`. It lives outside every repository, so no repository can trust
 * itself, and it holds fingerprints and secret-free descriptions only (core/trust.ts).
 *
 * Format (version 1):
 *   { "version": 1, "folders": { "<real path of the folder>": { "trustedAt": "<ISO time>", "binding": 2,
 *       "servers": [ { "fingerprint": "sha256:…", "display": "node servers/x.mjs", "name": "x" } ] } } }
 * A folder entry without `binding` (or with 1) was made before command files, env values and URL
 * variables were bound (core/trust.ts TRUST_BINDING): its servers are asked again, saying why.
 *
 * Contract: reading never throws (a missing or malformed file is an empty record, and a malformed
 * one is reported through `problem`); writing replaces the file atomically (a temporary file in
 * the same folder, then a rename), so a crash never leaves half a record. On POSIX a record is
 * honoured only when it is a regular file owned by the user and not writable by group or others,
 * in a folder of the same kind (as the code cache, cli/codeCache.ts): a record somebody else can
 * write would be trust they choose. Such a record is ignored, and `problem` says why.
 */
import { promises as fs, realpathSync } from 'node:fs';
import { makeFolderSafely, writeFileSafely } from './safeWrite';
import * as os from 'node:os';
import * as path from 'node:path';
import { isArray, isRecord } from '../core/json/values';
import { OUTDATED_RECORD, TRUST_BINDING, type FolderTrust } from '../core/trust';
import { isNotARegularFile, openRegularFile } from './regularFile';

export interface TrustedServer {
  readonly fingerprint: string;
  readonly display: string;
  readonly name: string;
}

export interface TrustedFolder {
  readonly trustedAt: string;
  /** What its fingerprints bind (core/trust.ts TRUST_BINDING); 1 for records made before binding 2. */
  readonly binding: number;
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
    const binding = typeof value.binding === 'number' ? value.binding : 1;
    folders[folder] = { trustedAt: typeof value.trustedAt === 'string' ? value.trustedAt : '', binding, servers: value.servers.filter(isTrustedServer) };
  }
  return { record: { version: 1, folders } };
}

/** Why a record (or its folder) is not the user's own, or undefined when it is (always on Windows). */
function ownershipProblem(status: { uid: number; mode: number; isFile(): boolean; isDirectory(): boolean }, what: 'file' | 'folder'): string | undefined {
  if (what === 'file' && !status.isFile()) return 'it is not a regular file';
  if (what === 'folder' && !status.isDirectory()) return 'its folder is not a folder';
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return undefined;
  const subject = what === 'file' ? 'it' : 'its folder';
  if (status.uid !== process.getuid()) return `${subject} is owned by user ${status.uid}, not by you (${process.getuid()})`;
  if ((status.mode & 0o022) !== 0) return `${subject} is writable by ${(status.mode & 0o020) !== 0 ? 'its group' : 'others'} (mode ${(status.mode & 0o777).toString(8)})`;
  return undefined;
}

export class TrustStore {
  constructor(
    readonly file: string,
    private readonly problem: (message: string) => void = () => undefined,
  ) {}

  async read(): Promise<TrustRecord> {
    let text: string;
    let handle: fs.FileHandle | undefined;
    try {
      handle = await openRegularFile(this.file, { noFollow: true });
      const unsafe = ownershipProblem(await handle.stat(), 'file') ?? ownershipProblem(await fs.stat(path.dirname(this.file)), 'folder');
      if (unsafe) {
        this.problem(`toolpin: ignoring the trust record ${this.file}: ${unsafe}; no folder is trusted by it (fix its owner and mode, e.g. chmod 600, or delete it and run toolpin trust again)`);
        return EMPTY;
      }
      text = await handle.readFile('utf8');
    } catch (error) {
      // A link at the record's name is refused by O_NOFOLLOW (ELOOP): somebody else's choice of record.
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') this.problem(`toolpin: ignoring the trust record ${this.file}: it is a symbolic link`);
      else if (isNotARegularFile(error)) this.problem(`toolpin: ignoring the trust record ${this.file}: ${error.message}`);
      return EMPTY;
    } finally {
      await handle?.close();
    }
    const { record, problem } = parseTrustRecord(text);
    if (problem) this.problem(`toolpin: ignoring the trust record ${this.file}: ${problem}`);
    return record;
  }

  /** The trust of a folder: recorded (with its approved fingerprints) or untrusted. */
  async folderTrust(folder: string, howToTrust: string): Promise<FolderTrust> {
    const entry = (await this.read()).folders[canonicalFolder(folder)];
    if (!entry) return { kind: 'untrusted', howToTrust };
    const approved = new Set(entry.servers.map((server) => server.fingerprint));
    return { kind: 'recorded', approved, howToApprove: howToTrust, ...(entry.binding < TRUST_BINDING ? { outdated: OUTDATED_RECORD } : {}) };
  }

  /** Records a folder as trusted for exactly these servers (replacing what was recorded). */
  async trust(folder: string, servers: readonly TrustedServer[], now: Date = new Date()): Promise<void> {
    const record = await this.read();
    await this.write({ version: 1, folders: { ...record.folders, [canonicalFolder(folder)]: { trustedAt: now.toISOString(), binding: TRUST_BINDING, servers } } });
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
    await makeFolderSafely(path.dirname(this.file), 0o700);
    // The user's own record, at exactly its name: a link planted there is refused, not followed.
    await writeFileSafely(this.file, `${JSON.stringify(record, null, 2)}\n`, { exactly: true }, { mode: 0o600 });
  }
}
