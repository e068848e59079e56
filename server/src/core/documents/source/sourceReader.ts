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
 *   `@objectstack/spec` or `@objectstack/spec/integration` (defineConnector; defineStack from the
 *   root, whose inline `connectors: [ … ]` are instances), `@loom/plugin-mcp` (mcpInvoke$), or a
 *   module the settings name as re-exporting them ({@link SourceNames}); a namespace import used as
 *   `ns.name(...)`; the CommonJS `const { name } = require(...)`; a module-level alias of one of
 *   those. Scopes are resolved: a local binding of the same name (a parameter of a minified
 *   function, say) is not the function.
 * - Plain string literals, template literals without substitutions, numbers, booleans, null and
 *   literal object keys (quoted or not) are read, and so are same-module constants
 *   (sourceValues.ts). Anything else (other identifiers, calls, member accesses, spreads,
 *   substitutions, computed keys, methods) is never guessed: it becomes a hole (a property without
 *   a value node, or a missing array element) and a {@link ComputedValue}.
 * - Parsing never throws (sourceParse.ts): a statement the parser cannot get past is reported as an
 *   {@link UnreadableRegion} and the rest of the module is read. A module over the size limit is
 *   not parsed at all and is one region.
 */
import type { JsonNode } from '../../json/jsonDocument';
import type { Span } from '../../problems';
import { type CallExpression, type Expression, type Located, type NameNode, type Of, type ObjectProperty, parseModule, type Statement, type UnreadableRegion, type WalkNode } from './sourceParse';
import { isShadowed } from './sourceScope';
import { type ComputedValue, Converter, KNOWN_IMPORTS, type Origin, spanOfAst } from './sourceValues';
import { foreignLookup, type ImportedName, importedNames, type ModuleAccess } from './sourceModules';
import { type CallKind, defaultSourceNames, type SourceNames } from './sourceNames';

export type { UnreadableRegion } from './sourceParse';

export { CONNECTOR_MODULE, DEFINE_CONNECTOR, INVOKE_MODULE, MCP_INVOKE_CALL } from './sourceNames';

export type { ComputedValue, Origin } from './sourceValues';
export type { ModuleAccess } from './sourceModules';

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

export interface SourceReading {
  readonly connectors: readonly ConnectorCall[];
  readonly invocations: readonly InvokeCall[];
  readonly computed: readonly ComputedValue[];
  /** Objects and arrays with a spread or a computed key or element: they are not complete. */
  readonly open: ReadonlySet<JsonNode>;
  readonly unreadable: readonly UnreadableRegion[];
  /** Nodes whose value was read in another module (placed at their use here), and where each is written. */
  readonly origins: ReadonlyMap<JsonNode, Origin>;
}

const EMPTY: SourceReading = { connectors: [], invocations: [], computed: [], open: new Set(), unreadable: [], origins: new Map() };

/** Text to search: a string, or anything else that can say whether it holds a string (a file's bytes). */
export interface Searchable {
  includes(search: string): boolean;
}

/**
 * The cheap pre-filter: a module can hold a recognised call only if its text names one of the
 * modules of `names` (every recognised call goes through an import) and one of their functions
 * (an import, an alias and `ns.name(…)` all write the exported name once). A TypeScript file
 * without them costs a few substring searches; the many modules that import something else from
 * `@objectstack/spec` are not parsed. `text` may be the file's UTF-8 bytes (a Node
 * Buffer searches for the UTF-8 encoding of each name), so a file finder need not decode files
 * that are not documents.
 */
export function mayHoldPins(text: Searchable, names: SourceNames = defaultSourceNames()): boolean {
  return names.modules.some((module) => text.includes(module)) && names.functions.some((name) => text.includes(name));
}

/** How far before a module specifier the import or export clause that names it is looked for. */
const CLAUSE_WINDOW = 4096;

/**
 * The second, sharper text test, on a module's text (after {@link mayHoldPins}): some statement
 * imports a pin function. True when one of the modules of `names` is written as a string (in
 * quotes or backticks) that is the argument of `require(` or `import(`, or ends an `import` or
 * `export … from` clause that names one of the functions or is a namespace import (`* as ns`).
 * Most modules that merely import something else from `@objectstack/spec`, or name
 * `defineConnector` in a comment, are not parsed. A false answer means no recognised call can be
 * in the module: every recognised call goes through such an import.
 */
