/**
 * Which imported functions are the pin calls of a source file (docs/formats.md "Source files").
 *
 * Built in: `defineConnector` from `@objectstack/spec/integration` and from the package root
 * `@objectstack/spec` (which re-exports it), `defineStack` from `@objectstack/spec` (its inline
 * `connectors: [ … ]`), and `mcpInvoke$` from `@loom/plugin-mcp`. A project that re-exports them from its own module, or wraps them under
 * another name, adds entries with two settings, `connectorFunctions` and `invokeFunctions` (the
 * editor's `toolpin.sources.*` settings, the CLI's `.toolpin/sources.jsonc`), each a list of:
 *
 * - `"module"`: the module exports the function under its own name (`defineConnector`,
 *   `mcpInvoke$`), e.g. `"@acme/platform"` for `export { mcpInvoke$ } from '@loom/plugin-mcp'`;
 * - `"module#name"`: the module exports it as `name`, e.g. `"@acme/platform#step"`.
 *
 * A module is matched with the import's specifier exactly as written (`'@acme/platform'`,
 * `'#pins'`, `'../pins'`), since the reader resolves nothing. The split is at the last `#` that is
 * not the first character, so Node's subpath imports (`#pins`, `#pins#step`) work. Entries add to
 * the built-in names, which always apply.
 *
 * Pure: the settings come in as values, from whoever read them.
 */

/** The module that exports `defineConnector`, and the one that exports `mcpInvoke$`. */
export const CONNECTOR_MODULE = '@objectstack/spec/integration';
/** The package root of the spec: it re-exports `defineConnector` and exports `defineStack`. */
export const SPEC_MODULE = '@objectstack/spec';
export const DEFINE_STACK = 'defineStack';
export const INVOKE_MODULE = '@loom/plugin-mcp';
export const DEFINE_CONNECTOR = 'defineConnector';
export const MCP_INVOKE_CALL = 'mcpInvoke$';

export type CallKind = 'connector' | 'invoke' | 'stack';

/** For each kind of call: module specifier → the names under which it exports the function. */
export interface SourceNames {
  readonly connector: ReadonlyMap<string, ReadonlySet<string>>;
  readonly invoke: ReadonlyMap<string, ReadonlySet<string>>;
  /** `defineStack`: its `connectors: [ … ]` are connector instances. Built in only. */
  readonly stack: ReadonlyMap<string, ReadonlySet<string>>;
  /** Every module specifier of the maps: a text that names none of them holds no call. */
  readonly modules: readonly string[];
  /** Every exported name of the maps: a text that names none of them holds no call either. */
  readonly functions: readonly string[];
  /**
   * Modules longer than this (in UTF-16 code units, about bytes for code) are not read: they are
   * reported (TP113, or TP112 when they hold a pin literal). Setting `maxFileBytes`.
   */
  readonly maxFileBytes: number;
}

/** The default of {@link SourceNames.maxFileBytes}: 2 MiB, far above any hand-written module that holds pins. */
export const DEFAULT_MAX_SOURCE_BYTES = 2 * 1024 * 1024;

