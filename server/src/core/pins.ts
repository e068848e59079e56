/**
 * The two pin kinds of docs/formats.md §2, and the parser for pin strings.
 *
 * - schema pin (blueprint step `input.expectedSchemaHash`): `fnv1a64:` + 16 hex digits of
 *   FNV-1a 64 over canonicalJson(inputSchema);
 * - tool pin (connector `providerConfig.toolsSnapshot[tool]`): `sha256:` + 64 hex digits of
 *   SHA-256 over canonicalJson({name, description, inputSchema}), absent fields omitted.
 *
 * They disagree on purpose: a description-only rewrite is not schema drift, and is tool drift.
 */
import { canonicalJson } from './canonicalJson';
import { fnv1a64Hex } from './fnv1a64';
import { sha256Hex } from './sha256';

export type PinAlgorithm = 'fnv1a64' | 'sha256';
/** How a pin is written: with its `algorithm:` prefix, or as bare hex (accepted for tool pins). */
export type PinStyle = 'prefixed' | 'bare';

/** A pin string that parsed: its algorithm, its lowercase hex digest and how it was written. */
export interface ParsedPin {
  readonly algorithm: PinAlgorithm;
  readonly hex: string;
  readonly style: PinStyle;
}

/** The subset of an MCP tool that the pins cover. Other fields of a tool are ignored. */
export interface PinnableTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
}

const HEX_LENGTH: Record<PinAlgorithm, number> = { fnv1a64: 16, sha256: 64 };

/** The exact bytes (as a string) that a schema pin hashes. */
export function schemaPinContent(inputSchema: unknown): string {
  return canonicalJson(inputSchema);
}

/** The exact bytes (as a string) that a tool pin hashes: name, description and inputSchema only. */
export function toolPinContent(tool: PinnableTool): string {
  const covered: Record<string, unknown> = { name: tool.name };
  if (tool.description !== undefined) covered.description = tool.description;
  if (tool.inputSchema !== undefined) covered.inputSchema = tool.inputSchema;
  return canonicalJson(covered);
}

/** `fnv1a64:<hex16>` of canonicalJson(inputSchema). Throws CanonicalJsonError on non-JSON input. */
export function schemaPin(inputSchema: unknown): string {
  return `fnv1a64:${fnv1a64Hex(schemaPinContent(inputSchema))}`;
}

/** `sha256:<hex64>` of canonicalJson({name, description, inputSchema}). */
export function toolPin(tool: PinnableTool): string {
  return `sha256:${sha256Hex(toolPinContent(tool))}`;
}

/** Formats a digest in the given style; a bare style is only meaningful for sha256 pins. */
export function formatPin(algorithm: PinAlgorithm, hex: string, style: PinStyle): string {
  return style === 'bare' ? hex : `${algorithm}:${hex}`;
}

/** Why a pin string did not parse. The message is complete enough to show to a user as is. */
export interface PinParseError {
  readonly message: string;
}

/**
 * Parses a pin string of the expected algorithm.
 *
 * Accepts `fnv1a64:<16 hex>` for schema pins, and `sha256:<64 hex>` or bare `<64 hex>` for tool
 * pins. Hex digits must be lowercase, as the pins are written; uppercase is reported rather than
 * silently normalized so that a file never holds two spellings of one pin.
 */
export function parsePin(text: string, expected: PinAlgorithm): ParsedPin | PinParseError {
  const length = HEX_LENGTH[expected];
  const colon = text.indexOf(':');
  let hex: string;
  let style: PinStyle;
  if (colon >= 0) {
    const prefix = text.slice(0, colon);
    if (prefix !== expected) {
      const other = prefix === 'fnv1a64' || prefix === 'sha256';
      return {
        message: other
          ? `expected a ${expected} pin here, found a ${prefix} pin (${describeKind(expected)})`
          : `unknown pin algorithm "${prefix}"; expected "${expected}:" followed by ${length} hex digits`,
      };
    }
    hex = text.slice(colon + 1);
    style = 'prefixed';
  } else {
    if (expected === 'fnv1a64') {
      return { message: `a schema pin must start with "fnv1a64:" followed by 16 hex digits` };
    }
    hex = text;
    style = 'bare';
  }
  if (hex.length !== length) {
    return { message: `a ${expected} pin has ${length} hex digits, this one has ${hex.length}` };
  }
  if (!/^[0-9a-fA-F]+$/.test(hex)) {
    return { message: `a ${expected} pin holds only hex digits 0-9 and a-f` };
  }
  if (hex !== hex.toLowerCase()) {
    return { message: `pins are written in lowercase hex; write "${formatPin(expected, hex.toLowerCase(), style)}"` };
  }
  return { algorithm: expected, hex, style };
}

/** True when {@link parsePin} succeeded. */
export function isParsedPin(result: ParsedPin | PinParseError): result is ParsedPin {
  return (result as ParsedPin).hex !== undefined;
}

function describeKind(algorithm: PinAlgorithm): string {
  return algorithm === 'fnv1a64'
    ? 'blueprint steps pin the input schema with fnv1a64'
    : 'connectors pin the whole tool with sha256';
}
