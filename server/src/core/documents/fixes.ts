/**
 * Fixes as text edits in offsets: re-pin a value, lower-case a pin, add or remove a
 * `toolsSnapshot` entry or an `include` entry, replace a mistyped name, and the pin-store entry
 * that every re-pin writes (docs/formats.md §6). Pure: the language server turns
 * them into a WorkspaceEdit, `toolpin pin` applies them to files.
 *
 * Invariant: a fix changes only the bytes it must. A re-pin (or a lower-casing, or a rename)
 * replaces one string literal and nothing else; entries are added and removed by inserting and
 * cutting text next to them, so comments and formatting around them stay as they were
 * (jsonc-parser's `modify` is used only to add a `toolsSnapshot` where there is no object for it).
 */
import { createScanner, type EditResult, getNodePath, type JSONPath, modify, SyntaxKind } from 'jsonc-parser';
import type { StepModel } from './blueprint';
import type { ConnectorInstanceModel } from './connector';
import { entryPath, fullDefinitionPath, PIN_STORE_FOLDER } from '../pins/storeLayout';
import { getProperty, type JsonNode } from '../json/jsonDocument';
import { isParsedPin, parsePin, type PinAlgorithm } from '../pins/pins';
import type { Span } from '../problems';

export interface TextEdit {
  readonly offset: number;
  readonly length: number;
  readonly content: string;
}

/**
 * Replaces the pin string literal at `span` (quotes included) with `newPin`. Given the document
 * `text`, the literal keeps its own quotes: a TypeScript or JavaScript source's `'…'` or `` `…` ``
 * stays so (the content is escaped for that quote); JSON's `"…"` is written as before.
 */
export function replacePinEdit(span: Span, newPin: string, text?: string): TextEdit {
  return { offset: span.offset, length: span.length, content: stringLiteral(newPin, text?.[span.offset]) };
}

/** `value` as a string literal in the quote `quote` (`'`, `` ` `` or, by default, JSON's `"`). */
export function stringLiteral(value: string, quote: string | undefined): string {
  const json = JSON.stringify(value);
  if (quote === "'") return `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
  if (quote === '`') return `\`${json.slice(1, -1).replace(/`/g, '\\`').replace(/\$\{/g, '\\${')}\``;
  return json;
}

/** Indentation used by a document, guessed from its first indented line (default two spaces). */
export function detectIndentation(text: string): { insertSpaces: boolean; tabSize: number } {
  const match = /\n([ \t]+)\S/.exec(text);
  if (!match) return { insertSpaces: true, tabSize: 2 };
  const indent = match[1]!;
  return indent.includes('\t') ? { insertSpaces: false, tabSize: 4 } : { insertSpaces: true, tabSize: Math.min(indent.length, 8) };
}

function toEdits(result: EditResult): TextEdit[] {
  return result.map((edit) => ({ offset: edit.offset, length: edit.length, content: edit.content }));
}

function instancePath(instance: ConnectorInstanceModel): JSONPath {
  return getNodePath(instance.node);
}

function snapshotObject(instance: ConnectorInstanceModel): JsonNode | undefined {
  const config = getProperty(instance.node, 'providerConfig')?.valueNode;
  const snapshot = getProperty(config, 'toolsSnapshot')?.valueNode;
  return snapshot?.type === 'object' ? snapshot : undefined;
}

/** The next token after `offset` that is not whitespace or a comment. */
function nextToken(text: string, offset: number): { kind: SyntaxKind; offset: number; length: number } {
  const scanner = createScanner(text, true);
  scanner.setPosition(offset);
  const kind = scanner.scan();
  return { kind, offset: scanner.getTokenOffset(), length: scanner.getTokenLength() };
}

/** Where the line holding `offset` starts, and whether only whitespace precedes `offset` on it. */
function lineStartOf(text: string, offset: number): { start: number; blankBefore: boolean } {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return { start, blankBefore: /^[ \t]*$/.test(text.slice(start, offset)) };
}

/** The end of the line holding `offset` (the index of its line break, or the text's end). */
function lineEndOf(text: string, offset: number): number {
  const end = text.indexOf('\n', offset);
  return end < 0 ? text.length : end > 0 && text[end - 1] === '\r' ? end - 1 : end;
}

