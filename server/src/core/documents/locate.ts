/**
 * What is at an offset of a document, for hover, completion and code lens: a pin, a tool name, a
 * `toolsSnapshot` key or an `include` entry, with the step or connector instance it belongs to;
 * and, for TypeScript and JavaScript sources, the literal completion can fill ({@link sourceSlotAt}).
 */
import type { StepModel } from './blueprint';
import type { ConnectorInstanceModel } from './connector';
import { blueprintOf, connectorOf, type DocumentModel } from './documents';
import { type JsonNode, propertyKeyNode, propertyValueNode, spanOf } from '../json/jsonDocument';
import type { ParsedPin } from '../pins/pins';
import type { Span } from '../problems';

export type PinTarget =
  | { readonly kind: 'schema'; readonly tool: string; readonly toolSpan: Span; readonly server: string | undefined; readonly pin: ParsedPin | undefined; readonly pinSpan: Span | undefined; readonly step: StepModel; readonly on: 'toolName' | 'pin' }
  | { readonly kind: 'tool'; readonly tool: string; readonly toolSpan: Span; readonly server: string | undefined; readonly pin: ParsedPin | undefined; readonly pinSpan: Span | undefined; readonly instance: ConnectorInstanceModel; readonly on: 'key' | 'pin' | 'include' };

function inside(span: Span, offset: number): boolean {
  return offset >= span.offset && offset <= span.offset + span.length;
}

/** The pin-related thing at `offset`, or undefined. */
export function pinTargetAt(analysis: DocumentModel, offset: number): PinTarget | undefined {
  // A source file has both models: its steps, then its connector instances.
  for (const step of blueprintOf(analysis)?.steps ?? []) {
    const mcp = step.mcp;
    if (!mcp?.toolName) continue;
    const base = { kind: 'schema' as const, tool: mcp.toolName.value, toolSpan: mcp.toolName.span, server: mcp.server?.value, pin: mcp.pin, pinSpan: mcp.expectedSchemaHash?.span, step };
    if (inside(mcp.toolName.span, offset)) return { ...base, on: 'toolName' };
    if (mcp.expectedSchemaHash && inside(mcp.expectedSchemaHash.span, offset)) return { ...base, on: 'pin' };
  }
  for (const instance of connectorOf(analysis)?.instances ?? []) {
    const server = instance.name?.value;
    for (const entry of instance.snapshot) {
      const base = { kind: 'tool' as const, tool: entry.tool.value, toolSpan: entry.tool.span, server, pin: entry.parsed, pinSpan: entry.pin.span, instance };
      if (inside(entry.tool.span, offset)) return { ...base, on: 'key' };
      if (inside(entry.pin.span, offset)) return { ...base, on: 'pin' };
    }
    for (const entry of instance.include ?? []) {
      if (inside(entry.span, offset)) {
        const pinned = instance.snapshot.find((candidate) => candidate.tool.value === entry.value);
        return { kind: 'tool', tool: entry.value, toolSpan: entry.span, server, pin: pinned?.parsed, pinSpan: pinned?.pin.span, instance, on: 'include' };
      }
    }
  }
  return undefined;
}

/**
 * A literal of a TypeScript or JavaScript source that completion can fill, with what it names:
 * a step's `toolName`, `server` or `expectedSchemaHash`; a connector instance's `include` entry,
 * `toolsSnapshot` key or `toolsSnapshot` value (the pin of `tool`). `literal` is the literal's
 * span, quotes included; `quote` is its quote character, or undefined for an unquoted key
 * (`{ echo_upper: '…' }`), whose span is the identifier.
 */
export type SourceSlot =
  | { readonly kind: 'toolName' | 'server' | 'schemaPin'; readonly literal: Span; readonly quote: string | undefined; readonly step: StepModel }
  | { readonly kind: 'include' | 'snapshotKey'; readonly literal: Span; readonly quote: string | undefined; readonly instance: ConnectorInstanceModel }
  | { readonly kind: 'toolPin'; readonly literal: Span; readonly quote: string | undefined; readonly instance: ConnectorInstanceModel; readonly tool: string };

const QUOTES = new Set(['"', "'", '`']);

/**
 * The literal under `offset` below `root` and its path of keys from `root`. A quoted literal
 * counts only from just after its opening quote to just before its closing one (a cursor outside
 * the quotes is not in it); an unquoted key counts over its whole identifier.
 */
function literalAt(root: JsonNode, text: string, offset: number): { path: string[]; node: JsonNode; atKey: boolean; quote: string | undefined } | undefined {
  const quoteOf = (node: JsonNode): string | undefined => (QUOTES.has(text[node.offset] ?? '') ? text[node.offset] : undefined);
  const holds = (node: JsonNode): boolean =>
    quoteOf(node) !== undefined ? offset > node.offset && offset < node.offset + node.length : offset >= node.offset && offset <= node.offset + node.length;
  const path: string[] = [];
  let node: JsonNode | undefined = root;
  while (node) {
    if (node.type === 'string') return holds(node) ? { path, node, atKey: false, quote: quoteOf(node) } : undefined;
    const current: JsonNode = node;
    node = undefined;
    if (current.type === 'object') {
      for (const property of current.children ?? []) {
        const key = propertyKeyNode(property);
        const value = propertyValueNode(property);
        if (key?.type === 'string' && holds(key)) return { path: [...path, String(key.value)], node: key, atKey: true, quote: quoteOf(key) };
        if (key && value && offset >= value.offset && offset <= value.offset + value.length) {
          path.push(String(key.value));
          node = value;
          break;
        }
      }
    } else if (current.type === 'array') {
      const element = (current.children ?? []).find((child) => offset >= child.offset && offset <= child.offset + child.length);
      if (element) {
        path.push('[]');
        node = element;
      }
    }
  }
  return undefined;
}

const STEP_SLOTS: ReadonlyMap<string, 'toolName' | 'server' | 'schemaPin'> = new Map([
  ['toolName', 'toolName'],
  ['server', 'server'],
  ['expectedSchemaHash', 'schemaPin'],
]);

/** The literal of a source file's `mcpInvoke$` or `defineConnector` call that completion can fill at `offset`, or undefined. */
export function sourceSlotAt(analysis: DocumentModel, text: string, offset: number): SourceSlot | undefined {
  if (analysis.model.kind !== 'source') return undefined;
  for (const step of analysis.model.blueprint.steps) {
    if (!step.mcp || offset < step.node.offset || offset > step.node.offset + step.node.length) continue;
    const found = literalAt(step.node, text, offset);
    const [key, ...deeper] = found?.path ?? [];
    if (!found || found.atKey || key === undefined || deeper.length > 0) return undefined;
    const kind = STEP_SLOTS.get(key);
    return kind ? { kind, literal: spanOf(found.node), quote: found.quote, step } : undefined;
  }
  for (const instance of analysis.model.connector.instances) {
    if (offset < instance.node.offset || offset > instance.node.offset + instance.node.length) continue;
    const found = literalAt(instance.node, text, offset);
    const [root, list, tool, ...deeper] = found?.path ?? [];
    if (!found || root !== 'providerConfig' || list === undefined || tool === undefined || deeper.length > 0) return undefined;
    const base = { literal: spanOf(found.node), quote: found.quote, instance };
    if (list === 'include' && tool === '[]' && !found.atKey) return { kind: 'include', ...base };
    if (list === 'toolsSnapshot') return found.atKey ? { kind: 'snapshotKey', ...base } : { kind: 'toolPin', ...base, tool };
    return undefined;
  }
  return undefined;
}
