/**
 * First pins: the pins a document lacks, taken from the live listing. A blueprint step (or an
 * `mcpInvoke$` call) that names a tool without `expectedSchemaHash` (TP206), and a connector's
 * selected tools that have no `toolsSnapshot` entry (TP405, or a connector with no `toolsSnapshot`
 * at all) get the pin of the tool as it is served now. `toolpin pin` shows them as added and
 * writes them with `--yes`; the editor offers the step's one as a quick fix on TP206.
 *
 * Pure: the registry and the listings are handed in. A first pin accepts the tool as it is served
 * today, so nothing is ever guessed: a step whose tool several servers serve, a server that could
 * not be listed, an incomplete listing or a selection computed at run time gives no pin, and for a
 * step the reason is returned so that callers can say why.
 */
import type { BlueprintModel, StepModel } from '../documents/blueprint';
import { type ConnectorInstanceModel, type ConnectorModel, readsPins } from '../documents/connector';
import type { ListedTool } from './listing';
import type { Problem, Span } from '../problems';
import { addedPoisoningCues, modelReadableStrings, type PoisoningCue } from './poisoning';
import type { ServerDefinition } from './registry';
import { liveDefinitionOf, liveSchemaPin, liveToolPin, lookUp, notFoundIsUncertain, type VerificationContext } from './verify';

/** One pin to add, with everything writing it and its store entries needs. */
export interface FirstPin {
  readonly kind: 'schema' | 'tool';
  readonly tool: string;
  readonly server: string;
  /** The live pin, prefixed (`fnv1a64:…`, `sha256:…`). */
  readonly live: string;
  /** Exactly the canonical JSON that `live` hashes: the content of its pin-store entry. */
  readonly liveContent: string;
  /** The live tool's full-definition entry content, when it is plain JSON. */
  readonly liveDefinition?: string;
  /** Where the missing pin is reported: the step's `toolName`, or the connector's `include` entry or name. */
  readonly span: Span;
  /** The step's index in the blueprint model (schema pins) or the instance's in the connector model (tool pins). */
  readonly index: number;
  /** Cues of tool poisoning in the live model-readable text (core/verify/poisoning.ts); empty when none. */
  readonly cues: readonly PoisoningCue[];
}

/** A step that lacks its pin and cannot get one now, and why. */
export interface NoFirstPin {
  readonly kind: 'schema';
  readonly tool: string;
  readonly server: string | undefined;
  readonly span: Span;
  /** A sentence fragment: "no server named …", "served by 2 servers …", "cannot verify: …". */
  readonly reason: string;
  /**
   * `cannot-verify` when the server could not be listed (or is computed): trying again may pin it;
   * `manual` when the step itself needs an edit (an unknown or ambiguous server, a tool not served).
   */
  readonly state: 'cannot-verify' | 'manual';
}

export interface FirstPins {
  readonly pins: FirstPin[];
  readonly cannot: NoFirstPin[];
}

type ListingContext = Pick<VerificationContext, 'registry' | 'listingFor'>;

/**
 * The first schema pins of the steps that TP206 reports in `problems` (the analysis of the same
 * text): the steps that name a tool and have no `expectedSchemaHash`, and not those whose hash a
 * spread may bring. A step's server is its `server`, else the one configured server serving the
 * tool.
 */
export function firstSchemaPins(model: BlueprintModel, problems: readonly Problem[], context: ListingContext): FirstPins {
  const unpinned = new Set(problems.filter((found) => found.code === 'TP206').map((found) => found.span.offset));
  const pins: FirstPin[] = [];
  const cannot: NoFirstPin[] = [];
  for (const step of model.steps) {
    const mcp = step.mcp;
    if (!mcp?.toolName || mcp.expectedSchemaHash || !unpinned.has(mcp.toolName.span.offset)) continue;
    const found = firstSchemaPinOf(step, context);
    if ('reason' in found) cannot.push(found);
    else pins.push(found);
  }
  return { pins, cannot };
}

