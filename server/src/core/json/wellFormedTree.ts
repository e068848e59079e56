/**
 * The tree of a well-formed JSONC text, read in one pass over its characters.
 *
 * Contract: for a text that jsonc-parser reads without a single error under the given options,
 * {@link buildWellFormedTree} returns exactly the tree core/json/jsonDocument.ts `parseJsonTree`
 * builds from jsonc-parser's `visit` events (the same nodes, fields, offsets, values, shared keys
 * and flat copies), or {@link TOO_DEEP} when that builder would. For every other text it returns
 * {@link NOT_WELL_FORMED} as soon as it meets the first thing it does not accept (or TOO_DEEP, when
 * the text nests too deep before that, which the visit builder also returns), and the caller
 * builds the tree with `visit`, whose error recovery and messages stay the only ones. It may
 * refuse a text jsonc-parser reads without error (it never has to accept one); it never accepts a
 * text jsonc-parser reads with an error. test/unit/wellFormedTree.property.test.ts holds it to
 * this on generated and mutated texts.
 *
 * Why: nearly every document Toolpin reads is well formed, and jsonc-parser's `visit` pays for
 * generality on every token (a scanner call, a closure per event with a path getter, the
 * separator and error events). A cold `toolpin check` of 1,005 files spent about a third of its
 * own CPU there (issue 13), mostly before V8 had optimized any of it; a reader that does only
 * what a well-formed text needs runs far less code per character.
 */
import type { Node as JsonNode, ParseOptions } from 'jsonc-parser';
import { type BuildingNode, type PlainBuildingNode, PropertyNode, SHARED_STRING_LENGTH, SHORTEST_VIEW, TOO_DEEP } from './treeNodes';

/** What {@link buildWellFormedTree} returns for a text it does not read: build it with `visit`. */
export const NOT_WELL_FORMED: unique symbol = Symbol('not well formed');

/** Thrown inside the reader at the first character it does not accept; never escapes it. */
const REFUSED = { refused: true };
/** Thrown inside the reader when objects and arrays nest deeper than allowed; never escapes it. */
const DEEPER_THAN_ALLOWED = { deeperThanAllowed: true };

const enum Char {
  Tab = 9,
  LineFeed = 10,
  CarriageReturn = 13,
  Space = 32,
  DoubleQuote = 34,
  Asterisk = 42,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Slash = 47,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  UpperA = 65,
  UpperE = 69,
  UpperF = 70,
  OpenBracket = 91,
  Backslash = 92,
  CloseBracket = 93,
  LowerA = 97,
  LowerB = 98,
  LowerE = 101,
  LowerF = 102,
  LowerL = 108,
  LowerN = 110,
  LowerR = 114,
  LowerS = 115,
  LowerT = 116,
  LowerU = 117,
  OpenBrace = 123,
  CloseBrace = 125,
}

/**
 * The tree of `text` when it is well formed under `options` (see the contract above), TOO_DEEP
 * when objects and arrays nest deeper than `maxDepth`, undefined for a text with no value (when
 * `options.allowEmptyContent` allows that), else NOT_WELL_FORMED.
 */
export function buildWellFormedTree(text: string, options: ParseOptions, maxDepth: number): JsonNode | undefined | typeof TOO_DEEP | typeof NOT_WELL_FORMED {
  const reader = new WellFormedReader(text, options, maxDepth);
  try {
    return reader.document();
  } catch (error) {
    if (error === DEEPER_THAN_ALLOWED) return TOO_DEEP;
    // A refusal, or a recursion deeper than the stack allows: `visit` then decides (and recovers
    // or runs out of stack as it always did). A SyntaxError can only come from JSON.parse reading a
    // string literal this reader accepted, which its checks rule out; were they ever to differ
    // from JSON's, `visit` still reads the text, and parsing still never throws.
    if (error === REFUSED || error instanceof RangeError || error instanceof SyntaxError) return NOT_WELL_FORMED;
    throw error;
  }
}

