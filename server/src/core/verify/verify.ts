/**
 * Verification: pins + listings → verdicts and problems (docs/formats.md §8). Pure: the listings
 * are handed in by whoever fetched them, and "now" is a parameter.
 *
 * States are never conflated: a server that cannot be listed gives `cannot-verify` with the reason
 * and the age of the last good listing, never `drifted`; a drifted pin is never "unavailable".
 */
import { type ArgumentValidators, checkStepArguments, sharedArgumentValidators } from './arguments';
import type { BlueprintModel, StepModel } from '../documents/blueprint';
import { type ChangeReport, classifySchemaPinChange, classifyToolPinChange, readStoreEntry } from '../review/changes';
import { addedPoisoningCues, describeCues, modelReadableStrings, type PoisoningCue } from './poisoning';
import { CanonicalJsonError } from '../pins/canonicalJson';
import { fullDefinitionContent, outsideThePinProblems } from './fullDefinition';
import { type ConnectorInstanceModel, type ConnectorModel, readsPins } from '../documents/connector';
import type { CollectedListing, ListedTool } from './listing';
import { formatPin, type ParsedPin, schemaPin, schemaPinContent, toolPin, toolPinContent } from '../pins/pins';
import type { DriftData, RenameData, SecurityData, UnknownServerData, UnpinnedToolData, UnservedIncludeData, UnservedPinData } from './payloads';
import { type PolicyNote, type Problem, problem, type Span } from '../problems';
import type { ServerDefinition, ServerRegistry } from './registry';
import { closestName } from './suggest';

/** Why a server's tools could not be listed. Stable strings: reports and tests use them. */
export type UnavailableReason =
  | 'untrusted-workspace'
  | 'unusable-definition'
  | 'credential-missing'
  | 'unauthorized'
  | 'forbidden'
  | 'authorization-required'
  | 'unreachable'
  | 'timeout'
  | 'crashed'
  | 'protocol-error';

export type ServerListing =
  | { readonly status: 'listed'; readonly listing: CollectedListing; readonly listedAt: number }
  /** Being fetched for the first time: no verdict yet, and no problem is reported for it. */
  | { readonly status: 'pending' }
  | {
      readonly status: 'unavailable';
      readonly reason: UnavailableReason;
      /** A complete sentence fragment for users, e.g. "HTTP 401: the credential was rejected". */
      readonly message: string;
      readonly lastGood?: { readonly listing: CollectedListing; readonly listedAt: number };
    };

export type PinState = 'verified' | 'drifted' | 'missing' | 'ambiguous' | 'cannot-verify';

/** One pin's verdict, in the shape `toolpin check --format json` reports (spans become ranges). */
export interface PinVerdict {
  readonly kind: 'schema' | 'tool';
  readonly tool: string;
  /** The server the pin was checked against; for ambiguous pins, the first candidate. */
  readonly server: string | undefined;
  readonly pinned: string;
  readonly live: string | undefined;
  readonly state: PinState;
  readonly reason: string | undefined;
  /** The pin's own span (the pin string). */
  readonly span: Span;
  /**
   * The span of the diagnostic reported for this pin (TP400–TP403), when one was: the pin for a
   * drift, the tool name for a tool that is not served. Reports that name one position per pin
   * use it so that they point where the editor underlines.
   */
  readonly problemSpan?: Span;
  /** The note of the pin's own finding, once a policy is applied (core/verify/policy.ts). */
  readonly policy?: PolicyNote;
}

export interface VerificationContext {
  readonly registry: ServerRegistry;
  /** The listing of a definition, by the definition itself (so shadowed names are not mixed up). */
  listingFor(definition: ServerDefinition): ServerListing;
  /** Milliseconds since the epoch, for "last listed N min ago". */
  readonly now: number;
  /**
   * The text of a pin's store entry (`.toolpin/store/<algorithm>-<hex>.json`), when the caller has
   * it. With it, drift messages say what changed; without it, they say how to get it next time.
   */
  readonly pinnedContent?: (pin: ParsedPin) => string | undefined;
  /**
   * The text of a pinned tool's full-definition entry on a server (core/verify/fullDefinition.ts), when
   * the caller has it; with it, changes outside the pinned fields are reported (TP408/TP409).
   */
  readonly fullDefinition?: (pin: ParsedPin, tool: string, server: string | undefined) => string | undefined;
  /** Check step arguments against the live input schema (TP410); on unless set to false. */
  readonly checkArguments?: boolean;
}

