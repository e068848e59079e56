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
import { describeNodeType, type JsonNode, objectProperties, spanOf } from './jsonDocument';
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
 * e.g. `step "open-issue"` or `providerConfig`.
 */
export function checkShape(node: JsonNode, shape: Shape, where: string, problems: Problem[]): void {
  if (!fitsKind(node, shape.kind)) {
    problems.push(
      problem('TP103', spanOf(node), `${where} must be ${TYPE_NOUN[shape.kind]}, found ${describeNodeType(node)}`, {
        data: { expected: shape.kind, found: node.type },
      }),
    );
    return;
  }
  if (shape.kind === 'array') {
    (node.children ?? []).forEach((child, index) => checkShape(child, shape.items, `${where}[${index}]`, problems));
    return;
  }
  if (shape.kind !== 'object') return;
  const seen = new Set<string>();
  for (const property of objectProperties(node)) {
    seen.add(property.key);
    const memberShape = shape.properties[property.key] ?? shape.otherMembers;
    if (!memberShape) {
      const known = Object.keys(shape.properties).join(', ');
      problems.push(
        problem('TP102', spanOf(property.keyNode), `unknown key "${property.key}" in ${where} (known keys: ${known})`, {
          data: { key: property.key },
        }),
      );
      continue;
    }
    if (property.valueNode) checkShape(property.valueNode, memberShape, `"${property.key}" in ${where}`, problems);
  }
  for (const required of shape.required ?? []) {
    if (!seen.has(required)) {
      problems.push(
        problem('TP104', openingSpan(node), `${where} is missing the required field "${required}"`, {
          data: { field: required },
        }),
      );
    }
  }
}

/**
 * The span used for "missing field" problems on an object: its opening brace only, so the squiggle
 * does not cover a whole step or file.
 */
export function openingSpan(node: JsonNode): { offset: number; length: number } {
  return { offset: node.offset, length: 1 };
}
