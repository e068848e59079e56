/**
 * Trust: whether Toolpin may contact a server a repository declares. A checked-out repository is
 * not trusted until its user says so, because contacting its servers means running the commands
 * it names and sending credentials to the URLs it names.
 *
 * Contract (docs/formats.md §"Trust"):
 * - An untrusted folder contacts no server at all: no stdio command runs, no HTTP request is made,
 *   no credential is read. Its pins are "cannot verify" with a reason that names what was not run.
 * - A folder trusted for a session (`--trust`, `TOOLPIN_TRUST=1`, or an editor that says the
 *   workspace is trusted) contacts every server it declares.
 * - A folder recorded with `toolpin trust` is trusted for what it would run at the time it was
 *   recorded: each stdio command line and each URL a credential would be sent to has a
 *   fingerprint, and a server whose fingerprint was not recorded (a pull added or changed it) is
 *   untrusted until it is approved again. HTTP servers that are sent no credential need no
 *   approval once the folder is trusted.
 *
 * Fingerprints are taken over the *declared* form (variables such as `${env:TOKEN}` unresolved),
 * so rotating a token does not revoke trust and no credential value is ever part of a record.
 */
import { canonicalJson } from './pins/canonicalJson';
import type { ServerDefinition, TransportSpec } from './verify/registry';
import { sha256Hex } from './pins/sha256';

/** How a folder is trusted. */
export type FolderTrust =
  | { readonly kind: 'untrusted'; readonly howToTrust: string }
  | { readonly kind: 'session' }
  | { readonly kind: 'recorded'; readonly approved: ReadonlySet<string>; readonly howToApprove: string };

export type TrustVerdict = { readonly trusted: true } | { readonly trusted: false; readonly reason: string };

/** What contacting a server would do, as its user should see it before trusting it. */
export interface ServerAction {
  /** Stable over token rotation: the sha256 of the declared transport and credential names. */
  readonly fingerprint: string;
  /** A one-line, secret-free description: the command line, or the URL and the credential sent. */
  readonly display: string;
  /** False for HTTP servers that are sent no credential: a trusted folder needs no record of them. */
  readonly needsApproval: boolean;
}

const REFERENCE = /\$\{(env|input):/;

/** Quotes one word of a command line the way a POSIX shell would need it, for display only. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The names of the credentials a definition would send (auth, and headers that read the environment). */
function credentialNames(definition: ServerDefinition, declared: TransportSpec): string[] {
  const names: string[] = [];
  const auth = definition.auth;
  if (auth && auth.type !== 'none') names.push(auth.credentialRef);
  if (declared.kind === 'http') {
    for (const [header, value] of Object.entries(declared.headers)) if (REFERENCE.test(value)) names.push(`header ${header}`);
  }
  return names;
}

/** What contacting this server would do, or undefined when it cannot be contacted at all. */
export function serverAction(definition: ServerDefinition): ServerAction | undefined {
  const declared = definition.declared ?? definition.transport;
  if (!declared) return undefined;
  const credentials = credentialNames(definition, declared);
  if (declared.kind === 'stdio') {
    const envNames = Object.keys(declared.env).sort();
    const display = [declared.command, ...declared.args].map(shellWord).join(' ') + (envNames.length > 0 ? ` (env: ${envNames.join(', ')})` : '');
    const identity = { kind: 'stdio', command: declared.command, args: declared.args, env: declared.env, cwd: definition.cwd, credentials };
    return { fingerprint: fingerprintOf(identity), display, needsApproval: true };
  }
  const display = declared.url + (credentials.length > 0 ? ` (sends ${credentials.join(', ')})` : '');
  const identity = { kind: 'http', url: declared.url, credentials };
  return { fingerprint: fingerprintOf(identity), display, needsApproval: credentials.length > 0 };
}

function fingerprintOf(identity: unknown): string {
  let text: string;
  try {
    text = canonicalJson(identity);
  } catch {
    // Not canonical JSON (a lone surrogate in an argument): still a stable text for this input.
    text = JSON.stringify(identity);
  }
  return `sha256:${sha256Hex(text)}`;
}

/** Whether a server may be contacted under a folder's trust, and if not, why in full. */
export function decideTrust(definition: ServerDefinition, trust: FolderTrust): TrustVerdict {
  if (trust.kind === 'session') return { trusted: true };
  const action = serverAction(definition);
  const what = action ? (definition.transport?.kind === 'http' || definition.declared?.kind === 'http' ? `contact ${action.display}` : `run \`${action.display}\``) : 'contact it';
  if (trust.kind === 'untrusted') {
    return { trusted: false, reason: `the folder is not trusted, so Toolpin did not ${what} (${trust.howToTrust})` };
  }
  if (!action || !action.needsApproval || trust.approved.has(action.fingerprint)) return { trusted: true };
  return { trusted: false, reason: `server "${definition.name}" is new or changed since this folder was trusted, so Toolpin did not ${what} (${trust.howToApprove})` };
}
