/**
 * core/json/wellFormedTree.ts `buildWellFormedTree` held to its header contract directly.
 *
 * The contract: for a text jsonc-parser reads without an error under the given options, the
 * reader returns the tree `parseJsonTree`'s `visit` builder makes (or TOO_DEEP when that builder
 * would, or undefined for a text with no value when empty content is allowed); it may refuse such
 * a text, but it never accepts a text jsonc-parser reads with an error. The properties here:
 * - a text jsonc-parser reports an error in (token soup, and well-formed texts with one character
 *   inserted, deleted or replaced, or cut anywhere) is refused, under every option set;
 * - generated well-formed JSONC (whitespace and comments between every token, trailing commas,
 *   every escape, strings around the lengths the reader treats specially, every number form,
 *   duplicate keys) is accepted, and its tree is the one `parseTree` builds and the one the
 *   `visit` builder builds, field for field and in the same field order;
 * - comments and trailing commas are refused exactly when the options refuse them;
 * - nesting of n levels is read with maxDepth n, and n + 1 levels are TOO_DEEP;
 * - the strings of the tree are copies: a tree of a large text does not keep the text alive; and
 *   equal keys of up to 64 characters are one string, as the visit builder shares them.
 *
 * The `visit` builder is reached through `parseJsonTree` on the text followed by a line break and
 * an `@`: the reader refuses that (an unknown symbol after the value), so `parseJsonTree` builds
 * the tree with `visit`, and the document's value, which ends before the `@`, has the same nodes.
 * For the depth limit the `@` goes before the text instead (see visitBuilderTooDeep).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { createScanner, type Node, ParseErrorCode, type ParseError, type ParseOptions, parseTree, SyntaxKind } from 'jsonc-parser';
import { parseJsonTree } from '../../server/src/core/json/jsonDocument';
import { TOO_DEEP } from '../../server/src/core/json/treeNodes';
import { buildWellFormedTree, NOT_WELL_FORMED } from '../../server/src/core/json/wellFormedTree';

const RUNS = 1500;

const OPTION_SETS: readonly ParseOptions[] = [
  { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true },
  { allowTrailingComma: true, disallowComments: false },
  { disallowComments: true },
  {},
];

/**
 * A comparable picture of a tree, checking every parent link on the way. Numbers are pictured
 * with their sign of zero, since deep equality alone would depend on the assertion's semantics
 * for -0. With `shape`, each node's own keys in order and whether it is a PropertyNode are
 * pictured too: the reader must make the visit builder's nodes, not only equal values (parseTree's
 * nodes have other fields, so that picture is compared without it).
 */
function picture(node: Node | undefined, parent: Node | undefined, shape: boolean): unknown {
  if (!node) return undefined;
  assert.equal(node.parent, parent, `the parent of the ${node.type} at ${node.offset}`);
  const value: unknown = node.value;
  return {
    type: node.type,
    offset: node.offset,
    length: node.length,
    colonOffset: node.colonOffset,
    value,
    negativeZero: Object.is(value, -0),
    hasChildren: node.children !== undefined,
    children: node.children?.map((child) => picture(child, node, shape)),
    ...(shape ? { keys: Object.keys(node).join(','), className: node.constructor.name } : {}),
  };
}

type ReaderResult = ReturnType<typeof buildWellFormedTree>;

/** Whether the reader returned a tree or "no value" (it accepted the text). */
function accepted(result: ReaderResult): result is Node | undefined {
  return result !== NOT_WELL_FORMED && result !== TOO_DEEP;
}

/** jsonc-parser's `parseTree` of a text with the errors it reports. */
function oracle(text: string, options: ParseOptions): { tree: Node | undefined; errors: ParseError[] } {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, options);
  return { tree, errors };
}

/**
 * The tree the `visit` builder of `parseJsonTree` makes of a text (see the header: the appended
 * `@` makes the reader refuse, so `visit` builds it).
 */
function visitBuilderTree(text: string, options: ParseOptions): Node | undefined | typeof TOO_DEEP {
  const wrapped = `${text}\n@`;
  assert.equal(buildWellFormedTree(wrapped, options, Number.POSITIVE_INFINITY), NOT_WELL_FORMED, 'the reader refuses the text with an @ after it');
  return parseJsonTree(wrapped, [], options);
}

