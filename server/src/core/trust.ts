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
 *
 * What a fingerprint binds (binding 2, docs/trust.md): a stdio server's command, arguments, literal
 * env values and the digests of the workspace files its command line names (the script an
 * interpreter is given, a relative executable; io/commandFiles.ts reads them and passes them in);
 * an HTTP server's URL (with every `${env:…}` it reads, in the path or the query) and, per header
 * and for `auth`, which variable or credential it sends. The folder itself is not part of a
 * fingerprint: records are keyed by the folder's real path, so a folder reached through a link
 * matches the record of its real path.
 */
import { canonicalJson } from './pins/canonicalJson';
import type { ServerDefinition, TransportSpec } from './verify/registry';
import { sha256Hex } from './pins/sha256';

/** How a folder is trusted. */
export type FolderTrust =
  | { readonly kind: 'untrusted'; readonly howToTrust: string }
  | { readonly kind: 'session' }
  | {
      readonly kind: 'recorded';
      readonly approved: ReadonlySet<string>;
      readonly howToApprove: string;
      /** Set when the record was made by a Toolpin that bound less (binding 1): why it no longer matches. */
      readonly outdated?: string;
    };

/** The binding `toolpin trust` records now; a record with a lower one is asked again. */
export const TRUST_BINDING = 2;

/** Why a binding-1 record (made before script digests, env values and URL variables were bound) asks again. */
export const OUTDATED_RECORD =
  'the record was made by an earlier Toolpin, which did not bind the scripts a command runs, its env values, or the variables a URL, header or auth sends';

/** Digests of the workspace files a command line names, by path relative to the server's folder ("absent" when missing). */
export type CommandFileDigests = Readonly<Record<string, string>>;

export type TrustVerdict = { readonly trusted: true } | { readonly trusted: false; readonly reason: string };

/** What contacting a server would do, as its user should see it before trusting it. */
export interface ServerAction {
  /** Stable over token rotation: the sha256 of the declared transport and credential names. */
  readonly fingerprint: string;
  /** A one-line, secret-free description: the command line, or the URL and the credential sent. */
  readonly display: string;
  /** False for HTTP servers that are sent no credential: a trusted folder needs no record of them. */
  readonly needsApproval: boolean;
  /** Env variables whose literal value changes how an interpreter loads code (shown as a warning). */
  readonly loaderVariables: readonly string[];
}

/**
 * Variables that make an interpreter or the dynamic loader run other code than the command line
 * says: a repository that sets one runs code the command line does not show.
 */
export const LOADER_VARIABLES: ReadonlySet<string> = new Set([
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE',
  'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PYTHONUSERBASE', 'PYTHONINSPECT',
  'LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'DYLD_INSERT_LIBRARIES', 'DYLD_LIBRARY_PATH', 'DYLD_FRAMEWORK_PATH',
  'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'RUBYOPT', 'RUBYLIB', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH',
  'BASH_ENV', 'ENV', 'ZDOTDIR', 'PATH', 'GIT_EXEC_PATH', 'DENO_DIR', 'BUN_OPTIONS', 'UV_PYTHON', 'PIP_INDEX_URL', 'npm_config_registry',
]);

const REFERENCE = /\$\{(env|input):/;
const REFERENCES = /\$\{(?:env|input):[^}]*\}/g;

/** The `${env:…}` and `${input:…}` references of a declared value, in order (what it would send). */
function referencesOf(value: string): string[] {
  return value.match(REFERENCES) ?? [];
}

/** Quotes one word of a command line the way a POSIX shell would need it, for display only. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What a definition would send and where it comes from: `auth` and its credential, each header
 * that reads a variable with the variables it reads, and the variables the URL reads. Each entry
 * names the variable, never its value, so a record stays secret-free and an edit that sends
 * another variable to the same URL changes the fingerprint.
 */
