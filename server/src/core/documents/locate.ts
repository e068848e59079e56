/**
 * What is at an offset of a document, for hover, completion and code lens: a pin, a tool name, a
 * `toolsSnapshot` key or an `include` entry, with the step or connector instance it belongs to.
 */
import type { StepModel } from './blueprint';
import type { ConnectorInstanceModel } from './connector';
import { blueprintOf, connectorOf, type DocumentModel } from './documents';
import type { ParsedPin } from '../pins/pins';
import type { Span } from '../problems';

export type PinTarget =
  | { readonly kind: 'schema'; readonly tool: string; readonly server: string | undefined; readonly pin: ParsedPin | undefined; readonly pinSpan: Span | undefined; readonly step: StepModel; readonly on: 'toolName' | 'pin' }
  | { readonly kind: 'tool'; readonly tool: string; readonly server: string | undefined; readonly pin: ParsedPin | undefined; readonly pinSpan: Span | undefined; readonly instance: ConnectorInstanceModel; readonly on: 'key' | 'pin' | 'include' };

function inside(span: Span, offset: number): boolean {
  return offset >= span.offset && offset <= span.offset + span.length;
}

/** The pin-related thing at `offset`, or undefined. */
export function pinTargetAt(analysis: DocumentModel, offset: number): PinTarget | undefined {
  // A source file has both models: its steps, then its connector instances.
  for (const step of blueprintOf(analysis)?.steps ?? []) {
    const mcp = step.mcp;
    if (!mcp?.toolName) continue;
    const base = { kind: 'schema' as const, tool: mcp.toolName.value, server: mcp.server?.value, pin: mcp.pin, pinSpan: mcp.expectedSchemaHash?.span, step };
    if (inside(mcp.toolName.span, offset)) return { ...base, on: 'toolName' };
    if (mcp.expectedSchemaHash && inside(mcp.expectedSchemaHash.span, offset)) return { ...base, on: 'pin' };
  }
  for (const instance of connectorOf(analysis)?.instances ?? []) {
    const server = instance.name?.value;
    for (const entry of instance.snapshot) {
      const base = { kind: 'tool' as const, tool: entry.tool.value, server, pin: entry.parsed, pinSpan: entry.pin.span, instance };
      if (inside(entry.tool.span, offset)) return { ...base, on: 'key' };
      if (inside(entry.pin.span, offset)) return { ...base, on: 'pin' };
    }
    for (const entry of instance.include ?? []) {
      if (inside(entry.span, offset)) {
        const pinned = instance.snapshot.find((candidate) => candidate.tool.value === entry.value);
        return { kind: 'tool', tool: entry.value, server, pin: pinned?.parsed, pinSpan: pinned?.pin.span, instance, on: 'include' };
      }
    }
  }
  return undefined;
}
