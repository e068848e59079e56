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
const LOWERCASE_HEX = /^[0-9a-f]*$/;

/** The exact bytes (as a string) that a schema pin hashes. */
export function schemaPinContent(inputSchema: unknown): string {
  return canonicalJson(inputSchema);
}

/** The exact bytes (as a string) that a tool pin hashes: name, description and inputSchema only. */
export function toolPinContent(tool: PinnableTool): string {
  // Built in canonical member order (description, inputSchema, name), so no sorting is needed.
  const covered: Record<string, unknown> = {};
  if (tool.description !== undefined) covered.description = tool.description;
  if (tool.inputSchema !== undefined) covered.inputSchema = tool.inputSchema;
  covered.name = tool.name;
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
  // The usual case: exactly the right number of lowercase hex digits.
  if (hex.length === length && LOWERCASE_HEX.test(hex)) return { algorithm: expected, hex, style };
  // Characters are counted in code points, and hex digits apart from the rest, so that the
  // message says exactly what is wrong: "fnv1a64:zz-not-a-hash" has 2 hex digits, not 13.
  const characters = [...hex];
  const nonHex = characters.filter((character) => !/[0-9a-fA-F]/.test(character));
  if (nonHex.length > 0) {
    return {
      message: `a ${expected} pin holds only hex digits 0-9 and a-f, ${length} of them; this one has ${characters.length - nonHex.length}, and ${describeOthers(nonHex)}`,
    };
  }
  if (hex.length !== length) {
    return { message: `a ${expected} pin has ${length} hex digits, this one has ${hex.length}` };
  }
  if (hex !== hex.toLowerCase()) {
    return { message: `pins are written in lowercase hex; write "${formatPin(expected, hex.toLowerCase(), style)}"` };
  }
  return { algorithm: expected, hex, style };
}

/** True when {@link parsePin} succeeded. */
export function isParsedPin(result: ParsedPin | PinParseError): result is ParsedPin {
  return 'hex' in result;
}

/** At most this many distinct offending characters are named in a message; the rest are counted. */
const NAMED_CHARACTERS = 8;

/**
 * Names the characters of a pin that are not hex digits: how many there are and which distinct
 * ones. Printable ASCII (and the space) is quoted, anything else is written as its code point
 * (U+200B), so that invisible and look-alike characters show. Counts are in code points, so an
 * emoji counts once.
 */
function nameCharacter(character: string): string {
  if (/^[\x20-\x7e]$/.test(character)) return JSON.stringify(character);
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

function describeOthers(other: readonly string[]): string {
  const distinct = [...new Set(other)];
  const named = distinct.slice(0, NAMED_CHARACTERS).map(nameCharacter);
  const rest = distinct.length - named.length;
  const list = named.join(', ') + (rest > 0 ? ` and ${rest} more` : '');
  return other.length === 1 ? `1 character that is not a hex digit: ${list}` : `${other.length} characters that are not hex digits: ${list}`;
}

function describeKind(algorithm: PinAlgorithm): string {
  return algorithm === 'fnv1a64'
    ? 'blueprint steps pin the input schema with fnv1a64'
    : 'connectors pin the whole tool with sha256';
}
