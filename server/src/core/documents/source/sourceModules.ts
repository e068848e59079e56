/**
 * Pin values kept in another module of the workspace: `import { PINS } from './pins'` and then
 * `expectedSchemaHash: PINS.search`, or a connector's `toolsSnapshot: SNAPSHOT` imported.
 *
 * Contracts:
 * - Only relative specifiers (`./pins`, `../shared/pins.js`) are followed, never a package. Which
 *   file a specifier names, and its text, is asked of a {@link ModuleAccess} (injected I/O: the
 *   CLI and the language server read the disk, or an editor's open text, inside the workspace root
 *   only; io/sourceModules.ts).
 * - In the defining module, a value is read as in the importing one (sourceValues.ts): a top-level
 *   `const` whose initializer is a literal, a member of one, through `export const`,
 *   `export { a as b }`, `export { a } from './x'`, `export * from './x'`, and an import that is
 *   exported again. Anything else (a `let`, a call, a spread, a default export) is not guessed: the
 *   use is "cannot verify", saying why.
 * - Every module is parsed once per {@link ModuleAccess} (one check, one analysis); a chain of
 *   modules is followed at most {@link MAX_MODULE_DEPTH} deep and a cycle ends with a reason.
 */
import type { JsonNode } from '../../json/jsonDocument';
import { getProperty } from '../../json/jsonDocument';
import { type Expression, type NameNode, type Of, parseModule, type Statement } from './sourceParse';
import { Converter, type ForeignLookup, KNOWN_IMPORTS, type Origin } from './sourceValues';

/** The file a relative specifier names from an importing file, and its text. */
export type ResolvedModule = { readonly file: string; readonly text: string } | { readonly error: string };

/** How modules are found and read (injected: the core reads no file). */
export interface ModuleAccess {
  /**
   * The module `specifier` names from the module `fromFile`: its file and text; an error in words
   * (not found, outside the workspace, not a regular file); undefined when the specifier is not
   * relative (a package, which Toolpin never reads).
   */
  resolve(fromFile: string, specifier: string): ResolvedModule | undefined;
  /** Where the answer of {@link moduleScope} is kept for this access (one check, one analysis). */
  readonly parsed?: Map<string, ModuleScope>;
}

/** How many modules a value may be passed through (`./pins` re-exporting `./hashes` is 2). */
export const MAX_MODULE_DEPTH = 8;

/** What an imported name is in the importing module: the specifier and the exported name (`*` for a namespace, `default`). */
export interface ImportedName {
  readonly from: string;
  readonly name: string;
}

type ExportEntry = { readonly local: string } | ImportedName;

/** The names of a module that matter to a value: its constants, its imports and its exports. */
export interface ModuleScope {
  readonly file: string;
  readonly text: string;
  readonly constants: ReadonlyMap<string, Expression>;
  readonly known: ReadonlyMap<string, string>;
  readonly imports: ReadonlyMap<string, ImportedName>;
  readonly exports: ReadonlyMap<string, ExportEntry>;
  /** `export * from '…'`: specifiers whose exports are this module's too. */
  readonly starExports: readonly string[];
}

function nameOf(node: NameNode | null | undefined): string | undefined {
  if (node?.type === 'Identifier') return node.name;
  if (node?.type === 'StringLiteral') return node.value;
  return undefined;
}

/** The imported names of an import declaration (type-only imports are not values). */
export function importedNames(statement: Of<Statement, 'ImportDeclaration'>, into: Map<string, ImportedName>): void {
  if (statement.importKind === 'type') return;
  const from = statement.source.value;
  for (const specifier of statement.specifiers) {
    const local = nameOf(specifier.local);
    if (!local) continue;
    if (specifier.type === 'ImportSpecifier') {
      if (specifier.importKind !== 'type') into.set(local, { from, name: nameOf(specifier.imported) ?? local });
    } else {
      into.set(local, { from, name: specifier.type === 'ImportNamespaceSpecifier' ? '*' : 'default' });
    }
  }
}