/**
 * How new literals are written in a document: JSON's `"…"` keys and values, or, in a TypeScript
 * or JavaScript source (core/documents/source), the style the connector call already uses.
 */
interface LiteralStyle {
  /** The quote of new string values. */
  readonly quote: string;
  /** Whether new keys are written unquoted when they are identifiers. */
  readonly bareKeys: boolean;
}

const JSON_STYLE: LiteralStyle = { quote: '"', bareKeys: false };
const QUOTE_CHARACTERS = new Set(['"', "'", '`']);
/** A name that can stand as an unquoted object key in a source file. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The style of a source file's connector call: the quote of its pins (else of its `include`
 * entries, else of its name), single quotes when it has none; keys bare when its snapshot keys
 * are (else when its own keys are).
 */
function sourceStyle(text: string, instance: ConnectorInstanceModel): LiteralStyle {
  const literals = [...instance.snapshot.map((entry) => entry.pin.span), ...(instance.include ?? []).map((entry) => entry.span), ...(instance.name ? [instance.name.span] : [])];
  const quote = literals.map((span) => text[span.offset] ?? '').find((character) => QUOTE_CHARACTERS.has(character)) ?? "'";
  const keys = instance.snapshot.length > 0 ? instance.snapshot.map((entry) => entry.tool.span) : (instance.node.children ?? []).flatMap((property) => (property.children?.[0] ? [property.children[0]] : []));
  const bareKeys = keys.length === 0 || keys.every((span) => !QUOTE_CHARACTERS.has(text[span.offset] ?? ''));
  return { quote, bareKeys };
}

/** Whether an instance is a source file's: as the options say, else as the model says (only source instances carry `computed`). */
function isSource(instance: ConnectorInstanceModel, options: EditOptions | undefined): boolean {
  return options?.source ?? instance.computed !== undefined;
}

function styleOf(text: string, instance: ConnectorInstanceModel, options: EditOptions | undefined): LiteralStyle {
  return isSource(instance, options) ? sourceStyle(text, instance) : JSON_STYLE;
}

/** What an edit needs to know about the document beyond its text. */
export interface EditOptions {
  /**
   * The document is a TypeScript or JavaScript source: new literals follow its style, and no
   * JSON-only edit is made. When left out, an instance read from a source file (one that carries
   * `computed`) counts as one.
   */
  readonly source?: boolean;
}

function keyText(name: string, style: LiteralStyle): string {
  // A key is never a template literal: a backtick style writes keys in single quotes.
  return style.bareKeys && IDENTIFIER.test(name) ? name : stringLiteral(name, style.quote === '`' ? "'" : style.quote);
}

/**
 * Adds (or replaces) `toolsSnapshot[tool] = pin` in a connector instance.
 *
 * An existing entry gets only its value replaced. A new entry is written after the last one, on a
 * line of its own with the same indentation when the entries are one per line, with a trailing
 * comma when the last one has one, and every comment stays where it was: the text is inserted,
 * never re-formatted. Only a missing `toolsSnapshot` object in a JSON document is added with
 * jsonc-parser's `modify`. In a source file (`options.source`) the entry follows the call's own
 * quotes and key style, a missing `toolsSnapshot` is added to a literal `providerConfig` object,
 * and there is no edit when `providerConfig` is not a literal object (it is computed).
 */
export function setSnapshotEntryEdits(text: string, instance: ConnectorInstanceModel, tool: string, pin: string, options?: EditOptions): TextEdit[] {
  const existing = [...instance.snapshot].reverse().find((entry) => entry.tool.value === tool);
  if (existing) return [replacePinEdit(existing.pin.span, pin, text)];
  const style = styleOf(text, instance, options);
  const snapshot = snapshotObject(instance);
  const member = `${keyText(tool, style)}: ${stringLiteral(pin, style.quote)}`;
  if (snapshot) return appendMemberEdits(text, snapshot, member);
  const config = getProperty(instance.node, 'providerConfig')?.valueNode;
  // A source's toolsSnapshot that is there but not a literal object is computed: a second one would override it.
  if (isSource(instance, options) && (config?.type !== 'object' || getProperty(config, 'toolsSnapshot'))) return [];
  if (config?.type === 'object') return appendMemberEdits(text, config, `${keyText('toolsSnapshot', style)}: { ${member} }`);
  return toEdits(modify(text, [...instancePath(instance), 'providerConfig', 'toolsSnapshot', tool], pin, { formattingOptions: detectIndentation(text) }));
}

