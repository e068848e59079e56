/**
 * Re-analysing a blueprint after an edit without re-reading the whole file.
 *
 * A keystroke in a 10,000-step blueprint changes one step. Parsing and checking all of them again
 * costs more than the parse alone (issue 13); this module re-reads only the step the edit falls in
 * and carries everything else over from the previous analysis, shifting offsets behind the edit.
 *
 * Contract: {@link reanalyzeBlueprint} returns exactly what `analyzeBlueprint(next)` would return
 * (the same model values and spans, the same problems in the same order; a property test holds
 * this), or `undefined` when it cannot be sure of that, and the caller then analyses the whole
 * text. It is sure only when:
 * - the previous text had no syntax error and no capped problem list (error recovery elsewhere
 *   could change how the new text is read);
 * - every changed character lies strictly inside one step object: its braces are untouched;
 * - the new text of that step parses alone, without any error, as one object of exactly that
 *   length.
 *
 * Ownership: the previous analysis is consumed. The parse-tree nodes behind the edit are shifted in
 * place (allocating them again would cost what parsing does), so the previous analysis must not be
 * used afterwards. The step models behind the edit move in place too (their spans), and problems
 * behind it are replaced by new objects.
 */
import type { ParseError } from 'jsonc-parser';
import { collectDuplicateKeys, type JsonNode, MAX_NESTING, nestsTooDeep, parseJsonTree, PropertyNode, type StringField } from '../json/jsonDocument';
import { type Problem, type Span } from '../problems';
import { type BlueprintAnalysis, type BlueprintModel, checkArgumentSecrets, checkChannels, checkSchemaPins, checkUniqueStepIds, readStep, type StepModel } from './blueprint';

/**
 * The fields of a parse-tree node this module moves. jsonc-parser declares them read-only, and
 * TypeScript lets a read-only object be used through a type without the modifier: this type says
 * where that happens.
 */
interface MovableNode {
  offset: number;
  length: number;
  colonOffset?: number;
  parent?: MovableNode;
  children?: MovableNode[];
}

/** Where two texts differ: `[start, previousEnd)` of the old text became `[start, nextEnd)`. */
export interface ChangedRegion {
  readonly start: number;
  readonly previousEnd: number;
  readonly nextEnd: number;
}

/** The one region two texts differ in (common prefix and suffix removed), or undefined when equal. */
export function changedRegion(previous: string, next: string): ChangedRegion | undefined {
  if (previous === next) return undefined;
  const shorter = Math.min(previous.length, next.length);
  // Whole chunks first: comparing two slices is one native comparison, where a character loop
  // over a 3 MB text costs milliseconds. Then character by character inside the first chunk that
  // differs.
  let start = 0;
  while (start + CHUNK <= shorter && previous.slice(start, start + CHUNK) === next.slice(start, start + CHUNK)) start += CHUNK;
  while (start < shorter && previous.charCodeAt(start) === next.charCodeAt(start)) start++;
  const limit = shorter - start;
  let suffix = 0;
  while (suffix + CHUNK <= limit && previous.slice(previous.length - suffix - CHUNK, previous.length - suffix) === next.slice(next.length - suffix - CHUNK, next.length - suffix)) suffix += CHUNK;
  while (suffix < limit && previous.charCodeAt(previous.length - 1 - suffix) === next.charCodeAt(next.length - 1 - suffix)) suffix++;
  return { start, previousEnd: previous.length - suffix, nextEnd: next.length - suffix };
}

const CHUNK = 4096;

/**
 * Problems that compare steps with each other (unique ids, channel names and targets). They are
 * computed again over the whole model after every edit, which is cheap: no parsing is involved.
 */
const CROSS_STEP_CODES: ReadonlySet<string> = new Set(['TP200', 'TP201', 'TP202', 'TP203']);

/** The pass of analyzeBlueprint that reports a code, in the order the passes run. */
function passOf(code: string): number {
  switch (code) {
    case 'TP100':
    case 'TP101':
      return 0;
    case 'TP200':
      return 2;
    case 'TP201':
    case 'TP202':
    case 'TP203':
      return 3;
    case 'TP204':
    case 'TP206':
      return 4;
    case 'TP205':
    case 'TP207':
      return 5;
    default:
      return 1;
  }
}

