/**
 * Re-analysis after an edit (core/documents/incremental.ts) against the whole-file analysis.
 *
 * The property: for a random blueprint and a random edit, `reanalyzeBlueprint` either declines
 * (returns undefined, and the caller analyses the whole file) or returns exactly what
 * `analyzeBlueprint` returns for the edited text: the same step models with the same spans, the
 * same parse tree (every node's type, offset, length and value) and the same problems in the same
 * order. Edits are of two sorts: inside a string or number of one step (the common keystroke:
 * what the fast path is for), and anywhere at all (where declining is the usual right answer).
 * The test also counts how often the fast path was taken, so that a re-analysis that always
 * declines fails instead of passing vacuously.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { analyzeBlueprint, type BlueprintAnalysis } from '../../server/src/core/documents/blueprint';
import { changedRegion, reanalyzeBlueprint } from '../../server/src/core/documents/incremental';
import type { JsonNode } from '../../server/src/core/json/jsonDocument';

const RUNS = 400;
const PINS = ['fnv1a64:0123456789abcdef', 'fnv1a64:0123456789ABCDEF', 'fnv1a64:12', 'sha256:00', ''];

interface StepSpec {
  readonly id: string;
  readonly effect: string;
  readonly tool: string;
  readonly pin: string;
  readonly channel: string | undefined;
  readonly argument: string;
  readonly comment: boolean;
  readonly extraKey: boolean;
}

const stepSpec: fc.Arbitrary<StepSpec> = fc.record({
  id: fc.constantFrom('a', 'b', 'c', 'step-1', 'repair'),
  effect: fc.constantFrom('mcp.invoke', 'mcp.invoke', 'notify.owner'),
  tool: fc.constantFrom('echo', 'add', 'search_files'),
  pin: fc.constantFrom(...PINS),
  channel: fc.option(fc.constantFrom('schemaDrift:repair', 'toolNotFound:nowhere', 'bogus:a'), { nil: undefined }),
  argument: fc.constantFrom('hello', 'Bearer abcdefghijklmnopqrstuvwxyz0123', '{{event.subject}}', '{"$secret": "x"}'),
  comment: fc.boolean(),
  extraKey: fc.boolean(),
});

function stepText(step: StepSpec): string {
  const argument = step.argument.startsWith('{') ? step.argument : JSON.stringify(step.argument);
  const input = `{ "toolName": ${JSON.stringify(step.tool)}${step.pin ? `, "expectedSchemaHash": ${JSON.stringify(step.pin)}` : ''}, "arguments": { "text": ${argument}, "count": 3 } }`;
  const channel = step.channel ? `, "on": { ${JSON.stringify(step.channel.split(':')[0])}: ${JSON.stringify(step.channel.split(':')[1])} }` : '';
  return `{ ${step.comment ? '/* step */ ' : ''}"id": ${JSON.stringify(step.id)}, "effect": ${JSON.stringify(step.effect)}, "input": ${input}${channel}${step.extraKey ? ', "colour": 1' : ''} }`;
}

function blueprintText(steps: readonly StepSpec[], trailer: boolean): string {
  return `{\n  // generated\n  "blueprint": "b",\n  "formatVersion": 1,\n  "steps": [\n    ${steps.map(stepText).join(',\n    ')}\n  ]${trailer ? ',\n  "description": "after the steps"' : ''}\n}\n`;
}

/** A comparable picture of a parse tree: every node's type, offset, length, colon and value. */
function treePicture(node: JsonNode | undefined): unknown {
  if (!node) return undefined;
  return [node.type, node.offset, node.length, node.colonOffset, node.children ? node.children.map(treePicture) : node.value];
}

function rootOf(analysis: BlueprintAnalysis): JsonNode | undefined {
  let node = analysis.model.steps[0]?.node;
  while (node?.parent) node = node.parent;
  return node;
}

/** The model without its tree references, which `treePicture` compares instead. */
function modelPicture(analysis: BlueprintAnalysis): unknown {
  return {
    name: analysis.model.name,
    steps: analysis.model.steps.map((step) => ({
      index: step.index,
      node: [step.node.offset, step.node.length],
      id: step.id,
      effect: step.effect,
      mcp: step.mcp && { ...step.mcp, argumentsNode: step.mcp.argumentsNode && [step.mcp.argumentsNode.offset, step.mcp.argumentsNode.length] },
      channels: step.channels,
    })),
  };
}

/** Offsets inside string and number tokens of the steps array: where keystrokes usually land. */
function valueOffsets(text: string): number[] {
  const start = text.indexOf('"steps"');
  const offsets: number[] = [];
  let inString = false;
  for (let offset = start + 8; offset < text.length; offset++) {
    const char = text[offset]!;
    if (inString) {
      if (char === '\\') offset++;
      else if (char === '"') inString = false;
      else offsets.push(offset);
    } else if (char === '"') inString = true;
    else if (char >= '0' && char <= '9') offsets.push(offset);
  }
  return offsets;
}

const replacement = fc.string({ unit: fc.constantFrom('a', 'f', '0', '9', 'Z', ' ', '-', '"', '{', '}', ',', ':', '/', '*', '\\', '\n'), maxLength: 4 });