/** One read of one text; each method refuses (throws REFUSED) at the first character it does not accept. */
class WellFormedReader {
  private position = 0;
  private depth = 0;
  /** The children of every open container, innermost last (as in `parseJsonTree`, sliced to exact arrays). */
  private readonly pending: JsonNode[] = [];
  private top = 0;
  /** Keys shared within the read, as `parseJsonTree` shares them. */
  private readonly sharedKeys = new Map<string, string>();
  private readonly allowComments: boolean;
  private readonly allowTrailingComma: boolean;
  private readonly allowEmptyContent: boolean;

  constructor(
    private readonly text: string,
    options: ParseOptions,
    private readonly maxDepth: number,
  ) {
    this.allowComments = !options.disallowComments;
    this.allowTrailingComma = options.allowTrailingComma === true;
    this.allowEmptyContent = options.allowEmptyContent === true;
  }

  document(): JsonNode | undefined {
    this.skipTrivia();
    if (this.position >= this.text.length) {
      if (this.allowEmptyContent) return undefined;
      throw REFUSED;
    }
    const root = this.value(undefined);
    this.skipTrivia();
    // Anything after the first value is jsonc-parser's EndOfFileExpected.
    if (this.position < this.text.length) throw REFUSED;
    return root;
  }

  /** Whitespace, line breaks and (when allowed) comments, as jsonc-parser's scanner skips them. */
  private skipTrivia(): void {
    const text = this.text;
    const length = text.length;
    let position = this.position;
    while (position < length) {
      const code = text.charCodeAt(position);
      if (code === Char.Space || code === Char.LineFeed || code === Char.CarriageReturn || code === Char.Tab) {
        position++;
      } else if (code === Char.Slash) {
        if (!this.allowComments) throw REFUSED;
        const next = text.charCodeAt(position + 1);
        if (next === Char.Slash) {
          // A line comment ends before the line break (jsonc-parser's line breaks are LF and CR).
          position += 2;
          while (position < length) {
            const inComment = text.charCodeAt(position);
            if (inComment === Char.LineFeed || inComment === Char.CarriageReturn) break;
            position++;
          }
        } else if (next === Char.Asterisk) {
          const end = text.indexOf('*/', position + 2);
          // An unclosed block comment is jsonc-parser's UnexpectedEndOfComment.
          if (end < 0) throw REFUSED;
          position = end + 2;
        } else {
          throw REFUSED;
        }
      } else {
        break;
      }
    }
    this.position = position;
  }

  /** The value at the current position (trivia already skipped); leaves the position after it. */
  private value(parent: JsonNode | undefined): JsonNode {
    const text = this.text;
    const offset = this.position;
    const code = text.charCodeAt(offset);
    switch (code) {
      case Char.OpenBrace:
        return this.object(parent);
      case Char.OpenBracket:
        return this.array(parent);
      case Char.DoubleQuote: {
        const value = this.string();
        return leaf('string', offset, this.position - offset, parent, value);
      }
      case Char.LowerT:
        return this.keyword('true', true, parent);
      case Char.LowerF:
        return this.keyword('false', false, parent);
      case Char.LowerN:
        return this.keyword('null', null, parent);
      default:
        if (code === Char.Minus || (code >= Char.Zero && code <= Char.Nine)) return this.number(parent);
        throw REFUSED;
    }
  }

