/**
 * Credentials: `credentialRef` names resolve to values here and nowhere else. A value lives only
 * in memory on its way into a request header; it is registered with the redactor so that no log
 * line can carry it.
 */
import type { AuthModel } from '../core/documents/connector';

/** Resolves a credential name to its value, or undefined when it is not set. */
export interface CredentialResolver {
  resolve(name: string): Promise<string | undefined>;
}

/** Reads credentials from an environment (the CLI's, or the server process's). */
export function environmentCredentials(env: Readonly<Record<string, string | undefined>>): CredentialResolver {
  return { resolve: async (name) => (env[name] !== undefined && env[name] !== '' ? env[name] : undefined) };
}

/** Tries each resolver in turn (e.g. the editor's secret storage, then the environment). */
export function chainCredentials(...resolvers: CredentialResolver[]): CredentialResolver {
  return {
    resolve: async (name) => {
      for (const resolver of resolvers) {
        const value = await resolver.resolve(name);
        if (value !== undefined) return value;
      }
      return undefined;
    },
  };
}

/** What a redacted value is replaced with. */
export const REDACTED = '«redacted»';

/**
 * Every value any {@link Redactor} was given, process-wide. Output is often written far from the
 * session that resolved a credential (CLI standard output, published diagnostics, hovers, pin-store
 * entries), and a server may echo a credential into a tool description or schema; these places
 * scrub with {@link redactKnownSecrets} and refuse with {@link containsKnownSecret}.
 *
 * The set lives on `globalThis` under a registered symbol, not in this module: the CLI ships as two
 * bundles (dist/cli.js and the dist/commands.js it loads on demand), each with its own copy of
 * this module, and the copy that writes standard output must see the values the other registered.
 */
const KNOWN_SECRETS = Symbol.for('toolpin.knownSecrets');
const knownSecrets: Set<string> = sharedSecretSet();

function sharedSecretSet(): Set<string> {
  const existing: unknown = Reflect.get(globalThis, KNOWN_SECRETS);
  if (existing instanceof Set) return existing;
  const created = new Set<string>();
  Reflect.set(globalThis, KNOWN_SECRETS, created);
  return created;
}

function forms(secret: string): string[] {
  // Inside JSON (reports, SARIF, canonical tool content) a value with quotes, backslashes or
  // control characters appears escaped: that form is a secret too.
  const escaped = JSON.stringify(secret).slice(1, -1);
  return escaped === secret ? [secret] : [secret, escaped];
}

function replaceAll(text: string, secrets: Iterable<string>): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  return result;
}

/** `text` with every value known to any redactor replaced by {@link REDACTED}. */
export function redactKnownSecrets(text: string): string {
  return knownSecrets.size === 0 ? text : replaceAll(text, knownSecrets);
}

/** A JSON-like value with every string in it passed through {@link redactKnownSecrets}. */
export function redactKnownSecretsDeep<T>(value: T): T {
  if (knownSecrets.size === 0) return value;
  // The one cast of this module, and the right tool: the copy has T's shape (a string stays a
  // string, an array an array, an object an object with the same values redacted), which the
  // type system cannot follow through a walk of an unknown value. The one way it may differ is a
  // key that held a secret, renamed on purpose.
  return redactDeep(value) as T;
}

function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactKnownSecrets(value);
  if (Array.isArray(value)) return value.map((item: unknown) => redactDeep(item));
  if (typeof value === 'object' && value !== null) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(result, redactKnownSecrets(key), { value: redactDeep(item), enumerable: true, writable: true, configurable: true });
    }
    return result;
  }
  return value;
}

/** True when `text` holds a known credential value, or a placeholder where one was redacted. */
export function containsKnownSecret(text: string): boolean {
  if (text.includes(REDACTED)) return true;
  for (const secret of knownSecrets) if (text.includes(secret)) return true;
  return false;
}

/** Collects secret values so that logs and error messages can be scrubbed of them. */
export class Redactor {
  private readonly secrets = new Set<string>();

  add(secret: string): void {
    // Very short values would redact ordinary words; they are still never written on purpose.
    if (secret.length < 4) return;
    for (const form of forms(secret)) {
      this.secrets.add(form);
      knownSecrets.add(form);
    }
  }

  redact(text: string): string {
    return replaceAll(text, this.secrets);
  }
}

export type AuthHeaders = { headers: Record<string, string> } | { missing: string };

/** The request headers for a connector's auth, or the name of the missing credential. */
export async function authHeaders(auth: AuthModel | undefined, credentials: CredentialResolver, redactor: Redactor): Promise<AuthHeaders> {
  if (!auth || auth.type === 'none') return { headers: {} };
  const value = await credentials.resolve(auth.credentialRef);
  if (value === undefined) return { missing: auth.credentialRef };
  redactor.add(value);
  switch (auth.type) {
    case 'bearer':
      return { headers: { Authorization: `Bearer ${value}` } };
    case 'api-key':
      return { headers: { [auth.headerName]: value } };
    case 'basic': {
      const encoded = Buffer.from(`${auth.username}:${value}`, 'utf8').toString('base64');
      redactor.add(encoded);
      return { headers: { Authorization: `Basic ${encoded}` } };
    }
  }
}