const UNKNOWN_CHANGE = 'what changed is unknown: the pinned content is not in .toolpin/store (re-pinning with Toolpin records it for next time)';

/** What changed between the pinned content (from the store) and the live tool, or why it is unknown. */
export function describeChange(pin: ParsedPin, live: ListedTool, context: Pick<VerificationContext, 'pinnedContent'>): { report?: ChangeReport; text: string } {
  const stored = context.pinnedContent?.(pin);
  if (stored === undefined) return { text: UNKNOWN_CHANGE };
  const entry = readStoreEntry(pin, stored);
  if (!entry.ok) return { text: `what changed is unknown: ${entry.reason}` };
  const report = entry.pin === 'schema' ? classifySchemaPinChange(entry.inputSchema, live) : classifyToolPinChange(entry.tool, live);
  return { report, text: report.summary };
}

export interface VerificationResult {
  readonly verdicts: PinVerdict[];
  readonly problems: Problem[];
}

/**
 * The poisoning cues a drift adds (core/verify/poisoning.ts): the model-readable text of the live tool
 * (for a tool pin its description and schema strings, for a schema pin the schema's strings)
 * against that of the pinned content when the store has it. `pinnedKnown` false means the pinned
 * content is unknown, so the cues may be old.
 */
export function securityCuesOf(pin: ParsedPin, live: ListedTool, context: Pick<VerificationContext, 'pinnedContent'>): { cues: PoisoningCue[]; pinnedKnown: boolean } {
  const stored = context.pinnedContent?.(pin);
  const entry = stored === undefined ? undefined : readStoreEntry(pin, stored);
  const liveStrings = pin.algorithm === 'fnv1a64' ? modelReadableStrings(live.inputSchema) : [live.description ?? '', ...modelReadableStrings(live.inputSchema)];
  if (!entry?.ok) return { cues: addedPoisoningCues(undefined, liveStrings), pinnedKnown: false };
  const pinnedStrings = entry.pin === 'schema' ? modelReadableStrings(entry.inputSchema) : [entry.tool.description ?? '', ...modelReadableStrings(entry.tool.inputSchema)];
  return { cues: addedPoisoningCues(pinnedStrings, liveStrings), pinnedKnown: true };
}

/** The TP407 problem of a drift whose new text carries poisoning cues, or undefined. */
function securityProblem(span: Span, label: string, tool: string, server: string, pin: ParsedPin, live: ListedTool, context: Pick<VerificationContext, 'pinnedContent'>): Problem | undefined {
  const { cues, pinnedKnown } = securityCuesOf(pin, live, context);
  if (cues.length === 0) return undefined;
  const what = pinnedKnown ? 'its rewritten text adds' : 'its live text carries (the pinned content is unknown, so they may not be new)';
  const data: SecurityData = { tool, server, cues, pinnedKnown };
  return problem('TP407', span, `${label}: tool "${tool}" on server "${server}" changed and ${what} cues of tool poisoning: ${describeCues(cues)}. Review the change before re-pinning.`, { data });
}

