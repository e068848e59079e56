/**
 * Source files as Toolpin documents: the calls {@link readSource} finds become a
 * {@link BlueprintModel} (one step per `mcpInvoke$` call) and a {@link ConnectorModel} (one instance
 * per `defineConnector` call), with spans into the source text, checked by the same functions as
 * blueprint and connector files (same codes). What is computed at run time is reported as TP110
 * and never checked as if it were known; a statement the parser cannot get past is TP111.
 */
import { type BlueprintModel, checkArgumentSecrets, checkSchemaPins, MCP_INVOKE, readMcpInput, type StepModel } from '../blueprint';
import { checkConnectorNames, type ConnectorInstanceModel, type ConnectorModel, readInstance, readsPins } from '../connector';
import type { JsonNode, StringField } from '../../json/jsonDocument';
import { getProperty, spanOf, stringField } from '../../json/jsonDocument';
import { type Problem, problem, type Span } from '../../problems';
import { type ComputedValue, type InvokeCall, MCP_INVOKE_CALL, type ModuleAccess, pinLiteralsIn, readSource, type SourceReading, type UnreadPin } from './sourceReader';
import type { SourceNames } from './sourceNames';

export interface SourceModel {
  readonly kind: 'source';
  readonly blueprint: BlueprintModel;
  readonly connector: ConnectorModel;
  /**
   * Pin literals in parts of the module Toolpin could not read (TP112): each is "cannot verify".
   * A file that was not read completely is never a pass when it holds a pin.
   */
  readonly unreadPins: readonly UnreadPin[];
  /**
   * Pins whose value is not a literal Toolpin can read (`PINS.search` imported from `./pins`, a
   * function call): each is "cannot verify", never a pass and never a guess.
   */
  readonly computedPins: readonly ComputedPin[];
  /**
   * Pins read in another module (`PINS.search` imported from `./pins`): each is checked where it
   * is used (`span`), and re-pinned where it is written (`file`, `literal`).
   */
  readonly foreignPins: readonly ForeignPin[];
}

/** A pin used in this module and written in another: the use, the tool it pins, and the literal to rewrite. */
export interface ForeignPin {
  /** The use in this module (`PINS.search`, or a whole imported `SNAPSHOT`). */
  readonly span: Span;
  readonly kind: 'schema' | 'tool';
  readonly tool: string;
  /** The module that writes the literal, as the module access named it (a path). */
  readonly file: string;
  /** The literal there, quotes included, and its quote. */
  readonly literal: Span;
  readonly quote: string | undefined;
}

/** A pin site whose value is computed or imported: where it is, which tool it pins, and why it cannot be read. */
export interface ComputedPin {
  readonly span: Span;
  readonly kind: 'schema' | 'tool';
  readonly tool: string;
  readonly server: string | undefined;
  /** Why the pin cannot be verified, in a full sentence fragment after "cannot verify: ". */
  readonly reason: string;
}

/** The path of a pin in a call's options: a step's hash, or a connector's snapshot (an entry, the whole or a spread). */
function pinPathKind(path: string): 'schema' | 'tool' | undefined {
  if (path === 'expectedSchemaHash') return 'schema';
  return path === 'providerConfig.toolsSnapshot' || path.startsWith('providerConfig.toolsSnapshot.') ? 'tool' : undefined;
}

/** Why a computed value cannot be read, naming the import when it is one. */
function whyComputed(value: ComputedValue): string {
  if (value.imported && value.reason !== undefined) return `it is ${value.text}, imported from '${value.imported.from}', and ${value.reason}`;
  if (value.imported) {
    return `it is ${value.text}, imported from '${value.imported.from}', and Toolpin reads pin values only in the module that uses them (a literal or a same-module constant), never across modules`;
  }
  return `it is computed at run time (${value.text}); Toolpin reads a literal or a same-module constant`;
}

export interface SourceAnalysis {
  readonly model: SourceModel;
  readonly problems: readonly Problem[];
}

function within(span: Span, outer: Span): boolean {
  return span.offset >= outer.offset && span.offset + span.length <= outer.offset + outer.length;
}

function sameSpan(a: Span, b: Span): boolean {
  return a.offset === b.offset && a.length === b.length;
}

/** True when `node` is `ancestor` or below it. */
function isUnder(node: JsonNode | undefined, ancestor: JsonNode): boolean {
  for (let current = node; current; current = current.parent) if (current === ancestor) return true;
  return false;
}

