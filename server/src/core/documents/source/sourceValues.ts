/**
 * The literal values of a recognised call, as JSON node trees with the UTF-16 offsets of the
 * module's text (see sourceReader.ts for what is read and what is a hole).
 *
 * Constants of the same module are read exactly, never guessed: a name bound by a top-level
 * `const` (not shadowed where it is used) whose initializer is a literal, a member of such a
 * constant (`PINS.search`, `PINS['search']`, `SERVERS.github`), and a spread of a constant object
 * (`...MCP_DEFAULTS`) give the constant's own literal nodes, at the constant's own offsets: a
 * re-pin rewrites the literal where the constant is defined, and nothing else. A few imported
 * constants whose value is fixed by their package are known by value ({@link KNOWN_IMPORTS}).
 * Anything else stays a hole.
 */
import type { JsonNode } from '../../json/jsonDocument';
import type { Span } from '../../problems';
import type { Expression, Located, ObjectMember, Of, ValueNode, WalkNode } from './sourceParse';
import { isShadowed } from './sourceScope';

/** A value in a recognised call that is computed at run time, and the path that names it. */
export interface ComputedValue {
  readonly span: Span;
  /** Where the value is, in the call's own words: `providerConfig.transport.url`, `...spread`. */
  readonly path: string;
  /** The span of the key whose value is computed, when it has one. */
  readonly keySpan: Span | undefined;
  /** What the computed value is, in the source's own words (`pickProvider()`, `...DEFAULTS`), shortened. */
  readonly text: string;
  /**
   * Set when the value is a name (or a member of a name) imported from another module: the local
   * name and the module specifier (`PINS` from `./pins`). Values are read in one module only.
   */
  readonly imported?: { readonly name: string; readonly from: string };
  /** Why an imported value could not be read in the module that defines it (sourceModules.ts), when Toolpin looked there. */
  readonly reason?: string;
}

/** Where a literal read from another module is written: its file, its span there (quotes included) and its quote. */
export interface Origin {
  readonly file: string;
  readonly span: Span;
  readonly quote: string | undefined;
}

/**
 * Reads the value an imported name stands for, in the module that defines it (sourceModules.ts):
 * `local` is the importing module's name, `members` the static member names after it
 * (`PINS.search` is `PINS`, `['search']`). The answer is a node tree at the defining module's
 * offsets with the {@link Origin} of every node, a reason it cannot be read, or undefined when the
 * name is not imported from a module Toolpin reads (a package).
 */
export type ForeignLookup = (local: string, members: readonly string[]) => { readonly tree: JsonNode; readonly origins: ReadonlyMap<JsonNode, Origin> } | { readonly reason: string } | undefined;

/**
 * Imported constants whose value their package fixes: module → export → value. `MCP_PROVIDER_KEY`
 * of `@objectstack/connector-mcp` 17.1.0 is `'mcp'` (packages/connectors/connector-mcp/src/mcp-provider.ts).
 */
export const KNOWN_IMPORTS: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([['@objectstack/connector-mcp', new Map([['MCP_PROVIDER_KEY', 'mcp']])]]);

/** The module-level names a value may refer to. */
export interface ModuleConstants {
  /** Top-level `const NAME = <initializer>` declarations. */
  readonly constants: ReadonlyMap<string, Expression>;
  /** Imported names whose value is known ({@link KNOWN_IMPORTS}). */
  readonly known: ReadonlyMap<string, string>;
  /** Every value imported by name, default or namespace: local name → module specifier. */
  readonly imported?: ReadonlyMap<string, string>;
  /** Reads imported values across modules; absent, imported values are holes. */
  readonly foreign?: ForeignLookup;
}

export function spanOfAst(node: Located): Span {
  const start = node.start ?? 0;
  return { offset: start, length: (node.end ?? start) - start };
}

/** Wrappers that do not change a literal's value: `as const`, `satisfies T`, `!`, `<T>x`, parentheses. */
const TRANSPARENT = new Set(['TSAsExpression', 'TSSatisfiesExpression', 'TSNonNullExpression', 'TSTypeAssertion', 'ParenthesizedExpression']);
type Transparent = Of<Expression, 'TSAsExpression' | 'TSSatisfiesExpression' | 'TSNonNullExpression' | 'TSTypeAssertion' | 'ParenthesizedExpression'>;

function isTransparent(node: ValueNode): node is Transparent {
  return TRANSPARENT.has(node.type);
}

function unwrap(expression: ValueNode): ValueNode {
  let node = expression;
  while (isTransparent(node)) node = node.expression;
  return node;
}

function keyName(member: ObjectMember): string | undefined {
  if (member.type === 'SpreadElement' || member.computed) return undefined;
  const key = member.key;
  if (key.type === 'Identifier' || key.type === 'StringLiteral') return key.type === 'Identifier' ? key.name : key.value;
  if (key.type === 'NumericLiteral') return String(key.value);
  return undefined;
}