/** "12 min ago", "3 h ago", "just now" — for the age of a listing. */
export function describeAge(milliseconds: number): string {
  const seconds = Math.max(0, Math.round(milliseconds / 1000));
  if (seconds < 60) return seconds < 5 ? 'just now' : `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
}

function unavailableText(listing: Extract<ServerListing, { status: 'unavailable' }>, now: number): string {
  const age = listing.lastGood ? `; last listed ${describeAge(now - listing.lastGood.listedAt)}` : '; never listed';
  return `${listing.message}${age}`;
}

type Lookup =
  | { found: ListedTool[]; listing: CollectedListing }
  | { notFound: true; listing: CollectedListing }
  | { unavailable: Extract<ServerListing, { status: 'unavailable' }> }
  | { pending: true };

const PENDING_REASON = 'waiting for the server\'s first listing';

function lookUp(listing: ServerListing, tool: string): Lookup {
  if (listing.status === 'pending') return { pending: true };
  if (listing.status === 'unavailable') return { unavailable: listing };
  const found = toolsByName(listing.listing).get(tool);
  return found ? { found, listing: listing.listing } : { notFound: true, listing: listing.listing };
}

/**
 * A listing's tools by name (a name served twice has both entries, in listing order), made once
 * per listing: every step looked its tool up by filtering the whole list, an array per step and
 * per server it was looked for on (issue 13). The arrays are shared; nothing changes them.
 */
const toolsByNameOf = new WeakMap<CollectedListing, ReadonlyMap<string, ListedTool[]>>();
function toolsByName(listing: CollectedListing): ReadonlyMap<string, ListedTool[]> {
  let byName = toolsByNameOf.get(listing);
  if (!byName) {
    const made = new Map<string, ListedTool[]>();
    for (const tool of listing.tools) {
      const same = made.get(tool.name);
      if (same) same.push(tool);
      else made.set(tool.name, [tool]);
    }
    byName = made;
    toolsByNameOf.set(listing, byName);
  }
  return byName;
}

/** Why "not in this listing" does not prove "not served", or undefined when it does. */
function notFoundIsUncertain(listing: CollectedListing): string | undefined {
  if (listing.incomplete) return `the listing is incomplete (${listing.incomplete.message})`;
  if (listing.malformedEntries.length > 0) return `the listing has ${listing.malformedEntries.length} malformed entr${listing.malformedEntries.length === 1 ? 'y' : 'ies'} (${listing.malformedEntries[0]})`;
  return undefined;
}

type LivePin = { pin: string; content: string; tool: ListedTool } | { cannot: string };

// Listed tools are immutable once collected, so their pins are computed once per tool.
const schemaPins = new WeakMap<ListedTool, { pin: string; content: string }>();

/** The schema pin of a tool served with an `inputSchema` (callers check that it is present). */
function cachedSchemaPin(tool: ListedTool): { pin: string; content: string } {
  let cached = schemaPins.get(tool);
  if (!cached) {
    const content = schemaPinContent(tool.inputSchema);
    cached = { pin: schemaPin(tool.inputSchema), content };
    schemaPins.set(tool, cached);
  }
  return cached;
}

function liveSchemaPin(tools: ListedTool[]): LivePin {
  // The pin of the first tool, and whether another tool of the name has a different one (a Set
  // per verified step was most of what this allocated, for a name nearly always served once).
  let first: string | undefined;
  let differs = false;
  let content = '';
  for (const tool of tools) {
    if (tool.unpinnable) return { cannot: `tool "${tool.name}" cannot be pinned: ${tool.unpinnable}` };
    if (tool.inputSchema === undefined) return { cannot: `tool "${tool.name}" is served without an inputSchema` };
    try {
      const cached = cachedSchemaPin(tool);
      if (first === undefined) first = cached.pin;
      else if (cached.pin !== first) differs = true;
      content = cached.content;
    } catch (error) {
      if (error instanceof CanonicalJsonError) return { cannot: `the inputSchema of "${tool.name}" is not plain JSON (${error.message})` };
      throw error;
    }
  }
  if (differs) return { cannot: `the server serves "${tools[0]!.name}" ${tools.length} times with different input schemas` };
  return { pin: first!, content, tool: tools[0]! };
}

export function liveToolPin(tools: ListedTool[]): LivePin {
  // As liveSchemaPin: the first pin, and whether another differs.
  let first: string | undefined;
  let differs = false;
  let content = '';
  for (const tool of tools) {
    if (tool.unpinnable) return { cannot: `tool "${tool.name}" cannot be pinned: ${tool.unpinnable}` };
    try {
      const pin = toolPin(tool);
      if (first === undefined) first = pin;
      else if (pin !== first) differs = true;
      content = toolPinContent(tool);
    } catch (error) {
      if (error instanceof CanonicalJsonError) return { cannot: `tool "${tool.name}" is not plain JSON (${error.message})` };
      throw error;
    }
  }
  if (differs) return { cannot: `the server serves "${tools[0]!.name}" ${tools.length} times with different content` };
  return { pin: first!, content, tool: tools[0]! };
}

/** Compares a pinned value with a live one in the pin's own style, so a bare pin matches bare. */
function sameDigest(pinned: ParsedPin, live: string): boolean {
  return live === `${pinned.algorithm}:${pinned.hex}`;
}

function livePinInStyle(pinned: ParsedPin, live: string): string {
  return formatPin(pinned.algorithm, live.slice(live.indexOf(':') + 1), pinned.style);
}

/** The canonical JSON of an input schema, or undefined when it is not plain JSON. */
function schemaContentOrUndefined(inputSchema: unknown): string | undefined {
  try {
    return inputSchema === undefined ? undefined : schemaPinContent(inputSchema);
  } catch {
    return undefined;
  }
}

/**
 * The served tool that looks like a gone pinned tool under a new name, if exactly one does. Only
 * tools that no pin of the file names are candidates (a pinned one is accounted for). A schema
 * pin matches on its input schema (the pin is its hash); a tool pin matches when the candidate is
 * the pinned content under the new name (no store needed), else, with the pinned content from the
 * store, on the same input schema or the same non-empty description. Two or more candidates are
 * no rename: a guess among several would be a coin toss.
 */
function renameCandidate(
  pin: ParsedPin,
  gone: string,
  listings: ReadonlyArray<{ server: string; tools: readonly ListedTool[] }>,
  pinnedNames: ReadonlySet<string>,
  context: Pick<VerificationContext, 'pinnedContent'>,
): RenameData | undefined {
  const stored = pin.algorithm === 'sha256' ? context.pinnedContent?.(pin) : undefined;
  const entry = stored === undefined ? undefined : readStoreEntry(pin, stored);
  const pinnedTool = entry?.ok && entry.pin === 'tool' ? entry.tool : undefined;
  const pinnedSchema = pinnedTool ? schemaContentOrUndefined(pinnedTool.inputSchema) : undefined;
  const found: RenameData[] = [];
  for (const { server, tools } of listings) {
    for (const tool of tools) {
      if (tool.name === gone || pinnedNames.has(tool.name) || tool.unpinnable) continue;
      let match: RenameData['match'] | undefined;
      let live: { pin: string; content: string } | undefined;
      try {
        if (pin.algorithm === 'fnv1a64') {
          if (tool.inputSchema === undefined) continue;
          live = cachedSchemaPin(tool);
          if (sameDigest(pin, live.pin)) match = 'input schema';
        } else {
          live = { pin: toolPin(tool), content: toolPinContent(tool) };
          if (sameDigest(pin, toolPin({ ...tool, name: gone }))) match = 'content';
          else if (pinnedSchema !== undefined && schemaContentOrUndefined(tool.inputSchema) === pinnedSchema) match = 'input schema';
          else if (pinnedTool?.description && tool.description === pinnedTool.description) match = 'description';
        }
      } catch (error) {
        if (error instanceof CanonicalJsonError) continue;
        throw error;
      }
      if (match && live) found.push({ tool: tool.name, server, match, live: livePinInStyle(pin, live.pin), liveContent: live.content });
    }
  }
  return found.length === 1 ? found[0] : undefined;
}

function renameSuffix(rename: RenameData | undefined): string {
  if (!rename) return '';
  const why = rename.match === 'content' ? 'the same tool under a new name' : `the same ${rename.match}`;
  return `; "${rename.tool}" looks like its rename (${why})`;
}

const PIN_PROBLEM_CODES: ReadonlySet<string> = new Set(['TP400', 'TP401', 'TP402', 'TP403']);

/** The span of the pin diagnostic reported since `before` (the last one), if any. */
function reportedPinSpan(problems: readonly Problem[], before: number): Span | undefined {
  const last = problems.length > before ? problems[problems.length - 1]! : undefined;
  return last && PIN_PROBLEM_CODES.has(last.code) ? last.span : undefined;
}

function stepLabel(step: StepModel): string {
  return step.id ? `step "${step.id.value}"` : `step #${step.index + 1}`;
}

