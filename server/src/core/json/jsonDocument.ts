/**
 * JSONC documents with offsets: the parse layer every document model stands on.
 *
 * Invariant: parsing never throws. {@link parseJsonDocument} always returns a document; syntax
 * errors and duplicate keys come back as problems with exact spans, and whatever could be
 * recovered is still in the tree so later checks can run on the rest of the file.
 */
import { createScanner, getNodeValue, type Node as JsonNode, type ParseError, ParseErrorCode, type ParseOptions, SyntaxKind, visit } from 'jsonc-parser';
import { MAX_PROBLEMS_PER_FILE, moreProblems, type Problem, problem, type Span } from '../problems';
import { buildWellFormedTree, NOT_WELL_FORMED } from './wellFormedTree';
import { type BuildingNode, literalType, ownString, PropertyNode, SHARED_STRING_LENGTH, TOO_DEEP } from './treeNodes';

export { PropertyNode, TOO_DEEP };

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

/** A {@link JsonProperty} whose key node is asked of the property node only when read (see PropertyNode). */
class Member implements JsonProperty {
  constructor(
    readonly key: string,
    readonly valueNode: JsonNode | undefined,
    readonly propertyNode: JsonNode,
  ) {}

  get keyNode(): JsonNode {
    // A member is only made for a property with a string key (objectProperties, getProperty).
    return propertyKeyNode(this.propertyNode) ?? this.propertyNode;
  }
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

/** How documents are read: comments and trailing commas allowed, an empty text a document without a value. */
const DOCUMENT_OPTIONS: ParseOptions = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true };

/** Parses JSONC text (comments and trailing commas allowed) into a tree with offsets. */
export function parseJsonDocument(text: string): JsonDocument {
  // A well-formed text (nearly every one) is read in one pass and has no error to collect; only a
  // text the reader refuses is read with `visit` into a bounded error list (an Array subclass,
  // itself slow to make in a fresh process, issue 13). The nesting is measured while the tree is
  // built, and the text is scanned for where it goes too deep only when it does: a scan of every
  // document before parsing it was a twentieth of a cold check. A document so deep that the
  // parser's recursion runs out of stack (far beyond the limit) is the same case.
  let root: JsonNode | undefined;
  let tooDeep = false;
  let errors: BoundedErrors | undefined;
  const wellFormed = buildWellFormedTree(text, DOCUMENT_OPTIONS, MAX_NESTING);
  if (wellFormed === TOO_DEEP) {
    tooDeep = true;
  } else if (wellFormed !== NOT_WELL_FORMED) {
    root = wellFormed;
  } else {
    errors = new BoundedErrors(MAX_PROBLEMS_PER_FILE);
    try {
      const built = buildTreeWithVisit(text, errors, DOCUMENT_OPTIONS, MAX_NESTING);
      if (built === TOO_DEEP) tooDeep = true;
      else root = built;
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      tooDeep = true;
    }
  }
  if (tooDeep) {
    const deep = Math.max(0, tooDeepAt(text, MAX_NESTING));
    return {
      text,
      root: undefined,
      problems: [problem('TP100', { offset: deep, length: 1 }, `JSON syntax error: the document nests deeper than ${MAX_NESTING} levels here, more than Toolpin reads`)],
    };
  }
  const problems: Problem[] = errors
    ? [...errors].map((error) =>
        problem(
          'TP100',
          { offset: error.offset, length: Math.max(error.length, 1) },
          `JSON syntax error: ${SYNTAX_MESSAGES[error.error] ?? 'unexpected input'}`,
        ),
      )
    : [];
  if (errors && errors.omitted > 0) problems.push(moreProblems(errors.omitted, { offset: errors.firstOmittedOffset, length: 1 }));
  if (root === undefined && text.trim().length === 0) {
    problems.push(problem('TP100', { offset: 0, length: 0 }, 'JSON syntax error: the document is empty'));
  }
  if (root) collectDuplicateKeys(root, problems);
  problems.sort((a, b) => a.span.offset - b.span.offset);
  return { text, root, problems };
}

