/**
 * The nodes both tree builders make (core/json/jsonDocument.ts `parseJsonTree` and
 * core/json/wellFormedTree.ts), in jsonc-parser's `Node` shape, and the string copies they share.
 * Both builders must make the same nodes with the same fields in the same order: the readers of a
 * tree see one hidden class per node kind, whichever builder made it.
 */
import type { Node as JsonNode, NodeType } from 'jsonc-parser';

/**
 * V8 makes a substring of 13 characters or more a view that keeps its whole parent alive, and
 * jsonc-parser's values are substrings of the text. A tree whose values are views holds its text
 * for as long as it lives, even when the text it is used with is another, equal string: the
 * workspace scan's analysis, kept when the editor opens the same file, held the disk's copy of a
 * large file beside the editor's (issue 13: 2.3 MB for the 10,000-step file). So every longer
 * value and key is copied flat; shorter ones are copies already. The round trip through JSON is
 * the one flat copy JavaScript offers (a few milliseconds for a 10,000-step file).
 */
export const SHORTEST_VIEW = 13;
export function ownString(value: string): string {
  if (value.length < SHORTEST_VIEW) return value;
  const copy: unknown = JSON.parse(JSON.stringify(value));
  return typeof copy === 'string' ? copy : value;
}

/**
 * Keys up to this length are shared within a parse. Values are not: a cold check spent more time
 * looking them up than they saved (issue 13), where keys repeat in every step.
 */
export const SHARED_STRING_LENGTH = 64;

/** What a tree builder returns for a text nested deeper than it was allowed to read. */
export const TOO_DEEP: unique symbol = Symbol('too deep');

/** A node while a tree builder builds it (a `JsonNode` once built). */
export type BuildingNode = PlainBuildingNode | PropertyNode;

/** Every node but a property: objects, arrays and leaves, with jsonc-parser's fields. */
export interface PlainBuildingNode {
  readonly type: NodeType;
  readonly offset: number;
  length: number;
  parent: JsonNode | undefined;
  children?: JsonNode[] | undefined;
  readonly value?: unknown;
  colonOffset?: number | undefined;
}

/**
 * A property node of both tree builders: jsonc-parser's `{ type: 'property', children: [key,
 * value] }`, with the value in a field and the key as its text and length, its node made only when
 * something asks for it. A blueprint is mostly properties: an array per property was 64 bytes and
 * a key node 64 more of the 200 a property took (issue 13: 9 MiB of a 10,000-step file's tree).
 *
 * Contract: `keyNode` is the same node on every read (made on the first, then kept), at the
 * property's own offset as in `parseTree`; `children` is `[keyNode, valueNode]` (or `[keyNode]`)
 * as a fresh array on each read, for every reader of jsonc-parser's shape. Code that reads many
 * properties uses core/json/jsonDocument.ts `propertyKeyText` and `propertyValueNode`, which make nothing.
 * Offsets and lengths are mutable, as on every node (an edit shifts them in place,
 * core/documents/incremental.ts, which also shifts a key node once made: {@link madeKeyNode}).
 */
export class PropertyNode {
  readonly type = 'property' as const;
  length = -1;
  colonOffset: number | undefined = undefined;
  valueNode: JsonNode | undefined = undefined;
  private keyNodeMade: JsonNode | undefined = undefined;

  constructor(
    public offset: number,
    public parent: JsonNode | undefined,
    /** The key's value (without quotes, escapes read). */
    readonly keyText: string,
    /** The key's length in the text, quotes included. */
    readonly keyLength: number,
  ) {}

  /** The key as a string node of jsonc-parser's shape, made on the first read. */
  get keyNode(): JsonNode {
    return (this.keyNodeMade ??= { type: 'string', offset: this.offset, length: this.keyLength, parent: this, value: this.keyText });
  }

  /** The key node if something has made it (and so may hold it), else undefined. */
  get madeKeyNode(): JsonNode | undefined {
    return this.keyNodeMade;
  }

  /** The key, then the value when there is one: what jsonc-parser's `parseTree` holds. */
  get children(): JsonNode[] {
    return this.valueNode ? [this.keyNode, this.valueNode] : [this.keyNode];
  }
}

/** jsonc-parser's node type of a literal value. */
export function literalType(value: unknown): NodeType {
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
      return 'number';
    case 'string':
      return 'string';
    default:
      return 'null';
  }
}

