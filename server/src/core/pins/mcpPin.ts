/**
 * mcp-pin's hashes, "Tool definition hash, version 1" (its docs/TOOL_DEFINITION_HASH.md; mcp-pin
 * 0.2 and `mcp-pin.lock` `lockfileVersion: 1`), computed with Toolpin's own RFC 8785 and SHA-256:
 *
 * - definition hash: SHA-256 of the canonical form of the WHOLE definition as the server sent it
 *   (every member, `title`, `annotations`, `_meta`… included), unlike Toolpin's tool pin, which
 *   covers name, description and inputSchema only;
 * - set hash: the definitions sorted by name (then by hash), one `name:hash` line each, joined by
 *   a line feed, hashed; a definition without a string name leaves the listing without one;
 * - instructions hash: SHA-256 of the instructions string as sent; none (null) without one.
 *
 * A repeated member name has no canonical form; the parser that read the text reports it (TP101)
 * and the caller must not hash such a definition. All hashes are 64 lowercase hex digits, bare.
 */
import { canonicalJson, CanonicalJsonError, carefulCanonicalJson } from './canonicalJson';
import { sha256Hex } from './sha256';

/** The canonical form mcp-pin v1 hashes: RFC 8785, with a lone surrogate escaped rather than refused. */
export function mcpPinCanonical(definition: unknown): string {
  try {
    return canonicalJson(definition);
  } catch (error) {
    if (error instanceof CanonicalJsonError && error.kind === 'lone-surrogate') return carefulCanonicalJson(definition, true);
    throw error;
  }
}

/** The definition hash of one tool or prompt definition. Throws CanonicalJsonError on values that are not JSON. */
export function mcpPinDefinitionHash(definition: unknown): string {
  return sha256Hex(mcpPinCanonical(definition));
}

/** A listing's set hash and the lines it hashes, or why it has none. */
export type McpPinSet = { readonly lines: string[]; readonly setHash: string } | { readonly error: string };

/** The set hash of a whole listing (every page's definitions, concatenated). */
export function mcpPinSetHash(definitions: readonly unknown[]): McpPinSet {
  const entries: Array<{ name: string; hash: string }> = [];
  for (const [index, definition] of definitions.entries()) {
    const name = definition !== null && typeof definition === 'object' ? (definition as { name?: unknown }).name : undefined;
    if (typeof name !== 'string') return { error: `definition ${index} has no string name, so the listing has no set hash` };
    entries.push({ name, hash: mcpPinDefinitionHash(definition) });
  }
  // UTF-16 code-unit order, as `<` compares strings; equal names by their hashes.
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
  const lines = entries.map((entry) => `${entry.name}:${entry.hash}`);
  return { lines, setHash: sha256Hex(lines.join('\n')) };
}

/** The instructions hash: SHA-256 of the string as sent, or null when the server sent none. */
export function mcpPinInstructionsHash(instructions: string | null | undefined): string | null {
  return typeof instructions === 'string' ? sha256Hex(instructions) : null;
}