/**
 * The tree of a JSONC text: exactly the tree jsonc-parser's `parseTree` builds (the same nodes,
 * fields, offsets and error recovery, from the same `visit` events), built to hold less.
 *
 * Why not `parseTree` itself: it grows every node's `children` by pushing, and V8 gives an array
 * room for 17 elements at its first push, so a property's two children took 150 bytes; those
 * spare slots were a third of a large document's tree (issue 13). Here children wait on one
 * shared stack and each container gets an array of its exact length when it closes. Every node
 * is made with all of its fields (a property's `colonOffset` is set on the object it was made
 * with), and key names are shared within one parse, since a blueprint repeats the same few keys
 * ten thousand times. Leaves have no `children`, containers no `value`, as
 * with `parseTree`.
 *
 * A well-formed text is read by core/json/wellFormedTree.ts in one pass instead, into the same
 * nodes; `visit` reads only a text with an error, for jsonc-parser's recovery and error codes.
 */
export function parseJsonTree(text: string, errors: ParseError[], options: ParseOptions): JsonNode | undefined;
/** The same, or {@link TOO_DEEP} when objects and arrays nest deeper than `maxDepth`. */
export function parseJsonTree(text: string, errors: ParseError[], options: ParseOptions, maxDepth: number): JsonNode | typeof TOO_DEEP | undefined;
export function parseJsonTree(text: string, errors: ParseError[], options: ParseOptions, maxDepth = Number.POSITIVE_INFINITY): JsonNode | typeof TOO_DEEP | undefined {
  // A well-formed text (nearly every one) is read by the one-pass reader, which builds the same
  // tree; `visit` reads the rest, with its error recovery (core/json/wellFormedTree.ts).
  const wellFormed = buildWellFormedTree(text, options, maxDepth);
  return wellFormed !== NOT_WELL_FORMED ? wellFormed : buildTreeWithVisit(text, errors, options, maxDepth);
}

/** {@link parseJsonTree} from jsonc-parser's `visit` events, for any text (the builder of texts with errors). */
function buildTreeWithVisit(text: string, errors: ParseError[], options: ParseOptions, maxDepth: number): JsonNode | typeof TOO_DEEP | undefined {
  // The artificial root holds the document's value (and, after an error, any values behind it).
  const artificialRoot: BuildingNode = { type: 'array', offset: -1, length: -1, parent: undefined, children: undefined };
  let current: BuildingNode = artificialRoot;
  // The containers (and properties) open around `current`, outermost first.
  const enclosing: BuildingNode[] = [];
  // The children of every open container, innermost last; `opened` holds where each one's begin.
  const pending: BuildingNode[] = [];
  // How many entries of `pending` are in use: a closed container's children are left in place and
  // overwritten later, as shortening the array at every close was a runtime call each time.
  let top = 0;
  const opened: number[] = [];
  const shared = new Map<string, string>();
  const share = (value: string): string => {
    if (value.length > SHARED_STRING_LENGTH) return ownString(value);
    const known = shared.get(value);
    if (known !== undefined) return known;
    const own = ownString(value);
    shared.set(own, own);
    return own;
  };
  const add = (node: BuildingNode): void => {
    pending[top++] = node;
  };
  // Objects and arrays open now (properties are not counted), and whether that ever passed maxDepth.
  let depth = 0;
  let exceeded = false;
  const open = (node: BuildingNode): void => {
    add(node);
    opened.push(top);
    enclosing.push(current);
    current = node;
    if (node.type !== 'property' && ++depth > maxDepth) exceeded = true;
  };
  const close = (): void => {
    // Every close follows its open, so the stack holds this node's start (`top` would keep nothing).
    const start = opened.pop() ?? top;
    if (current instanceof PropertyNode) {
      // The grammar gives a property at most one value after its key (jsonc-parser's visitor
      // parses one value after the colon): a field, not an array.
      current.valueNode = top > start ? pending[start] : undefined;
    } else {
      depth--;
      current.children = pending.slice(start, top);
    }
    top = start;
    current = enclosing.pop() ?? artificialRoot;
  };
  const ensurePropertyComplete = (endOffset: number): void => {
    if (current.type === 'property') {
      current.length = endOffset - current.offset;
      close();
    }
  };
  visit(
    text,
    {
      onObjectBegin: (offset) => open({ type: 'object', offset, length: -1, parent: current, children: undefined }),
      onObjectProperty: (name, offset, length) => {
        open(new PropertyNode(offset, current, share(name), length));
      },
      onObjectEnd: (offset, length) => {
        // A property without a value ends with its object.
        ensurePropertyComplete(offset + length);
        current.length = offset + length - current.offset;
        close();
        ensurePropertyComplete(offset + length);
      },
      onArrayBegin: (offset) => open({ type: 'array', offset, length: -1, parent: current, children: undefined }),
      onArrayEnd: (offset, length) => {
        current.length = offset + length - current.offset;
        close();
        ensurePropertyComplete(offset + length);
      },
      onLiteralValue: (value: unknown, offset, length) => {
        add({ type: literalType(value), offset, length, parent: current, value: typeof value === 'string' ? ownString(value) : value });
        ensurePropertyComplete(offset + length);
      },
      onSeparator: (separator, offset) => {
        if (current.type !== 'property') return;
        if (separator === ':') current.colonOffset = offset;
        else if (separator === ',') ensurePropertyComplete(offset);
      },
      onError: (error, offset, length) => {
        errors.push({ error, offset, length });
      },
    },
    options,
  );
  // Containers left open by a truncated text end where parseTree leaves them: unfinished
  // (length -1), with the children they got.
  while (opened.length > 0) close();
  if (exceeded) return TOO_DEEP;
  // What is left pending are the artificial root's children: the document's value comes first.
  const result = top > 0 ? pending[0] : undefined;
  if (result) result.parent = undefined;
  return result;
}

