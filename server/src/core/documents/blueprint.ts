/**
 * Blueprint files (`*.blueprint.json`, `*.blueprint.jsonc`; docs/formats.md §3): the document
 * model with offsets, and the checks that need no live server.
 */
import { describeNodeType, getProperty, type JsonNode, parseJsonDocument, propertyKeySpan, propertyKeyText, propertyValueNode, spanOf, type StringField, stringField } from '../json/jsonDocument';
import { isOneOf } from '../json/values';

export type { StringField };
import { isParsedPin, type ParsedPin, parsePin } from '../pins/pins';
import { type Problem, problem } from '../problems';
import { checkLoggedValue } from '../secrets';
import { checkShape, type Shape } from '../json/shape';

export const MCP_INVOKE = 'mcp.invoke';
/** The typed channels an `mcp.invoke` step may branch on (ADR 0060/0063). */
export const CHANNEL_NAMES = ['schemaDrift', 'toolNotFound'] as const;

export interface ChannelModel {
  readonly name: StringField;
  /** Undefined when the target is not a string (a type problem was reported). */
  readonly target: StringField | undefined;
}

export interface McpInvokeInput {
  readonly toolName: StringField | undefined;
  readonly expectedSchemaHash: StringField | undefined;
  /** The parsed pin when `expectedSchemaHash` is well formed. */
  readonly pin: ParsedPin | undefined;
  readonly server: StringField | undefined;
  /**
   * Set only for steps read from source files whose `server` is computed and cannot be read: what
   * it is, in the source's words. The pin is then "cannot verify", never checked against a server
   * guessed from the tool's name.
   */
  readonly serverComputed?: string;
  readonly argumentsNode: JsonNode | undefined;
}

export interface StepModel {
  readonly index: number;
  readonly node: JsonNode;
  readonly id: StringField | undefined;
  readonly effect: StringField | undefined;
  /** Present for `mcp.invoke` steps whose `input` is an object. */
  readonly mcp: McpInvokeInput | undefined;
  readonly channels: readonly ChannelModel[];
}

export interface BlueprintModel {
  readonly kind: 'blueprint';
  readonly name: StringField | undefined;
  readonly steps: readonly StepModel[];
}

export interface BlueprintAnalysis {
  readonly model: BlueprintModel;
  /** Syntax, shape and meaning problems, sorted by offset. */
  readonly problems: readonly Problem[];
}

const STEP_SHAPE: Shape = {
  kind: 'object',
  properties: {
    id: { kind: 'string' },
    effect: { kind: 'string' },
    input: { kind: 'object', properties: {}, otherMembers: { kind: 'any' } },
    // Channel names are checked by checkChannels (TP202), with a message about channels.
    on: { kind: 'object', properties: {}, otherMembers: { kind: 'string' } },
    description: { kind: 'string' },
    label: { kind: 'string' },
  },
  required: ['id', 'effect'],
};

const MCP_INPUT_SHAPE: Shape = {
  kind: 'object',
  properties: {
    toolName: { kind: 'string' },
    expectedSchemaHash: { kind: 'string' },
    server: { kind: 'string' },
    arguments: { kind: 'object', properties: {}, otherMembers: { kind: 'any' } },
  },
  required: ['toolName'],
};

const BLUEPRINT_SHAPE: Shape = {
  kind: 'object',
  properties: {
    $schema: { kind: 'string' },
    blueprint: { kind: 'string' },
    formatVersion: { kind: 'number' },
    description: { kind: 'string' },
    steps: { kind: 'array', items: { kind: 'any' } },
  },
  required: ['blueprint', 'formatVersion', 'steps'],
};

function stepLabel(step: { index: number; id: StringField | undefined }): string {
  return step.id ? `step "${step.id.value}"` : `step #${step.index + 1}`;
}

/**
 * A blueprint model that holds only what verification and reports read: each step's fields and its
 * `arguments` subtree (with the `"arguments"` key, whose span a finding may use); the step's
 * `node` becomes a childless stand-in with the step's span. The rest of the parse tree is no longer
 * reachable from the model, so a caller that keeps many documents until their servers are listed
 * (`toolpin check`: 1,005 files) lets it go at once instead of holding every tree (issue 13).
 *
 * Contract: the model's values and spans are unchanged, and verifying it gives the same verdicts and
 * problems. It consumes the model's tree: the `arguments` subtrees are cut from their parents, so
 * the original analysis must not be used for anything that walks the tree upwards (navigation,
 * incremental re-analysis, fixes). Not for the editor.
 */