/** The first pin of one unpinned step, or why it has none. */
export function firstSchemaPinOf(step: StepModel, context: ListingContext): FirstPin | NoFirstPin {
  const mcp = step.mcp!;
  const tool = mcp.toolName!.value;
  const span = mcp.toolName!.span;
  const no = (reason: string, server = mcp.server?.value, state: NoFirstPin['state'] = 'manual'): NoFirstPin => ({ kind: 'schema', tool, server, span, reason, state });
  if (mcp.serverComputed !== undefined) return no(`cannot verify: the server is computed at run time (${mcp.serverComputed})`, undefined, 'cannot-verify');
  let candidates: ServerDefinition[];
  if (mcp.server) {
    const definition = context.registry.get(mcp.server.value);
    if (!definition) return no(`no server named "${mcp.server.value}" is configured`);
    candidates = [definition];
  } else {
    candidates = context.registry.named();
    if (candidates.length === 0) return no('no MCP server is configured');
  }
  const serving: Array<{ definition: ServerDefinition; tools: ListedTool[] }> = [];
  const uncertain: string[] = [];
  for (const definition of candidates) {
    const result = lookUp(context.listingFor(definition), tool);
    if ('found' in result) serving.push({ definition, tools: result.found });
    else if ('pending' in result) uncertain.push(`"${definition.name}": not listed yet`);
    else if ('unavailable' in result) uncertain.push(`"${definition.name}": ${result.unavailable.message}`);
    else {
      const why = notFoundIsUncertain(result.listing);
      if (why) uncertain.push(`"${definition.name}": ${why}`);
    }
  }
  if (serving.length > 1) return no(`served by ${serving.length} servers (${serving.map((entry) => entry.definition.name).join(', ')}); add "server" to say which one this step calls`);
  const first = serving[0];
  if (!first) {
    if (uncertain.length > 0) return no(`cannot verify: ${uncertain.join('; ')}`, undefined, 'cannot-verify');
    return no(`tool "${tool}" is not served by ${mcp.server ? `server "${mcp.server.value}"` : 'any configured server'}`);
  }
  const live = liveSchemaPin(first.tools);
  if ('cannot' in live) return no(live.cannot, first.definition.name);
  const cues = addedPoisoningCues(undefined, modelReadableStrings(live.tool.inputSchema));
  return { kind: 'schema', tool, server: first.definition.name, live: live.pin, liveContent: live.content, ...liveDefinitionOf(live.tool), span, index: step.index, cues };
}

/**
 * The first tool pins of a connector file: for each MCP instance whose server is listed completely,
 * every selected tool without a `toolsSnapshot` entry (the served `include` entries, or every served
 * tool without an `include`), whether the instance has a `toolsSnapshot` or none yet. An instance
 * whose selection or snapshot is computed at run time gets none (it is not complete).
 */
export function firstToolPins(file: string, model: ConnectorModel, definitions: readonly ServerDefinition[], context: Pick<VerificationContext, 'listingFor'>): FirstPin[] {
  const pins: FirstPin[] = [];
  model.instances.forEach((instance, index) => {
    if (!readsPins(instance) || !instance.name || instance.computed?.include || instance.computed?.snapshot) return;
    const definition = definitions.find((candidate) => candidate.origin.file === file && candidate.origin.span?.offset === instance.name!.span.offset);
    if (definition) pins.push(...instanceFirstPins(instance, index, definition, context));
  });
  return pins;
}

function instanceFirstPins(instance: ConnectorInstanceModel, index: number, definition: ServerDefinition, context: Pick<VerificationContext, 'listingFor'>): FirstPin[] {
  const listing = context.listingFor(definition);
  if (listing.status !== 'listed' || notFoundIsUncertain(listing.listing)) return [];
  const tools = listing.listing.tools;
  const served = new Set(tools.map((tool) => tool.name));
  const pinned = new Set(instance.snapshot.map((entry) => entry.tool.value));
  const anchor = instance.name!.span;
  // The tools to pin are the selected ones; with no `include`, every served tool, but only for a
  // connector that pins nothing yet: a snapshot already written (here or imported from another
  // module) is its author's choice of tools, and first pins are not added beside it.
  const pinsNothingYet = instance.snapshot.length === 0;
  const selected = instance.include
    ? instance.include.filter((entry) => served.has(entry.value)).map((entry) => ({ name: entry.value, span: entry.span }))
    : pinsNothingYet
      ? [...served].map((name) => ({ name, span: anchor }))
      : [];
  const seen = new Set<string>();
  const pins: FirstPin[] = [];
  for (const { name, span } of selected) {
    if (pinned.has(name) || seen.has(name)) continue;
    seen.add(name);
    const live = liveToolPin(tools.filter((tool) => tool.name === name));
    if ('cannot' in live) continue;
    const cues = addedPoisoningCues(undefined, [live.tool.description ?? '', ...modelReadableStrings(live.tool.inputSchema)]);
    pins.push({ kind: 'tool', tool: name, server: definition.name, live: live.pin, liveContent: live.content, ...liveDefinitionOf(live.tool), span, index, cues });
  }
  return pins;
}