export function importsPinFunction(text: string, names: SourceNames = defaultSourceNames()): boolean {
  for (const module of names.modules) {
    for (const quote of ["'", '"', '`']) {
      const written = `${quote}${module}${quote}`;
      for (let at = text.indexOf(written); at >= 0; at = text.indexOf(written, at + written.length)) {
        const before = text.slice(Math.max(0, at - CLAUSE_WINDOW), at);
        if (/\b(?:require|import)\s*\(\s*$/.test(before)) return true;
        const start = Math.max(before.lastIndexOf('import'), before.lastIndexOf('export'));
        if (start < 0) continue;
        const clause = before.slice(start);
        if (/\*\s*as\s/.test(clause) || names.functions.some((name) => clause.includes(name))) return true;
      }
    }
  }
  return false;
}

/** The names under which the pin functions are visible in a module, and its constants. */
interface Bindings {
  readonly direct: Map<string, CallKind>;
  /** Namespace imports and whole-module requires: `ns` → the module specifier. */
  readonly namespaces: Map<string, string>;
  readonly constants: Map<string, Expression>;
  readonly known: Map<string, string>;
  /** Every value imported by name, default or namespace: local name → module specifier. */
  readonly imported: Map<string, string>;
  /** The same imports with the name each imports (`*` for a namespace, `default`). */
  readonly importedNames: Map<string, ImportedName>;
}

/** The kind of call the export `exported` of module `source` is, under `names`; undefined when it is neither. */
function exportKind(names: SourceNames, source: string, exported: string | undefined): CallKind | undefined {
  if (exported === undefined) return undefined;
  if (names.connector.get(source)?.has(exported)) return 'connector';
  if (names.invoke.get(source)?.has(exported)) return 'invoke';
  if (names.stack.get(source)?.has(exported)) return 'stack';
  return undefined;
}

function isNamedModule(names: SourceNames, source: unknown): source is string {
  return typeof source === 'string' && (names.connector.has(source) || names.invoke.has(source) || names.stack.has(source));
}

function nameOf(node: NameNode | null | undefined): string | undefined {
  if (node?.type === 'Identifier') return node.name;
  if (node?.type === 'StringLiteral') return node.value;
  return undefined;
}

/** Reads an import declaration into `bindings`. */
function readImport(statement: Of<Statement, 'ImportDeclaration'>, names: SourceNames, bindings: Bindings): void {
  const source = statement.source.value;
  if (statement.importKind === 'type') return;
  importedNames(statement, bindings.importedNames);
  const known = KNOWN_IMPORTS.get(source);
  for (const specifier of statement.specifiers) {
    const local = nameOf(specifier.local);
    if (local && !(specifier.type === 'ImportSpecifier' && specifier.importKind === 'type')) bindings.imported.set(local, source);
    if (!local || specifier.type !== 'ImportSpecifier' || specifier.importKind === 'type') continue;
    const value = known?.get(nameOf(specifier.imported) ?? '');
    if (value !== undefined) bindings.known.set(local, value);
  }
  if (!isNamedModule(names, source)) return;
  for (const specifier of statement.specifiers) {
    const local = nameOf(specifier.local);
    if (!local) continue;
    if (specifier.type === 'ImportSpecifier' && specifier.importKind !== 'type') {
      const kind = exportKind(names, source, nameOf(specifier.imported));
      if (kind) bindings.direct.set(local, kind);
    }
    if (specifier.type === 'ImportNamespaceSpecifier') bindings.namespaces.set(local, source);
  }
}

/**
 * Reads a top-level variable declaration into `bindings`: CommonJS requires
 * (`const { defineConnector: define } = require('@objectstack/spec/integration')`), destructured
 * namespaces (`const { defineConnector } = spec`), aliases (`const define = spec.defineConnector`,
 * `const define = defineConnector`) and, for `const`, the module's constants.
 */
function readDeclaration(statement: Of<Statement, 'VariableDeclaration'>, names: SourceNames, bindings: Bindings): void {
  for (const declarator of statement.declarations) {
    const init = declarator.init;
    const id = declarator.id;
    if (!init) continue;
    if (statement.kind === 'const' && id.type === 'Identifier') bindings.constants.set(id.name, init);
    let source: string | undefined;
    if (init.type === 'CallExpression' && nameOf(init.callee) === 'require') {
      const first = init.arguments[0];
      if (first?.type === 'StringLiteral' && isNamedModule(names, first.value)) source = first.value;
    } else if (init.type === 'Identifier') {
      source = bindings.namespaces.get(init.name);
      const kind = bindings.direct.get(init.name);
      if (kind && id.type === 'Identifier') bindings.direct.set(id.name, kind);
    } else if (init.type === 'MemberExpression' && !init.computed && init.object.type === 'Identifier' && id.type === 'Identifier') {
      const namespace = bindings.namespaces.get(init.object.name);
      const kind = namespace === undefined ? undefined : exportKind(names, namespace, nameOf(init.property));
      if (kind) bindings.direct.set(id.name, kind);
    }
    if (source === undefined) continue;
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

function collectBindings(statements: readonly Statement[], names: SourceNames): Bindings {
  const bindings: Bindings = { direct: new Map(), namespaces: new Map(), constants: new Map(), known: new Map(), imported: new Map(), importedNames: new Map() };
  // Imports first: a declaration may alias an import written below it.
  for (const statement of statements) if (statement.type === 'ImportDeclaration') readImport(statement, names, bindings);
  for (const statement of statements) {
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type === 'VariableDeclaration') readDeclaration(declaration, names, bindings);
  }
  return bindings;
}

/** The kind of a call, or undefined when its callee is not a pin function here (a local binding shadows it). */
function calleeKind(callee: CallExpression['callee'], bindings: Bindings, names: SourceNames, ancestors: readonly WalkNode[]): CallKind | undefined {
  if (callee.type === 'Identifier') {
    const kind = bindings.direct.get(callee.name);
    return kind && !isShadowed(callee.name, ancestors) ? kind : undefined;
  }
  if ((callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') && !callee.computed) {
    const object = callee.object;
    const source = object.type === 'Identifier' && !isShadowed(object.name, ancestors) ? bindings.namespaces.get(object.name) : undefined;
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
 * Visits every call below `roots` whose text holds one of the sorted `offsets`, with the nodes
 * that enclose it (outermost first), without recursion (deep modules never exhaust the stack).
 * Subtrees holding none are not entered: most of a module is code around the calls, and the walk
 * is what reading costs beyond the parse.
 */
function walkCalls(roots: readonly Statement[], offsets: readonly number[], visit: (node: CallExpression, ancestors: readonly WalkNode[]) => void): void {
  const stack: Array<{ node: WalkNode; depth: number }> = [];
  const path: WalkNode[] = [];
  let depth = 0;
  const push = (child: unknown): void => {
    if (isWalkNode(child) && anyWithin(offsets, child.start ?? 0, child.end ?? Number.POSITIVE_INFINITY)) stack.push({ node: child, depth });
  };
  const pushValue = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) push(value[index]);
    } else {
      push(value);
    }
  };
  for (let index = roots.length - 1; index >= 0; index--) push(roots[index]);
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const node = entry.node;
    path.length = entry.depth;
    if (isCall(node)) visit(node, path);
    path.push(node);
    depth = entry.depth + 1;
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

/** The pin literals of our forms: a schema pin (`fnv1a64:` and 16 hex) or a tool pin (`sha256:` and 64 hex). */
export const PIN_LITERAL = /\b(?:fnv1a64:[0-9a-fA-F]{16}|sha256:[0-9a-fA-F]{64})(?![0-9a-fA-F])/g;

/** A pin literal found in text Toolpin could not read: its pins cannot be verified. */
export interface UnreadPin {
  readonly span: Span;
  readonly pin: string;
  readonly kind: 'schema' | 'tool';
}

/** The pin literals in `span` of `text`. */
export function pinLiteralsIn(text: string, span: Span): UnreadPin[] {
  const found: UnreadPin[] = [];
  const part = text.slice(span.offset, span.offset + span.length);
  for (const match of part.matchAll(PIN_LITERAL)) {
    found.push({ span: { offset: span.offset + match.index!, length: match[0].length }, pin: match[0], kind: match[0].startsWith('fnv1a64:') ? 'schema' : 'tool' });
  }
  return found;
}

/**
 * Reads the recognised calls of a module. `fileName` decides JSX (`.tsx`, `.jsx`, and `.js`
 * files, where it is common); `names` which imports are the pin calls (by default the built-in
 * ones, or what the CLI set for its run); `modules`, when given, reads values imported from
 * other modules of the workspace (sourceModules.ts; `fileName` is then the module's path). Never throws.
 */
export function readSource(text: string, fileName = 'module.ts', names: SourceNames = defaultSourceNames(), modules?: ModuleAccess): SourceReading {
  if (!mayHoldPins(text, names) || !importsPinFunction(text, names)) return EMPTY;
  if (text.length > names.maxFileBytes) {
    const reason = `the module is ${text.length.toLocaleString('en-US')} characters long, over the limit of ${names.maxFileBytes.toLocaleString('en-US')} bytes for modules read (setting maxFileBytes); it was not read`;
    return { ...EMPTY, unreadable: [{ span: { offset: 0, length: 0 }, reason, tooLarge: true }] };
  }
  const jsx = /\.(tsx|jsx|js|mjs|cjs)$/i.test(fileName);
  const { statements, unreadable } = parseModule(text, jsx, jsx && /\.(js|mjs|cjs)$/i.test(fileName));
  const bindings = collectBindings(statements, names);
  if (bindings.direct.size === 0 && bindings.namespaces.size === 0) return { ...EMPTY, unreadable };

  const converter = new Converter(text, modules ? { ...bindings, foreign: foreignLookup(modules, fileName, bindings.importedNames) } : bindings);
  const connectors: ConnectorCall[] = [];
  const invocations: InvokeCall[] = [];
  walkCalls(statements, occurrences(text, [...bindings.direct.keys(), ...bindings.namespaces.keys()]), (node, ancestors) => {
    const callee = node.callee;
    const kind = calleeKind(callee, bindings, names, ancestors);
    if (!kind) return;
    converter.ancestors = ancestors;
    const args = node.arguments;
    const call = { span: spanOfAst(node), calleeSpan: spanOfAst(callee) };
    if (kind === 'connector') {
      const first = args[0];
      const config = first && first.type !== 'SpreadElement' ? converter.convert(first, '', undefined) : first ? converter.convert(first, '…spread', undefined) : undefined;
      connectors.push({ kind, ...call, config: config?.type === 'object' ? config : undefined });
    } else if (kind === 'stack') {
      connectors.push(...stackConnectors(args[0], converter));
    } else {
      const [idAst, optionsAst] = args;
      const id = idAst ? converter.convert(idAst, 'id', undefined) : undefined;
      const options = optionsAst ? converter.convert(optionsAst, '', undefined) : undefined;
      invocations.push({ kind, ...call, id: id?.type === 'string' ? id : undefined, options: options?.type === 'object' ? options : undefined, optionsGiven: optionsAst !== undefined });
    }
  });
  connectors.sort((a, b) => a.span.offset - b.span.offset);
  invocations.sort((a, b) => a.span.offset - b.span.offset);
  return { connectors, invocations, computed: converter.computed, open: converter.open, unreadable, origins: converter.origins };
}

/**
 * The connectors written inline in `defineStack({ connectors: [ … ] })` (or in a same-module
 * constant it names): each object literal is one instance, read as a `defineConnector` argument.
 * Anything else in the list (a name bound to a `defineConnector` result, a spread) is read where it
 * is defined, so it is not reported here; nor is the rest of the stack, which holds no pins.
 */
function stackConnectors(argument: CallExpression['arguments'][number] | undefined, converter: Converter): ConnectorCall[] {
  if (!argument || argument.type === 'SpreadElement' || argument.type === 'ArgumentPlaceholder') return [];
  const stack = argument.type === 'ObjectExpression' ? argument : converter.resolve(argument);
  if (stack?.type !== 'ObjectExpression') return [];
  const member = stack.properties.find((entry): entry is ObjectProperty => entry.type === 'ObjectProperty' && !entry.computed && nameOf(entry.key) === 'connectors');
  const list = member ? (member.value.type === 'ArrayExpression' ? member.value : converter.resolve(member.value)) : undefined;
  if (list?.type !== 'ArrayExpression') return [];
  const found: ConnectorCall[] = [];
  for (const element of list.elements) {
    if (!element || element.type === 'SpreadElement') continue;
    const literal = element.type === 'ObjectExpression' ? element : converter.resolve(element);
    if (literal?.type !== 'ObjectExpression') continue;
    const config = converter.convert(literal, '', undefined);
    const span = spanOfAst(literal);
    if (config?.type === 'object') found.push({ kind: 'connector', span, calleeSpan: { offset: span.offset, length: 1 }, config });
  }
  return found;
}
