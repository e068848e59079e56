/**
 * The verification engine shared by `toolpin check` and the language server: analyzed documents
 * and a registry in, the listings they need fetched through the inventory, verdicts and problems
 * out per document.
 */
import { blueprintOf, connectorOf, type DocumentModel } from '../core/documents/documents';
import { applyPolicyToVerification, type Policy } from '../core/verify/policy';
import type { ServerDefinition, ServerRegistry } from '../core/verify/registry';
import { type ServerListing, type VerificationContext, verifyBlueprint, verifyConnector, type VerificationResult } from '../core/verify/verify';
import type { ListingSource } from './listingSource';

export type AnalyzedDocument = DocumentModel & { readonly path: string };

/**
 * Verifies one document: the steps of its blueprint model and the instances of its connector
 * model (a source file has both), in one result sorted by offset.
 */
export function verifyAnalyzed(document: AnalyzedDocument, registry: ServerRegistry, context: VerificationContext): VerificationResult {
  const blueprint = blueprintOf(document);
  const connector = connectorOf(document);
  const results = [
    ...(blueprint ? [verifyBlueprint(blueprint, context)] : []),
    ...(connector ? [verifyConnector(document.path, connector, registry.definitions, context)] : []),
  ];
  if (results.length === 1) return results[0]!;
  return {
    verdicts: results.flatMap((result) => result.verdicts),
    problems: results.flatMap((result) => result.problems).sort((a, b) => a.span.offset - b.span.offset),
  };
}

/** The definitions a set of documents needs listed: every named server, and each connector's own. */
export function definitionsNeeded(documents: readonly AnalyzedDocument[], registry: ServerRegistry): ServerDefinition[] {
  const needed = new Set<ServerDefinition>();
  for (const document of documents) {
    for (const step of blueprintOf(document)?.steps ?? []) {
      if (!step.mcp?.pin) continue;
      if (step.mcp.server) {
        const definition = registry.get(step.mcp.server.value);
        if (definition) needed.add(definition);
      } else {
        for (const definition of registry.named()) needed.add(definition);
      }
    }
    if (connectorOf(document)) {
      for (const definition of registry.definitions) {
        if (definition.origin.kind === 'connector' && definition.origin.file === document.path) needed.add(definition);
      }
    }
  }
  return [...needed];
}

const NOT_LISTED: ServerListing = { status: 'unavailable', reason: 'unreachable', message: 'the server has not been listed yet' };

/** What a server that was deliberately not contacted looks like (`toolpin check --offline`). */
export const OFFLINE: ServerListing = { status: 'unavailable', reason: 'unreachable', message: 'offline (--offline): no server was contacted' };

/**
 * Verifies documents against whatever listings the inventory holds now (no fetching). A server
 * without a listing gets `fallback`.
 */
export function verifyDocuments(
  documents: readonly AnalyzedDocument[],
  registry: ServerRegistry,
  inventory: ListingSource,
  now: number,
  fallback: ServerListing = NOT_LISTED,
  pinnedContent?: VerificationContext['pinnedContent'],
  extras: { readonly policy?: Policy; readonly fullDefinition?: VerificationContext['fullDefinition'] } = {},
): Map<string, VerificationResult> {
  const { policy, fullDefinition } = extras;
  const context: VerificationContext = {
    registry,
    now,
    listingFor: (definition: ServerDefinition) => inventory.listing(definition) ?? fallback,
    ...(pinnedContent ? { pinnedContent } : {}),
    ...(fullDefinition ? { fullDefinition } : {}),
  };
  const results = new Map<string, VerificationResult>();
  for (const document of documents) {
    const result = verifyAnalyzed(document, registry, context);
    // The policy changes only how findings are presented (core/verify/policy.ts), the same way as in the editor.
    results.set(document.path, policy ? applyPolicyToVerification(result, policy, now) : result);
  }
  return results;
}