function describePath(path: string): string {
  return path === '' ? 'the argument' : path === 'id' ? 'the step id' : `"${path}"`;
}

/** Problems that say a field is missing, on an object that may hold it through a spread. */
function isMissingFieldProblem(found: Problem, open: readonly JsonNode[]): boolean {
  if (found.code === 'TP104' || found.code === 'TP301') return open.some((node) => node.offset === found.span.offset);
  if (found.code === 'TP302' || found.code === 'TP304') {
    return /runs no command|has no "url"|needs "/.test(found.message) && open.some((node) => within(found.span, spanOf(node)));
  }
  return false;
}

/** Parses and checks a TypeScript or JavaScript module; `names` as for {@link readSource}. Never throws. */
export function analyzeSource(text: string, fileName?: string, names?: SourceNames, modules?: ModuleAccess): SourceAnalysis {
  const reading = readSource(text, fileName, names, modules);
  const problems: Problem[] = [];
  const open = [...reading.open];
  const labelled: Array<{ call: Span; label: string }> = [];

  const steps: StepModel[] = [];
  const unpinnedChecked: StepModel[] = [];
  reading.invocations.forEach((call, index) => {
    const step = readInvocation(call, index, open, problems, reading);
    steps.push(step);
    labelled.push({ call: call.span, label: step.id ? `step "${step.id.value}"` : `step #${index + 1}` });
    // A hash that is computed, or that a spread may bring, is not "missing".
    const hashProperty = call.options ? getProperty(call.options, 'expectedSchemaHash') : undefined;
    const mayComeFromSpread = call.options !== undefined && !hashProperty && reading.open.has(call.options);
    if (step.mcp && (!hashProperty || hashProperty.valueNode) && !mayComeFromSpread) unpinnedChecked.push(step);
  });

  const instances: ConnectorInstanceModel[] = [];
  for (const call of reading.connectors) {
    if (!call.config) continue;
    const index = instances.length;
    const found: Problem[] = [];
    const provider = providerComputed(call.config, call.span, reading);
    const read = readInstance(call.config, index, found, { objectStackSource: true, ...(provider !== undefined ? { providerComputed: true } : {}) });
    const credential = readsPins({ provider: read.provider, computed: provider !== undefined ? { transport: false, include: false, snapshot: false, provider } : undefined }) ? credentialComputed(call.config, call.span, reading) : undefined;
    const computed = { ...computedParts(call.config, reading.computed, reading.open), ...(provider !== undefined ? { provider } : {}), ...(credential !== undefined ? { credential } : {}) };
    const instance: ConnectorInstanceModel = { ...read, computed };
    problems.push(...found.filter((entry) => !(entry.code === 'TP305' && computed.include)));
    instances.push(instance);
    labelled.push({ call: call.span, label: read.name ? `connector "${read.name.value}"` : `connector #${index + 1}` });
  }

  const blueprint: BlueprintModel = { kind: 'blueprint', name: undefined, steps };
  const connector: ConnectorModel = { kind: 'connector', instances };
  // Step ids are scoped to a blueprint, and a module may build several: TP200 is left to the
  // runtime. Pins, secrets in arguments and connector names are checked as in the JSON kinds.
  problems.push(...checkSchemaPins({ ...blueprint, steps: unpinnedChecked }), ...checkArgumentSecrets(blueprint), ...checkConnectorNames(connector));

  const computedKeys = reading.computed.flatMap((value) => (value.keySpan ? [value.keySpan] : []));
  const kept = problems.filter((found) => !isMissingFieldProblem(found, open) && !computedKeys.some((span) => sameSpan(span, found.span)));

  // Computed values are reported where Toolpin would check them: not in human text (label,
  // description), and not in connectors of another provider, whose configuration it never reads.
  const otherProvider = reading.connectors.filter((call) => {
    const provider = call.config ? stringField(getProperty(call.config, 'provider')?.valueNode) : undefined;
    // A catalog descriptor (no provider, nothing computed that could bring one) is not MCP either.
    const descriptor = call.config !== undefined && !getProperty(call.config, 'provider') && !reading.open.has(call.config);
    return (provider !== undefined && provider.value !== 'mcp') || descriptor;
  });
  const reported = reading.computed.filter((value) => !/^(label|description)(\.|$)/.test(value.path) && !otherProvider.some((call) => within(value.span, call.span)));
  const computedPins: ComputedPin[] = [];
  for (const value of reported) {
    const owner = labelled.find((entry) => within(value.span, entry.call));
    const where = owner ? ` of ${owner.label}` : '';
    const pinKind = pinPathKind(value.path);
    if (pinKind === undefined) {
      kept.push(problem('TP110', value.span, `${describePath(value.path)}${where} cannot be checked: computed at run time`, { data: { path: value.path } }));
      continue;
    }
    const reason = whyComputed(value);
    computedPins.push({ span: value.span, kind: pinKind, ...computedPinTarget(value, pinKind, steps, instances), reason });
    kept.push(problem('TP110', value.span, `${describePath(value.path)}${where} cannot be verified: ${reason}`, { data: { path: value.path } }));
  }
  const unreadPins: UnreadPin[] = [];
  for (const region of reading.unreadable) {
    const pins = pinLiteralsIn(text, region.tooLarge ? { offset: 0, length: text.length } : region.span);
    unreadPins.push(...pins);
    if (pins.length > 0) {
      kept.push(problem('TP112', region.span, `${pins.length} pin literal(s) in ${region.tooLarge ? 'this module' : 'these lines'} cannot be verified: ${region.reason}`, { data: { pins: pins.length } }));
    } else if (region.tooLarge) {
      kept.push(problem('TP113', region.span, region.reason));
    } else {
      kept.push(problem('TP111', region.span, `the pins in these lines cannot be read until the syntax error is fixed: ${region.reason}`));
    }
  }
  kept.sort((a, b) => a.span.offset - b.span.offset);
  const foreignPins = reading.origins.size > 0 ? foreignPinsOf(steps, instances, reading) : [];
  return { model: { kind: 'source', blueprint, connector, unreadPins, computedPins, foreignPins }, problems: onePerPosition(kept) };
}

