/**
 * JSONC documents with offsets: the parse layer every document model stands on.
 *
 * Invariant: parsing never throws. {@link parseJsonDocument} always returns a document; syntax
 * errors and duplicate keys come back as problems with exact spans, and whatever could be
 * recovered is still in the tree so later checks can run on the rest of the file.
 */
import { createScanner, getNodeValue, type Node as JsonNode, parseTree, type ParseError, ParseErrorCode, SyntaxKind } from 'jsonc-parser';
import { MAX_PROBLEMS_PER_FILE, moreProblems, type Problem, problem, type Span } from '../problems';

export type { JsonNode };

export interface JsonDocument {
  readonly text: string;
  /** The root value, or undefined when the text holds no value at all. */
  readonly root: JsonNode | undefined;
  /** Syntax errors (TP100) and duplicate keys (TP101), in document order. */
  readonly problems: readonly Problem[];
}

/** One `"key": value` member of an object, in source order. */
export interface JsonProperty {
  readonly key: string;
  readonly keyNode: JsonNode;
  /** Undefined when the source has a key without a value (a syntax error was reported). */
  readonly valueNode: JsonNode | undefined;
  readonly propertyNode: JsonNode;
}

const SYNTAX_MESSAGES: Partial<Record<ParseErrorCode, string>> = {
  [ParseErrorCode.InvalidSymbol]: 'unexpected character: this is not JSON',
  [ParseErrorCode.InvalidNumberFormat]: 'invalid number',
  [ParseErrorCode.PropertyNameExpected]: 'a property name in double quotes is expected here',
  [ParseErrorCode.ValueExpected]: 'a value is expected here',
  [ParseErrorCode.ColonExpected]: 'a colon is expected after the property name',
  [ParseErrorCode.CommaExpected]: 'a comma is expected here',
  [ParseErrorCode.CloseBraceExpected]: 'a closing brace "}" is expected here',
  [ParseErrorCode.CloseBracketExpected]: 'a closing bracket "]" is expected here',
  [ParseErrorCode.EndOfFileExpected]: 'the document should end after its first value',
  [ParseErrorCode.InvalidCommentToken]: 'invalid comment',
  [ParseErrorCode.UnexpectedEndOfComment]: 'the block comment is not closed',
  [ParseErrorCode.UnexpectedEndOfString]: 'the string is not closed',
  [ParseErrorCode.UnexpectedEndOfNumber]: 'the number is not complete',
  [ParseErrorCode.InvalidUnicode]: 'invalid \\u escape',
  [ParseErrorCode.InvalidEscapeCharacter]: 'invalid escape character',
  [ParseErrorCode.InvalidCharacter]: 'invalid character in a string (control characters must be escaped)',
};

/**
 * The deepest nesting Toolpin reads. Parsers and checks recurse per level; a document nested
 * deeper (no real blueprint is) is reported instead of exhausting the stack.
 */
export const MAX_NESTING = 512;

/** The offset where nesting first exceeds `limit`, found with the (iterative) scanner, or -1. */
function tooDeepAt(text: string, limit: number): number {
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (token === SyntaxKind.OpenBraceToken || token === SyntaxKind.OpenBracketToken) {
      if (++depth > limit) return scanner.getTokenOffset();
    } else if (token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken) {
      depth = Math.max(0, depth - 1);
    }
  }
  return -1;
}

/**
 * True when a text nests deeper than Toolpin reads (callers of recursive parsers check first), or
 * deeper than `limit` when a part of a document is checked on its own.
 */
export function nestsTooDeep(text: string, limit = MAX_NESTING): boolean {
  return tooDeepAt(text, limit) >= 0;
}

