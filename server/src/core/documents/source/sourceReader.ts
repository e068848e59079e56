/**
 * Pins where users write them: `defineConnector({...})` and `mcpInvoke$(id, {...})` calls in
 * TypeScript and JavaScript modules (docs/formats.md "Source files").
 *
 * This file finds the calls and turns their literal arguments into the same JSON node trees that
 * jsonc-parser builds for blueprint and connector files, with the UTF-16 offsets of the source
 * text, so every check, verification, fix, hover and completion works on them unchanged.
 *
 * Contracts:
 * - A call is recognised by its import only: a named import (aliases included) from
 *   `@objectstack/spec/integration` (defineConnector) or `@loom/plugin-mcp` (mcpInvoke$), or from
 *   a module the settings name as re-exporting them ({@link SourceNames}), a namespace import used
 *   as `ns.name(...)`, or the CommonJS `const { name } = require(...)`.
 * - Plain string literals, template literals without substitutions, numbers, booleans, null and
 *   literal object keys (quoted or not) are read. Anything else (identifiers, calls, member
 *   accesses, spreads, substitutions, computed keys, methods) is never guessed: it becomes a hole
 *   (a property without a value node, or a missing array element) and a {@link ComputedValue}.
 * - Parsing never throws. The parser recovers from what it can; a statement it cannot get past is
 *   blanked out (offsets kept) and parsed again, so the rest of a half-typed file still gives its
 *   pins, and the blanked statement is reported as {@link UnreadableRegion}.
 */
import type { parse as BabelParse, ParserOptions } from '@babel/parser';
import { babelParser } from '../../deferredLibraries';
import type { JsonNode } from '../../json/jsonDocument';
import type { Span } from '../../problems';
import { type CallKind, defaultSourceNames, type SourceNames } from './sourceNames';

export { CONNECTOR_MODULE, DEFINE_CONNECTOR, INVOKE_MODULE, MCP_INVOKE_CALL } from './sourceNames';

/** A value in a recognised call that is computed at run time, and the path that names it. */
export interface ComputedValue {
  readonly span: Span;
  /** Where the value is, in the call's own words: `providerConfig.transport.url`, `...spread`. */
  readonly path: string;
  /** The span of the key whose value is computed, when it has one. */
  readonly keySpan: Span | undefined;
}

export interface ReadCall {
  readonly span: Span;
  /** The span of the callee (`defineConnector`, an alias, `ns.mcpInvoke$`). */
  readonly calleeSpan: Span;
}

export interface ConnectorCall extends ReadCall {
  readonly kind: 'connector';
  /** The first argument as a node tree, or undefined when it is missing or computed. */
  readonly config: JsonNode | undefined;
}

export interface InvokeCall extends ReadCall {
  readonly kind: 'invoke';
  /** The step id (first argument) when it is a literal string. */
  readonly id: JsonNode | undefined;
  /** The options object (second argument), or undefined when missing or computed. */
  readonly options: JsonNode | undefined;
  /** True when the call has a second argument (literal or not). */
  readonly optionsGiven: boolean;
}

export interface UnreadableRegion {
  readonly span: Span;
  /** The parser's own words about the syntax error. */
  readonly reason: string;
}

export interface SourceReading {
  readonly connectors: readonly ConnectorCall[];
  readonly invocations: readonly InvokeCall[];
  readonly computed: readonly ComputedValue[];
  /** Objects and arrays with a spread or a computed key or element: they are not complete. */
  readonly open: ReadonlySet<JsonNode>;
  readonly unreadable: readonly UnreadableRegion[];
}

const EMPTY: SourceReading = { connectors: [], invocations: [], computed: [], open: new Set(), unreadable: [] };

/** Text to search: a string, or anything else that can say whether it holds a string (a file's bytes). */
export interface Searchable {
  includes(search: string): boolean;
}

/**
 * The cheap pre-filter: a module can hold a recognised call only if its text names one of the
 * modules of `names` (every recognised call goes through an import). A TypeScript file without
 * them costs one substring search per module. `text` may be the file's UTF-8 bytes (a Node
 * Buffer searches for the UTF-8 encoding of each name), so a file finder need not decode files
 * that are not documents.
 */