/** Adds a schema pin's verdict, with the span of the problem its step reported last when that one is about the pin. */
function pushSchemaVerdict(
  verdicts: PinVerdict[],
  problems: readonly Problem[],
  problemsBefore: number,
  tool: string,
  pinned: string,
  span: Span,
  state: PinState,
  server: string | undefined,
  live: string | undefined,
  reason: string | undefined,
): void {
  const reported = reportedPinSpan(problems, problemsBefore);
  verdicts.push(reported ? { kind: 'schema', tool, server, pinned, live, state, reason, span, problemSpan: reported } : { kind: 'schema', tool, server, pinned, live, state, reason, span });
}

/**
 * Compiles, ahead of verification, the argument validators a blueprint's steps will ask for once
 * `definition` is listed: for each step with `arguments` and a pin that this server may serve (it
 * names the server, or names none), the live input schema of its tool. A check that waits for
 * several servers can do this as each listing arrives instead of compiling every schema after the
 * last one (issue 13). Changes no result: verification asks the same validators by the same key
 * (the live schema pin) and compiles what is still missing. Returns how many were compiled.
 */
export function prepareArgumentChecks(model: BlueprintModel, definition: ServerDefinition, registry: ServerRegistry, listing: ServerListing, validators: ArgumentValidators = sharedArgumentValidators): number {
  if (listing.status !== 'listed') return 0;
  const named = registry.named().includes(definition);
  let compiled = 0;
  for (const step of model.steps) {
    const mcp = step.mcp;
    if (!mcp?.toolName || !mcp.pin || !mcp.argumentsNode) continue;
    if (mcp.server ? registry.get(mcp.server.value) !== definition : !named) continue;
    const found = lookUp(listing, mcp.toolName.value);
    if (!('found' in found)) continue;
    const live = liveSchemaPin(found.found);
    if ('cannot' in live) continue;
    if (validators.warm(live.tool.inputSchema, live.pin)) compiled++;
  }
  return compiled;
}