function readExport(statement: Of<Statement, 'ExportNamedDeclaration'>, exports: Map<string, ExportEntry>): void {
  if (statement.exportKind === 'type') return;
  const declaration = statement.declaration;
  if (declaration?.type === 'VariableDeclaration') {
    for (const declarator of declaration.declarations) if (declarator.id.type === 'Identifier') exports.set(declarator.id.name, { local: declarator.id.name });
  }
  const from = statement.source?.value;
  for (const specifier of statement.specifiers) {
    if (specifier.type !== 'ExportSpecifier' || specifier.exportKind === 'type') continue;
    const exported = nameOf(specifier.exported);
    const local = nameOf(specifier.local);
    if (!exported || !local) continue;
    exports.set(exported, from === undefined ? { local } : { from, name: local });
  }
}

/** Parses a module and collects its names (see {@link ModuleScope}). */
function scopeOf(file: string, text: string): ModuleScope {
  const jsx = /\.(tsx|jsx|js|mjs|cjs)$/i.test(file);
  const { statements } = parseModule(text, jsx, jsx && /\.(js|mjs|cjs)$/i.test(file));
  const constants = new Map<string, Expression>();
  const known = new Map<string, string>();
  const imports = new Map<string, ImportedName>();
  const exports = new Map<string, ExportEntry>();
  const starExports: string[] = [];
  for (const statement of statements) {
    if (statement.type === 'ImportDeclaration') {
      importedNames(statement, imports);
      const values = KNOWN_IMPORTS.get(statement.source.value);
      for (const specifier of statement.specifiers) {
        const value = specifier.type === 'ImportSpecifier' ? values?.get(nameOf(specifier.imported) ?? '') : undefined;
        const local = nameOf(specifier.local);
        if (value !== undefined && local) known.set(local, value);
      }
    } else if (statement.type === 'ExportNamedDeclaration') {
      readExport(statement, exports);
    } else if (statement.type === 'ExportAllDeclaration' && statement.exportKind !== 'type') {
      starExports.push(statement.source.value);
    }
    const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
    if (declaration?.type !== 'VariableDeclaration' || declaration.kind !== 'const') continue;
    for (const declarator of declaration.declarations) if (declarator.id.type === 'Identifier' && declarator.init) constants.set(declarator.id.name, declarator.init);
  }
  return { file, text, constants, known, imports, exports, starExports };
}

/** The scope of a resolved module, parsed once per access. */
function cachedScope(access: ModuleAccess, file: string, text: string): ModuleScope {
  const cached = access.parsed?.get(file);
  if (cached && cached.text === text) return cached;
  const scope = scopeOf(file, text);
  access.parsed?.set(file, scope);
  return scope;
}

type Found = { readonly tree: JsonNode; readonly origins: ReadonlyMap<JsonNode, Origin> } | { readonly reason: string };

/**
 * The lookup a module's {@link Converter} uses for its imported names: the importing module is
 * `file`, its imports `imports`; `depth` modules were passed through to get here.
 */
export function foreignLookup(access: ModuleAccess, file: string, imports: ReadonlyMap<string, ImportedName>, depth = 0, visiting: ReadonlySet<string> = new Set()): ForeignLookup {
  return (local, members) => {
    const imported = imports.get(local);
    if (!imported) return undefined;
    return exportedValue(access, file, imported, members, depth + 1, visiting);
  };
}