/** The analysis of `next`, reusing `previous` (the analysis of `previousText`); see the contract above. */
export function reanalyzeBlueprint(previousText: string, previous: BlueprintAnalysis, next: string): BlueprintAnalysis | undefined {
  if (previous.problems.some((found) => found.code === 'TP100' || found.code === 'TP106')) return undefined;
  const region = changedRegion(previousText, next);
  if (!region) return previous;
  const steps = previous.model.steps;
  const position = stepContaining(steps, region);
  const old = steps[position];
  if (!old) return undefined;
  const delta = region.nextEnd - region.previousEnd;
  const oldStart = old.node.offset;
  const oldEnd = oldStart + old.node.length;
  const stepText = detached(next.slice(oldStart, oldEnd + delta));
  // The step sits under its ancestors' brackets: it may nest only as deep as the rest of the limit.
  if (nestsTooDeep(stepText, MAX_NESTING - containerDepth(old.node))) return undefined;
  const errors: ParseError[] = [];
  const node = parseJsonTree(stepText, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !node || node.type !== 'object' || node.offset !== 0 || node.length !== stepText.length) return undefined;
  const parent = old.node.parent;
  // A step is an item of the steps array, whose children array is the tree's own (a property's
  // children are a fresh array on each read, where replacing an entry would change nothing).
  const siblings: MovableNode[] | undefined = parent?.type === 'array' ? parent.children : undefined;
  const slot = siblings ? siblings.indexOf(old.node) : -1;
  if (!parent || !siblings || slot < 0) return undefined;

  // From here on the previous analysis is consumed: the new step goes into the tree, and
  // everything behind it moves by `delta`.
  shiftTree(node, oldStart);
  const movable: MovableNode = node;
  movable.parent = parent;
  siblings[slot] = node;
  if (delta !== 0) shiftBehind(node, delta);

  const stepProblems: Problem[] = [];
  collectDuplicateKeys(node, stepProblems);
  const step = readStep(node, old.index, stepProblems);
  if (!step) return undefined;
  const single: BlueprintModel = { kind: 'blueprint', name: undefined, steps: [step] };
  stepProblems.push(...checkSchemaPins(single), ...checkArgumentSecrets(single));

  // The problems first: a problem may share its span object with a model field, and the fields
  // behind the edit move in place below; each moved problem gets a new span, read before that.
  const problems: Problem[] = [];
  for (const found of previous.problems) {
    if (CROSS_STEP_CODES.has(found.code)) continue;
    const offset = found.span.offset;
    if (offset >= oldStart && offset < oldEnd) continue;
    if (offset >= oldEnd) problems.push(shiftedProblem(found, delta, oldEnd));
    // A problem on a node around the step (the whole blueprint, say) grows with it.
    else if (delta !== 0 && offset + found.span.length >= oldEnd) problems.push({ ...found, span: { offset, length: found.span.length + delta } });
    else problems.push(found);
  }

  const nextSteps: StepModel[] = steps.slice();
  nextSteps[position] = step;
  if (delta !== 0) for (const behind of nextSteps.slice(position + 1)) shiftStepInPlace(behind, delta);
  const name = previous.model.name && previous.model.name.span.offset >= oldEnd ? shiftedField(previous.model.name, delta) : previous.model.name;
  const model: BlueprintModel = { kind: 'blueprint', name, steps: nextSteps };

  problems.push(...stepProblems, ...checkUniqueStepIds(model), ...checkChannels(model));
  // The whole-file analysis sorts by offset a list made in a fixed order of passes (parse, shape,
  // then the meaning checks one after another); problems at one offset keep that order here too.
  problems.sort((a, b) => a.span.offset - b.span.offset || passOf(a.code) - passOf(b.code));
  return { model, problems };
}

/**
 * A copy of a string that shares no memory with the text it was cut from. V8 represents a slice
 * of a long string as a view into it, and the parser's string values are slices of its input: a
 * step read from a plain slice would keep the whole text of that version alive, one more 3 MB text
 * per keystroke. The round trip through JSON makes a flat copy (cheap: a step is short).
 */
function detached(text: string): string {
  const copy: unknown = JSON.parse(JSON.stringify(text));
  return typeof copy === 'string' ? copy : text;
}