export function mayHoldPins(text: Searchable, names: SourceNames = defaultSourceNames()): boolean {
  return names.modules.some((module) => text.includes(module));
}

/** How many statements a half-typed file may lose before reading stops trying. */
const MAX_RECOVERIES = 16;

/*
 * Babel's node types, derived from what `parse` returns (so no import of @babel/types, which is
 * not a dependency of ours): each is a union discriminated by `type`, so a check of `type`
 * narrows a node without a cast.
 */
type Program = ReturnType<typeof BabelParse>['program'];
type Statement = Program['body'][number];
type Of<Union, Type extends string> = Extract<Union, { type: Type }>;
type VariableDeclarator = Of<Statement, 'VariableDeclaration'>['declarations'][number];
type Expression = NonNullable<VariableDeclarator['init']>;
type CallExpression = Of<Expression, 'CallExpression' | 'OptionalCallExpression'>;
type ObjectMember = Of<Expression, 'ObjectExpression'>['properties'][number];
type ObjectProperty = Of<ObjectMember, 'ObjectProperty'>;
/** What {@link Converter.convert} is given: an argument, a property value or an array element. */
type ValueNode = CallExpression['arguments'][number] | ObjectProperty['value'] | ObjectMember;
/** The nodes whose name {@link nameOf} reads. */
type NameNode = CallExpression['callee'] | Of<ObjectMember, 'ObjectProperty' | 'ObjectMethod'>['key'] | Of<Statement, 'ImportDeclaration'>['specifiers'][number]['local'] | Of<Expression, 'MemberExpression'>['property'] | ValueNode | VariableDeclarator['id'];
/** Any node, as far as the walk over the tree needs to know it. */
interface WalkNode {
  readonly type: string;
}
/** Where a node is: every Babel node has `start` and `end`. */
interface Located {
  readonly start?: number | null;
  readonly end?: number | null;
}

function parserOptions(jsx: boolean): ParserOptions {
  return {
    sourceType: 'unambiguous',
    errorRecovery: true,
    // Comments are never read (only literals are), and attaching them to nodes is a quarter of
    // the parse time of a large module.
    attachComment: false,
    allowImportExportEverywhere: true,
    allowReturnOutsideFunction: true,
    allowAwaitOutsideFunction: true,
    allowUndeclaredExports: true,
    plugins: jsx ? ['typescript', 'jsx'] : ['typescript'],
  };
}

/**
 * The statement to leave out for a syntax error at `offset`, approximated by lines: a statement
 * runs from a line that starts at column 0 with code up to the next such line. The parser often
 * notices an unfinished statement only in the next one, so the nearest statement at or before
 * `offset` whose brackets do not balance is chosen; when every one balances, the one holding
 * `offset`.
 */
function statementAround(text: string, offset: number): Span {
  const startsStatement = (lineStart: number): boolean => /^[A-Za-z_$@/]/.test(text.slice(lineStart, lineStart + 1)) && !text.startsWith('//', lineStart);
  const statementAt = (at: number): Span => {
    let start = text.lastIndexOf('\n', Math.max(0, at - 1)) + 1;
    while (start > 0 && !startsStatement(start)) start = text.lastIndexOf('\n', start - 2) + 1;
    let end = text.indexOf('\n', at);
    while (end >= 0 && !startsStatement(end + 1)) end = text.indexOf('\n', end + 1);
    if (end < 0) end = text.length;
    return { offset: start, length: Math.max(1, end - start) };
  };
  const holding = statementAt(offset);
  let candidate = holding;
  for (let step = 0; step < 64; step++) {
    if (closingBrackets(text.slice(candidate.offset, candidate.offset + candidate.length)) !== undefined) return candidate;
    if (candidate.offset === 0) break;
    candidate = statementAt(candidate.offset - 1);
  }
  return holding;
}

const CLOSER: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/**
 * The brackets that close what is still open at the end of `text` (a file being typed), or
 * undefined when the end is inside a string, template or comment (a closed copy would give a
 * literal that runs past the text). Strings, templates and comments are skipped roughly; a
 * regular expression literal with a quote in it makes the answer wrong, which only costs the
 * attempt: the parser still decides.
 */