/**
 * Adds a `toolsSnapshot` with several entries to a connector instance that has none (first pins),
 * one entry per line when the instance's `providerConfig` members are one per line (indented one
 * level deeper, in the document's own indentation), else inline. Empty when the instance already
 * has a `toolsSnapshot`, its `providerConfig` is not a literal object, or there is no entry: the
 * caller then adds the entries one at a time with {@link setSnapshotEntryEdits}.
 */
export function addSnapshotEdits(text: string, instance: ConnectorInstanceModel, entries: ReadonlyArray<{ readonly tool: string; readonly pin: string }>, options?: EditOptions): TextEdit[] {
  const config = getProperty(instance.node, 'providerConfig')?.valueNode;
  if (entries.length === 0 || config?.type !== 'object' || getProperty(config, 'toolsSnapshot')) return [];
  const style = styleOf(text, instance, options);
  const members = entries.map((entry) => `${keyText(entry.tool, style)}: ${stringLiteral(entry.pin, style.quote)}`);
  const key = keyText('toolsSnapshot', style);
  const last = config.children?.[config.children.length - 1];
  const line = last ? lineStartOf(text, last.offset) : undefined;
  if (!last || !line?.blankBefore) return appendMemberEdits(text, config, `${key}: { ${members.join(', ')} }`);
  const indent = text.slice(line.start, last.offset);
  const { insertSpaces, tabSize } = detectIndentation(text);
  const inner = indent + (insertSpaces ? ' '.repeat(tabSize) : '\t');
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  return appendMemberEdits(text, config, `${key}: {${newline}${members.map((member) => `${inner}${member}`).join(`,${newline}`)}${newline}${indent}}`);
}

/**
 * Adds `expectedSchemaHash: pin` to a step that has none (a first pin, TP206): into the step's
 * `input` object (a blueprint file) or the `mcpInvoke$` call's options object (a source file),
 * right after its `server` member, else after its `toolName` member, on a line of its own when
 * the members are one per line, keeping every comment; a source file's quotes and key style are
 * followed. No edit when the step already has the key or its object cannot be found.
 */
export function addSchemaPinEdits(text: string, step: StepModel, pin: string): TextEdit[] {
  // A source step's node is the call's options (it holds toolName itself); a blueprint step's holds `input`.
  const source = getProperty(step.node, 'toolName') !== undefined;
  const input = source ? step.node : getProperty(step.node, 'input')?.valueNode;
  if (input?.type !== 'object' || getProperty(input, 'expectedSchemaHash')) return [];
  const toolName = getProperty(input, 'toolName');
  const anchor = getProperty(input, 'server') ?? toolName;
  let style = JSON_STYLE;
  if (source) {
    const quote = toolName?.valueNode ? text[toolName.valueNode.offset] : undefined;
    const keyQuote = toolName ? text[toolName.keyNode.offset] : undefined;
    style = { quote: quote !== undefined && QUOTE_CHARACTERS.has(quote) ? quote : "'", bareKeys: keyQuote === undefined || !QUOTE_CHARACTERS.has(keyQuote) };
  }
  const member = `${keyText('expectedSchemaHash', style)}: ${stringLiteral(pin, style.quote)}`;
  const properties = input.children ?? [];
  const after = anchor ? properties.indexOf(anchor.propertyNode) : -1;
  if (after < 0 || after === properties.length - 1) return appendMemberEdits(text, input, member);
  return insertMemberAfterEdits(text, properties[after]!, member);
}

/**
 * Inserts a member after `property`, which is not the last of its object (so a comma follows it):
 * on a line of its own with the property's indentation when the property starts its line and only
 * a comment or nothing follows its comma, else inline after the comma.
 */