  private object(parent: JsonNode | undefined): JsonNode {
    const text = this.text;
    const node: PlainBuildingNode = { type: 'object', offset: this.position, length: -1, parent, children: undefined };
    if (++this.depth > this.maxDepth) throw DEEPER_THAN_ALLOWED;
    const start = this.top;
    this.position++;
    this.skipTrivia();
    let code = text.charCodeAt(this.position);
    while (code !== Char.CloseBrace) {
      if (code !== Char.DoubleQuote) throw REFUSED;
      const keyOffset = this.position;
      const key = this.key();
      const property = new PropertyNode(keyOffset, node, key, this.position - keyOffset);
      this.skipTrivia();
      if (text.charCodeAt(this.position) !== Char.Colon) throw REFUSED;
      property.colonOffset = this.position;
      this.position++;
      this.skipTrivia();
      const value = this.value(property);
      property.valueNode = value;
      property.length = this.position - keyOffset;
      this.pending[this.top++] = property;
      code = this.afterMember(Char.CloseBrace);
    }
    return this.close(node, start);
  }

  private array(parent: JsonNode | undefined): JsonNode {
    const text = this.text;
    const node: PlainBuildingNode = { type: 'array', offset: this.position, length: -1, parent, children: undefined };
    if (++this.depth > this.maxDepth) throw DEEPER_THAN_ALLOWED;
    const start = this.top;
    this.position++;
    this.skipTrivia();
    let code = text.charCodeAt(this.position);
    while (code !== Char.CloseBracket) {
      const item = this.value(node);
      this.pending[this.top++] = item;
      code = this.afterMember(Char.CloseBracket);
    }
    return this.close(node, start);
  }

  /**
   * After a member or item: a comma and the next one (or, when allowed, the closing bracket), or
   * the closing bracket. Returns the character at the new position (the next member's first, or
   * the closing bracket); refuses anything else.
   */
  private afterMember(closing: Char.CloseBrace | Char.CloseBracket): number {
    this.skipTrivia();
    let code = this.text.charCodeAt(this.position);
    if (code === Char.Comma) {
      this.position++;
      this.skipTrivia();
      code = this.text.charCodeAt(this.position);
      if (code === closing && !this.allowTrailingComma) throw REFUSED;
    } else if (code !== closing) {
      throw REFUSED;
    }
    return code;
  }

  /** Ends the container at the current position (its closing bracket) with the children pending since `start`. */
  private close(node: PlainBuildingNode, start: number): JsonNode {
    this.position++;
    node.length = this.position - node.offset;
    node.children = this.pending.slice(start, this.top);
    this.top = start;
    this.depth--;
    return node as JsonNode;
  }

  /** A property's key: a string, shared within the read when it is short. */
  private key(): string {
    const key = this.string();
    if (key.length > SHARED_STRING_LENGTH) return key;
    const known = this.sharedKeys.get(key);
    if (known !== undefined) return known;
    this.sharedKeys.set(key, key);
    return key;
  }

  /**
   * The string at the current position (a double quote); leaves the position after its closing
   * quote. Refuses what jsonc-parser reports: an unclosed string, a control character (a line
   * break ends the string there), an unknown escape, a `\u` without four hex digits.
   */
  private string(): string {
    const text = this.text;
    const length = text.length;
    const start = this.position + 1;
    let position = start;
    let escaped = false;
    for (;;) {
      if (position >= length) throw REFUSED;
      const code = text.charCodeAt(position);
      if (code === Char.DoubleQuote) break;
      if (code === Char.Backslash) {
        escaped = true;
        const escape = text.charCodeAt(position + 1);
        if (escape === Char.LowerU) {
          for (let digit = position + 2; digit < position + 6; digit++) {
            if (!isHexDigit(text.charCodeAt(digit))) throw REFUSED;
          }
          position += 6;
        } else if (isSimpleEscape(escape)) {
          position += 2;
        } else {
          throw REFUSED;
        }
      } else if (code < Char.Space) {
        throw REFUSED;
      } else {
        position++;
      }
    }
    this.position = position + 1;
    // A short substring is a copy already. A longer one, or one with escapes, is read by JSON.parse
    // from its literal: the escapes JSON reads are exactly the ones accepted above, and the string
    // it makes is its own, never a view of the text (see ownString in treeNodes.ts).
    if (!escaped && position - start < SHORTEST_VIEW) return text.substring(start, position);
    return JSON.parse(text.substring(start - 1, position + 1)) as string;
  }

