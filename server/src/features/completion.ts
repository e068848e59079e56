/**
 * Completion from the live inventory: tool names in `toolName`, `include` entries and
 * `toolsSnapshot` keys; server names in `server`; the live pin as the value of
 * `expectedSchemaHash` or of a `toolsSnapshot` entry.
 *
 * Every item carries a `textEdit` whose result is valid JSON(C) wherever the cursor is: inside a
 * string (empty or partly typed) the edit replaces the string's content only, escaped, and closes
 * the string when it is unterminated; outside a string it writes the quoted value (or, at a
 * property key, the whole `"key": value` member) with the commas the neighbours need. The range
 * is one plain range, so VS Code applies the same edit in its insert and its replace mode.
 *
 * In a TypeScript or JavaScript source the same values complete inside the literals of
 * `mcpInvoke$` and `defineConnector` calls (core/documents/locate.ts `sourceSlotAt`): an item
 * replaces only the literal's content, escaped for the literal's own quote (`'`, `"` or `` ` ``),
 * so the quote style stays as written; an unquoted key is replaced by the name itself when it is
 * an identifier, else by a single-quoted literal. Everything else in a source is left to its own
 * language service.
 */
import { createScanner, getLocation, ScanError, SyntaxKind } from 'jsonc-parser';
import { type CompletionItem, CompletionItemKind, type Connection, InsertTextFormat, type TextDocuments, TextEdit } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { nestsTooDeep } from '../core/json/jsonDocument';
import type { ListedTool } from '../core/verify/listing';
import { schemaPin, toolPin } from '../core/pins/pins';
import { stringLiteral } from '../core/documents/fixes';
import { sourceSlotAt } from '../core/documents/locate';
import { blueprintFileOf, connectorOf, type DocumentAnalysis, sourceOf } from '../core/documents/documents';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { runSafe } from '../util/runSafe';
import { uriToPath } from '../util/uris';

/**
 * Where a completed value goes. `content` is the inside of an existing string: the edit replaces
 * the characters between the quotes (`closeQuote` when the string has no closing quote yet).
 * `bare` is a place with no string yet: the edit replaces a half-typed bare word, if any, with a
 * complete JSON value, and adds a comma before or after when the neighbours need one.
 * `key` is the inside of a property key that has no colon yet: the edit writes the rest of the
 * member (`name": value`).
 */
interface Slot {
  readonly kind: 'content' | 'bare' | 'key';
  readonly start: number;
  readonly end: number;
  readonly closeQuote: boolean;
  readonly before: string;
  readonly after: string;
}

