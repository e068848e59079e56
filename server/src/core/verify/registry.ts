/**
 * The server registry (docs/formats.md §5): every MCP server the workspace names, from, in order,
 * connector instances, `.vscode/mcp.json` (`servers`), `.mcp.json` (`mcpServers`) and the user
 * setting. A blueprint step's `server` refers to these names; an earlier source wins a name.
 *
 * Definitions are data. Connecting to them is the mcp/ adapter's job; the key of a definition
 * ({@link serverKey}) says when two names are the same server, so it is connected to once.
 */
import { canonicalJson } from '../pins/canonicalJson';
import { type AuthModel, type ConnectorModel, readsPins } from '../documents/connector';
import { getProperty, type JsonNode, objectProperties, parseJsonDocument, spanOf } from '../json/jsonDocument';
import type { Span } from '../problems';

export type TransportSpec =
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[]; readonly env: Readonly<Record<string, string>> }
  | { readonly kind: 'http'; readonly url: string; readonly headers: Readonly<Record<string, string>> };

export type ServerSourceKind = 'connector' | 'vscode-mcp-json' | 'mcp-json' | 'user-setting' | 'warden-lock';

export interface ServerOrigin {
  readonly kind: ServerSourceKind;
  /** The file that defines the server (absent for the user setting). */
  readonly file?: string;
  /** Where the definition's name is in that file. */
  readonly span?: Span;
}

export interface ServerDefinition {
  readonly name: string;
  readonly origin: ServerOrigin;
  /** Undefined when the definition is unusable; `unusable` says why. */
  readonly transport: TransportSpec | undefined;
  /**
   * The transport as the file declares it, variables unresolved: what trust records and messages
   * show, so that no value read from the environment is ever part of them. Absent when it equals
   * `transport` (connector files resolve no variables).
   */
  readonly declared?: TransportSpec;
  readonly auth: AuthModel | undefined;
  /** Why the definition cannot be connected to (e.g. an `${input:…}` without a value). */
  readonly unusable: string | undefined;
  /** The folder stdio commands start in: the workspace folder of the defining file. */
  readonly cwd: string;
  /**
   * The values that `${env:…}` and `${input:…}` variables of the definition resolved to: tokens and
   * keys as far as Toolpin can tell. The mcp/ adapter registers them with the redactor before use.
   */
  readonly secrets?: readonly string[];
}

/** True when a document's connector instance (a connector file, a compiled stack, a module's `defineConnector`) defines the server in `file`. */
export function definedIn(definition: ServerDefinition, file: string): boolean {
  return definition.origin.kind === 'connector' && definition.origin.file === file;
}

const keys = new WeakMap<ServerDefinition, string>();

/** Identifies a distinct server: equal keys mean one connection serves both definitions. */
export function serverKey(definition: ServerDefinition): string {
  let key = keys.get(definition);
  if (key === undefined) {
    const identity = { transport: definition.transport ?? null, auth: definition.auth ?? null, cwd: definition.cwd, unusable: definition.unusable ?? null };
    try {
      key = canonicalJson(identity);
    } catch {
      // Not canonical JSON (a lone surrogate in an argument): still a stable key for this text.
      key = JSON.stringify(identity);
    }
    keys.set(definition, key);
  }
  return key;
}

/** Values for `${…}` variables in mcp.json files. Missing values leave a definition unusable. */
export interface VariableContext {
  readonly workspaceFolder: string;
  readonly userHome?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Values of `${input:ID}` the editor collected; absent ids make a definition unusable. */
  readonly inputs?: Readonly<Record<string, string>>;
}

const VARIABLE = /\$\{([^}]+)\}/g;