function closingBrackets(text: string): string | undefined {
  const stack: string[] = [];
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '/' && text[index + 1] === '/') {
      const end = text.indexOf('\n', index);
      if (end < 0) break;
      index = end;
    } else if (char === '/' && text[index + 1] === '*') {
      const end = text.indexOf('*/', index + 2);
      if (end < 0) return undefined;
      index = end + 1;
    } else if (char === "'" || char === '"' || char === '`') {
      let end = index + 1;
      while (end < text.length && text[end] !== char && (char === '`' || text[end] !== '\n')) end += text[end] === '\\' ? 2 : 1;
      if (end >= text.length || text[end] !== char) return undefined;
      index = end;
    } else if (CLOSER[char]) {
      stack.push(CLOSER[char]!);
    } else if (char === ')' || char === ']' || char === '}') {
      stack.pop();
    }
  }
  return stack.length > 0 ? stack.reverse().join('') : undefined;
}

function blank(text: string, span: Span): string {
  return text.slice(0, span.offset) + text.slice(span.offset, span.offset + span.length).replace(/[^\r\n]/g, ' ') + text.slice(span.offset + span.length);
}

/** Parses with recovery; never throws. `jsx` is for .tsx/.jsx files (and plain .js, where JSX is common). */
/** The offset of a syntax error Babel threw (its `pos`), or undefined for anything else. */
function errorPosition(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'pos' in error && typeof error.pos === 'number' ? error.pos : undefined;
}

function parseRecovering(text: string, jsx: boolean): { program: Program | undefined; unreadable: UnreadableRegion[] } {
  const unreadable: UnreadableRegion[] = [];
  let current = text;
  // Loaded outside the try: a parser that cannot be loaded (a broken install without
  // dist/lib/babel-parser.js) must fail loudly, not read as a module without pins.
  const parser = babelParser();
  for (let attempt = 0; attempt <= MAX_RECOVERIES; attempt++) {
    try {
      return { program: parser.parse(current, parserOptions(jsx)).program, unreadable };
    } catch (error) {
      const position = errorPosition(error);
      if (position === undefined) return { program: undefined, unreadable };
      // A file being typed ends inside a call: closing its brackets keeps the literals typed so
      // far (offsets do not move, the brackets go after the end).
      if (position >= current.trimEnd().length) {
        const closers = closingBrackets(current);
        if (closers) {
          try {
            return { program: parser.parse(current + closers, parserOptions(jsx)).program, unreadable };
          } catch {
            // Not enough: the statement is left out below.
          }
        }
      }
      const span = statementAround(current, Math.min(position, current.length));
      const reason = error instanceof Error ? error.message.replace(/\s*\(\d+:\d+\)$/, '') : 'syntax error';
      unreadable.push({ span, reason });
      current = blank(current, span);
    }
  }
  return { program: undefined, unreadable };
}

function spanOfAst(node: Located): Span {
  const start = node.start ?? 0;
  return { offset: start, length: (node.end ?? start) - start };
}

/** The names under which the two functions are visible in a module. */
interface Bindings {
  readonly direct: Map<string, CallKind>;
  /** Namespace imports and whole-module requires: `ns` → the module specifier. */
  readonly namespaces: Map<string, string>;
}

/** The kind of call the export `exported` of module `source` is, under `names`; undefined when it is neither. */
function exportKind(names: SourceNames, source: string, exported: string | undefined): CallKind | undefined {
  if (exported === undefined) return undefined;
  if (names.connector.get(source)?.has(exported)) return 'connector';
  if (names.invoke.get(source)?.has(exported)) return 'invoke';
  return undefined;
}

function isNamedModule(names: SourceNames, source: unknown): source is string {
  return typeof source === 'string' && (names.connector.has(source) || names.invoke.has(source));
}

function nameOf(node: NameNode | null | undefined): string | undefined {
  if (node?.type === 'Identifier') return node.name;
  if (node?.type === 'StringLiteral') return node.value;
  return undefined;
}