describe('re-analysis after an edit', () => {
  test('agrees with the whole-file analysis, or declines', () => {
    let taken = 0;
    let takenWithShift = 0;
    fc.assert(
      fc.property(
        fc.array(stepSpec, { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.boolean(),
        fc.nat(),
        fc.nat({ max: 3 }),
        replacement,
        (steps, trailer, inValue, where, removed, inserted) => {
          const before = blueprintText(steps, trailer);
          const candidates = inValue ? valueOffsets(before) : [];
          const offset = candidates.length > 0 ? candidates[where % candidates.length]! : where % before.length;
          const after = before.slice(0, offset) + (inValue ? inserted.replace(/["\\\n]/g, 'x') : inserted) + before.slice(Math.min(before.length, offset + removed));
          const previous = analyzeBlueprint(before);
          const expected = analyzeBlueprint(after);
          const actual = reanalyzeBlueprint(before, analyzeBlueprint(before), after);
          if (!actual) return;
          if (actual !== previous) taken++;
          if (after.length !== before.length) takenWithShift++;
          assert.deepStrictEqual(modelPicture(actual), modelPicture(expected));
          assert.deepStrictEqual(treePicture(rootOf(actual)), treePicture(rootOf(expected)));
          assert.deepStrictEqual(actual.problems, expected.problems);
        },
      ),
      { numRuns: RUNS },
    );
    // The fast path must actually be exercised, including edits that move what follows.
    assert.ok(taken >= RUNS / 8, `the fast path was taken only ${taken} times in ${RUNS} runs`);
    assert.ok(takenWithShift >= RUNS / 20, `an edit that changes the length took the fast path only ${takenWithShift} times`);
  });

  test('the changed region of long texts equals a character-by-character scan', () => {
    const naive = (a: string, b: string): ReturnType<typeof changedRegion> => {
      if (a === b) return undefined;
      let start = 0;
      while (start < Math.min(a.length, b.length) && a[start] === b[start]) start++;
      let suffix = 0;
      while (suffix < Math.min(a.length, b.length) - start && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
      return { start, previousEnd: a.length - suffix, nextEnd: b.length - suffix };
    };
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b'), minLength: 1, maxLength: 40 }), fc.nat({ max: 3000 }), fc.nat(), fc.nat({ max: 5 }), fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 5 }), (unit, repeat, where, removed, inserted) => {
        const before = unit.repeat(repeat + 1);
        const offset = where % before.length;
        const after = before.slice(0, offset) + inserted + before.slice(offset + removed);
        assert.deepStrictEqual(changedRegion(before, after), naive(before, after));
      }),
      { numRuns: 300 },
    );
  });

  test('problems at one offset keep the whole-file order (found by the property: TP200 before TP206)', () => {
    const repeated = (tool: string): StepSpec => ({ id: 'repair', effect: 'mcp.invoke', tool, pin: '', channel: undefined, argument: 'hello', comment: false, extraKey: false });
    const before = blueprintText([repeated('echo'), repeated('add')], false);
    // Breaking the key "toolName" anchors the missing-pin problem (TP206) at the step id, where TP200 is too.
    const at = before.lastIndexOf('"toolName"') + 1;
    const after = `${before.slice(0, at)}x${before.slice(at)}`;
    const actual = reanalyzeBlueprint(before, analyzeBlueprint(before), after);
    assert.ok(actual, 'the edit is inside one step');
    assert.deepStrictEqual(actual.problems, analyzeBlueprint(after).problems);
    assert.deepStrictEqual(actual.problems.filter((found) => found.code === 'TP200' || found.code === 'TP206').map((found) => found.code), ['TP206', 'TP200', 'TP206']);
  });

  test('declines an edit that touches a step boundary or breaks the syntax', () => {
    const text = blueprintText([{ id: 'a', effect: 'mcp.invoke', tool: 'echo', pin: PINS[0]!, channel: undefined, argument: 'hello', comment: false, extraKey: false }], false);
    const open = text.indexOf('{ "id"');
    assert.equal(reanalyzeBlueprint(text, analyzeBlueprint(text), text.slice(0, open) + '[' + text.slice(open + 1)), undefined, 'the opening brace changed');
    const quote = text.indexOf('"echo"');
    assert.equal(reanalyzeBlueprint(text, analyzeBlueprint(text), text.slice(0, quote) + text.slice(quote + 1)), undefined, 'an unbalanced quote');
    const broken = text.replace('"formatVersion": 1', '"formatVersion": 1,,');
    const pin = broken.indexOf('0123456789abcdef');
    assert.equal(reanalyzeBlueprint(broken, analyzeBlueprint(broken), broken.slice(0, pin) + 'f' + broken.slice(pin + 1)), undefined, 'the previous text had a syntax error');
  });

  test('an unchanged text gives the previous analysis back; the changed region is exact', () => {
    const text = blueprintText([{ id: 'a', effect: 'mcp.invoke', tool: 'echo', pin: PINS[0]!, channel: undefined, argument: 'hello', comment: false, extraKey: false }], true);
    const previous = analyzeBlueprint(text);
    assert.equal(reanalyzeBlueprint(text, previous, text), previous);
    assert.deepStrictEqual(changedRegion('abcdef', 'abXYef'), { start: 2, previousEnd: 4, nextEnd: 4 });
    assert.deepStrictEqual(changedRegion('aaaa', 'aaaaa'), { start: 4, previousEnd: 4, nextEnd: 5 });
    assert.deepStrictEqual(changedRegion('abc', 'ac'), { start: 1, previousEnd: 2, nextEnd: 1 });
    assert.equal(changedRegion('same', 'same'), undefined);
  });
});