/** Resolves `${…}` variables; returns the first unresolvable variable's description instead. */
export function resolveVariables(text: string, context: VariableContext): { value: string } | { unresolved: string } {
  let unresolved: string | undefined;
  const value = text.replace(VARIABLE, (whole, name: string) => {
    let replacement: string | undefined;
    if (name === 'workspaceFolder') replacement = context.workspaceFolder;
    else if (name === 'workspaceFolderBasename') replacement = context.workspaceFolder.split(/[\\/]/).filter(Boolean).pop();
    else if (name === 'userHome') replacement = context.userHome;
    else if (name.startsWith('env:')) replacement = context.env[name.slice(4)];
    else if (name.startsWith('input:')) replacement = context.inputs?.[name.slice(6)];
    if (replacement === undefined) {
      unresolved ??= name.startsWith('env:')
        ? `the environment variable ${name.slice(4)} is not set`
        : name.startsWith('input:')
          ? `the input "${name.slice(6)}" has no value (set it in the editor)`
          : `the variable \${${name}} is not supported here`;
      return whole;
    }
    return replacement;
  });
  return unresolved ? { unresolved } : { value };
}

/** The values the `${env:…}` and `${input:…}` variables of `text` resolve to (unresolved ones are left out). */
export function variableValues(text: string, context: VariableContext): string[] {
  const values: string[] = [];
  for (const match of text.matchAll(VARIABLE)) {
    const name = match[1]!;
    const value = name.startsWith('env:') ? context.env[name.slice(4)] : name.startsWith('input:') ? context.inputs?.[name.slice(6)] : undefined;
    if (value !== undefined && value !== '') values.push(value);
  }
  return values;
}

function stringsOf(node: JsonNode | undefined): string[] | undefined {
  if (node?.type !== 'array') return undefined;
  return (node.children ?? []).filter((child) => child.type === 'string').map((child) => String(child.value));
}

function recordOf(node: JsonNode | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (node?.type !== 'object') return record;
  for (const property of objectProperties(node)) {
    if (property.valueNode?.type === 'string') record[property.key] = String(property.valueNode.value);
  }
  return record;
}

/**
 * Reads one MCP server entry of an mcp.json-style file (VS Code's `servers` or the `mcpServers`
 * of `.mcp.json`), resolving variables. `type` may be absent: a `command` means stdio, a `url`
 * means http. The legacy `sse` type is read as http: the adapter falls back to SSE by itself.
 */
function readMcpJsonEntry(
  name: string,
  keyNode: JsonNode,
  node: JsonNode | undefined,
  origin: Omit<ServerOrigin, 'span'>,
  context: VariableContext,
): ServerDefinition {
  const base = { name, origin: { ...origin, span: spanOf(keyNode) }, auth: undefined, cwd: context.workspaceFolder };
  if (node?.type !== 'object') return { ...base, transport: undefined, unusable: 'its definition is not an object' };
  const type = getProperty(node, 'type')?.valueNode?.value;
  const command = getProperty(node, 'command')?.valueNode?.value;
  const url = getProperty(node, 'url')?.valueNode?.value;
  let unusable: string | undefined;
  const secrets: string[] = [];
  const resolve = (text: string): string => {
    secrets.push(...variableValues(text, context));
    const result = resolveVariables(text, context);
    if ('unresolved' in result) {
      unusable ??= result.unresolved;
      return text;
    }
    return result.value;
  };
  const resolveRecord = (record: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, resolve(value)]));

  if (type === 'stdio' || (type === undefined && typeof command === 'string')) {
    if (typeof command !== 'string' || command.length === 0) return { ...base, transport: undefined, unusable: 'it has no "command"' };
    const declared: TransportSpec = {
      kind: 'stdio',
      command,
      args: stringsOf(getProperty(node, 'args')?.valueNode) ?? [],
      env: recordOf(getProperty(node, 'env')?.valueNode),
    };
    const transport: TransportSpec = { kind: 'stdio', command: resolve(declared.command), args: declared.args.map(resolve), env: resolveRecord(declared.env) };
    return { ...base, transport, declared, unusable, ...(secrets.length > 0 ? { secrets } : {}) };
  }
  if (type === 'http' || type === 'sse' || (type === undefined && typeof url === 'string')) {
    if (typeof url !== 'string' || url.length === 0) return { ...base, transport: undefined, unusable: 'it has no "url"' };
    const declared: TransportSpec = { kind: 'http', url, headers: recordOf(getProperty(node, 'headers')?.valueNode) };
    const transport: TransportSpec = { kind: 'http', url: resolve(url), headers: resolveRecord(declared.headers) };
    return { ...base, transport, declared, unusable, ...(secrets.length > 0 ? { secrets } : {}) };
  }
  return { ...base, transport: undefined, unusable: `its type ${JSON.stringify(type)} is not stdio, http or sse` };
}