  /** `true`, `false` or `null`, which jsonc-parser reads as a word: the next character must end it. */
  private keyword(word: string, value: boolean | null, parent: JsonNode | undefined): JsonNode {
    const text = this.text;
    const offset = this.position;
    if (!text.startsWith(word, offset)) throw REFUSED;
    const end = offset + word.length;
    if (end < text.length && !endsWord(text.charCodeAt(end))) throw REFUSED;
    this.position = end;
    return leaf(value === null ? 'null' : 'boolean', offset, word.length, parent, value);
  }

  /** A number as jsonc-parser's scanner reads one, refusing what it reports or splits. */
  private number(parent: JsonNode | undefined): JsonNode {
    const text = this.text;
    const offset = this.position;
    let position = offset;
    if (text.charCodeAt(position) === Char.Minus) position++;
    const first = text.charCodeAt(position);
    if (first === Char.Zero) {
      position++;
    } else if (first > Char.Zero && first <= Char.Nine) {
      position = skipDigits(text, position + 1);
    } else {
      throw REFUSED;
    }
    if (text.charCodeAt(position) === Char.Dot) {
      if (!isDigit(text.charCodeAt(position + 1))) throw REFUSED;
      position = skipDigits(text, position + 1);
    }
    const exponent = text.charCodeAt(position);
    if (exponent === Char.LowerE || exponent === Char.UpperE) {
      position++;
      const sign = text.charCodeAt(position);
      if (sign === Char.Plus || sign === Char.Minus) position++;
      if (!isDigit(text.charCodeAt(position))) throw REFUSED;
      position = skipDigits(text, position);
    }
    // What follows a number must end it for jsonc-parser too ("1x", "01" and "1-" are errors there).
    if (position < text.length && !endsWord(text.charCodeAt(position))) throw REFUSED;
    this.position = position;
    return leaf('number', offset, position - offset, parent, Number(text.substring(offset, position)));
  }
}

/** A leaf node, with the fields `parseJsonTree` gives one, in its order. */
function leaf(type: 'string' | 'number' | 'boolean' | 'null', offset: number, length: number, parent: JsonNode | undefined, value: unknown): JsonNode {
  const node: BuildingNode = { type, offset, length, parent, value };
  return node as JsonNode;
}

function isDigit(code: number): boolean {
  return code >= Char.Zero && code <= Char.Nine;
}

function skipDigits(text: string, from: number): number {
  let position = from;
  while (isDigit(text.charCodeAt(position))) position++;
  return position;
}

function isHexDigit(code: number): boolean {
  return (code >= Char.Zero && code <= Char.Nine) || (code >= Char.UpperA && code <= Char.UpperF) || (code >= Char.LowerA && code <= Char.LowerF);
}

/** The one-character escapes after a backslash: `"`, `\`, `/`, b, f, n, r, t. */
function isSimpleEscape(code: number): boolean {
  return (
    code === Char.DoubleQuote ||
    code === Char.Backslash ||
    code === Char.Slash ||
    code === Char.LowerB ||
    code === Char.LowerF ||
    code === Char.LowerN ||
    code === Char.LowerR ||
    code === Char.LowerT
  );
}

/**
 * Whether a character ends a word or number for jsonc-parser's scanner (its
 * `isUnknownContentCharacter` is false): whitespace, a line break, a bracket, a quote, a colon, a
 * comma or a slash. Whatever follows is then read as the next token.
 */
function endsWord(code: number): boolean {
  switch (code) {
    case Char.Space:
    case Char.Tab:
    case Char.LineFeed:
    case Char.CarriageReturn:
    case Char.CloseBrace:
    case Char.CloseBracket:
    case Char.OpenBrace:
    case Char.OpenBracket:
    case Char.DoubleQuote:
    case Char.Colon:
    case Char.Comma:
    case Char.Slash:
      return true;
    default:
      return false;
  }
}