/** The settings as given (any JSON value): two lists of `"module"` or `"module#name"` strings. */
export interface SourceNameSettings {
  readonly connectorFunctions?: unknown;
  readonly invokeFunctions?: unknown;
  /** A positive whole number of bytes (see {@link SourceNames.maxFileBytes}). */
  readonly maxFileBytes?: unknown;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

const STACK_NAMES: ReadonlyMap<string, ReadonlySet<string>> = new Map([[SPEC_MODULE, new Set([DEFINE_STACK])]]);

function build(connector: Map<string, Set<string>>, invoke: Map<string, Set<string>>, maxFileBytes = DEFAULT_MAX_SOURCE_BYTES): SourceNames {
  const maps = [connector, invoke, STACK_NAMES];
  return {
    connector,
    invoke,
    stack: STACK_NAMES,
    modules: [...new Set(maps.flatMap((map) => [...map.keys()]))],
    functions: [...new Set(maps.flatMap((map) => [...map.values()].flatMap((names) => [...names])))],
    maxFileBytes,
  };
}

/** The built-in names alone. */
export const BUILT_IN_SOURCE_NAMES: SourceNames = build(
  new Map([
    [CONNECTOR_MODULE, new Set([DEFINE_CONNECTOR])],
    [SPEC_MODULE, new Set([DEFINE_CONNECTOR])],
  ]),
  new Map([[INVOKE_MODULE, new Set([MCP_INVOKE_CALL])]]),
);

/** One entry split into its module and exported name, or a reason it is not one. */
export function parseSourceNameEntry(entry: unknown, ownName: string): { module: string; name: string } | { error: string } {
  if (typeof entry !== 'string' || entry.trim() === '') return { error: 'is not a non-empty string' };
  const split = entry.lastIndexOf('#');
  const module = split > 0 ? entry.slice(0, split) : entry;
  const name = split > 0 ? entry.slice(split + 1) : ownName;
  if (!IDENTIFIER.test(name)) return { error: `names "${name}", which is not a JavaScript identifier` };
  return { module, name };
}

/**
 * The names the settings give (the built-in ones included), and what is wrong with them: an entry
 * that is not `"module"` or `"module#name"`, or a setting that is not a list. Wrong entries are
 * left out; the rest still apply. Never throws.
 */
export function sourceNamesFrom(settings: SourceNameSettings | undefined): { names: SourceNames; problems: string[] } {
  const problems: string[] = [];
  const connector = new Map([...BUILT_IN_SOURCE_NAMES.connector].map(([module, names]) => [module, new Set(names)]));
  const invoke = new Map([...BUILT_IN_SOURCE_NAMES.invoke].map(([module, names]) => [module, new Set(names)]));
  const add = (setting: 'connectorFunctions' | 'invokeFunctions', target: Map<string, Set<string>>, ownName: string): void => {
    const value = settings?.[setting];
    if (value === undefined || value === null) return;
    if (!Array.isArray(value)) {
      problems.push(`${setting} is not a list of "module" or "module#name" strings`);
      return;
    }
    value.forEach((entry: unknown, index) => {
      const parsed = parseSourceNameEntry(entry, ownName);
      if ('error' in parsed) {
        problems.push(`${setting}[${index}] ${parsed.error}; expected "module" or "module#name"`);
        return;
      }
      const names = target.get(parsed.module) ?? new Set<string>();
      names.add(parsed.name);
      target.set(parsed.module, names);
    });
  };
  add('connectorFunctions', connector, DEFINE_CONNECTOR);
  add('invokeFunctions', invoke, MCP_INVOKE_CALL);
  const limit = settings?.maxFileBytes;
  const valid = typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0;
  if (limit !== undefined && limit !== null && !valid) problems.push('maxFileBytes is not a positive whole number of bytes');
  return { names: build(connector, invoke, valid ? limit : DEFAULT_MAX_SOURCE_BYTES), problems };
}

/** A text that is equal for equal names (to tell whether a settings change changed them). */
export function sourceNamesKey(names: SourceNames): string {
  const side = (map: ReadonlyMap<string, ReadonlySet<string>>): string[] => [...map].map(([module, exported]) => `${module}#${[...exported].sort().join(',')}`).sort();
  return JSON.stringify([side(names.connector), side(names.invoke), names.maxFileBytes]);
}

let runDefault: SourceNames = BUILT_IN_SOURCE_NAMES;

/**
 * The names used when a caller passes none. The CLI sets them once per run from the workspace's
 * `.toolpin/sources.jsonc` (a run checks one workspace); everything else passes its names
 * explicitly (the language server, per folder, from its settings) or gets the built-in ones.
 */
export function defaultSourceNames(): SourceNames {
  return runDefault;
}

/** Sets {@link defaultSourceNames} (the CLI, at the start of a run; tests, to restore it). */
export function setDefaultSourceNames(names: SourceNames): void {
  runDefault = names;
}