export function withVerificationTreeOnly(model: BlueprintModel): BlueprintModel {
  return {
    kind: 'blueprint',
    name: model.name,
    steps: model.steps.map((step) => ({
      ...step,
      node: { type: step.node.type, offset: step.node.offset, length: step.node.length },
      mcp: step.mcp ? { ...step.mcp, argumentsNode: cutFromParent(step.mcp.argumentsNode) } : undefined,
    })),
  };
}

/** The field of a parse-tree node {@link cutFromParent} changes (read-only to everyone else). */
interface CuttableNode {
  parent?: CuttableNode | undefined;
}

/** A value node of a property, detached above its property (which keeps the key). */
function cutFromParent(node: JsonNode | undefined): JsonNode | undefined {
  const property: CuttableNode | undefined = node?.parent;
  if (property) property.parent = undefined;
  return node;
}

/** Parses and checks a blueprint file. Never throws. */
export function analyzeBlueprint(text: string): BlueprintAnalysis {
  const document = parseJsonDocument(text);
  const problems: Problem[] = [...document.problems];
  const root = document.root;
  const steps: StepModel[] = [];
  let name: StringField | undefined;

  if (root && root.type !== 'object') {
    problems.push(problem('TP103', spanOf(root), `a blueprint file holds one object, found ${describeNodeType(root)}`));
  } else if (root) {
    checkShape(root, BLUEPRINT_SHAPE, 'the blueprint', problems);
    name = stringField(getProperty(root, 'blueprint')?.valueNode);
    const version = getProperty(root, 'formatVersion')?.valueNode;
    if (version && version.type === 'number' && version.value !== 1) {
      problems.push(problem('TP105', spanOf(version), `formatVersion ${String(version.value)} is not supported; this version of Toolpin reads formatVersion 1`));
    }
    const stepsNode = getProperty(root, 'steps')?.valueNode;
    if (stepsNode?.type === 'array') {
      (stepsNode.children ?? []).forEach((stepNode, index) => {
        const step = readStep(stepNode, index, problems);
        if (step) steps.push(step);
      });
    }
  }

  const model: BlueprintModel = { kind: 'blueprint', name, steps };
  problems.push(...checkBlueprint(model));
  problems.sort((a, b) => a.span.offset - b.span.offset);
  return { model, problems };
}

/** Reads one element of `steps` (exported for re-analysis after an edit, core/documents/incremental.ts). */
export function readStep(node: JsonNode, index: number, problems: Problem[]): StepModel | undefined {
  if (node.type !== 'object') {
    problems.push(problem('TP103', spanOf(node), `step #${index + 1} must be an object, found ${describeNodeType(node)}`));
    return undefined;
  }
  const id = stringField(getProperty(node, 'id')?.valueNode);
  const effect = stringField(getProperty(node, 'effect')?.valueNode);
  checkShape(node, STEP_SHAPE, stepLabel({ index, id }), problems);

  let mcp: McpInvokeInput | undefined;
  const inputNode = getProperty(node, 'input')?.valueNode;
  if (effect?.value === MCP_INVOKE) {
    if (!inputNode) {
      // The effect string is the anchor: it is what makes "input" required.
      problems.push(
        problem('TP104', effect.span, `${stepLabel({ index, id })} calls mcp.invoke but has no "input" with a "toolName"`, {
          data: { field: 'input' },
        }),
      );
    } else if (inputNode.type === 'object') {
      mcp = readMcpInput(inputNode, `the input of ${stepLabel({ index, id })}`, problems);
    }
  }

  const channels: ChannelModel[] = [];
  const onNode = getProperty(node, 'on')?.valueNode;
  if (onNode?.type === 'object') {
    for (const child of onNode.children ?? []) {
      const name = propertyKeyText(child);
      const span = propertyKeySpan(child);
      if (name === undefined || !span) continue;
      channels.push({ name: { value: name, span }, target: stringField(propertyValueNode(child)) });
    }
  }
  return { index, node, id, effect, mcp, channels };
}

/**
 * Reads the input object of an `mcp.invoke` step (toolName, expectedSchemaHash, server,
 * arguments), reporting shape problems under `where`. Source files (core/documents/source) read the options
 * object of an `mcpInvoke$` call with the same function.
 */