/** The index of the step whose object strictly contains the changed region, or -1. */
function stepContaining(steps: readonly StepModel[], region: ChangedRegion): number {
  let low = 0;
  let high = steps.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if ((steps[middle]?.node.offset ?? Infinity) < region.start) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  const node = steps[found]?.node;
  if (!node) return -1;
  // Strictly inside: after the opening brace, and ending before the closing one.
  return region.start > node.offset && region.previousEnd < node.offset + node.length ? found : -1;
}

/** How many objects and arrays enclose a node. */
function containerDepth(node: JsonNode): number {
  let depth = 0;
  for (let ancestor = node.parent; ancestor; ancestor = ancestor.parent) if (ancestor.type === 'object' || ancestor.type === 'array') depth++;
  return depth;
}

/**
 * Adds `delta` to the offset of a node and of everything under it. Iterative: trees may be deep.
 * `pending` is scratch space, empty on entry and on return; callers that shift many trees pass one.
 */
function shiftTree(root: MovableNode, delta: number, pending: MovableNode[] = []): void {
  pending.push(root);
  while (pending.length > 0) {
    const node = pending.pop();
    if (!node) break;
    node.offset += delta;
    if (node.colonOffset !== undefined) node.colonOffset += delta;
    if (node instanceof PropertyNode) {
      // The value is a field (children would be a fresh array per property); the key moves with
      // the property's offset, and its node only if one was made.
      if (node.madeKeyNode) pending.push(node.madeKeyNode);
      if (node.valueNode) pending.push(node.valueNode);
    } else if (node.children) {
      for (const child of node.children) pending.push(child);
    }
  }
}

/** After `node` grew by `delta`: its ancestors grow too, and every node after it moves. */
function shiftBehind(node: MovableNode, delta: number): void {
  let child = node;
  const pending: MovableNode[] = [];
  for (let ancestor = node.parent; ancestor; child = ancestor, ancestor = ancestor.parent) {
    ancestor.length += delta;
    const siblings = ancestor.children ?? [];
    for (const sibling of siblings.slice(siblings.indexOf(child) + 1)) shiftTree(sibling, delta, pending);
  }
}

function shiftedSpan(span: Span, delta: number): Span {
  return { offset: span.offset + delta, length: span.length };
}

function shiftedField(field: StringField, delta: number): StringField;
function shiftedField(field: StringField | undefined, delta: number): StringField | undefined;
function shiftedField(field: StringField | undefined, delta: number): StringField | undefined {
  return field ? { value: field.value, span: shiftedSpan(field.span, delta) } : undefined;
}

/** The field of a span this module moves (read-only elsewhere; see {@link MovableNode}). */
interface MovableSpan {
  offset: number;
}

function shiftFieldInPlace(field: StringField | undefined, delta: number): void {
  if (!field) return;
  const span: MovableSpan = field.span;
  span.offset += delta;
}

/**
 * Moves a step behind the edit by `delta`, in place: its tree nodes were already shifted, and its
 * fields' spans move here. Allocating a new model per step behind the edit made every keystroke
 * leave thousands of objects that lived exactly one edit, which the collector had already promoted
 * to the old generation: memory grew with every edit until a full collection (issue 13). In place
 * is safe because the previous analysis is consumed, and because every span of a step model is
 * its own object (readStep makes each with spanOf), so none is moved twice. Problems are moved
 * before the steps, from their own copies.
 */
function shiftStepInPlace(step: StepModel, delta: number): void {
  shiftFieldInPlace(step.id, delta);
  shiftFieldInPlace(step.effect, delta);
  if (step.mcp) {
    shiftFieldInPlace(step.mcp.toolName, delta);
    shiftFieldInPlace(step.mcp.expectedSchemaHash, delta);
    shiftFieldInPlace(step.mcp.server, delta);
  }
  for (const channel of step.channels) {
    shiftFieldInPlace(channel.name, delta);
    shiftFieldInPlace(channel.target, delta);
  }
}

/** A problem behind the edit, moved; a duplicate key's `firstOffset` moves with it when behind too. */
function shiftedProblem(found: Problem, delta: number, editEnd: number): Problem {
  const firstOffset = found.data?.['firstOffset'];
  const data = typeof firstOffset === 'number' && firstOffset >= editEnd ? { ...found.data, firstOffset: firstOffset + delta } : found.data;
  return { ...found, span: shiftedSpan(found.span, delta), ...(data ? { data } : {}) };
}