function collectBindings(program: Program, names: SourceNames): Bindings {
  const bindings: Bindings = { direct: new Map(), namespaces: new Map() };
  for (const statement of program.body) {
    if (statement.type === 'ImportDeclaration') {
      const source = statement.source.value;
      if (!isNamedModule(names, source) || statement.importKind === 'type') continue;
      for (const specifier of statement.specifiers) {
        const local = nameOf(specifier.local);
        if (!local) continue;
        if (specifier.type === 'ImportSpecifier' && specifier.importKind !== 'type') {
          const kind = exportKind(names, source, nameOf(specifier.imported));
          if (kind) bindings.direct.set(local, kind);
        }
        if (specifier.type === 'ImportNamespaceSpecifier') bindings.namespaces.set(local, source);
      }
    } else if (statement.type === 'VariableDeclaration') {
      // CommonJS: const { defineConnector: define } = require('@objectstack/spec/integration')
      for (const declarator of statement.declarations) {
        const init = declarator.init;
        if (init?.type !== 'CallExpression' || nameOf(init.callee) !== 'require') continue;
        const first = init.arguments[0];
        if (first?.type !== 'StringLiteral' || !isNamedModule(names, first.value)) continue;
        const source = first.value;
        const id = declarator.id;
        if (id.type === 'Identifier') bindings.namespaces.set(id.name, source);
        if (id.type !== 'ObjectPattern') continue;
        for (const property of id.properties) {
          if (property.type !== 'ObjectProperty' || property.computed) continue;
          const local = nameOf(property.value);
          const kind = exportKind(names, source, nameOf(property.key));
          if (local && kind) bindings.direct.set(local, kind);
        }
      }
    }
  }
  return bindings;
}

function calleeKind(callee: CallExpression['callee'], bindings: Bindings, names: SourceNames): CallKind | undefined {
  if (callee.type === 'Identifier') return bindings.direct.get(callee.name);
  if ((callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') && !callee.computed) {
    const object = callee.object;
    const source = object.type === 'Identifier' ? bindings.namespaces.get(object.name) : undefined;
    return source === undefined ? undefined : exportKind(names, source, nameOf(callee.property));
  }
  return undefined;
}

const SKIPPED_KEYS = new Set(['loc', 'start', 'end', 'extra', 'range', 'leadingComments', 'trailingComments', 'innerComments', 'typeAnnotation', 'returnType', 'typeParameters']);

/**
 * The keys that can lead to a call, for the node types met on the way to most calls: listing them
 * saves enumerating every property of each node (Babel's nodes have many). Any other type is
 * walked through all its keys but {@link SKIPPED_KEYS}. Each list holds every key of its type that
 * can hold an expression (a decorator on an identifier included), so no call is missed.
 */
const CHILD_KEYS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['ExportNamedDeclaration', ['declaration']],
  ['ExportDefaultDeclaration', ['declaration']],
  ['VariableDeclaration', ['declarations']],
  ['VariableDeclarator', ['id', 'init']],
  ['ExpressionStatement', ['expression']],
  ['CallExpression', ['callee', 'arguments']],
  ['OptionalCallExpression', ['callee', 'arguments']],
  ['MemberExpression', ['object', 'property']],
  ['OptionalMemberExpression', ['object', 'property']],
  ['ArrayExpression', ['elements']],
  ['ObjectExpression', ['properties']],
  ['ObjectProperty', ['key', 'value']],
  ['SpreadElement', ['argument']],
  ['TemplateLiteral', ['expressions']],
  ['TSAsExpression', ['expression']],
  ['TSSatisfiesExpression', ['expression']],
  ['TSNonNullExpression', ['expression']],
  ['ParenthesizedExpression', ['expression']],
  ['Identifier', ['decorators']],
  ['StringLiteral', []],
  ['NumericLiteral', []],
  ['BooleanLiteral', []],
  ['NullLiteral', []],
  ['ImportDeclaration', []],
]);

/** True when a value met in the tree is a node (an object with a string `type`). */
function isWalkNode(value: unknown): value is WalkNode & Located {
  return typeof value === 'object' && value !== null && 'type' in value && typeof value.type === 'string';
}

/**
 * The offsets where any of `names` occurs in `text`, sorted. A recognised call's callee is one of
 * these names (a direct binding, or the object of `ns.name`), so a node whose text holds none of
 * them holds no recognised call: the walk leaves it out.
 */
function occurrences(text: string, names: Iterable<string>): number[] {
  const found: number[] = [];
  for (const name of names) {
    for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + name.length)) found.push(at);
  }
  return found.sort((a, b) => a - b);
}