/** Reads the servers of an mcp.json-style file. `section` is `servers` or `mcpServers`. */
export function readMcpJsonServers(
  text: string,
  section: 'servers' | 'mcpServers',
  origin: Omit<ServerOrigin, 'span'>,
  context: VariableContext,
): ServerDefinition[] {
  const document = parseJsonDocument(text);
  const servers = getProperty(document.root, section)?.valueNode;
  if (servers?.type !== 'object') return [];
  return objectProperties(servers).map((property) => readMcpJsonEntry(property.key, property.keyNode, property.valueNode, origin, context));
}

/** The servers defined by the MCP connector instances of one connector file. */
export function connectorServers(file: string, model: ConnectorModel, workspaceFolder: string): ServerDefinition[] {
  const definitions: ServerDefinition[] = [];
  for (const instance of model.instances) {
    if (!readsPins(instance) || !instance.name) continue;
    const origin: ServerOrigin = { kind: 'connector', file, span: instance.name.span };
    let transport: TransportSpec | undefined;
    let unusable: string | undefined;
    if (instance.computed?.provider !== undefined) {
      // Never guessed: a provider Toolpin cannot read may or may not be MCP.
      unusable = `its provider is computed at run time (${instance.computed.provider}); Toolpin reads a literal, a same-module constant or spread, or MCP_PROVIDER_KEY of @objectstack/connector-mcp`;
    } else if (instance.computed?.transport) {
      // A transport with a value computed at run time is never guessed at: it is not started.
      unusable = 'its transport is computed at run time';
    } else if (instance.computed?.credential !== undefined) {
      unusable = `its credential could not be resolved: auth.credentialRef is computed at run time (${instance.computed.credential})`;
    } else if (instance.transport?.kind === 'stdio') {
      if (instance.transport.command) transport = { kind: 'stdio', command: instance.transport.command.value, args: instance.transport.args, env: instance.transport.env };
      else unusable = 'its stdio transport has no command';
    } else if (instance.transport?.kind === 'http') {
      if (instance.transport.url) transport = { kind: 'http', url: instance.transport.url.value, headers: instance.transport.headers };
      else unusable = 'its http transport has no url';
    } else {
      unusable = 'its transport is missing or invalid';
    }
    definitions.push({ name: instance.name.value, origin, transport, auth: instance.auth, unusable, cwd: workspaceFolder });
  }
  return definitions;
}

/** All definitions of a workspace, in source order, and the name → definition view. */
export class ServerRegistry {
  private readonly byName = new Map<string, ServerDefinition>();
  /** The definitions each file makes, built at the first `definedIn` (a workspace has thousands). */
  private byFile: Map<string, ServerDefinition[]> | undefined;
  /** Definitions that lost their name to an earlier source. */
  readonly shadowed: ServerDefinition[] = [];

  constructor(readonly definitions: readonly ServerDefinition[]) {
    for (const definition of definitions) {
      if (this.byName.has(definition.name)) this.shadowed.push(definition);
      else this.byName.set(definition.name, definition);
    }
  }

  /** The definition a name refers to: the first source that defines it. */
  get(name: string): ServerDefinition | undefined {
    return this.byName.get(name);
  }

  /** Every named server, once per name. */
  named(): ServerDefinition[] {
    return [...this.byName.values()];
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The definitions a file makes (its connector instances, or an mcp.json's entries), in order. */
  definedIn(file: string): readonly ServerDefinition[] {
    if (!this.byFile) {
      this.byFile = new Map();
      for (const definition of this.definitions) {
        if (definition.origin.file === undefined) continue;
        const list = this.byFile.get(definition.origin.file);
        if (list) list.push(definition);
        else this.byFile.set(definition.origin.file, [definition]);
      }
    }
    return this.byFile.get(file) ?? [];
  }
}
