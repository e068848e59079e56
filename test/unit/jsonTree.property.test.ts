/**
 * core/json/jsonDocument.ts `parseJsonTree` against jsonc-parser's own `parseTree`.
 *
 * The property: for any text, well formed or not (random JSONC made of a token alphabet, cut
 * anywhere, with stray characters, comments, trailing commas and duplicate keys), both build the
 * same tree: every node's type, offset, length, colon offset, value and children, every child's
 * `parent` pointing at the node that holds it, the root without a parent, and the same errors in
 * the same order. `parseJsonTree` only builds the tree differently (exact-length children,
 * shared strings) to hold less memory; anything it reads otherwise fails here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type Node, type ParseError, type ParseOptions, parseTree } from 'jsonc-parser';
import { MAX_NESTING, parseJsonDocument, parseJsonTree } from '../../server/src/core/json/jsonDocument';

const RUNS = 1500;

/** A comparable picture of a tree, checking every parent link on the way. */
function picture(node: Node | undefined, parent: Node | undefined): unknown {
  if (!node) return undefined;
  assert.equal(node.parent, parent, `the parent of the ${node.type} at ${node.offset}`);
  return {
    type: node.type,
    offset: node.offset,
    length: node.length,
    colonOffset: node.colonOffset,
    value: node.value,
    hasChildren: node.children !== undefined,
    children: node.children?.map((child) => picture(child, node)),
  };
}

function assertSameTree(text: string, options: ParseOptions): void {
  const expectedErrors: ParseError[] = [];
  const actualErrors: ParseError[] = [];
  const expected = parseTree(text, expectedErrors, options);
  const actual = parseJsonTree(text, actualErrors, options);
  assert.deepEqual(picture(actual, undefined), picture(expected, undefined), `tree of ${JSON.stringify(text)}`);
  assert.deepEqual(actualErrors, expectedErrors, `errors of ${JSON.stringify(text)}`);
}

const TOKENS = ['{', '}', '[', ']', ':', ',', '"a"', '"b"', '"a"', '"toolName"', '1', '-2.5e3', 'true', 'false', 'null', ' ', '\n', '// c\n', '/* c */', '"x\\"y"', '"\\u00e9"', '"unterminated', '@', '01', "'s'"];

const jsoncLike = fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((tokens) => tokens.join(''));

/** A well-formed value, so that deep and wide trees (not only broken ones) are covered. */
const wellFormed = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(fc.constantFrom('id', 'effect', 'input', 'toolName', 'k'), tie('value'), { maxKeys: 5 }),
  ),
})).value.map((value) => JSON.stringify(value, null, 1));

const OPTION_SETS: ParseOptions[] = [
  { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true },
  { allowTrailingComma: true, disallowComments: false },
  { disallowComments: true },
];

describe('parseJsonTree builds the tree jsonc-parser parseTree builds', () => {
  test('random token soup, cut anywhere', () => {
    fc.assert(
      fc.property(jsoncLike, fc.nat(), fc.constantFrom(...OPTION_SETS), (text, cut, options) => {
        assertSameTree(text, options);
        assertSameTree(text.slice(0, cut % (text.length + 1)), options);
      }),
      { numRuns: RUNS },
    );
  });

  test('well-formed values, whole and truncated', () => {
    fc.assert(
      fc.property(wellFormed, fc.nat(), (text, cut) => {
        assertSameTree(text, OPTION_SETS[0]!);
        assertSameTree(text.slice(0, cut % (text.length + 1)), OPTION_SETS[0]!);
      }),
      { numRuns: RUNS },
    );
  });

  test('edge cases by hand', () => {
    for (const text of ['', '   ', '{', '[', '{"a"', '{"a":', '{"a":1,', '{"a" 1}', '[1,,2]', '{"a":1}{"b":2}', '1 2', '{"a":{"b":[1,{"c":', '{ "a": 1, "a": 2 }', '// only a comment']) {
      for (const options of OPTION_SETS) assertSameTree(text, options);
    }
  });

  test('nesting: the limit is read while the tree is built, and the problem is where the scan puts it', () => {
    // At the limit: read. One deeper, far deeper (the parser's own recursion gives out), or
    // unbalanced: no tree, and one TP100 on the bracket that passed the limit.
    const atLimit = parseJsonDocument(`${'['.repeat(MAX_NESTING)}${']'.repeat(MAX_NESTING)}`);
    assert.ok(atLimit.root, 'a document at the limit is read');
    assert.deepEqual(atLimit.problems, []);
    const cases: Array<[string, number]> = [
      [`${'['.repeat(MAX_NESTING + 1)}${']'.repeat(MAX_NESTING + 1)}`, MAX_NESTING],
      ['{"a":'.repeat(MAX_NESTING + 1) + '1' + '}'.repeat(MAX_NESTING + 1), MAX_NESTING * 5],
      ['['.repeat(200_000), MAX_NESTING],
      [`// a comment with [[[[ brackets\n${'[{"k":'.repeat(300)}`, 32 + (MAX_NESTING / 2) * 6],
    ];
    for (const [text, offset] of cases) {
      const document = parseJsonDocument(text);
      assert.equal(document.root, undefined, `no tree for ${text.slice(0, 40)}…`);
      assert.deepEqual(
        document.problems.map((found) => [found.code, found.span.offset]),
        [['TP100', offset]],
        `the problem of ${text.slice(0, 40)}…`,
      );
      assert.match(document.problems[0]!.message, /nests deeper than 512 levels/);
    }
  });
});