/** True when some offset of the sorted `offsets` is in [start, end). */
function anyWithin(offsets: readonly number[], start: number, end: number): boolean {
  let low = 0;
  let high = offsets.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (offsets[middle]! < start) low = middle + 1;
    else high = middle;
  }
  return low < offsets.length && offsets[low]! < end;
}

/** True when a node is a call: the one kind of node the reader looks for. */
function isCall(node: WalkNode): node is CallExpression {
  return node.type === 'CallExpression' || node.type === 'OptionalCallExpression';
}

/**
 * Visits every call below `root` whose text holds one of the sorted `offsets`, without recursion
 * (deep modules never exhaust the stack). Subtrees holding none are not entered: most of a module
 * is code around the calls, and the walk is what reading costs beyond the parse.
 */
function walkCalls(root: WalkNode, offsets: readonly number[], visit: (node: CallExpression) => void): void {
  const stack: WalkNode[] = [root];
  const push = (child: unknown): void => {
    if (isWalkNode(child) && anyWithin(offsets, child.start ?? 0, child.end ?? Number.POSITIVE_INFINITY)) stack.push(child);
  };
  const pushValue = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) push(value[index]);
    } else {
      push(value);
    }
  };
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isCall(node)) visit(node);
    const keys = CHILD_KEYS.get(node.type);
    if (keys) {
      for (const key of keys) pushValue(Reflect.get(node, key));
      continue;
    }
    for (const key in node) {
      if (!SKIPPED_KEYS.has(key)) pushValue(Reflect.get(node, key));
    }
  }
}

/** Wrappers that do not change a literal's value: `as const`, `satisfies T`, `!`, `<T>x`, parentheses. */
const TRANSPARENT = new Set(['TSAsExpression', 'TSSatisfiesExpression', 'TSNonNullExpression', 'TSTypeAssertion', 'ParenthesizedExpression']);
type Transparent = Of<Expression, 'TSAsExpression' | 'TSSatisfiesExpression' | 'TSNonNullExpression' | 'TSTypeAssertion' | 'ParenthesizedExpression'>;

function isTransparent(node: ValueNode): node is Transparent {
  return TRANSPARENT.has(node.type);
}

class Converter {
  readonly computed: ComputedValue[] = [];
  readonly open = new Set<JsonNode>();

  private hole(node: Located, path: string, keySpan: Span | undefined): undefined {
    this.computed.push({ span: spanOfAst(node), path, keySpan });
    return undefined;
  }

  /** The node tree of a literal expression, or undefined (and a computed value) when it is not literal. */
  convert(expression: ValueNode, path: string, parent: JsonNode | undefined, keySpan?: Span): JsonNode | undefined {
    let node: ValueNode = expression;
    while (isTransparent(node)) node = node.expression;
    const { offset, length } = spanOfAst(node);
    const base = { offset, length, ...(parent ? { parent } : {}) };
    switch (node.type) {
      case 'StringLiteral':
        return { type: 'string', value: node.value, ...base };
      case 'TemplateLiteral': {
        const cooked = node.quasis[0]?.value.cooked;
        if (node.expressions.length > 0 || typeof cooked !== 'string') return this.hole(node, path, keySpan);
        return { type: 'string', value: cooked, ...base };
      }
      case 'NumericLiteral':
        return { type: 'number', value: node.value, ...base };
      case 'UnaryExpression': {
        const argument = node.argument;
        if (node.operator === '-' && argument.type === 'NumericLiteral') return { type: 'number', value: -argument.value, ...base };
        return this.hole(node, path, keySpan);
      }
      case 'BooleanLiteral':
        return { type: 'boolean', value: node.value, ...base };
      case 'NullLiteral':
        return { type: 'null', value: null, ...base };
      case 'ObjectExpression':
        return this.object(node, path, base);
      case 'ArrayExpression': {
        const elements: JsonNode[] = [];
        const array: JsonNode = { type: 'array', ...base, children: elements };
        node.elements.forEach((element, index) => {
          if (!element) return;
          if (element.type === 'SpreadElement') {
            this.open.add(array);
            this.hole(element, `${path}[…spread]`, undefined);
            return;
          }
          const child = this.convert(element, `${path}[${index}]`, array);
          if (child) elements.push(child);
          else this.open.add(array);
        });
        return array;
      }
      default:
        return this.hole(node, path, keySpan);
    }
  }