/** The body of a JSON string literal for `value`, without its quotes. */
function escaped(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** The kind of the first token at or after `offset` that is neither whitespace nor a comment. */
function nextToken(text: string, offset: number): SyntaxKind {
  const scanner = createScanner(text.slice(offset), true);
  let token = scanner.scan();
  while (token === SyntaxKind.LineCommentTrivia || token === SyntaxKind.BlockCommentTrivia) token = scanner.scan();
  return token;
}

/** The kind of the last token that ends at or before `offset`, ignoring whitespace and comments. */
function previousToken(text: string, offset: number): SyntaxKind {
  const scanner = createScanner(text, true);
  let last = SyntaxKind.EOF;
  for (let token = scanner.scan(); token !== SyntaxKind.EOF; token = scanner.scan()) {
    if (scanner.getTokenOffset() + scanner.getTokenLength() > offset) break;
    if (token !== SyntaxKind.LineCommentTrivia && token !== SyntaxKind.BlockCommentTrivia) last = token;
  }
  return last;
}

/** True when a token of this kind ends a value, so that another value after it needs a comma. */
function endsValue(token: SyntaxKind): boolean {
  return (
    token === SyntaxKind.StringLiteral ||
    token === SyntaxKind.NumericLiteral ||
    token === SyntaxKind.TrueKeyword ||
    token === SyntaxKind.FalseKeyword ||
    token === SyntaxKind.NullKeyword ||
    token === SyntaxKind.CloseBraceToken ||
    token === SyntaxKind.CloseBracketToken
  );
}

/** True when a token of this kind can follow a value without a comma between them. */
function closesList(token: SyntaxKind): boolean {
  return token === SyntaxKind.CommaToken || token === SyntaxKind.CloseBraceToken || token === SyntaxKind.CloseBracketToken || token === SyntaxKind.EOF;
}

/** Where the cursor is: the JSON path of the value or key there, and the slot a completion fills. */
interface Context {
  readonly path: ReadonlyArray<string | number>;
  readonly atKey: boolean;
  readonly slot: Slot;
}

/**
 * Finds the slot at `offset` and the path it completes. Inside a string (or a property key) the
 * slot is its content. Right after a complete value, with no comma yet, the slot is a new sibling:
 * the next array element, or a new member's key. Before a string's opening quote there is none.
 */
function contextAt(text: string, offset: number): Context | undefined {
  const location = getLocation(text, offset);
  let path: Array<string | number> = [...location.path];
  let atKey = location.isAtPropertyKey;
  const node = location.previousNode;
  if (node && (node.type === 'string' || node.type === 'property')) {
    const scanner = createScanner(text.slice(node.offset), true);
    scanner.scan();
    const terminated = scanner.getTokenError() !== ScanError.UnexpectedEndOfString;
    const start = node.offset + 1;
    const end = node.offset + node.length - (terminated ? 1 : 0);
    if (offset < start) return undefined;
    if (offset <= end) {
      const after = terminated ? node.offset + node.length : end;
      if (atKey && nextToken(text, after) !== SyntaxKind.ColonToken) {
        // A key with no colon yet: write the rest of the member, and close the member off.
        return { path, atKey, slot: { kind: 'key', start, end: after, closeQuote: false, before: '', after: closesList(nextToken(text, after)) ? '' : ',' } };
      }
      const slot: Slot = { kind: 'content', start, end, closeQuote: !terminated, before: '', after: !terminated && !closesList(nextToken(text, end)) ? ',' : '' };
      return { path, atKey, slot };
    }
  }
  if (node && node.type !== 'property' && offset >= node.offset + node.length) {
    // After a complete value: the cursor starts the next sibling.
    const last = path[path.length - 1];
    if (typeof last === 'number') path = [...path.slice(0, -1), last + 1];
    else if (typeof last === 'string') {
      path = [...path.slice(0, -1), ''];
      atKey = true;
    }
  }
  // No string here: replace the bare word typed so far (not valid JSON on its own), if any.
  let start = offset;
  while (start > 0 && /[^\s{}[\],:"/]/.test(text[start - 1]!)) start--;
  let end = offset;
  while (end < text.length && /[^\s{}[\],:"/]/.test(text[end]!)) end++;
  const previous = previousToken(text, start);
  const before = endsValue(previous) ? ', ' : text[start - 1] === ':' ? ' ' : '';
  return { path, atKey, slot: { kind: 'bare', start, end, closeQuote: false, before, after: closesList(nextToken(text, end)) ? '' : ',' } };
}

/** Escapes text for an LSP snippet, where `$`, `}` and `\` are special. */
function snippetText(text: string): string {
  return text.replace(/[\\$}]/g, '\\$&');
}

/**
 * The edit that writes `value` (and, at a key, the member value `memberValue`) into the slot. When
 * a comma must follow and the client takes snippets, the cursor stays before the comma, at the end
 * of the value; without snippets it ends after the comma.
 */
function editFor(document: TextDocument, slot: Slot, value: string, snippets: boolean, memberValue?: string): Pick<CompletionItem, 'textEdit' | 'insertTextFormat'> {
  const member = memberValue === undefined ? '' : `: ${JSON.stringify(memberValue)}`;
  let written: string;
  if (slot.kind === 'content') written = escaped(value) + (slot.closeQuote ? '"' : '');
  else if (slot.kind === 'key') written = `${escaped(value)}"${member || ': ""'}`;
  else written = slot.before + JSON.stringify(value) + member;
  const range = { start: document.positionAt(slot.start), end: document.positionAt(slot.end) };
  if (slot.after && snippets) return { textEdit: TextEdit.replace(range, `${snippetText(written)}$0${snippetText(slot.after)}`), insertTextFormat: InsertTextFormat.Snippet };
  return { textEdit: TextEdit.replace(range, written + slot.after), insertTextFormat: InsertTextFormat.PlainText };
}

/** What the items need to know besides the slot: whether the client expands snippets. */
export interface CompletionOptions {
  readonly snippets: boolean;
}

function toolItem(document: TextDocument, slot: Slot, options: CompletionOptions, tool: ListedTool, server: string, memberValue?: string): CompletionItem {
  return {
    label: tool.name,
    kind: CompletionItemKind.Function,
    detail: `tool on ${server}`,
    documentation: tool.description,
    // VS Code filters on the range's text up to the cursor: the bare word or the string's content.
    filterText: tool.name,
    ...editFor(document, slot, tool.name, options.snippets, memberValue),
  };
}

function pinItem(document: TextDocument, slot: Slot, options: CompletionOptions, pin: string, detail: string): CompletionItem {
  return { label: pin, kind: CompletionItemKind.Value, detail, filterText: pin, ...editFor(document, slot, pin, options.snippets), preselect: true };
}

function safePin(compute: () => string): string | undefined {
  try {
    return compute();
  } catch {
    return undefined;
  }
}

export function registerCompletion(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  workspace: LiveWorkspace,
  options: () => CompletionOptions = () => ({ snippets: false }),
): void {
  connection.onCompletion((params, token) =>
    runSafe<CompletionItem[]>(connection.console, 'completion', token, [], async () => {
      const document = documents.get(params.textDocument.uri);
      if (!document) return [];
      return computeCompletion(document, document.offsetAt(params.position), workspace, options());
    }),
  );
}

export async function computeCompletion(
  document: TextDocument,
  offset: number,
  workspace: LiveWorkspace,
  options: CompletionOptions = { snippets: false },
): Promise<CompletionItem[]> {
  const file = uriToPath(document.uri);
  const text = document.getText();
  const analysis = workspace.setOpenDocument(file, text) ?? workspace.analysis(file);
  if (!analysis || nestsTooDeep(text)) return [];
  if (sourceOf(analysis)) return computeSourceCompletion(document, text, offset, analysis, workspace);
  const context = contextAt(text, offset);
  if (!context) return [];
  const { path, atKey, slot } = context;
  const last = path[path.length - 1];
  const servers = await workspace.servers(file);
  const listed = (name?: string): Array<{ server: string; tools: ListedTool[] }> =>
    servers
      .filter((entry) => !name || entry.definition.name === name)
      .flatMap((entry) => (entry.listing?.status === 'listed' ? [{ server: entry.definition.name, tools: entry.listing.listing.tools }] : []));

  const blueprintFile = blueprintFileOf(analysis);
  if (blueprintFile) {
    if (atKey) return [];
    const stepIndex = path[0] === 'steps' && typeof path[1] === 'number' ? path[1] : undefined;
    if (stepIndex === undefined || path[2] !== 'input' || path.length !== 4) return [];
    const step = blueprintFile.steps.find((candidate) => candidate.index === stepIndex);
    const server = step?.mcp?.server?.value;
    if (last === 'toolName') return listed(server).flatMap((entry) => entry.tools.map((tool) => toolItem(document, slot, options, tool, entry.server)));
    if (last === 'server') {
      return servers.map((entry) => ({
        label: entry.definition.name,
        kind: CompletionItemKind.Module,
        detail: entry.definition.origin.kind,
        filterText: entry.definition.name,
        ...editFor(document, slot, entry.definition.name, options.snippets),
      }));
    }
    if (last === 'expectedSchemaHash' && step?.mcp?.toolName) {
      const toolName = step.mcp.toolName.value;
      return listed(server).flatMap((entry) =>
        entry.tools
          .filter((tool) => tool.name === toolName && tool.inputSchema !== undefined)
          .flatMap((tool) => {
            const pin = safePin(() => schemaPin(tool.inputSchema));
            return pin ? [pinItem(document, slot, options, pin, `live schema pin of ${toolName} on ${entry.server}`)] : [];
          }),
      );
    }
    return [];
  }

  // Connectors: find the instance whose providerConfig the cursor is in.
  const model = connectorOf(analysis);
  const configAt = path.indexOf('providerConfig');
  if (!model || configAt < 0) return [];
  const instance = model.instances.find((candidate) => offset >= candidate.node.offset && offset <= candidate.node.offset + candidate.node.length);
  const name = instance?.name?.value;
  if (!name) return [];
  const { listing } = await workspace.serverFor(file, 'tool', '', name);
  const tools = listing?.status === 'listed' ? listing.listing.tools : [];
  const section = path[configAt + 1];
  const depth = path.length - configAt;
  if (section === 'include' && !atKey && depth === 3) return tools.map((tool) => toolItem(document, slot, options, tool, name));
  if (section === 'toolsSnapshot' && depth === 3) {
    if (atKey) {
      // A key completes with the tool's live pin as its value when the member has none yet.
      const selected = instance!.include ? new Set(instance!.include.map((entry) => entry.value)) : undefined;
      return tools
        .filter((tool) => !selected || selected.has(tool.name))
        .map((tool) => toolItem(document, slot, options, tool, name, slot.kind === 'content' ? undefined : (safePin(() => toolPin(tool)) ?? '')));
    }
    const toolName = path[configAt + 2];
    const tool = tools.find((candidate) => candidate.name === toolName);
    const pin = tool ? safePin(() => toolPin(tool)) : undefined;
    return pin ? [pinItem(document, slot, options, pin, `live tool pin of ${String(toolName)} on ${name}`)] : [];
  }
  return [];
}

/** A name that can stand as an unquoted object key. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Completion inside a source file's literals. The edit's range is the literal's content (between
 * its quotes), or the whole identifier of an unquoted key; nothing outside it changes.
 */
async function computeSourceCompletion(document: TextDocument, text: string, offset: number, analysis: DocumentAnalysis, workspace: LiveWorkspace): Promise<CompletionItem[]> {
  const slot = sourceSlotAt(analysis, text, offset);
  if (!slot) return [];
  const file = uriToPath(document.uri);
  const { literal, quote } = slot;
  const range = quote
    ? { start: document.positionAt(literal.offset + 1), end: document.positionAt(literal.offset + literal.length - 1) }
    : { start: document.positionAt(literal.offset), end: document.positionAt(literal.offset + literal.length) };
  const written = (value: string): string => (quote ? stringLiteral(value, quote).slice(1, -1) : IDENTIFIER.test(value) ? value : stringLiteral(value, "'"));
  const item = (label: string, kind: CompletionItemKind, detail: string, extra: Partial<CompletionItem> = {}): CompletionItem => ({
    label,
    kind,
    detail,
    filterText: label,
    textEdit: TextEdit.replace(range, written(label)),
    insertTextFormat: InsertTextFormat.PlainText,
    ...extra,
  });
  const servers = await workspace.servers(file);
  const listed = (name?: string): Array<{ server: string; tools: ListedTool[] }> =>
    servers
      .filter((entry) => !name || entry.definition.name === name)
      .flatMap((entry) => (entry.listing?.status === 'listed' ? [{ server: entry.definition.name, tools: entry.listing.listing.tools }] : []));
  const toolItems = (entries: Array<{ server: string; tools: ListedTool[] }>, keep: (tool: ListedTool) => boolean = () => true): CompletionItem[] =>
    entries.flatMap((entry) => entry.tools.filter(keep).map((tool) => item(tool.name, CompletionItemKind.Function, `tool on ${entry.server}`, { documentation: tool.description })));

  if ('step' in slot) {
    const mcp = slot.step.mcp;
    const server = mcp?.server?.value;
    if (slot.kind === 'toolName') return toolItems(listed(server));
    if (slot.kind === 'server') return servers.map((entry) => item(entry.definition.name, CompletionItemKind.Module, entry.definition.origin.kind));
    const toolName = mcp?.toolName?.value;
    if (toolName === undefined) return [];
    return listed(server).flatMap((entry) =>
      entry.tools
        .filter((tool) => tool.name === toolName && tool.inputSchema !== undefined)
        .flatMap((tool) => {
          const pin = safePin(() => schemaPin(tool.inputSchema));
          return pin ? [item(pin, CompletionItemKind.Value, `live schema pin of ${toolName} on ${entry.server}`, { preselect: true })] : [];
        }),
    );
  }
  const name = slot.instance.name?.value;
  if (!name) return [];
  const { listing } = await workspace.serverFor(file, 'tool', '', name);
  const tools = listing?.status === 'listed' ? listing.listing.tools : [];
  if (slot.kind === 'include') return toolItems([{ server: name, tools }]);
  if (slot.kind === 'snapshotKey') {
    const selected = slot.instance.include ? new Set(slot.instance.include.map((entry) => entry.value)) : undefined;
    return toolItems([{ server: name, tools }], (tool) => !selected || selected.has(tool.name));
  }
  if (slot.kind !== 'toolPin') return [];
  const tool = tools.find((candidate) => candidate.name === slot.tool);
  const pin = tool ? safePin(() => toolPin(tool)) : undefined;
  return pin ? [item(pin, CompletionItemKind.Value, `live tool pin of ${slot.tool} on ${name}`, { preselect: true })] : [];
}
