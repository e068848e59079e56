/**
 * The verification engine shared by `toolpin check` and the language server: analyzed documents
 * and a registry in, the listings they need fetched through the inventory, verdicts and problems
 * out per document.
 */
import type { BlueprintModel } from '../core/blueprint';
import type { ConnectorModel } from '../core/connector';
import type { DocumentKind } from '../core/documents';
import { applyPolicyToVerification, type Policy } from '../core/policy';
import type { ServerDefinition, ServerRegistry } from '../core/registry';
import { type ServerListing, type VerificationContext, verifyBlueprint, verifyConnector, type VerificationResult } from '../core/verify';
import type { Inventory } from '../mcp/inventory';

export interface AnalyzedDocument {
  readonly path: string;
  readonly kind: DocumentKind;
  readonly model: BlueprintModel | ConnectorModel;
}

/** The definitions a set of documents needs listed: every named server, and each connector's own. */
export function definitionsNeeded(documents: readonly AnalyzedDocument[], registry: ServerRegistry): ServerDefinition[] {
  const needed = new Set<ServerDefinition>();
  for (const document of documents) {
    if (document.kind === 'blueprint') {
      for (const step of (document.model as BlueprintModel).steps) {
        if (!step.mcp?.pin) continue;
        if (step.mcp.server) {
          const definition = registry.get(step.mcp.server.value);
          if (definition) needed.add(definition);
        } else {
          for (const definition of registry.named()) needed.add(definition);
        }
      }
    } else {
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
  inventory: Inventory,
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
    const result =
      document.kind === 'blueprint'
        ? verifyBlueprint(document.model as BlueprintModel, context)
        : verifyConnector(document.path, document.model as ConnectorModel, registry.definitions, context);
    // The policy changes only how findings are presented (core/policy.ts), the same way as in the editor.
    results.set(document.path, policy ? applyPolicyToVerification(result, policy, now) : result);
  }
  return results;
}