/** Verifies every schema pin of a blueprint. */
export function verifyBlueprint(model: BlueprintModel, context: VerificationContext): VerificationResult {
  const verdicts: PinVerdict[] = [];
  const problems: Problem[] = [];
  for (const step of model.steps) verifySchemaStep(model, step, context, verdicts, problems);
  return { verdicts, problems };
}

/** Verifies one step's schema pin, adding its verdict and problems. */
function verifySchemaStep(model: BlueprintModel, step: StepModel, context: VerificationContext, verdicts: PinVerdict[], problems: Problem[]): void {
  const mcp = step.mcp;
  if (!mcp?.toolName || !mcp.expectedSchemaHash || !mcp.pin) return;
  const tool = mcp.toolName.value;
  const pinSpan = mcp.expectedSchemaHash.span;
  const pinned = mcp.expectedSchemaHash.value;
  const problemsBefore = problems.length;
  // A plain call per verdict, not a closure per step: a keystroke verifies every step of a large
  // file again, and each closure was garbage the next keystroke left behind.

  let candidates: ServerDefinition[];
  if (mcp.serverComputed !== undefined) {
    const reason = `cannot verify: the server is computed at run time (${mcp.serverComputed}); Toolpin reads a string literal, a same-module constant, or a member of a same-module \`as const\` object, and never guesses another server`;
    problems.push(problem('TP403', pinSpan, `${stepLabel(step)}: ${reason}`, { data: { tool, servers: [] } }));
    pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'cannot-verify', undefined, undefined, reason);
    return;
  }
  if (mcp.server) {
    const definition = context.registry.get(mcp.server.value);
    if (!definition) {
      const known = context.registry.names();
      const suggestion = closestName(mcp.server.value, known);
      const reason = `no server named "${mcp.server.value}" is configured${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}${suggestion ? `; did you mean "${suggestion}"?` : ''}`;
      const data: UnknownServerData = { server: mcp.server.value, ...(suggestion ? { suggestion } : {}) };
      problems.push(problem('TP406', mcp.server.span, `${stepLabel(step)}: ${reason}`, { data }));
      pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'cannot-verify', mcp.server.value, undefined, reason);
      return;
    }
    candidates = [definition];
  } else {
    candidates = context.registry.named();
    if (candidates.length === 0) {
      // Nothing to look in is not evidence that the tool is gone.
      const reason = 'cannot verify: no MCP server is configured (add a connector, .vscode/mcp.json or .mcp.json)';
      problems.push(problem('TP403', pinSpan, `${stepLabel(step)}: ${reason}`, { data: { tool, servers: [] } }));
      pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'cannot-verify', undefined, undefined, reason);
      return;
    }
  }

  // Find the servers that serve the tool, and note why the others cannot rule it out.
  const { serving, uncertain, pending } = servingServers(candidates, tool, context);

  if (serving.length > 1) {
    const names = serving.map((entry) => entry.definition.name);
    const reason = `served by ${names.length} servers (${names.join(', ')}); add "server" to say which one this step calls`;
    problems.push(problem('TP402', mcp.toolName.span, `tool "${tool}" is ${reason}`, { data: { tool, servers: names } }));
    pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'ambiguous', names[0], undefined, reason);
    return;
  }
  if (serving.length === 0 && pending) {
    pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'cannot-verify', mcp.server?.value, undefined, PENDING_REASON);
    return;
  }
  if (serving.length === 0) {
    const where = mcp.server ? `server "${mcp.server.value}"` : `any configured server (${candidates.map((definition) => definition.name).join(', ')})`;
    if (uncertain.length > 0) {
      const reason = `cannot verify: ${uncertain.join('; ')}`;
      problems.push(problem('TP403', pinSpan, `${stepLabel(step)}: ${reason}`, { data: { tool, servers: candidates.map((definition) => definition.name) } }));
      pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'cannot-verify', mcp.server?.value, undefined, reason);
    } else {
      const rename = blueprintRename(model, candidates, mcp.pin, tool, context);
      const reason = `tool "${tool}" is not served by ${where} (toolNotFound)${renameSuffix(rename)}`;
      const data: UnservedPinData = { kind: 'schema', tool, server: mcp.server?.value, ...(rename ? { rename } : {}) };
      problems.push(problem('TP401', mcp.toolName.span, `${stepLabel(step)}: ${reason}`, { data }));
      pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'missing', mcp.server?.value, undefined, reason);
    }
    return;
  }

  const { definition, tools } = serving[0]!;
  const live = liveSchemaPin(tools);
  if ('cannot' in live) {
    problems.push(problem('TP403', pinSpan, `${stepLabel(step)}: cannot verify: ${live.cannot}`, { data: { tool, server: definition.name } }));
    pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'cannot-verify', definition.name, undefined, live.cannot);
    return;
  }
  // Steps without "arguments" get theirs elsewhere (templates, the runtime): only authored
  // arguments are checked against the live schema.
  if (context.checkArguments !== false && mcp.argumentsNode) problems.push(...checkStepArguments(step, live.tool.inputSchema, live.pin));
  if (sameDigest(mcp.pin, live.pin)) {
    pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'verified', definition.name, live.pin, undefined);
    const stored = context.fullDefinition?.(mcp.pin, tool, definition.name);
    if (stored !== undefined) problems.push(...outsideThePinProblems(pinSpan, stepLabel(step), mcp.pin, definition.name, live.tool, stored, true));
    return;
  }
  const change = describeChange(mcp.pin, live.tool, context);
  const reason = `the input schema of tool "${tool}" on server "${definition.name}" changed since it was pinned: pinned ${pinned}, live ${live.pin} (${change.text})`;
  const data: DriftData = { kind: 'schema', tool, server: definition.name, pinned, live: livePinInStyle(mcp.pin, live.pin), style: mcp.pin.style, liveContent: live.content, ...liveDefinitionOf(live.tool), change: change.report?.kind ?? 'unknown', summary: change.text };
  problems.push(problem('TP400', pinSpan, `${stepLabel(step)}: ${reason}`, { data }));
  const security = securityProblem(pinSpan, stepLabel(step), tool, definition.name, mcp.pin, live.tool, context);
  if (security) problems.push(security);
  pushSchemaVerdict(verdicts, problems, problemsBefore, tool, pinned, pinSpan, 'drifted', definition.name, live.pin, reason);
  problems.push(...outsideThePinProblems(pinSpan, stepLabel(step), mcp.pin, definition.name, live.tool, context.fullDefinition?.(mcp.pin, tool, definition.name), false));
}