/** The pins of the steps and connector instances whose literal is written in another module. */
function foreignPinsOf(steps: readonly StepModel[], instances: readonly ConnectorInstanceModel[], reading: SourceReading): ForeignPin[] {
  const found: ForeignPin[] = [];
  const add = (node: JsonNode | undefined, kind: 'schema' | 'tool', tool: string | undefined): void => {
    const origin = node ? reading.origins.get(node) : undefined;
    if (node && origin && tool !== undefined) found.push({ span: spanOf(node), kind, tool, file: origin.file, literal: origin.span, quote: origin.quote });
  };
  for (const step of steps) add(getProperty(step.node, 'expectedSchemaHash')?.valueNode, 'schema', step.mcp?.toolName?.value);
  for (const instance of instances) {
    const snapshot = getProperty(getProperty(instance.node, 'providerConfig')?.valueNode, 'toolsSnapshot')?.valueNode;
    for (const property of snapshot?.type === 'object' ? (snapshot.children ?? []) : []) {
      const key = property.children?.[0];
      add(property.children?.[1], 'tool', typeof key?.value === 'string' ? key.value : undefined);
    }
  }
  return found;
}

/**
 * The pin of another module behind the pin at `span` of a source model (for a tool pin, of `tool`),
 * or undefined when the pin is written where it is used.
 */
export function foreignPinAt(model: { readonly kind: string; readonly foreignPins?: readonly ForeignPin[] }, span: Span, tool?: string): ForeignPin | undefined {
  if (model.kind !== 'source') return undefined;
  return model.foreignPins?.find((pin) => pin.span.offset === span.offset && pin.span.length === span.length && (tool === undefined || pin.kind === 'schema' || pin.tool === tool));
}

/** The tool and server a computed pin belongs to: the step's toolName, or the snapshot key. */
function computedPinTarget(value: ComputedValue, kind: 'schema' | 'tool', steps: readonly StepModel[], instances: readonly ConnectorInstanceModel[]): { tool: string; server: string | undefined } {
  if (kind === 'schema') {
    const step = steps.find((candidate) => within(value.span, spanOf(candidate.node)));
    return { tool: step?.mcp?.toolName?.value ?? '(unknown tool)', server: step?.mcp?.server?.value };
  }
  const entry = /^providerConfig\.toolsSnapshot\.(.+)$/.exec(value.path)?.[1];
  const instance = instances.find((candidate) => candidate.node !== undefined && within(value.span, spanOf(candidate.node)));
  return { tool: entry !== undefined && !entry.startsWith('…') ? entry : '(every tool of the snapshot)', server: instance?.name?.value };
}