function credentialNames(definition: ServerDefinition, declared: TransportSpec): string[] {
  const names: string[] = [];
  const auth = definition.auth;
  if (auth && auth.type !== 'none') names.push(auth.type === 'api-key' ? `auth ${auth.type} ${auth.credentialRef} as ${auth.headerName}` : `auth ${auth.type} ${auth.credentialRef}`);
  if (declared.kind === 'http') {
    for (const [header, value] of Object.entries(declared.headers).sort(([a], [b]) => a.localeCompare(b))) {
      if (REFERENCE.test(value)) names.push(`header ${header} ${referencesOf(value).join(' ')}`);
    }
    const inUrl = referencesOf(declared.url);
    if (inUrl.length > 0) names.push(`url ${inUrl.join(' ')}`);
  }
  return names;
}

/** One env entry as shown: the literal value (a reference stays a reference), flagged when it changes how code loads. */
function envDisplay(name: string, value: string): string {
  return `${name}=${shellWord(value)}${LOADER_VARIABLES.has(name) ? ' [changes what code loads]' : ''}`;
}

/**
 * What contacting this server would do, or undefined when it cannot be contacted at all.
 * `files` are the digests of the workspace files its command line names (io/commandFiles.ts);
 * a stdio server's fingerprint binds them, so a rewritten script or executable asks again.
 */
export function serverAction(definition: ServerDefinition, files: CommandFileDigests = {}): ServerAction | undefined {
  const declared = definition.declared ?? definition.transport;
  if (!declared) return undefined;
  const credentials = credentialNames(definition, declared);
  if (declared.kind === 'stdio') {
    const envNames = Object.keys(declared.env).sort();
    const loaderVariables = envNames.filter((name) => LOADER_VARIABLES.has(name));
    const fileNames = Object.keys(files).sort();
    const display =
      [declared.command, ...declared.args].map(shellWord).join(' ') +
      (envNames.length > 0 ? ` (env: ${envNames.map((name) => envDisplay(name, declared.env[name]!)).join(', ')})` : '') +
      (fileNames.length > 0 ? ` (runs ${fileNames.map((name) => `${shellWord(name)} ${files[name] === 'absent' ? 'absent' : (files[name] ?? '').slice(0, 19)}`).join(', ')})` : '');
    const identity = { binding: TRUST_BINDING, kind: 'stdio', command: declared.command, args: declared.args, env: declared.env, files, credentials };
    return { fingerprint: fingerprintOf(identity), display, needsApproval: true, loaderVariables };
  }
  const display = declared.url + (credentials.length > 0 ? ` (sends ${credentials.join(', ')})` : '');
  const identity = { binding: TRUST_BINDING, kind: 'http', url: declared.url, credentials };
  return { fingerprint: fingerprintOf(identity), display, needsApproval: credentials.length > 0, loaderVariables: [] };
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

/**
 * Whether a server may be contacted under a folder's trust, and if not, why in full. `files` gives
 * the digests of the files the definition's command line names (only read for a recorded folder).
 */
export function decideTrust(definition: ServerDefinition, trust: FolderTrust, files: (definition: ServerDefinition) => CommandFileDigests = () => ({})): TrustVerdict {
  if (trust.kind === 'session') return { trusted: true };
  const action = serverAction(definition, trust.kind === 'recorded' ? files(definition) : {});
  const what = action ? (definition.transport?.kind === 'http' || definition.declared?.kind === 'http' ? `contact ${action.display}` : `run \`${action.display}\``) : 'contact it';
  if (trust.kind === 'untrusted') {
    return { trusted: false, reason: `the folder is not trusted, so Toolpin did not ${what} (${trust.howToTrust})` };
  }
  if (!action || !action.needsApproval || trust.approved.has(action.fingerprint)) return { trusted: true };
  if (trust.outdated) return { trusted: false, reason: `server "${definition.name}" is asked again because ${trust.outdated}, so Toolpin did not ${what} (${trust.howToApprove})` };
  return { trusted: false, reason: `server "${definition.name}" is new or changed since this folder was trusted, so Toolpin did not ${what} (${trust.howToApprove})` };
}
