/**
 * One server's whole surface for the peers' lockfiles (core/documents/lockfiles): its tools, as
 * sent, through the same lenient reader as every listing (core/verify/listing.ts), its prompts,
 * resources and instructions. The trust decision is asked first: a server its folder's trust does
 * not cover is never started or contacted. The session is closed before this returns, so no
 * server process outlives it. Loaded on first use, like the inventory's sessions.
 */
import type { LockSurface } from '../core/documents/lockfiles/lockModel';
import type { ServerDefinition } from '../core/verify/registry';
import type { TrustVerdict } from '../core/trust';
import type { CollectedListing } from '../core/verify/listing';
import type { UnavailableReason } from '../core/verify/verify';
import { SessionError } from './sessionError';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../engine/timeouts';
import type { CredentialResolver, Redactor } from './credentials';
import type { McpSession } from './session';

/** mcp/session.ts and the SDK behind it, loaded at the first surface fetch (as inventory.ts does). */
function sessions(): typeof import('./session') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose, as said above
  return require('./session');
}

export interface SurfaceOptions {
  readonly credentials: CredentialResolver;
  readonly redactor: Redactor;
  readonly clientVersion: string;
  readonly trust: (definition: ServerDefinition) => TrustVerdict;
  readonly requestTimeoutMs?: number;
  readonly startTimeoutMs?: number;
  readonly maxPages?: number;
}

/** The surface and the tool listing it came from, or why it could not be had (a sentence fragment, secrets redacted). */
export type SurfaceResult = { readonly surface: LockSurface; readonly listing: CollectedListing } | { readonly reason: UnavailableReason; readonly unavailable: string };

export async function fetchSurface(definition: ServerDefinition, options: SurfaceOptions): Promise<SurfaceResult> {
  const verdict = options.trust(definition);
  if (!verdict.trusted) return { reason: 'untrusted-workspace', unavailable: verdict.reason };
  let session: McpSession | undefined;
  try {
    session = await sessions().McpSession.open(definition, {
      credentials: options.credentials,
      redactor: options.redactor,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      ...(options.startTimeoutMs !== undefined ? { startTimeoutMs: options.startTimeoutMs } : {}),
      maxPages: options.maxPages ?? 100,
      clientVersion: options.clientVersion,
      log: () => undefined,
    });
    const listing = await session.listTools(definition);
    if (listing.incomplete) return { reason: 'protocol-error', unavailable: `the tool listing is incomplete: ${listing.incomplete.message}` };
    const rest = await session.listSurface();
    return { surface: { tools: listing.tools.map((tool) => tool.raw), prompts: rest.prompts, resources: rest.resources, instructions: rest.instructions }, listing };
  } catch (error) {
    return { reason: error instanceof SessionError ? error.reason : 'crashed', unavailable: options.redactor.redact(error instanceof Error ? error.message : String(error)) };
  } finally {
    await session?.close();
  }
}