/**
 * One report per problem per position: the same code at the same place is said once (a constant
 * shared by several calls is one literal, whatever number of calls read it).
 */
function onePerPosition(problems: readonly Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((found) => {
    const key = `${found.code} ${found.span.offset} ${found.span.length}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The computed value at `path` of the call at `span`, or the first spread of `object` when it may bring the key. */
function computedAt(object: JsonNode, span: Span, path: string, reading: SourceReading): string | undefined {
  const inCall = reading.computed.filter((value) => within(value.span, span));
  const property = getProperty(object, path.slice(path.lastIndexOf('.') + 1));
  if (property && !property.valueNode) return inCall.find((value) => value.path === path)?.text ?? 'a computed value';
  if (!property && reading.open.has(object)) return inCall.find((value) => value.path.endsWith('…spread'))?.text ?? 'a spread';
  return undefined;
}

/** What a connector's provider is, when it is computed and cannot be read; undefined when it is a literal or absent. */
function providerComputed(config: JsonNode, span: Span, reading: SourceReading): string | undefined {
  // A spread may bring a provider, but it matters only where there are pins to keep.
  if (!getProperty(config, 'provider') && !getProperty(config, 'providerConfig')) return undefined;
  return computedAt(config, span, 'provider', reading);
}

/** What a connector's `auth.credentialRef` (or its whole `auth`) is, when computed. */
function credentialComputed(config: JsonNode, span: Span, reading: SourceReading): string | undefined {
  const auth = getProperty(config, 'auth');
  if (auth && !auth.valueNode) return computedAt(config, span, 'auth', reading);
  return auth?.valueNode?.type === 'object' ? computedAt(auth.valueNode, span, 'auth.credentialRef', reading) : undefined;
}

function readInvocation(call: InvokeCall, index: number, open: readonly JsonNode[], problems: Problem[], reading: SourceReading): StepModel {
  const id: StringField | undefined = stringField(call.id);
  const label = id ? `step "${id.value}"` : `step #${index + 1}`;
  const effect: StringField = { value: MCP_INVOKE, span: call.calleeSpan };
  const node: JsonNode = call.options ?? { type: 'object', offset: call.span.offset, length: call.span.length, children: [] };
  if (!call.options) {
    // No options at all is a missing toolName; computed options were reported as TP110.
    if (!call.optionsGiven) {
      problems.push(problem('TP104', call.calleeSpan, `${MCP_INVOKE_CALL} ${label} has no options object with a "toolName"`, { data: { field: 'toolName' } }));
    }
    return { index, node, id, effect, mcp: undefined, channels: [] };
  }
  const read = readMcpInput(call.options, `the options of ${MCP_INVOKE_CALL} ${label}`, problems);
  const serverComputed = computedAt(call.options, call.span, 'server', reading);
  const mcp = serverComputed !== undefined ? { ...read, serverComputed } : read;
  // Arguments with a spread inside are not complete: checking them against the live schema would guess.
  const args = mcp.argumentsNode;
  const argumentsOpen = args !== undefined && open.some((candidate) => isUnder(candidate, args));
  return { index, node, id, effect, mcp: argumentsOpen ? { ...mcp, argumentsNode: undefined } : mcp, channels: [] };
}

function computedParts(config: JsonNode, computed: readonly ComputedValue[], open: ReadonlySet<JsonNode>): NonNullable<ConnectorInstanceModel['computed']> {
  const inCall = computed.filter((value) => within(value.span, spanOf(config)));
  const providerConfig = getProperty(config, 'providerConfig');
  // A spread in the instance or in providerConfig may bring any part of the configuration.
  const wholeOpen = open.has(config) || (providerConfig !== undefined && !providerConfig.valueNode) || (providerConfig?.valueNode !== undefined && open.has(providerConfig.valueNode));
  const part = (name: string): boolean => {
    const node = providerConfig?.valueNode ? getProperty(providerConfig.valueNode, name)?.valueNode : undefined;
    const underPart = [...open].some((candidate) => node !== undefined && isUnder(candidate, node));
    return wholeOpen || underPart || inCall.some((value) => value.path === `providerConfig.${name}` || value.path.startsWith(`providerConfig.${name}.`) || value.path.startsWith(`providerConfig.${name}[`));
  };
  return { transport: part('transport'), include: part('include'), snapshot: part('toolsSnapshot') };
}