/**
 * Whether the `visit` builder finds a text nested deeper than `maxDepth`. The `@` goes before the
 * text here, so that the reader refuses it before it counts a level (after the text, the reader
 * could meet the limit first and answer itself); `visit` skips it and reads the same tokens.
 */
function visitBuilderTooDeep(text: string, options: ParseOptions, maxDepth: number): boolean {
  const wrapped = `@\n${text}`;
  assert.equal(buildWellFormedTree(wrapped, options, maxDepth), NOT_WELL_FORMED, 'the reader refuses the text with an @ before it');
  return parseJsonTree(wrapped, [], options, maxDepth) === TOO_DEEP;
}

/** Asserts that a text jsonc-parser reads without error is accepted, with the tree of both builders. */
function assertAcceptedAndAgrees(text: string, options: ParseOptions): Node | undefined {
  const expected = oracle(text, options);
  assert.deepEqual(expected.errors, [], `the generator made a text jsonc-parser reads with errors: ${JSON.stringify(text)}`);
  const actual = buildWellFormedTree(text, options, Number.POSITIVE_INFINITY);
  assert.ok(accepted(actual), `the reader refused ${JSON.stringify(text)} under ${JSON.stringify(options)}`);
  assertSameAsOracle(text, options, actual, expected.tree);
  return actual;
}

/** Asserts the reader's tree is parseTree's and the visit builder's. */
function assertSameAsOracle(text: string, options: ParseOptions, actual: Node | undefined, expected: Node | undefined): void {
  assert.deepEqual(picture(actual, undefined, false), picture(expected, undefined, false), `parseTree's tree of ${JSON.stringify(text)}`);
  const visited = visitBuilderTree(text, options);
  assert.notEqual(visited, TOO_DEEP);
  assert.deepEqual(picture(actual, undefined, true), picture(visited as Node | undefined, undefined, true), `the visit builder's tree of ${JSON.stringify(text)}`);
}

// ---------------------------------------------------------------------------------------------
// Well-formed JSONC, generated token by token.

/** What a generated text may contain: only what the options it is read with allow. */
interface Features {
  readonly comments: boolean;
  readonly trailingCommas: boolean;
  readonly emptyContent: boolean;
}

function featuresOf(options: ParseOptions): Features {
  return { comments: !options.disallowComments, trailingCommas: options.allowTrailingComma === true, emptyContent: options.allowEmptyContent === true };
}

const join = (parts: readonly string[]): string => parts.join('');

const whitespace = fc.constantFrom(' ', '\t', '\n', '\r', '\r\n', '    ', '\n\t', '\r\r\n');

/** The text of a line comment: anything but a line break, including comment and string syntax. */
const lineCommentText = fc.array(fc.constantFrom('a', ' ', '\t', '*', '/', '//', '/*', '*/', '"', '{', ']', '\\', 'é', '😀', '\u2028'), { maxLength: 6 }).map(join);

/** A line comment ending at a line feed, a carriage return or CRLF (one ending at the end of the text is {@link finalTrivia}'s). */
const lineComment = fc.tuple(lineCommentText, fc.constantFrom('\n', '\r', '\r\n')).map(([body, end]) => `//${body}${end}`);

/**
 * A block comment: stars, slashes, `//`, `/*`, line breaks and quotes inside, a slash right after
 * the opening (which must not close it), never a `*` and `/` that would close it early.
 */
const blockComment = fc
  .array(fc.constantFrom('a', ' ', '*', '/', '//', '/*', '**', '\n', '\r', '\r\n', '"', '{', '\\'), { maxLength: 8 })
  .map((parts) => {
    let body = join(parts);
    while (body.includes('*/')) body = body.replace('*/', '* /');
    return `/*${body}*/`;
  });

/** What may stand between two tokens: often nothing, else whitespace and (when allowed) comments. */
function triviaOf(features: Features): fc.Arbitrary<string> {
  const piece = features.comments ? fc.oneof(whitespace, lineComment, blockComment) : whitespace;
  return fc.oneof(fc.constant(''), fc.array(piece, { minLength: 1, maxLength: 3 }).map(join));
}