/** The key node of a property node (of any tree: parsed here, built from a TypeScript source, or jsonc-parser's). */
export function propertyKeyNode(node: JsonNode): JsonNode | undefined {
  return node instanceof PropertyNode ? node.keyNode : node.children?.[0];
}

/** Where a property's key starts; makes no node (a parsed key starts where its property does). */
function keyOffsetOf(node: JsonNode): number {
  return node instanceof PropertyNode ? node.offset : (node.children?.[0]?.offset ?? node.offset);
}

/** Where a property's key is, quotes included (the span of its key node); makes no node. */
export function propertyKeySpan(node: JsonNode): Span | undefined {
  if (node instanceof PropertyNode) return { offset: node.offset, length: node.keyLength };
  const keyNode = node.children?.[0];
  return keyNode ? spanOf(keyNode) : undefined;
}

/** The key of a property node as text, when it is a string key; makes no node. */
export function propertyKeyText(node: JsonNode): string | undefined {
  if (node instanceof PropertyNode) return node.keyText;
  const keyNode = node.children?.[0];
  return keyNode && keyNode.type === 'string' ? String(keyNode.value) : undefined;
}

/** The value node of a property node, if it has one. */
export function propertyValueNode(node: JsonNode): JsonNode | undefined {
  return node instanceof PropertyNode ? node.valueNode : node.children?.[1];
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
  if (node.type === 'object' && node.children) {
    const members = node.children;
    // Most objects have a handful of members: comparing each key with the ones before it costs
    // nothing to allocate, where a Map per object made a large file's parse leave one Map per
    // object behind. Long objects still get a Map.
    const firstByKey = members.length > 16 ? new Map<string, JsonNode>() : undefined;
    for (let index = 0; index < members.length; index++) {
      const member = members[index];
      const key = member && propertyKeyText(member);
      if (member === undefined || key === undefined) continue;
      let first: JsonNode | undefined;
      if (firstByKey) {
        first = firstByKey.get(key);
        if (!first) firstByKey.set(key, member);
      } else {
        for (let before = 0; before < index && !first; before++) {
          const other = members[before];
          if (other && propertyKeyText(other) === key) first = other;
        }
      }
      if (first) {
        problems.push(
          problem(
            'TP101',
            propertyKeySpan(member) ?? spanOf(member),
            `duplicate key "${key}": JSON readers disagree on which one wins, so neither is used silently`,
            { data: { key, firstOffset: keyOffsetOf(first) } },
          ),
        );
      }
    }
  }
  for (const child of node.children ?? []) {
    if (child.type === 'property') {
      const value = propertyValueNode(child);
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
    const key = propertyKeyText(propertyNode);
    if (key === undefined) continue;
    result.push(new Member(key, propertyValueNode(propertyNode), propertyNode));
  }
  return result;
}

/**
 * The value of `key` in an object node. With duplicate keys the last one wins, as with
 * `JSON.parse`; the duplicate itself is reported by {@link parseJsonDocument}.
 */
export function getProperty(node: JsonNode | undefined, key: string): JsonProperty | undefined {
  if (!node || node.type !== 'object' || !node.children) return undefined;
  // From the end: the last member with the key wins. Only the found member becomes an object (a
  // step's model reads a dozen properties, and a list of every member per read was garbage).
  for (let index = node.children.length - 1; index >= 0; index--) {
    const propertyNode = node.children[index];
    if (propertyNode && propertyKeyText(propertyNode) === key) return new Member(key, propertyValueNode(propertyNode), propertyNode);
  }
  return undefined;
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