/** How deep constants may refer to constants (a cycle `const A = B, B = A` ends here). */
const MAX_INDIRECTION = 16;

export class Converter {
  readonly computed: ComputedValue[] = [];
  readonly open = new Set<JsonNode>();
  /**
   * Nodes read from another module, placed at their use in this module (diagnostics stay where the
   * value is used), and where each is written: a re-pin rewrites the literal there.
   */
  readonly origins = new Map<JsonNode, Origin>();
  /** The nodes enclosing the call being read, outermost first: where a constant may be shadowed. */
  ancestors: readonly WalkNode[] = [];
  /** Members an object got from a spread of a constant. */
  private readonly fromSpread = new Set<JsonNode>();

  constructor(
    private readonly text: string,
    private readonly module: ModuleConstants,
  ) {}

  private hole(node: Located, path: string, keySpan: Span | undefined, imported?: ComputedValue['imported'], reason?: string): undefined {
    const span = spanOfAst(node);
    const source = this.text.slice(span.offset, span.offset + Math.min(span.length, 80)).replace(/\s+/g, ' ');
    this.computed.push({ span, path, keySpan, text: span.length > 80 ? `${source}…` : source, ...(imported ? { imported } : {}), ...(reason !== undefined ? { reason } : {}) });
    return undefined;
  }

  /** The name and static member names of a chain (`PINS.search` → `PINS`, `['search']`), or undefined when a member is computed. */
  private chainOf(expression: ValueNode): { name: string; members: string[] } | undefined {
    const members: string[] = [];
    let node = unwrap(expression);
    for (let depth = 0; node.type === 'MemberExpression' && depth <= MAX_INDIRECTION; depth++) {
      const property = node.property;
      const name = !node.computed && property.type === 'Identifier' ? property.name : node.computed && property.type === 'StringLiteral' ? property.value : undefined;
      if (name === undefined) return undefined;
      members.unshift(name);
      node = unwrap(node.object);
    }
    return node.type === 'Identifier' ? { name: node.name, members } : undefined;
  }

  /**
   * The value of an imported name read in the module that defines it, placed at its use `node`:
   * every node of the tree takes the use's span (a diagnostic on the value is where it is used)
   * and keeps where it is written in {@link origins}. Undefined, with a hole, when it cannot be read.
   */
  private imported(node: ValueNode, path: string, parent: JsonNode | undefined, keySpan: Span | undefined, imported: NonNullable<ComputedValue['imported']>): JsonNode | undefined {
    const chain = this.chainOf(node);
    const found = chain && this.module.foreign ? this.module.foreign(chain.name, chain.members) : undefined;
    if (!found || 'reason' in found) return this.hole(node, path, keySpan, imported, found?.reason);
    return this.placed(found.tree, spanOfAst(node), parent, found.origins);
  }

  /** A copy of `node`'s tree at the span `use`, under `parent`, each copy keeping its original's origin. */
  private placed(node: JsonNode, use: Span, parent: JsonNode | undefined, origins: ReadonlyMap<JsonNode, Origin>): JsonNode {
    const children: JsonNode[] = [];
    const copy: JsonNode = {
      type: node.type,
      ...(node.value !== undefined || node.type === 'null' ? { value: node.value } : {}),
      offset: use.offset,
      length: use.length,
      ...(parent ? { parent } : {}),
      ...(node.children ? { children } : {}),
      ...(node.colonOffset !== undefined ? { colonOffset: use.offset } : {}),
    };
    const origin = origins.get(node);
    if (origin) this.origins.set(copy, origin);
    for (const child of node.children ?? []) children.push(this.placed(child, use, copy, origins));
    return copy;
  }

  /** The import a name or member chain (`PINS`, `PINS.search`, `ns.PINS['x']`) starts from, when it is not shadowed. */
  private importOf(expression: ValueNode): { name: string; from: string } | undefined {
    let node = unwrap(expression);
    for (let depth = 0; node.type === 'MemberExpression' && depth <= MAX_INDIRECTION; depth++) node = unwrap(node.object);
    if (node.type !== 'Identifier' || isShadowed(node.name, this.ancestors)) return undefined;
    const from = this.module.imported?.get(node.name);
    return from === undefined ? undefined : { name: node.name, from };
  }

