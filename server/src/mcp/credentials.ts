/**
 * Credentials: `credentialRef` names resolve to values here and nowhere else. A value lives only
 * in memory on its way into a request header; it is registered with the redactor so that no log
 * line can carry it.
 */
import type { AuthModel } from '../core/connector';

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

/** Collects secret values so that logs and error messages can be scrubbed of them. */
export class Redactor {
  private readonly secrets = new Set<string>();

  add(secret: string): void {
    // Very short values would redact ordinary words; they are still never written on purpose.
    if (secret.length >= 4) this.secrets.add(secret);
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.secrets) result = result.split(secret).join('«redacted»');
    return result;
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