/** The candidates that serve the tool; why the others cannot rule it out; whether a listing is pending. */
function servingServers(candidates: readonly ServerDefinition[], tool: string, context: VerificationContext): { serving: Array<{ definition: ServerDefinition; tools: ListedTool[] }>; uncertain: string[]; pending: boolean } {
  const serving: Array<{ definition: ServerDefinition; tools: ListedTool[] }> = [];
  const uncertain: string[] = [];
  let pending = false;
  for (const definition of candidates) {
    const result = lookUp(context.listingFor(definition), tool);
    if ('found' in result) serving.push({ definition, tools: result.found });
    else if ('pending' in result) pending = true;
    else if ('unavailable' in result) uncertain.push(`"${definition.name}": ${unavailableText(result.unavailable, context.now)}`);
    else {
      const why = notFoundIsUncertain(result.listing);
      if (why) uncertain.push(`"${definition.name}": ${why}`);
    }
  }
  return { serving, uncertain, pending };
}

/** A served tool the missing one was likely renamed to: among the listed candidates' tools that no step of this blueprint names. */
function blueprintRename(model: BlueprintModel, candidates: readonly ServerDefinition[], pin: ParsedPin, tool: string, context: VerificationContext): RenameData | undefined {
  const listings = candidates.flatMap((definition) => {
    const listing = context.listingFor(definition);
    return listing.status === 'listed' ? [{ server: definition.name, tools: listing.listing.tools }] : [];
  });
  const stepTools = new Set(model.steps.flatMap((other) => (other.mcp?.toolName ? [other.mcp.toolName.value] : [])));
  return renameCandidate(pin, tool, listings, stepTools, context);
}