function insertMemberAfterEdits(text: string, property: JsonNode, member: string): TextEdit[] {
  const end = property.offset + property.length;
  const comma = nextToken(text, end);
  if (comma.kind !== SyntaxKind.CommaToken) return [];
  const commaEnd = comma.offset + 1;
  const { start, blankBefore } = lineStartOf(text, property.offset);
  const rest = text.slice(commaEnd, lineEndOf(text, commaEnd));
  if (blankBefore && /^[ \t]*(\/\/.*)?$/.test(rest)) {
    const newline = text.includes('\r\n') ? '\r\n' : '\n';
    return [{ offset: commaEnd + rest.length, length: 0, content: `${newline}${text.slice(start, property.offset)}${member},` }];
  }
  return [{ offset: commaEnd, length: 0, content: ` ${member},` }];
}

/**
 * Appends a member (`"key": value` text) to an object node, or an element to an array node,
 * without re-formatting anything: after the last one, on a line of its own with the same
 * indentation when they are one per line (after a line comment that ends the last one's line),
 * else inline.
 */
function appendMemberEdits(text: string, object: JsonNode, member: string): TextEdit[] {
  const properties = object.children ?? [];
  if (properties.length === 0) {
    // `{}` or `{ /* comment */ }`: the member goes right after the brace.
    return [{ offset: object.offset + 1, length: 0, content: ` ${member} ` }];
  }
  const last = properties[properties.length - 1]!;
  const lastEnd = last.offset + last.length;
  const { start, blankBefore } = lineStartOf(text, last.offset);
  const indent = blankBefore ? text.slice(start, last.offset) : undefined;
  const after = nextToken(text, lastEnd);
  const trailingComma = after.kind === SyntaxKind.CommaToken;
  const commaEnd = trailingComma ? after.offset + 1 : lastEnd;
  // The rest of the line after the last member (and its comma) may hold a line comment: the new
  // member goes after it, on its own line, so the comment stays with the member it describes.
  const rest = text.slice(commaEnd, lineEndOf(text, commaEnd));
  const restIsCommentOrBlank = /^[ \t]*(\/\/.*)?$/.test(rest);
  if (indent !== undefined && restIsCommentOrBlank) {
    const eol = commaEnd + rest.length;
    const newline = text.includes('\r\n') ? '\r\n' : '\n';
    const edits: TextEdit[] = [{ offset: eol, length: 0, content: `${newline}${indent}${member}${trailingComma ? ',' : ''}` }];
    if (!trailingComma) edits.push({ offset: lastEnd, length: 0, content: ',' });
    return edits;
  }
  return trailingComma ? [{ offset: commaEnd, length: 0, content: ` ${member},` }] : [{ offset: lastEnd, length: 0, content: `, ${member}` }];
}

/**
 * Removes `toolsSnapshot[tool]` from a connector instance: the member and one comma next to it,
 * and its line when nothing else is on it. Comments outside the member itself are kept. The same
 * for a source file: the scanner reads only the whitespace, commas and comments between members,
 * which JavaScript writes as JSON does.
 */
export function removeSnapshotEntryEdits(text: string, instance: ConnectorInstanceModel, tool: string): TextEdit[] {
  const snapshot = snapshotObject(instance);
  if (!snapshot) return [];
  const properties = snapshot.children ?? [];
  const index = properties.map((property) => String(property.children?.[0]?.value)).lastIndexOf(tool);
  if (index < 0) return [];
  return removeListItemEdits(text, properties, index);
}

/**
 * Removes one item of a list (the members of an object, or the elements of an array) with one
 * comma next to it, keeping every comment outside the item itself:
 *
 * - the comma after the item goes with it; the last item takes the comma before it instead (a
 *   trailing comma after the last item stays where the author put one);
 * - a comma separated from the item by a comment is removed on its own, so the comment stays;
 * - an item alone on its line takes its line along, line break included;
 * - an item inline leaves one gap of spaces, not two (`["a", "x", "b"]` → `["a", "b"]`), and an
 *   only item leaves an empty list (`[ "x" ]` → `[]`).
 */