export function readMcpInput(inputNode: JsonNode, where: string, problems: Problem[]): McpInvokeInput {
  checkShape(inputNode, MCP_INPUT_SHAPE, where, problems);
  const expectedSchemaHash = stringField(getProperty(inputNode, 'expectedSchemaHash')?.valueNode);
  const parsed = expectedSchemaHash ? parsePin(expectedSchemaHash.value, 'fnv1a64') : undefined;
  return {
    toolName: stringField(getProperty(inputNode, 'toolName')?.valueNode),
    expectedSchemaHash,
    pin: parsed && isParsedPin(parsed) ? parsed : undefined,
    server: stringField(getProperty(inputNode, 'server')?.valueNode),
    argumentsNode: getProperty(inputNode, 'arguments')?.valueNode,
  };
}

/** The meaning-level checks of a parsed blueprint; each is exported for data-driven tests. */
export function checkBlueprint(model: BlueprintModel): Problem[] {
  return [
    ...checkUniqueStepIds(model),
    ...checkChannels(model),
    ...checkSchemaPins(model),
    ...checkArgumentSecrets(model),
  ];
}

/** TP200: step ids are unique in a file; every repeat is reported, naming the first. */
export function checkUniqueStepIds(model: BlueprintModel): Problem[] {
  const problems: Problem[] = [];
  const firstIndex = new Map<string, number>();
  for (const step of model.steps) {
    if (!step.id) continue;
    const first = firstIndex.get(step.id.value);
    if (first === undefined) {
      firstIndex.set(step.id.value, step.index);
    } else {
      problems.push(
        problem('TP200', step.id.span, `duplicate step id "${step.id.value}": step #${first + 1} already uses it; step ids are unique within a blueprint`, {
          data: { id: step.id.value, firstStep: first + 1 },
        }),
      );
    }
  }
  return problems;
}

/** TP201 / TP202 / TP203: typed channels name known channels and point at existing steps. */
export function checkChannels(model: BlueprintModel): Problem[] {
  const problems: Problem[] = [];
  const ids = new Set(model.steps.flatMap((step) => (step.id ? [step.id.value] : [])));
  for (const step of model.steps) {
    if (step.channels.length === 0) continue;
    const isMcp = step.effect?.value === MCP_INVOKE;
    for (const channel of step.channels) {
      if (!isOneOf(CHANNEL_NAMES, channel.name.value)) {
        problems.push(
          problem('TP202', channel.name.span, `unknown channel "${channel.name.value}" on ${stepLabel(step)}; an mcp.invoke step branches on ${CHANNEL_NAMES.join(' or ')}`, {
            data: { channel: channel.name.value },
          }),
        );
      } else if (!isMcp) {
        problems.push(
          problem('TP203', channel.name.span, `channel "${channel.name.value}" is only raised by mcp.invoke steps; ${stepLabel(step)} has effect "${step.effect?.value ?? '(none)'}"`),
        );
      }
      if (channel.target && !ids.has(channel.target.value)) {
        problems.push(
          problem('TP201', channel.target.span, `channel "${channel.name.value}" of ${stepLabel(step)} goes to "${channel.target.value}", which is not a step id in this blueprint`, {
            data: { target: channel.target.value },
          }),
        );
      }
    }
  }
  return problems;
}

/** TP204 / TP206: every mcp.invoke step carries a well-formed schema pin. */
export function checkSchemaPins(model: BlueprintModel): Problem[] {
  const problems: Problem[] = [];
  for (const step of model.steps) {
    if (!step.mcp) continue;
    const hash = step.mcp.expectedSchemaHash;
    if (!hash) {
      const anchor = step.mcp.toolName?.span ?? step.id?.span ?? spanOf(step.node);
      problems.push(
        problem('TP206', anchor, `${stepLabel(step)} calls "${step.mcp.toolName?.value ?? '?'}" without input.expectedSchemaHash, so a changed tool schema cannot be detected`, {
          data: { tool: step.mcp.toolName?.value },
        }),
      );
      continue;
    }
    const parsed = parsePin(hash.value, 'fnv1a64');
    if (!isParsedPin(parsed)) {
      problems.push(problem('TP204', hash.span, `malformed schema pin on ${stepLabel(step)}: ${parsed.message}`));
    }
  }
  return problems;
}

/** TP205 / TP207: credential-looking literals in step arguments, and malformed $secret references. */
export function checkArgumentSecrets(model: BlueprintModel): Problem[] {
  const problems: Problem[] = [];
  for (const step of model.steps) {
    const args = step.mcp?.argumentsNode;
    if (args) checkLoggedValue(args, `the arguments of ${stepLabel(step)}`, problems);
  }
  return problems;
}
