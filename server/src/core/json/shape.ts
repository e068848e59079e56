/**
 * A small declarative description of where keys and value types are fixed in a document, and the
 * walker that reports what does not fit: unknown keys (TP102), wrong types (TP103) and missing
 * required fields (TP104). Parts that are open by design (step arguments, headers) are `any` or
 * maps, so the walker never reports inside them.
 *
 * The JSON Schemas in schemas/ describe the same structure for editors with a JSON language
 * service; this walker exists so the CLI and every LSP client get the same findings with messages
 * that name the field in the file's own words.
 */
import { describeNodeType, type JsonNode, propertyKeySpan, propertyKeyText, propertyValueNode, spanOf } from './jsonDocument';
import { type Problem, problem } from '../problems';

export type Shape =
  | { readonly kind: 'string' | 'number' | 'boolean' | 'any' }
  | { readonly kind: 'array'; readonly items: Shape }
  | {
      readonly kind: 'object';
      readonly properties: Readonly<Record<string, Shape>>;
      readonly required?: readonly string[];
      /** Shape of every other member (a map); when absent, other keys are unknown keys. */
      readonly otherMembers?: Shape;
    };

const TYPE_NOUN: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
};

/** True when a node's JSON type fits the shape's kind. */
export function fitsKind(node: JsonNode, kind: Shape['kind']): boolean {
  return kind === 'any' || node.type === kind;
}

/**
 * Reports every place under `node` that does not fit `shape`. `where` names the node for messages,
 * e.g. `step "open-issue"` or `providerConfig`; a place inside it is named from the tree when a
 * problem is found there (`"server" in step "open-issue"`, `"headers" in …[2]`), so a walk that
 * finds nothing builds no names (it was a string per member of every document, issue 13).
 *
 * A member's shape is the shape's own property of that name only: a key such as `constructor` or
 * `__proto__` is an unknown key (TP102) or a map member, never something inherited from
 * `Object.prototype`.
 */
export function checkShape(node: JsonNode, shape: Shape, where: string, problems: Problem[]): void {
  walkShape(node, shape, { node, where }, problems);
}

/** The node a walk started at, and the name the caller gave it. */
interface WalkRoot {
  readonly node: JsonNode;
  readonly where: string;
}

function walkShape(node: JsonNode, shape: Shape, root: WalkRoot, problems: Problem[]): void {
  if (!fitsKind(node, shape.kind)) {
    problems.push(
      problem('TP103', spanOf(node), `${placeName(node, root)} must be ${TYPE_NOUN[shape.kind]}, found ${describeNodeType(node)}`, {
        data: { expected: shape.kind, found: node.type },
      }),
    );
    return;
  }
  if (shape.kind === 'array') {
    const items = node.children;
    if (items) for (const item of items) walkShape(item, shape.items, root, problems);
    return;
  }
  if (shape.kind !== 'object') return;
  const members = node.children;
  if (members) {
    const memberShapes = memberShapesOf(shape);
    for (const member of members) {
      const key = propertyKeyText(member);
      if (key === undefined) continue;
      const memberShape = memberShapes.get(key) ?? shape.otherMembers;
      if (!memberShape) {
        const known = Object.keys(shape.properties).join(', ');
        problems.push(
          problem('TP102', propertyKeySpan(member) ?? spanOf(member), `unknown key "${key}" in ${placeName(node, root)} (known keys: ${known})`, {
            data: { key },
          }),
        );
        continue;
      }
      const valueNode = propertyValueNode(member);
      if (valueNode) walkShape(valueNode, memberShape, root, problems);
    }
  }
  for (const required of shape.required ?? []) {
    if (!hasMember(node, required)) {
      problems.push(
        problem('TP104', openingSpan(node), `${placeName(node, root)} is missing the required field "${required}"`, {
          data: { field: required },
        }),
      );
    }
  }
}

/**
 * An object shape's own members by name, made once per shape: a Map lookup is both cheaper than
 * a keyed property read with an own-property check, and blind to `Object.prototype`'s names.
 */
const memberShapesByShape = new WeakMap<Shape, ReadonlyMap<string, Shape>>();
function memberShapesOf(shape: Shape & { readonly kind: 'object' }): ReadonlyMap<string, Shape> {
  let found = memberShapesByShape.get(shape);
  if (!found) {
    found = new Map(Object.entries(shape.properties));
    memberShapesByShape.set(shape, found);
  }
  return found;
}

/** True when the object node has a member named `key` (with a string key node). */
function hasMember(node: JsonNode, key: string): boolean {
  for (const member of node.children ?? []) {
    if (propertyKeyText(member) === key) return true;
  }
  return false;
}

/**
 * The name of a node the walk reached from `root`: the root's own name, `"key" in <object>` for a
 * member's value, `<array>[index]` for an item. It follows the parent links the walk came down.
 */
function placeName(node: JsonNode, root: WalkRoot): string {
  if (node === root.node) return root.where;
  const parent = node.parent;
  if (parent?.type === 'property' && parent.parent) return `"${String(propertyKeyText(parent))}" in ${placeName(parent.parent, root)}`;
  if (parent?.type === 'array') return `${placeName(parent, root)}[${parent.children?.indexOf(node) ?? -1}]`;
  // Not reached for a node the walk visited: each one is the root or below it.
  return root.where;
}

/**
 * The span used for "missing field" problems on an object: its opening brace only, so the squiggle
 * does not cover a whole step or file.
 */
export function openingSpan(node: JsonNode): { offset: number; length: number } {
  return { offset: node.offset, length: 1 };
}