/** Verifies every tool pin of a connector file against each instance's own server. */
export function verifyConnector(file: string, model: ConnectorModel, definitions: readonly ServerDefinition[], context: VerificationContext): VerificationResult {
  const verdicts: PinVerdict[] = [];
  const problems: Problem[] = [];
  for (const instance of model.instances) {
    if (!readsPins(instance) || !instance.name) continue;
    const definition = definitions.find((candidate) => candidate.origin.file === file && candidate.origin.span?.offset === instance.name!.span.offset);
    if (!definition) continue;
    verifyInstance(instance, definition, context, verdicts, problems);
  }
  return { verdicts, problems };
}

function verifyInstance(
  instance: ConnectorInstanceModel,
  definition: ServerDefinition,
  context: VerificationContext,
  verdicts: PinVerdict[],
  problems: Problem[],
): void {
  const server = definition.name;
  const listing = context.listingFor(definition);
  const label = `connector "${server}"`;

  for (const entry of instance.snapshot) {
    if (!entry.parsed) continue;
    const tool = entry.tool.value;
    const problemsBefore = problems.length;
    const verdict = (state: PinState, live: string | undefined, reason: string | undefined): void => {
      const reported = reportedPinSpan(problems, problemsBefore);
      verdicts.push({ kind: 'tool', tool, server, pinned: entry.pin.value, live, state, reason, span: entry.pin.span, ...(reported ? { problemSpan: reported } : {}) });
    };
    const result = lookUp(listing, tool);
    if ('pending' in result) {
      verdict('cannot-verify', undefined, PENDING_REASON);
      continue;
    }
    if ('unavailable' in result) {
      const reason = `cannot verify: ${unavailableText(result.unavailable, context.now)}`;
      problems.push(problem('TP403', entry.pin.span, `${label}, tool "${tool}": ${reason}`, { data: { tool, server } }));
      verdict('cannot-verify', undefined, reason);
      continue;
    }
    if ('notFound' in result) {
      const why = notFoundIsUncertain(result.listing);
      if (why) {
        const reason = `cannot verify: ${why}`;
        problems.push(problem('TP403', entry.pin.span, `${label}, tool "${tool}": ${reason}`, { data: { tool, server } }));
        verdict('cannot-verify', undefined, reason);
      } else {
        const snapshotTools = new Set(instance.snapshot.map((other) => other.tool.value));
        const rename = renameCandidate(entry.parsed, tool, [{ server, tools: result.listing.tools }], snapshotTools, context);
        const reason = `pinned tool "${tool}" is no longer served by server "${server}"${renameSuffix(rename)}`;
        const data: UnservedPinData = { kind: 'tool', tool, server, ...(rename ? { rename } : {}) };
        problems.push(problem('TP401', entry.tool.span, `${label}: ${reason}`, { data }));
        verdict('missing', undefined, reason);
      }
      continue;
    }
    const live = liveToolPin(result.found);
    if ('cannot' in live) {
      problems.push(problem('TP403', entry.pin.span, `${label}: cannot verify: ${live.cannot}`, { data: { tool, server } }));
      verdict('cannot-verify', undefined, live.cannot);
      continue;
    }
    if (sameDigest(entry.parsed, live.pin)) {
      verdict('verified', live.pin, undefined);
      problems.push(...outsideThePinProblems(entry.pin.span, label, entry.parsed, server, live.tool, context.fullDefinition?.(entry.parsed, tool, server), true));
      continue;
    }
    const change = describeChange(entry.parsed, live.tool, context);
    const reason = `tool "${tool}" on server "${server}" changed since it was pinned: pinned ${entry.pin.value}, live ${live.pin} (${change.text})`;
    const data: DriftData = { kind: 'tool', tool, server, pinned: entry.pin.value, live: livePinInStyle(entry.parsed, live.pin), style: entry.parsed.style, liveContent: live.content, ...liveDefinitionOf(live.tool), change: change.report?.kind ?? 'unknown', summary: change.text };
    problems.push(problem('TP400', entry.pin.span, `${label}: ${reason}`, { data }));
    const security = securityProblem(entry.pin.span, label, tool, server, entry.parsed, live.tool, context);
    if (security) problems.push(security);
    verdict('drifted', live.pin, reason);
    problems.push(...outsideThePinProblems(entry.pin.span, label, entry.parsed, server, live.tool, context.fullDefinition?.(entry.parsed, tool, server), false));
  }

  // The include and the selection are checked only against a complete, clean listing: an entry
  // missing from a partial listing proves nothing.
  if (listing.status !== 'listed' || notFoundIsUncertain(listing.listing)) return;
  problems.push(...selectionProblems(instance, listing.listing, server, label));
}