function removeListItemEdits(text: string, items: readonly JsonNode[], index: number): TextEdit[] {
  const item = items[index]!;
  let start = item.offset;
  let end = item.offset + item.length;
  const edits: TextEdit[] = [];
  const after = nextToken(text, end);
  if (after.kind === SyntaxKind.CommaToken) {
    // Only whitespace before the comma: it goes with the item. A comment before it stays, so the
    // comma goes on its own.
    if (/^\s*$/.test(text.slice(end, after.offset))) end = after.offset + 1;
    else edits.push({ offset: after.offset, length: 1, content: '' });
  } else if (index > 0) {
    // The last item: the comma before it goes instead. On the same line with only spaces between,
    // the comma and those spaces go with the item; otherwise (a line break or a comment after
    // the comma) the comma goes on its own and the comment stays.
    const previous = items[index - 1]!;
    const comma = nextToken(text, previous.offset + previous.length);
    if (comma.kind === SyntaxKind.CommaToken) {
      if (/^[ \t]*$/.test(text.slice(comma.offset + 1, start))) start = comma.offset;
      else edits.push({ offset: comma.offset, length: 1, content: '' });
    }
  }
  const line = lineStartOf(text, start);
  const lineEnd = lineEndOf(text, end);
  if (line.blankBefore && /^[ \t]*$/.test(text.slice(end, lineEnd))) {
    // The item had its line to itself: the whole line goes, line break included.
    start = line.start;
    end = text.indexOf('\n', end) < 0 ? text.length : text.indexOf('\n', end) + 1;
  } else {
    // Inline: of the spaces on either side, one gap stays; none between the brackets of a list
    // that is now empty, and none before a closing bracket that now follows.
    let gapBefore = start;
    while (gapBefore > 0 && (text[gapBefore - 1] === ' ' || text[gapBefore - 1] === '\t')) gapBefore--;
    let gapAfter = end;
    while (gapAfter < text.length && (text[gapAfter] === ' ' || text[gapAfter] === '\t')) gapAfter++;
    const opener = text[gapBefore - 1] === '[' || text[gapBefore - 1] === '{';
    const closer = text[gapAfter] === ']' || text[gapAfter] === '}';
    if (opener && closer && items.length === 1) {
      start = gapBefore;
      end = gapAfter;
    } else if (gapAfter > end && (gapBefore < start || opener)) {
      end = gapAfter;
    } else if (gapAfter === end && closer) {
      start = gapBefore;
    }
  }
  edits.push({ offset: start, length: end - start, content: '' });
  return edits;
}

/** The `include` array node of a connector instance, when it has one. */
function includeArray(instance: ConnectorInstanceModel): JsonNode | undefined {
  const config = getProperty(instance.node, 'providerConfig')?.valueNode;
  const include = getProperty(config, 'include')?.valueNode;
  return include?.type === 'array' ? include : undefined;
}

/**
 * Removes the `include` entry that starts at `offset` (the entry's string literal, as a problem's
 * span gives it) from a connector instance, with the comma and layout rules of a list item. By
 * offset, not by name, so that of two equal entries exactly the one reported goes.
 */
export function removeIncludeEntryEdits(text: string, instance: ConnectorInstanceModel, offset: number): TextEdit[] {
  const include = includeArray(instance);
  const elements = include?.children ?? [];
  const index = elements.findIndex((element) => element.offset === offset && element.type === 'string');
  return index < 0 ? [] : removeListItemEdits(text, elements, index);
}

/**
 * Adds `tool` to the `include` array of a connector instance, after the last entry and in the
 * layout of the entries (one per line, or inline), keeping every comment; nothing when the
 * instance has no `include` array (without one, every served tool is already selected) or the
 * tool is already listed.
 */
export function addIncludeEntryEdits(text: string, instance: ConnectorInstanceModel, tool: string, options?: EditOptions): TextEdit[] {
  const include = includeArray(instance);
  if (!include || (include.children ?? []).some((element) => element.value === tool)) return [];
  return appendMemberEdits(text, include, stringLiteral(tool, styleOf(text, instance, options).quote));
}

/**
 * Replaces the string literal at `span` (quotes included) with the literal of `value`. Given the
 * document `text`, the literal keeps its own quote as {@link replacePinEdit} does; an unquoted key
 * of a source file (`{ echo_upper: … }`) stays unquoted when `value` is an identifier, else it
 * becomes a single-quoted literal.
 */