/** The trivia after the value, which may end with a line comment at the end of the text. */
function finalTrivia(features: Features): fc.Arbitrary<string> {
  const trivia = triviaOf(features);
  if (!features.comments) return trivia;
  return fc.tuple(trivia, fc.option(lineCommentText.map((body) => `//${body}`), { nil: '' })).map(join);
}

const HEX_DIGITS = [...'0123456789abcdefABCDEF'];

/** One character or escape of a string's text, as it stands between the quotes. */
const stringPiece = fc.oneof(
  fc.constantFrom('a', 'Z', '0', ' ', '/', '*', '{', '}', '[', ']', ':', ',', "'", '\u007f', 'é', 'ß', '中', '😀', '\u2028', '\u00a0', '\ufeff', '\ud800', '\udfff'),
  fc.constantFrom('\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u00e9', '\\u00E9', '\\ud800', '\\uDFFF', '\\uD83D\\uDE00', '\\u0000', '\\u001f', '\\u0022', '\\u005C'),
  fc.array(fc.constantFrom(...HEX_DIGITS), { minLength: 4, maxLength: 4 }).map((digits) => `\\u${join(digits)}`),
);

/** A run of plain characters of exactly `length` (one- and two-byte), for the lengths the reader treats specially. */
const plainRun = (min: number, max: number): fc.Arbitrary<string> =>
  fc.integer({ min, max }).chain((length) => fc.array(fc.constantFrom('a', 'b', 'z', ' ', '/', 'é', '中'), { minLength: length, maxLength: length }).map(join));

/**
 * A string's text between its quotes. The reader copies a string when its text is 13 characters
 * or more and shares keys up to 64 characters, so lengths around 12-14 and 64, and longer, are
 * generated on purpose, with and without escapes.
 */
const stringBody = fc.oneof(
  fc.array(stringPiece, { maxLength: 6 }).map(join),
  plainRun(11, 15),
  plainRun(62, 67),
  plainRun(65, 200),
  fc.tuple(plainRun(9, 14), fc.array(stringPiece, { minLength: 1, maxLength: 3 })).map(([run, pieces]) => run + join(pieces)),
  fc.array(stringPiece, { minLength: 20, maxLength: 80 }).map(join),
);

const stringLiteral = stringBody.map((body) => `"${body}"`);

/** Keys: a few that repeat (duplicates, and `id` spelled with escapes), or any string. */
const keyLiteral = fc.oneof(fc.constantFrom('"id"', '"a"', '"toolName"', '"\\u0069d"', '"i\\u0064"', '""', '"a-key-of-13ch"'), stringLiteral);

const digitRun = (minLength: number, maxLength: number): fc.Arbitrary<string> => fc.array(fc.constantFrom(...'0123456789'), { minLength, maxLength }).map(join);

/** Every JSON number form: sign, zero or digits, fraction, exponent with e/E and an optional sign. */
const numberLiteral = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digitRun(0, 25)).map(join)),
      fc.option(digitRun(1, 5).map((digits) => `.${digits}`), { nil: '' }),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digitRun(1, 4)).map(join), { nil: '' }),
    )
    .map(join),
  fc.constantFrom('-0', '0', '-0.0', '0.5', '1e5', '1E+5', '-1.25e-3', '1e400', '-1e400', '1e-400', '0e0', '9007199254740993', '123456789012345678901234567890'),
);

const scalarLiteral = fc.oneof(stringLiteral, numberLiteral, fc.constantFrom('true', 'false', 'null'));

/**
 * A well-formed value with trivia between all of its tokens: mostly an object or an array (as a
 * real document's root is), whose members are values of any kind.
 */
