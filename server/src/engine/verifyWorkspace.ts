/**
 * The per-document verification step shared by `toolpin check` (engine/workspaceCheck.ts) and the
 * language server (engine/liveWorkspace.ts): what a document needs listed, the inputs verification
 * takes besides the listings (the pin store's entries and the folder's policy), and one document's
 * verdicts and problems with the policy applied. Both callers assemble these inputs here, so the
 * editor and the CLI cannot drift apart in how they verify.
 */
import { blueprintOf, computedPinsOf, connectorOf, type DocumentModel, unreadPinsOf } from '../core/documents/documents';
import { applyPolicyToVerification, type Policy } from '../core/verify/policy';
import { definedIn, type ServerDefinition, type ServerRegistry } from '../core/verify/registry';
import { type ServerListing, type VerificationContext, verifyBlueprint, verifyConnector, type VerificationResult } from '../core/verify/verify';
import type { UnreadPin } from '../core/documents/source/sourceReader';
import type { ComputedPin } from '../core/documents/source/analyzeSource';
import type { ListingSource } from './listingSource';
import { pinnedToolsOf, type PinStoreReader, pinsOf } from './pinStore';
import type { PolicyFile, PolicyReader } from './policyFile';

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
    ...(connector ? [verifyConnector(document.path, connector, registry.definedIn(document.path), context)] : []),
    ...(unreadPinsOf(document).length > 0 ? [unreadPinsResult(unreadPinsOf(document))] : []),
    ...(computedPinsOf(document).length > 0 ? [computedPinsResult(computedPinsOf(document))] : []),
  ];
  if (results.length === 1) return results[0]!;
  return {
    verdicts: results.flatMap((result) => result.verdicts),
    problems: results.flatMap((result) => result.problems).sort((a, b) => a.span.offset - b.span.offset),
  };
}

/** The pins in parts of a module that could not be read (TP112): "cannot verify", each where it is. */
function unreadPinsResult(pins: readonly UnreadPin[]): VerificationResult {
  const reason = 'cannot verify: the code around this pin could not be read (TP112), so its tool and server are unknown';
  return { verdicts: pins.map((pin) => ({ kind: pin.kind, tool: '(unread)', server: undefined, pinned: pin.pin, live: undefined, state: 'cannot-verify', reason, span: pin.span })), problems: [] };
}

/** Pins whose value is computed or imported (TP110): "cannot verify", each where it is used, with the reason. */
function computedPinsResult(pins: readonly ComputedPin[]): VerificationResult {
  return {
    verdicts: pins.map((pin) => ({ kind: pin.kind, tool: pin.tool, server: pin.server, pinned: '(not a literal)', live: undefined, state: 'cannot-verify', reason: `cannot verify: ${pin.reason}`, span: pin.span })),
    problems: [],
  };
}

/**
 * The definitions a set of documents needs listed: every named server, and each connector's own.
 * With `firstPins` (`toolpin pin`), the servers of steps that name a tool without a pin too, so
 * that their first pins can be taken from the live listing (core/verify/firstPins.ts).
 */
export function definitionsNeeded(documents: readonly AnalyzedDocument[], registry: ServerRegistry, options?: { readonly firstPins?: boolean }): ServerDefinition[] {
  const needed = new Set<ServerDefinition>();
  for (const document of documents) {
    for (const step of blueprintOf(document)?.steps ?? []) {
      if (!step.mcp || step.mcp.serverComputed !== undefined) continue;
      const unpinned = step.mcp.toolName !== undefined && step.mcp.expectedSchemaHash === undefined;
      if (!step.mcp.pin && !(options?.firstPins === true && unpinned)) continue;
      if (step.mcp.server) {
        const definition = registry.get(step.mcp.server.value);
        if (definition) needed.add(definition);
      } else {
        for (const definition of registry.named()) needed.add(definition);
      }
    }
    if (connectorOf(document)) {
      for (const definition of registry.definedIn(document.path)) {
        if (definedIn(definition, document.path)) needed.add(definition);
      }
    }
  }
  return [...needed];
}

/** What a server without a listing looks like to the CLI, which has fetched everything it needs. */
export const NOT_LISTED: ServerListing = { status: 'unavailable', reason: 'unreachable', message: 'the server has not been listed yet' };

/** What a server that was deliberately not contacted looks like (`toolpin check --offline`). */
export const OFFLINE: ServerListing = { status: 'unavailable', reason: 'unreachable', message: 'offline (--offline): no server was contacted' };


/** The listing verification sees for a definition: what the source holds now, else `absent`. */
export function listingsFrom(source: ListingSource, absent: ServerListing): (definition: ServerDefinition) => ServerListing {
  return (definition) => source.listing(definition) ?? absent;
}

/** Everything one document's verification takes besides the document itself. */
export interface DocumentVerificationInputs {
  readonly registry: ServerRegistry;
  readonly listingFor: (definition: ServerDefinition) => ServerListing;
  readonly now: number;
  readonly pinnedContent?: VerificationContext['pinnedContent'];
  readonly fullDefinition?: VerificationContext['fullDefinition'];
  /** The folder's policy; it changes only how findings are presented (core/verify/policy.ts). */
  readonly policy?: Policy;
}

/** Verifies one document and applies the folder's policy: the one verification step of the engine. */
export function verifyDocument(document: AnalyzedDocument, inputs: DocumentVerificationInputs): VerificationResult {
  const context: VerificationContext = {
    registry: inputs.registry,
    now: inputs.now,
    listingFor: inputs.listingFor,
    ...(inputs.pinnedContent ? { pinnedContent: inputs.pinnedContent } : {}),
    ...(inputs.fullDefinition ? { fullDefinition: inputs.fullDefinition } : {}),
  };
  const result = verifyAnalyzed(document, inputs.registry, context);
  return inputs.policy ? applyPolicyToVerification(result, inputs.policy, inputs.now) : result;
}

/** The pin store's entries for a folder's documents and the folder's policy file. */
export interface FolderInputs {
  readonly pinnedContent: NonNullable<VerificationContext['pinnedContent']>;
  readonly fullDefinition: NonNullable<VerificationContext['fullDefinition']>;
  readonly policy: PolicyFile;
}

/** Reads what verification of `documents` in `folder` takes from the folder's `.toolpin/`. */
export async function readFolderInputs(store: PinStoreReader, policies: PolicyReader, folder: string, documents: readonly DocumentModel[]): Promise<FolderInputs> {
  const pinnedContent = await store.lookup(folder, documents.flatMap((document) => pinsOf(document)));
  const policy = await policies.read(folder);
  const fullDefinition = await store.lookupFull(folder, () => documents.flatMap((document) => pinnedToolsOf(document)));
  return { pinnedContent, fullDefinition, policy };
}

/**
 * Verifies documents against whatever listings the source holds now (no fetching). A server
 * without a listing gets `fallback`. (The benchmarks call this; the engine calls `verifyDocument`.)
 */
export function verifyDocuments(documents: readonly AnalyzedDocument[], registry: ServerRegistry, source: ListingSource, now: number, fallback: ServerListing = NOT_LISTED): Map<string, VerificationResult> {
  const inputs: DocumentVerificationInputs = { registry, now, listingFor: listingsFrom(source, fallback) };
  return new Map(documents.map((document) => [document.path, verifyDocument(document, inputs)]));
}