/** The value of export `wanted.name` of the module `wanted.from` names from `fromFile`, then `members` of it. */
function exportedValue(access: ModuleAccess, fromFile: string, wanted: ImportedName, members: readonly string[], depth: number, visiting: ReadonlySet<string>): Found | undefined {
  const resolved = access.resolve(fromFile, wanted.from);
  if (!resolved) return undefined;
  if ('error' in resolved) return { reason: `'${wanted.from}' could not be read: ${resolved.error}` };
  if (depth > MAX_MODULE_DEPTH) return { reason: `the value passes through more than ${MAX_MODULE_DEPTH} modules` };
  let name = wanted.name;
  let rest = members;
  if (name === '*') {
    if (rest.length === 0) return { reason: `it is the whole module '${wanted.from}', not a value Toolpin reads` };
    name = rest[0]!;
    rest = rest.slice(1);
  }
  const key = `${resolved.file}#${name}`;
  if (visiting.has(key)) return { reason: `the imports of '${wanted.from}' form a cycle` };
  const seen = new Set(visiting).add(key);
  const scope = cachedScope(access, resolved.file, resolved.text);
  const entry = scope.exports.get(name);
  if (!entry) {
    for (const star of scope.starExports) {
      const found = exportedValue(access, scope.file, { from: star, name }, rest, depth + 1, seen);
      if (found && !('reason' in found && found.reason.startsWith('no export'))) return found;
    }
    return { reason: `no export "${name}" Toolpin can read in '${wanted.from}'` };
  }
  if ('from' in entry) return exportedValue(access, scope.file, entry, rest, depth + 1, seen) ?? { reason: `it is re-exported from the package '${entry.from}', which Toolpin does not read` };
  const reexported = scope.imports.get(entry.local);
  if (reexported) return exportedValue(access, scope.file, reexported, rest, depth + 1, seen) ?? { reason: `it comes from the package '${reexported.from}', which Toolpin does not read` };
  const init = scope.constants.get(entry.local);
  if (!init) return { reason: `"${name}" of '${wanted.from}' is not a constant (Toolpin reads an exported \`const\`)` };
  return constantValue(access, scope, init, name, rest, depth, seen, wanted.from);
}

/** Reads the constant `init` of `scope` with a converter of its own module, then follows `members` in the tree. */
function constantValue(access: ModuleAccess, scope: ModuleScope, init: Expression, name: string, members: readonly string[], depth: number, visiting: ReadonlySet<string>, specifier: string): Found {
  const converter = new Converter(scope.text, { constants: scope.constants, known: scope.known, imported: new Map([...scope.imports].map(([local, entry]) => [local, entry.from])), foreign: foreignLookup(access, scope.file, scope.imports, depth, visiting) });
  const whole = converter.convert(init, name, undefined);
  let node = whole;
  for (const member of members) {
    const property = node?.type === 'object' ? getProperty(node, member) : undefined;
    if (!property && node !== undefined && converter.open.has(node)) return { reason: `${name}.${members.join('.')} of '${specifier}' may come from a spread Toolpin cannot read` };
    node = property?.valueNode;
  }
  const path = [name, ...members].join('.');
  if (!node) {
    const computed = converter.computed.find((value) => value.path === path) ?? converter.computed[0];
    return { reason: computed ? `${path} of '${specifier}' is ${computed.reason ?? `computed at run time (${computed.text})`}` : `'${specifier}' has no ${path}` };
  }
  const end = node.offset + node.length;
  const inside = (offset: number): boolean => offset >= node.offset && offset < end;
  const computed = converter.computed.find((value) => inside(value.span.offset));
  if (computed) return { reason: `${path} of '${specifier}' holds ${computed.text}, ${computed.reason ?? 'computed at run time'}` };
  if ([...converter.open].some((open) => inside(open.offset))) return { reason: `${path} of '${specifier}' holds a spread Toolpin cannot read` };
  const origins = new Map<JsonNode, Origin>();
  const stack: JsonNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    origins.set(current, converter.origins.get(current) ?? { file: scope.file, span: { offset: current.offset, length: current.length }, quote: quoteAt(scope.text, current.offset) });
    stack.push(...(current.children ?? []));
  }
  return { tree: node, origins };
}

function quoteAt(text: string, offset: number): string | undefined {
  const character = text[offset];
  return character === '"' || character === "'" || character === '`' ? character : undefined;
}