function valueOf(features: Features): fc.Arbitrary<string> {
  const trivia = triviaOf(features);
  const trailingComma = features.trailingCommas ? fc.option(trivia.map((after) => `,${after}`), { nil: '' }) : fc.constant('');
  const tree = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', maxDepth: 5 }, scalarLiteral, tie('array'), tie('object')),
    array: fc
      .tuple(trivia, fc.array(fc.tuple(tie('value'), trivia, trivia), { maxLength: 5 }), trailingComma)
      .map(([inner, items, trailing]) =>
        items.length === 0 ? `[${inner}]` : `[${inner}${items.map(([item, after, next], index) => (index === 0 ? '' : next) + item + after).join(',')}${trailing}]`,
      ),
    object: fc
      .tuple(trivia, fc.array(fc.tuple(keyLiteral, trivia, trivia, tie('value'), trivia, trivia), { maxLength: 5 }), trailingComma)
      .map(([inner, members, trailing]) =>
        members.length === 0
          ? `{${inner}}`
          : `{${inner}${members.map(([key, beforeColon, afterColon, value, after, next], index) => `${index === 0 ? '' : next}${key}${beforeColon}:${afterColon}${value}${after}`).join(',')}${trailing}}`,
      ),
  }));
  return fc.oneof({ weight: 1, arbitrary: tree.value }, { weight: 2, arbitrary: tree.array }, { weight: 2, arbitrary: tree.object });
}

/** A whole document with a value: trivia, the value, trivia. */
function documentOf(features: Features): fc.Arbitrary<string> {
  return fc.tuple(triviaOf(features), valueOf(features), finalTrivia(features)).map(join);
}

/** A document without a value: nothing, whitespace, or (when allowed) comments only. */
function emptyDocumentOf(features: Features): fc.Arbitrary<string> {
  return fc.tuple(triviaOf(features), finalTrivia(features)).map(join);
}

/** A generated well-formed text and the options it is read with (which allow all it contains). */
const wellFormedCase = fc.constantFrom(...OPTION_SETS).chain((options) => {
  const features = featuresOf(options);
  const text = features.emptyContent ? fc.oneof({ weight: 9, arbitrary: documentOf(features) }, { weight: 1, arbitrary: emptyDocumentOf(features) }) : documentOf(features);
  return text.map((generated) => ({ text: generated, options }));
});

// ---------------------------------------------------------------------------------------------
// Texts that are mostly not well formed.

const SOUP_TOKENS = [
  '{', '}', '[', ']', ':', ',', '"a"', '"b"', '"toolName"', '1', '-2.5e3', '0', 'true', 'false', 'null', ' ', '\t', '\n', '\r', '// c\n', '/* c */',
  '"x\\"y"', '"\\u00e9"', '"a-string-longer-than-13"', '"unterminated', '@', '01', '-', '1.', '1e', '.5', '+1', "'s'", 'tru', 'nul', 'truex', 'True',
  '"\\x"', '"\\u12"', '"\\u123x"', '"\\u00E"', '"a\nb"', '"\t"', '/', '/*', '*/', '//', '\v', '\f', '\u00a0', '\ufeff', '\u2028', 'NaN', 'Infinity', '0x1',
];

const tokenSoup = fc.array(fc.constantFrom(...SOUP_TOKENS), { maxLength: 40 }).map(join);