  private object(node: Of<Expression, 'ObjectExpression'>, path: string, base: { offset: number; length: number; parent?: JsonNode }): JsonNode {
    const members: JsonNode[] = [];
    const object: JsonNode = { type: 'object', ...base, children: members };
    for (const member of node.properties) {
      if (member.type === 'SpreadElement') {
        this.open.add(object);
        this.hole(member, path ? `${path}.…spread` : '…spread', undefined);
        continue;
      }
      const keyAst = member.key;
      const key = member.computed ? undefined : keyAst.type === 'NumericLiteral' ? String(keyAst.value) : nameOf(keyAst);
      if (key === undefined) {
        this.open.add(object);
        this.hole(member, path ? `${path}.[computed key]` : '[computed key]', undefined);
        continue;
      }
      const memberPath = path ? `${path}.${key}` : key;
      const keySpan = spanOfAst(keyAst);
      const isValue = member.type === 'ObjectProperty' && !member.shorthand;
      const parts: JsonNode[] = [];
      const property: JsonNode = { type: 'property', ...spanOfAst(member), parent: object, children: parts, ...(isValue ? { colonOffset: keySpan.offset + keySpan.length } : {}) };
      parts.push({ type: 'string', value: key, ...keySpan, parent: property });
      if (member.type === 'ObjectProperty' && !member.shorthand) {
        const value = this.convert(member.value, memberPath, property, keySpan);
        if (value) parts.push(value);
      } else {
        // A shorthand `{ toolName }` or a method: the value is whatever the binding holds at run time.
        this.hole(member.type === 'ObjectProperty' ? member.value : member, memberPath, keySpan);
      }
      members.push(property);
    }
    return object;
  }
}

/**
 * Reads the recognised calls of a module. `fileName` decides JSX (`.tsx`, `.jsx`, and `.js`
 * files, where it is common); `names` which imports are the pin calls (by default the built-in
 * ones, or what the CLI set for its run). Never throws.
 */
export function readSource(text: string, fileName = 'module.ts', names: SourceNames = defaultSourceNames()): SourceReading {
  if (!mayHoldPins(text, names)) return EMPTY;
  const jsx = /\.(tsx|jsx|js|mjs|cjs)$/i.test(fileName);
  let parsed = parseRecovering(text, jsx);
  // A `.js` file may use TypeScript-only syntax that reads as JSX (`<T>x`); try once without JSX.
  if (!parsed.program && jsx && /\.(js|mjs|cjs)$/i.test(fileName)) parsed = parseRecovering(text, false);
  const { program, unreadable } = parsed;
  if (!program) return { ...EMPTY, unreadable };
  const bindings = collectBindings(program, names);
  if (bindings.direct.size === 0 && bindings.namespaces.size === 0) return { ...EMPTY, unreadable };

  const converter = new Converter();
  const connectors: ConnectorCall[] = [];
  const invocations: InvokeCall[] = [];
  walkCalls(program, occurrences(text, [...bindings.direct.keys(), ...bindings.namespaces.keys()]), (node) => {
    const callee = node.callee;
    const kind = calleeKind(callee, bindings, names);
    if (!kind) return;
    const args = node.arguments;
    const call = { span: spanOfAst(node), calleeSpan: spanOfAst(callee) };
    if (kind === 'connector') {
      const first = args[0];
      const config = first && first.type !== 'SpreadElement' ? converter.convert(first, '', undefined) : first ? converter.convert(first, '…spread', undefined) : undefined;
      connectors.push({ kind, ...call, config: config?.type === 'object' ? config : undefined });
    } else {
      const [idAst, optionsAst] = args;
      const id = idAst ? converter.convert(idAst, 'id', undefined) : undefined;
      const options = optionsAst ? converter.convert(optionsAst, '', undefined) : undefined;
      invocations.push({ kind, ...call, id: id?.type === 'string' ? id : undefined, options: options?.type === 'object' ? options : undefined, optionsGiven: optionsAst !== undefined });
    }
  });
  connectors.sort((a, b) => a.span.offset - b.span.offset);
  invocations.sort((a, b) => a.span.offset - b.span.offset);
  return { connectors, invocations, computed: converter.computed, open: converter.open, unreadable };
}