/** TP404 for an include entry the server does not serve, TP405 for a selected tool without a pin. */
function selectionProblems(instance: ConnectorInstanceModel, listing: CollectedListing, server: string, label: string): Problem[] {
  const problems: Problem[] = [];
  const served = new Set(listing.tools.map((tool) => tool.name));
  const included = new Set((instance.include ?? []).map((entry) => entry.value));
  // A typo is suggested only among served tools that are not included yet: replacing an entry
  // with one already listed would just make a duplicate.
  const notIncluded = [...served].filter((name) => !included.has(name));
  for (const entry of instance.include ?? []) {
    if (!served.has(entry.value)) {
      const suggestion = closestName(entry.value, notIncluded);
      const data: UnservedIncludeData = { tool: entry.value, server, ...(suggestion ? { suggestion } : {}) };
      problems.push(
        problem('TP404', entry.span, `${label}: include names "${entry.value}", which server "${server}" does not serve; the runtime drops it silently${suggestion ? `; did you mean "${suggestion}"?` : ''}`, { data }),
      );
    }
  }
  // A selection or a snapshot with parts computed at run time (source files) is not complete, so
  // "selected but not pinned" would be a guess.
  if (instance.snapshotSpan && !instance.computed?.include && !instance.computed?.snapshot) {
    const pinned = new Set(instance.snapshot.map((entry) => entry.tool.value));
    // With an include, each unpinned entry is marked where it is listed; without one, every served
    // tool is selected and the finding goes on the opening brace of toolsSnapshot.
    const snapshotBrace: Span = { offset: instance.snapshotSpan.offset, length: 1 };
    const unpinned = instance.include
      ? instance.include.filter((entry) => served.has(entry.value) && !pinned.has(entry.value)).map((entry) => ({ name: entry.value, span: entry.span }))
      : [...served].filter((name) => !pinned.has(name)).map((name) => ({ name, span: snapshotBrace }));
    for (const tool of unpinned) {
      const live = liveToolPin(listing.tools.filter((candidate) => candidate.name === tool.name));
      const data: UnpinnedToolData = { kind: 'tool', tool: tool.name, server, ...('pin' in live ? { live: live.pin, liveContent: live.content, ...liveDefinitionOf(live.tool) } : {}) };
      problems.push(problem('TP405', tool.span, `${label}: tool "${tool.name}" is selected but has no pin in toolsSnapshot, so a rewrite of it would go unnoticed`, { data }));
    }
  }
  return problems;
}

/** The full-definition entry content of a live tool, for the payloads that write store entries. */
function liveDefinitionOf(tool: ListedTool): { liveDefinition?: string } {
  const content = fullDefinitionContent(tool.raw);
  return content === undefined ? {} : { liveDefinition: content };
}

/** Counts verdicts by state, for summaries and exit codes. */
export function summarize(verdicts: readonly PinVerdict[]): Record<PinState, number> {
  const counts: Record<PinState, number> = { verified: 0, drifted: 0, missing: 0, ambiguous: 0, 'cannot-verify': 0 };
  for (const verdict of verdicts) counts[verdict.state]++;
  return counts;
}