/** Characters a mutation puts in: JSON's punctuation, escapes, near-whitespace, controls, digits, letters, any UTF-16 unit. */
const mutationCharacter = fc.oneof(
  fc.constantFrom(...'{}[]:,"\\/*\n\r\t -+.0123456789eEtfnux', '\v', '\f', '\u0000', '\u001f', '\u007f', '\u00a0', '\ufeff', '\u2028', '\ud800'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

/** A well-formed text (any features) with one character inserted, deleted or replaced, or cut. */
const mutatedText = fc
  .tuple(documentOf({ comments: true, trailingCommas: true, emptyContent: false }), fc.nat(), fc.constantFrom('insert', 'delete', 'replace', 'cut'), mutationCharacter)
  .map(([text, at, kind, character]) => {
    const index = at % (text.length + 1);
    switch (kind) {
      case 'insert':
        return text.slice(0, index) + character + text.slice(index);
      case 'delete':
        return text.slice(0, index) + text.slice(index + 1);
      case 'replace':
        return text.slice(0, index) + character + text.slice(index + 1);
      default:
        return text.slice(0, index);
    }
  });

/**
 * The first property for one text: under every option set, a text jsonc-parser reports an error in
 * is refused; a text it reads without error is either refused or read into the oracle's tree. With
 * a small depth limit, an erroring text is refused or TOO_DEEP, and TOO_DEEP only when the visit
 * builder finds it too deep as well.
 */
function assertNeverAcceptsAnError(text: string, maxDepth: number): void {
  for (const options of OPTION_SETS) {
    const expected = oracle(text, options);
    const actual = buildWellFormedTree(text, options, Number.POSITIVE_INFINITY);
    if (expected.errors.length > 0) {
      assert.equal(actual, NOT_WELL_FORMED, `the reader accepted ${JSON.stringify(text)} under ${JSON.stringify(options)}; jsonc-parser reports ${JSON.stringify(expected.errors)}`);
      const limited = buildWellFormedTree(text, options, maxDepth);
      if (limited === TOO_DEEP) assert.ok(visitBuilderTooDeep(text, options, maxDepth), `the visit builder does not find ${JSON.stringify(text)} deeper than ${maxDepth}`);
      else assert.equal(limited, NOT_WELL_FORMED, `the reader accepted ${JSON.stringify(text)} at depth ${maxDepth}`);
    } else {
      assert.notEqual(actual, TOO_DEEP, 'no limit, no TOO_DEEP');
      if (accepted(actual)) assertSameAsOracle(text, options, actual, expected.tree);
    }
  }
}

/** The offsets where a (non-trivia) token of a text starts, and its end: where a comment can go in. */
function tokenBoundaries(text: string): number[] {
  const scanner = createScanner(text, true);
  const boundaries: number[] = [];
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) boundaries.push(scanner.getTokenOffset());
  boundaries.push(text.length);
  return boundaries;
}

/** Every object and array of a tree with at least one child. */
function nonEmptyContainers(node: Node | undefined, found: Node[] = []): Node[] {
  if (!node) return found;
  if ((node.type === 'object' || node.type === 'array') && (node.children?.length ?? 0) > 0) found.push(node);
  for (const child of node.children ?? []) nonEmptyContainers(child, found);
  return found;
}

describe('buildWellFormedTree never accepts a text jsonc-parser reports an error in', () => {
  test('token soup, cut anywhere', () => {
    fc.assert(
      fc.property(tokenSoup, fc.nat(), fc.integer({ min: 0, max: 4 }), (text, cut, maxDepth) => {
        assertNeverAcceptsAnError(text, maxDepth);
        assertNeverAcceptsAnError(text.slice(0, cut % (text.length + 1)), maxDepth);
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });

  test('well-formed texts with a character inserted, deleted or replaced, or cut anywhere', () => {
    fc.assert(
      fc.property(mutatedText, fc.integer({ min: 0, max: 4 }), (text, maxDepth) => assertNeverAcceptsAnError(text, maxDepth)),
      { numRuns: RUNS * 2, includeErrorInReport: true },
    );
  });

  test('edge cases by hand', () => {
    const texts = ['', ' ', '\v1', '1\v', '\ufeff{}', '/', '/*', '/*/', '/**', '[1,]', '{"a":1,}', '[,]', '{,}', '[1 2]', '{"a" 1}', '{"a":}', '{"a"}', '{1:2}', '"\\', '"\\u00"', '"\\u00g0"', '"\\u000g"', '"\\u000"', '"a\u0001"', '"\u007f"', '-', '-01', '1.', '1.e5', '1e', '1e+', '.5', '1x', '1-', 'truex', 'nul', '[true false]', '1 2', '{} //', '{} /* ', '// c\n', '\r'];
    for (const text of texts) assertNeverAcceptsAnError(text, 1);
  });
});

describe('buildWellFormedTree accepts well-formed JSONC and builds the tree of both builders', () => {
  test('generated documents under every option set', () => {
    fc.assert(
      fc.property(wellFormedCase, ({ text, options }) => {
        assertAcceptedAndAgrees(text, options);
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });

  test('every form and length by hand', () => {
    const texts = [
      '-0', '[-0, 0, -0.0, 0.5, 1e5, 1E+5, -1.25e-3, 1e400, -1e400, 1e-400, 9007199254740993]', 'true', 'false', 'null', '""', '"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u00E9\\ud800\\uDFFF"',
      `"${'a'.repeat(12)}"`, `"${'a'.repeat(13)}"`, `"${'a'.repeat(14)}"`, `{"${'k'.repeat(64)}": 1, "${'k'.repeat(65)}": 2, "${'k'.repeat(64)}": 3}`,
      '{"id":1,"id":2,"\\u0069d":3}', '[1,2,]', '{"a":1,}', '{ // c\r"a" /* * / // */ : [ ] }\r\n', '[] // at the end', '"😀\ud800中"',
    ];
    for (const text of texts) assertAcceptedAndAgrees(text, OPTION_SETS[0]!);
  });

  test('a text without a value is undefined when empty content is allowed, and refused when it is not', () => {
    const withoutValue = fc.constantFrom(...OPTION_SETS).chain((options) => emptyDocumentOf(featuresOf(options)).map((text) => ({ text, options })));
    fc.assert(
      fc.property(withoutValue, ({ text, options }) => {
        const expected = oracle(text, options);
        const actual = buildWellFormedTree(text, options, Number.POSITIVE_INFINITY);
        assert.equal(expected.tree, undefined);
        if (options.allowEmptyContent) {
          assert.deepEqual(expected.errors, [], `jsonc-parser reads ${JSON.stringify(text)} without a value and without error`);
          assert.equal(actual, undefined, `no value in ${JSON.stringify(text)}`);
        } else {
          assert.deepEqual(
            expected.errors.map((error) => error.error),
            [ParseErrorCode.ValueExpected],
          );
          assert.equal(actual, NOT_WELL_FORMED, `the reader accepted ${JSON.stringify(text)} without allowEmptyContent`);
        }
      }),
      { numRuns: RUNS / 3, includeErrorInReport: true },
    );
    assert.equal(buildWellFormedTree('', OPTION_SETS[0]!, Number.POSITIVE_INFINITY), undefined);
    assert.equal(buildWellFormedTree('// only a comment', OPTION_SETS[0]!, Number.POSITIVE_INFINITY), undefined);
    assert.equal(buildWellFormedTree('', {}, Number.POSITIVE_INFINITY), NOT_WELL_FORMED);
    assert.equal(buildWellFormedTree('/* only */', OPTION_SETS[1]!, Number.POSITIVE_INFINITY), NOT_WELL_FORMED);
  });
});

describe('buildWellFormedTree honours the options', () => {
  const comment = fc.oneof(lineComment, blockComment);

  test('a comment is refused with disallowComments and read without it', () => {
    const withComment = fc
      .tuple(documentOf({ comments: false, trailingCommas: false, emptyContent: false }), fc.nat(), comment)
      .map(([text, at, inserted]) => {
        const boundaries = tokenBoundaries(text);
        const offset = boundaries[at % boundaries.length]!;
        return text.slice(0, offset) + inserted + text.slice(offset);
      });
    fc.assert(
      fc.property(withComment, (text) => {
        const refused = oracle(text, { disallowComments: true });
        assert.ok(
          refused.errors.some((error) => error.error === ParseErrorCode.InvalidCommentToken),
          `jsonc-parser reports the comment in ${JSON.stringify(text)}`,
        );
        assert.equal(buildWellFormedTree(text, { disallowComments: true }, Number.POSITIVE_INFINITY), NOT_WELL_FORMED, `the comment in ${JSON.stringify(text)}`);
        assertAcceptedAndAgrees(text, {});
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });

  test('a trailing comma is refused without allowTrailingComma and read with it', () => {
    const withTrailingComma = fc
      .tuple(valueOf({ comments: true, trailingCommas: false, emptyContent: false }), fc.nat(), triviaOf({ comments: true, trailingCommas: false, emptyContent: false }))
      .map(([value, at, after]) => {
        // Wrapped, so that there is always a container with a child to put the comma after.
        const text = `[${value}\n]`;
        const containers = nonEmptyContainers(oracle(text, {}).tree);
        const container = containers[at % containers.length]!;
        const last = container.children![container.children!.length - 1]!;
        const end = last.offset + last.length;
        return text.slice(0, end) + ',' + after + text.slice(end);
      });
    fc.assert(
      fc.property(withTrailingComma, (text) => {
        const refused = oracle(text, {});
        assert.ok(refused.errors.length > 0, `jsonc-parser reports the trailing comma in ${JSON.stringify(text)}`);
        assert.equal(buildWellFormedTree(text, {}, Number.POSITIVE_INFINITY), NOT_WELL_FORMED, `the trailing comma in ${JSON.stringify(text)}`);
        assertAcceptedAndAgrees(text, { allowTrailingComma: true });
      }),
      { numRuns: RUNS, includeErrorInReport: true },
    );
  });
});

describe('buildWellFormedTree limits the nesting', () => {
  test('n levels are read with maxDepth n, and n + 1 are TOO_DEEP, as in the visit builder', () => {
    const features: Features = { comments: true, trailingCommas: true, emptyContent: false };
    const trivia = triviaOf(features);
    // Each level is an array or an object, with a scalar before the nested value or not.
    const level = fc.tuple(fc.boolean(), fc.option(scalarLiteral, { nil: undefined }), keyLiteral, trivia, trivia);
    const nested = fc.tuple(fc.array(level, { maxLength: 40 }), scalarLiteral).map(([levels, innermost]) =>
      levels.reduceRight(
        (inside, [isArray, sibling, key, before, after]) =>
          isArray ? `[${before}${sibling === undefined ? '' : `${sibling},`}${inside}${after}]` : `{${before}${sibling === undefined ? '' : `"s":${sibling},`}${key}:${inside}${after}}`,
        innermost,
      ),
    );
    fc.assert(
      fc.property(nested, (text) => {
        const options = OPTION_SETS[1]!;
        let depth = 0;
        for (const token of tokenKinds(text)) if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) depth++;
        const read = buildWellFormedTree(text, options, depth);
        assert.ok(accepted(read), `${JSON.stringify(text)} nests ${depth} levels and is read at ${depth}`);
        assertSameAsOracle(text, options, read, oracle(text, options).tree);
        if (depth > 0) {
          assert.equal(buildWellFormedTree(text, options, depth - 1), TOO_DEEP, `${JSON.stringify(text)} nests ${depth} levels, more than ${depth - 1}`);
          assert.ok(visitBuilderTooDeep(text, options, depth - 1), 'and the visit builder finds it too deep');
          assert.ok(!visitBuilderTooDeep(text, options, depth), 'the visit builder reads it at its depth');
        }
      }),
      { numRuns: RUNS / 3, includeErrorInReport: true },
    );
  });

  test('at and past 512 levels, and far past the stack, by hand', () => {
    const arrays = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
    assert.ok(accepted(buildWellFormedTree(arrays(512), {}, 512)));
    assert.equal(buildWellFormedTree(arrays(513), {}, 512), TOO_DEEP);
    assert.equal(buildWellFormedTree('{"a":'.repeat(513) + '1' + '}'.repeat(513), {}, 512), TOO_DEEP);
    // Far deeper than the reader's recursion can go without a limit: it refuses (and `visit`
    // decides), it does not throw.
    assert.equal(buildWellFormedTree(arrays(200_000), {}, Number.POSITIVE_INFINITY), NOT_WELL_FORMED);
  });
});

/** The tokens jsonc-parser's scanner reads in a text, trivia skipped. */
function tokenKinds(text: string): SyntaxKind[] {
  const scanner = createScanner(text, true);
  const kinds: SyntaxKind[] = [];
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) kinds.push(token);
  return kinds;
}

/** The compiled reader, for the scripts run in a fresh process. */
const READER = path.resolve(__dirname, '..', '..', 'server', 'src', 'core', 'json', 'wellFormedTree.js');

/**
 * Runs a script in a fresh process with --expose-gc (as test/unit/liveWorkspaceOpen.test.ts
 * does) and returns the numbers it writes as one JSON object, each of `names` checked present.
 */
function measuredInFreshProcess<Name extends string>(script: string, names: readonly Name[]): Record<Name, number> {
  const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const measured: unknown = JSON.parse(run.stdout);
  assert.ok(typeof measured === 'object' && measured !== null, run.stdout);
  const numbers = {} as Record<Name, number>;
  for (const name of names) {
    const value: unknown = (measured as Record<string, unknown>)[name];
    assert.ok(typeof value === 'number', `${name} in ${run.stdout}`);
    numbers[name] = value;
  }
  return numbers;
}

describe('buildWellFormedTree copies the strings it keeps and shares its keys', () => {
  test('a tree of a large text does not hold the text', (t) => {
    // In a fresh process with --expose-gc: the heap a tree holds after its text is dropped. The
    // text is ~5 MB of one-byte characters, mostly a comment after every member, so the strings
    // the tree holds (values of 20-300 characters, with and without escapes, and keys of 13-100)
    // are a small part of it: if any of them were a view of the text (V8's substrings of 13
    // characters or more are), the whole text would stay alive. A control in the same process
    // holds one 20-character substring of an equal text and must hold the text: that shows the
    // measure sees a retained text.
    const script = `
      const { buildWellFormedTree } = require(${JSON.stringify(READER)});
      const makeText = (salt) => {
        const members = [];
        for (let index = 0; index < 1000; index++) {
          const value = (salt + index + 'v').padEnd(20 + (index % 280), 'x') + (index % 2 === 0 ? '\\\\n' : '');
          const key = (salt + 'k' + index).padEnd(13 + (index % 88), 'k');
          members.push('"' + key + '": "' + value + '" /*' + ' '.repeat(5000) + '*/');
        }
        return '{' + members.join(',\\n') + '}';
      };
      const held = (keep) => {
        gc();
        const before = process.memoryUsage().heapUsed;
        let text = makeText(String(Math.random()));
        const textLength = text.length;
        const kept = keep(text);
        text = undefined;
        gc();
        const bytes = process.memoryUsage().heapUsed - before;
        return { bytes, textLength, kept };
      };
      const tree = held((text) => {
        const built = buildWellFormedTree(text, {}, Infinity);
        if (typeof built !== 'object' || built.children.length !== 1000) throw new Error('not read');
        return built;
      });
      const control = held((text) => text.substring(1, 21));
      const values = tree.kept.children.reduce((sum, property) => sum + property.keyText.length + property.valueNode.value.length, 0);
      process.stdout.write(JSON.stringify({ tree: tree.bytes, control: control.bytes, textLength: tree.textLength, values }));
    `;
    const { tree, control, textLength, values } = measuredInFreshProcess(script, ['tree', 'control', 'textLength', 'values']);
    t.diagnostic(`text ${textLength} bytes; held after it was dropped: tree ${tree} bytes (keys and values ${values} characters), control ${control} bytes`);
    assert.ok(textLength > 5_000_000, `the text is ${textLength} characters`);
    assert.ok(control > textLength * 0.9, `the control holds ${control} bytes: a view keeps a ${textLength}-byte text`);
    assert.ok(tree < textLength / 4, `the tree holds ${tree} bytes after its ${textLength}-byte text was dropped (its keys and values: ${values} characters)`);
  });

  test('equal keys of up to 64 characters are one string in a tree', (t) => {
    // As in the visit builder, a key is shared within a read when it is 64 characters or fewer
    // (core/json/treeNodes.ts SHARED_STRING_LENGTH). Two texts of 20,000 objects with a key of 40
    // characters and one of 12 each: in one the keys are all equal, in the other all different,
    // with the same lengths. Shared, the first tree holds at least the 40 one-byte characters of
    // every key less than the second; not shared, the two hold about the same.
    const script = `
      const { buildWellFormedTree } = require(${JSON.stringify(READER)});
      const makeText = (distinct) => '[' + Array.from({ length: 20000 }, (_, index) => {
        const long = ('a key of forty characters ' + (distinct ? index : '')).padEnd(40, 'k');
        const short = ('k' + (distinct ? index : '')).padEnd(12, 'k');
        return '{"' + long + '": ' + index + ', "' + short + '": 0}';
      }).join(',') + ']';
      const held = (distinct) => {
        const text = makeText(distinct);
        gc();
        const before = process.memoryUsage().heapUsed;
        const tree = buildWellFormedTree(text, {}, Infinity);
        if (typeof tree !== 'object' || tree.children.length !== 20000) throw new Error('not read');
        gc();
        return { bytes: process.memoryUsage().heapUsed - before, tree };
      };
      const equal = held(false);
      const distinct = held(true);
      process.stdout.write(JSON.stringify({ equal: equal.bytes, distinct: distinct.bytes }));
    `;
    const { equal, distinct } = measuredInFreshProcess(script, ['equal', 'distinct']);
    t.diagnostic(`held: equal keys ${equal} bytes, distinct keys ${distinct} bytes`);
    assert.ok(distinct - equal > 20_000 * 40, `the tree with equal keys holds ${equal} bytes, with distinct keys ${distinct}: equal keys are not shared`);
  });
});