export function replaceStringEdit(span: Span, value: string, text?: string): TextEdit {
  const first = text?.[span.offset];
  if (first !== undefined && !QUOTE_CHARACTERS.has(first)) {
    return { offset: span.offset, length: span.length, content: IDENTIFIER.test(value) ? value : stringLiteral(value, "'") };
  }
  return { offset: span.offset, length: span.length, content: stringLiteral(value, first) };
}

/**
 * The pin a malformed pin becomes when lower-cased, when lower-casing alone makes it well formed
 * (`fnv1a64:8465E642…` → `fnv1a64:8465e642…`, `SHA256:AB…` → `sha256:ab…`); otherwise undefined.
 * The hex check of {@link parsePin} is ASCII-only, so no other character can lower-case into a
 * digit.
 */
export function lowercasedPin(value: string, algorithm: PinAlgorithm): string | undefined {
  const lower = value.toLowerCase();
  if (lower === value) return undefined;
  return isParsedPin(parsePin(lower, algorithm)) ? lower : undefined;
}

/**
 * Lower-cases the pin whose string literal is at `span` (quotes included), when that makes it a
 * well-formed pin of `algorithm`; undefined when the text at `span` is not a string literal (a
 * stale span) or lower-casing would not help. Only the literal is replaced.
 */
export function lowercasePinEdit(text: string, span: Span, algorithm: PinAlgorithm): TextEdit | undefined {
  const literal = text.slice(span.offset, span.offset + span.length);
  const quote = literal[0];
  if (literal.length < 2 || (quote !== '"' && quote !== "'" && quote !== '`') || !literal.endsWith(quote)) return undefined;
  let value: unknown;
  if (quote === '"') {
    try {
      value = JSON.parse(literal);
    } catch {
      return undefined;
    }
  } else {
    // A source file's '…' or `…` literal (core/documents/source): read only when it holds no escape or
    // substitution, so its value is its text.
    const inner = literal.slice(1, -1);
    if (inner.includes('\\') || inner.includes('${')) return undefined;
    value = inner;
  }
  if (typeof value !== 'string') return undefined;
  const lower = lowercasedPin(value, algorithm);
  return lower === undefined ? undefined : { offset: span.offset, length: span.length, content: stringLiteral(lower, quote) };
}

/** Applies edits (non-overlapping, any order) to a text. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  let result = text;
  for (const edit of [...edits].sort((a, b) => b.offset - a.offset)) {
    result = result.slice(0, edit.offset) + edit.content + result.slice(edit.offset + edit.length);
  }
  return result;
}

/** The folder of the pin store, relative to a workspace folder (core/pins/storeLayout.ts). */
export { PIN_STORE_FOLDER };

/** A pin-store entry: where it goes (relative to the workspace folder) and its exact content. */
export interface StoreEntry {
  readonly relativePath: string;
  /** Exactly the canonical JSON that was hashed; its digest is the file name's. */
  readonly content: string;
}

/** The store entry of a pin whose hashed content is `canonicalContent`. */
export function storeEntry(algorithm: PinAlgorithm, hex: string, canonicalContent: string): StoreEntry {
  return { relativePath: entryPath(algorithm, hex), content: canonicalContent };
}

/**
 * The store entries a pin writes: its pinned content, and (when the live definition is known) the
 * tool's whole definition as served, keyed by its server and the same pin (core/verify/fullDefinition.ts), so changes
 * outside the pinned fields can be reported later.
 */
export function storeEntries(
  algorithm: PinAlgorithm,
  hex: string,
  canonicalContent: string,
  full?: { readonly tool: string; readonly server: string | undefined; readonly content: string | undefined },
): StoreEntry[] {
  const entries = [storeEntry(algorithm, hex, canonicalContent)];
  if (full?.content !== undefined) entries.push({ relativePath: fullDefinitionPath(algorithm, hex, full.tool, full.server), content: full.content });
  return entries;
}

/** The store-relative path where the pinned content of a pin may be found. */
export function storePathOf(algorithm: PinAlgorithm, hex: string): string {
  return entryPath(algorithm, hex);
}