  /**
   * The literal a name or member chain stands for (`PINS`, `PINS.search`, `PINS['search']`), or
   * undefined when it is not a same-module constant that can be read.
   */
  resolve(expression: ValueNode, depth = 0): ValueNode | undefined {
    const node = unwrap(expression);
    if (depth > MAX_INDIRECTION) return undefined;
    if (node.type === 'Identifier') {
      const init = this.module.constants.get(node.name);
      if (!init || isShadowed(node.name, this.ancestors)) return undefined;
      const value = unwrap(init);
      return value.type === 'Identifier' || value.type === 'MemberExpression' ? this.resolve(value, depth + 1) : value;
    }
    if (node.type === 'MemberExpression') {
      const property = node.property;
      const name = !node.computed && property.type === 'Identifier' ? property.name : node.computed && property.type === 'StringLiteral' ? property.value : undefined;
      const object = name === undefined ? undefined : this.resolve(node.object, depth + 1);
      if (object?.type !== 'ObjectExpression') return undefined;
      let found: ValueNode | undefined;
      for (const member of object.properties) {
        // A spread or computed key could set `name` too: the member is not known then.
        if (member.type === 'SpreadElement' || member.computed) return undefined;
        if (keyName(member) === name) found = member.type === 'ObjectProperty' ? member.value : undefined;
      }
      if (!found) return undefined;
      const value = unwrap(found);
      return value.type === 'Identifier' || value.type === 'MemberExpression' ? this.resolve(value, depth + 1) : value;
    }
    return undefined;
  }

  /** The node tree of a literal expression, or undefined (and a computed value) when it is not literal. */
  convert(expression: ValueNode, path: string, parent: JsonNode | undefined, keySpan?: Span): JsonNode | undefined {
    let node = unwrap(expression);
    if (node.type === 'Identifier' && this.module.known.has(node.name) && !isShadowed(node.name, this.ancestors)) {
      return { type: 'string', value: this.module.known.get(node.name)!, ...spanOfAst(node), ...(parent ? { parent } : {}) };
    }
    if (node.type === 'Identifier' || node.type === 'MemberExpression') {
      const resolved = this.resolve(node);
      if (!resolved) {
        const imported = this.importOf(node);
        return imported ? this.imported(node, path, parent, keySpan, imported) : this.hole(node, path, keySpan);
      }
      node = resolved;
    }
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
      case 'ArrayExpression':
        return this.array(node, path, base);
      default:
        return this.hole(node, path, keySpan);
    }
  }

  private array(node: Of<Expression, 'ArrayExpression'>, path: string, base: { offset: number; length: number; parent?: JsonNode }): JsonNode {
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

  private object(node: Of<Expression, 'ObjectExpression'>, path: string, base: { offset: number; length: number; parent?: JsonNode }): JsonNode {
    const members: JsonNode[] = [];
    const object: JsonNode = { type: 'object', ...base, children: members };
    this.members(node, object, members, path, 0);
    return object;
  }

  /** Reads the members of `node` into `members` of `object`; a spread of a constant object adds its members (later keys win, as in JavaScript). */
  private members(node: Of<Expression, 'ObjectExpression'>, object: JsonNode, members: JsonNode[], path: string, depth: number): void {
    for (const member of node.properties) {
      if (member.type === 'SpreadElement') {
        const spread = depth < MAX_INDIRECTION ? this.resolve(member.argument) : undefined;
        if (spread?.type === 'ObjectExpression') {
          this.members(spread, object, members, path, depth + 1);
          continue;
        }
        this.open.add(object);
        this.hole(member, path ? `${path}.…spread` : '…spread', undefined);
        continue;
      }
      const key = keyName(member);
      const keyAst = member.key;
      if (key === undefined) {
        this.open.add(object);
        this.hole(member, path ? `${path}.[computed key]` : '[computed key]', undefined);
        continue;
      }
      // A key set again after a spread replaces the spread's member, and a spread's member replaces
      // what came before it (JavaScript's order). Duplicates written out twice stay (the
      // compiler reports them).
      const earlier = members.findIndex((existing) => existing.children?.[0]?.value === key && (depth > 0 || this.fromSpread.has(existing)));
      if (earlier >= 0) members.splice(earlier, 1);
      const memberPath = path ? `${path}.${key}` : key;
      const keySpan = spanOfAst(keyAst);
      const isValue = member.type === 'ObjectProperty' && !member.shorthand;
      const parts: JsonNode[] = [];
      const property: JsonNode = { type: 'property', ...spanOfAst(member), parent: object, children: parts, ...(isValue ? { colonOffset: keySpan.offset + keySpan.length } : {}) };
      parts.push({ type: 'string', value: key, ...keySpan, parent: property });
      if (member.type === 'ObjectProperty') {
        // A shorthand `{ toolName }` reads the binding of that name, a constant or not.
        const value = this.convert(member.value, memberPath, property, keySpan);
        if (value) parts.push(value);
      } else {
        // A method: its value is whatever it returns at run time.
        this.hole(member, memberPath, keySpan);
      }
      members.push(property);
      if (depth > 0) this.fromSpread.add(property);
    }
  }
}