/** Parses JSONC text (comments and trailing commas allowed) into a tree with offsets. */
export function parseJsonDocument(text: string): JsonDocument {
  const deep = tooDeepAt(text, MAX_NESTING);
  if (deep >= 0) {
    return {
      text,
      root: undefined,
      problems: [problem('TP100', { offset: deep, length: 1 }, `JSON syntax error: the document nests deeper than ${MAX_NESTING} levels here, more than Toolpin reads`)],
    };
  }
  const errors = new BoundedErrors(MAX_PROBLEMS_PER_FILE);
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  const problems: Problem[] = [...errors].map((error) =>
    problem(
      'TP100',
      { offset: error.offset, length: Math.max(error.length, 1) },
      `JSON syntax error: ${SYNTAX_MESSAGES[error.error] ?? 'unexpected input'}`,
    ),
  );
  if (errors.omitted > 0) problems.push(moreProblems(errors.omitted, { offset: errors.firstOmittedOffset, length: 1 }));
  if (root === undefined && text.trim().length === 0) {
    problems.push(problem('TP100', { offset: 0, length: 0 }, 'JSON syntax error: the document is empty'));
  }
  if (root) collectDuplicateKeys(root, problems);
  problems.sort((a, b) => a.span.offset - b.span.offset);
  return { text, root, problems };
}

/**
 * The error list handed to jsonc-parser, which only ever pushes to it: it keeps the first `limit`
 * errors (in document order, as the parser finds them) and counts the rest, so a file with a
 * million syntax errors costs a thousand objects, not a million.
 */
class BoundedErrors extends Array<ParseError> {
  omitted = 0;
  firstOmittedOffset = 0;

  constructor(private readonly limit: number) {
    super();
  }

  // Array methods that create arrays (map, slice) construct the species: a plain Array.
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  override push(...items: ParseError[]): number {
    for (const item of items) {
      if (this.length < this.limit) super.push(item);
      else if (this.omitted++ === 0) this.firstOmittedOffset = item.offset;
    }
    return this.length;
  }
}

/** TP101 for every repeated key in the objects under `node` (parseJsonDocument and re-analysis after an edit). */
export function collectDuplicateKeys(node: JsonNode, problems: Problem[]): void {
  if (node.type === 'object') {
    const firstByKey = new Map<string, JsonNode>();
    for (const property of objectProperties(node)) {
      const first = firstByKey.get(property.key);
      if (first) {
        problems.push(
          problem(
            'TP101',
            spanOf(property.keyNode),
            `duplicate key "${property.key}": JSON readers disagree on which one wins, so neither is used silently`,
            { data: { key: property.key, firstOffset: first.offset } },
          ),
        );
      } else {
        firstByKey.set(property.key, property.keyNode);
      }
    }
  }
  for (const child of node.children ?? []) {
    if (child.type === 'property') {
      const value = child.children?.[1];
      if (value) collectDuplicateKeys(value, problems);
    } else {
      collectDuplicateKeys(child, problems);
    }
  }
}

/** A string value in a document and where it is, quotes included. */
export interface StringField {
  readonly value: string;
  readonly span: Span;
}

/** The string field of a node, or undefined when the node is absent or not a string. */
export function stringField(node: JsonNode | undefined): StringField | undefined {
  return node && node.type === 'string' ? { value: String(node.value), span: spanOf(node) } : undefined;
}

/** The span of a node, quotes included for strings. */
export function spanOf(node: JsonNode): Span {
  return { offset: node.offset, length: node.length };
}

/** The members of an object node in source order (duplicates included). */
export function objectProperties(node: JsonNode): JsonProperty[] {
  if (node.type !== 'object') return [];
  const result: JsonProperty[] = [];
  for (const propertyNode of node.children ?? []) {
    const keyNode = propertyNode.children?.[0];
    if (!keyNode || keyNode.type !== 'string') continue;
    result.push({ key: String(keyNode.value), keyNode, valueNode: propertyNode.children?.[1], propertyNode });
  }
  return result;
}

/**
 * The value of `key` in an object node. With duplicate keys the last one wins, as with
 * `JSON.parse`; the duplicate itself is reported by {@link parseJsonDocument}.
 */
export function getProperty(node: JsonNode | undefined, key: string): JsonProperty | undefined {
  if (!node) return undefined;
  let found: JsonProperty | undefined;
  for (const property of objectProperties(node)) {
    if (property.key === key) found = property;
  }
  return found;
}

/** The plain JavaScript value of a node (objects, arrays and scalars), as JSON.parse would give. */
export function valueOf(node: JsonNode): unknown {
  return getNodeValue(node);
}

/** A noun for the type of a node, for messages: "a string", "an object", … */
export function describeNodeType(node: JsonNode): string {
  switch (node.type) {
    case 'object':
      return 'an object';
    case 'array':
      return 'an array';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'null':
      return 'null';
    default:
      return 'a value';
  }
}
