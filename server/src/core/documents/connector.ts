/**
 * Connector files (`*.connector.json`, `*.connector.jsonc`; docs/formats.md §4): one connector
 * instance, an array of them, or `{ "connectors": [ … ] }`. Only `"provider": "mcp"` instances
 * carry tool pins in `providerConfig.toolsSnapshot`.
 */
import { describeNodeType, getProperty, type JsonNode, objectProperties, parseJsonDocument, spanOf, type StringField, stringField } from '../json/jsonDocument';
import { isParsedPin, type ParsedPin, parsePin } from '../pins/pins';
import { type Problem, problem, type Span } from '../problems';
import { isCredentialKey } from '../secrets';
import { checkShape, openingSpan, type Shape } from '../json/shape';
import { OBJECTSTACK_CONNECTOR_KEYS } from './objectstackKeys';

export const CONNECTOR_NAME = /^[a-z_][a-z0-9_]*$/;
const ENVIRONMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A value that is itself a reference to be resolved elsewhere, not a literal credential.
const VARIABLE_REFERENCE = /^\$\{(env|input):[^}]+\}$/;

export type TransportModel =
  | { readonly kind: 'stdio'; readonly span: Span; readonly command: StringField | undefined; readonly args: readonly string[]; readonly env: Readonly<Record<string, string>> }
  | { readonly kind: 'http'; readonly span: Span; readonly url: StringField | undefined; readonly headers: Readonly<Record<string, string>> };

export type AuthModel =
  | { readonly type: 'none' }
  | { readonly type: 'bearer'; readonly credentialRef: string }
  | { readonly type: 'api-key'; readonly credentialRef: string; readonly headerName: string }
  | { readonly type: 'basic'; readonly username: string; readonly credentialRef: string };

/** One `toolsSnapshot` member: the tool name (the key) and its pin (the value). */
export interface SnapshotEntry {
  readonly tool: StringField;
  readonly pin: StringField;
  /** The parsed pin when the value is well formed. */
  readonly parsed: ParsedPin | undefined;
}

export interface ConnectorInstanceModel {
  readonly index: number;
  readonly node: JsonNode;
  readonly name: StringField | undefined;
  readonly provider: StringField | undefined;
  readonly transport: TransportModel | undefined;
  /** The `include` allowlist, or undefined when every served tool is selected. */
  readonly include: readonly StringField[] | undefined;
  readonly snapshot: readonly SnapshotEntry[];
  /** The span of the `toolsSnapshot` object, for fixes that add entries. */
  readonly snapshotSpan: Span | undefined;
  /** Undefined when absent or malformed (a problem was reported). */
  readonly auth: AuthModel | undefined;
  /**
   * Set only for instances read from source files: the parts whose value is computed at run time
   * (docs/formats.md "Source files"). A computed transport is never started; a computed include
   * or toolsSnapshot is not treated as complete.
   */
  readonly computed?: {
    readonly transport: boolean;
    readonly include: boolean;
    readonly snapshot: boolean;
    /**
     * The provider is computed and Toolpin cannot read it (a call, an imported constant): what it
     * is, in the source's words. The instance's pins are kept and are "cannot verify", never
     * dropped as those of a non-MCP connector.
     */
    readonly provider?: string;
    /** `auth.credentialRef` is computed: the credential cannot be resolved, so the server is not contacted. */
    readonly credential?: string;
  };
}

/**
 * True for an instance whose pins Toolpin reads: `provider: "mcp"`, or a provider computed at run
 * time that may be `mcp` (its pins are then "cannot verify", never dropped).
 */
export function readsPins(instance: Pick<ConnectorInstanceModel, 'provider' | 'computed'>): boolean {
  return instance.provider?.value === 'mcp' || instance.computed?.provider !== undefined;
}

export interface ConnectorModel {
  readonly kind: 'connector';
  readonly instances: readonly ConnectorInstanceModel[];
}

export interface ConnectorAnalysis {
  readonly model: ConnectorModel;
  readonly problems: readonly Problem[];
}

const STRING_MAP: Shape = { kind: 'object', properties: {}, otherMembers: { kind: 'string' } };

/**
 * A connector instance: ObjectStack's `ConnectorSchema` keys (objectstackKeys.ts, generated from
 * the real schema), the ones Toolpin reads typed, every other one `any` (ObjectStack checks them).
 * `provider` is optional there: an entry without one is a catalog descriptor (ADR-0097), valid and
 * never an MCP connector. Connector files, Toolpin's own format, still require it (formats.md §4).
 */
const OBJECTSTACK_INSTANCE_SHAPE: Shape = {
  kind: 'object',
  properties: {
    ...Object.fromEntries(OBJECTSTACK_CONNECTOR_KEYS.map((key): [string, Shape] => [key, { kind: 'any' }])),
    name: { kind: 'string' },
    label: { kind: 'string' },
    type: { kind: 'string' },
    provider: { kind: 'string' },
    description: { kind: 'string' },
    providerConfig: { kind: 'object', properties: {}, otherMembers: { kind: 'any' } },
    auth: { kind: 'object', properties: {}, otherMembers: { kind: 'any' } },
  },
  required: ['name'],
};

const INSTANCE_SHAPE: Shape = {
  ...OBJECTSTACK_INSTANCE_SHAPE,
  properties: { $schema: { kind: 'string' }, ...OBJECTSTACK_INSTANCE_SHAPE.properties },
  required: ['name', 'provider'],
};

const MCP_PROVIDER_CONFIG_SHAPE: Shape = {
  kind: 'object',
  properties: {
    transport: { kind: 'object', properties: {}, otherMembers: { kind: 'any' } },
    include: { kind: 'array', items: { kind: 'string' } },
    toolsSnapshot: STRING_MAP,
  },
  required: ['transport'],
};

const STDIO_SHAPE: Shape = {
  kind: 'object',
  properties: {
    kind: { kind: 'string' },
    command: { kind: 'string' },
    args: { kind: 'array', items: { kind: 'string' } },
    env: STRING_MAP,
    cwd: { kind: 'string' },
  },
  required: ['command'],
};

const HTTP_SHAPE: Shape = {
  kind: 'object',
  properties: { kind: { kind: 'string' }, url: { kind: 'string' }, headers: STRING_MAP },
  required: ['url'],
};

function stringRecord(node: JsonNode | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  if (node?.type !== 'object') return record;
  for (const property of objectProperties(node)) {
    if (property.valueNode?.type === 'string') record[property.key] = String(property.valueNode.value);
  }
  return record;
}

function instanceLabel(index: number, name: StringField | undefined): string {
  return name ? `connector "${name.value}"` : `connector #${index + 1}`;
}

/** How a connector document is read. */
export interface ConnectorReadOptions {
  /**
   * ObjectStack's compiled `objectstack.json`: the whole stack, so keys beside `connectors` are
   * the stack's other parts, a stack without connectors has none (the root is never read as an
   * instance), and instances carry the defaults `os compile` fills in, which are not reported as
   * unknown keys. Everything under `providerConfig` is checked as in authored files: ObjectStack
   * itself does not validate it.
   */
  readonly compiledStack?: boolean;
  /**
   * A `defineConnector` call or an inline stack entry of a source module: ObjectStack's own
   * authoring, where an entry without `provider` is a valid catalog descriptor.
   */
  readonly objectStackSource?: boolean;
  /** The provider is computed at run time (a source file): the pins are read as an MCP connector's. */
  readonly providerComputed?: boolean;
}

/** Parses and checks a connector file. Never throws. */
export function analyzeConnector(text: string, options: ConnectorReadOptions = {}): ConnectorAnalysis {
  const document = parseJsonDocument(text);
  const problems: Problem[] = [...document.problems];
  const instances: ConnectorInstanceModel[] = [];
  const root = document.root;
  const compiled = options.compiledStack === true;

  let instanceNodes: JsonNode[] = [];
  if (root?.type === 'array' && !compiled) {
    instanceNodes = root.children ?? [];
  } else if (root?.type === 'object') {
    const stack = getProperty(root, 'connectors');
    if (stack) {
      for (const property of compiled ? [] : objectProperties(root)) {
        if (property.key !== 'connectors' && property.key !== '$schema') {
          problems.push(problem('TP102', spanOf(property.keyNode), `unknown key "${property.key}" beside "connectors" (a stack file holds only "connectors")`));
        }
      }
      if (stack.valueNode?.type === 'array') instanceNodes = stack.valueNode.children ?? [];
      else if (stack.valueNode) problems.push(problem('TP103', spanOf(stack.valueNode), `"connectors" must be an array of connector instances, found ${describeNodeType(stack.valueNode)}`));
    } else if (!compiled) {
      instanceNodes = [root];
    }
  } else if (root) {
    const expected = compiled ? 'a compiled ObjectStack stack is an object with "connectors"' : 'a connector file holds a connector object, an array of them, or {"connectors": […]}';
    problems.push(problem('TP103', spanOf(root), `${expected}, found ${describeNodeType(root)}`));
  }

  instanceNodes.forEach((node, index) => {
    if (node.type !== 'object') {
      problems.push(problem('TP103', spanOf(node), `connector #${index + 1} must be an object, found ${describeNodeType(node)}`));
      return;
    }
    instances.push(readInstance(node, index, problems, { compiledStack: compiled }));
  });

  const model: ConnectorModel = { kind: 'connector', instances };
  problems.push(...checkConnectorNames(model));
  problems.sort((a, b) => a.span.offset - b.span.offset);
  return { model, problems };
}

/** Reads one connector instance object (also used for the `defineConnector({...})` calls of source files). */
export function readInstance(node: JsonNode, index: number, problems: Problem[], options: ConnectorReadOptions = {}): ConnectorInstanceModel {
  const name = stringField(getProperty(node, 'name')?.valueNode);
  const provider = stringField(getProperty(node, 'provider')?.valueNode);
  const label = instanceLabel(index, name);
  checkShape(node, options.compiledStack || options.objectStackSource ? OBJECTSTACK_INSTANCE_SHAPE : INSTANCE_SHAPE, label, problems);

  const configNode = getProperty(node, 'providerConfig')?.valueNode;
  const isMcp = provider?.value === 'mcp' || options.providerComputed === true;
  let transport: TransportModel | undefined;
  let include: StringField[] | undefined;
  const snapshot: SnapshotEntry[] = [];
  let snapshotSpan: Span | undefined;

  if (isMcp && !configNode && provider && !options.providerComputed) {
    problems.push(problem('TP104', provider.span, `${label} uses the mcp provider but has no "providerConfig" with a "transport"`, { data: { field: 'providerConfig' } }));
  }
  if (configNode?.type === 'object') {
    const snapshotProperty = getProperty(configNode, 'toolsSnapshot');
    const snapshotNode = snapshotProperty?.valueNode;
    if (!isMcp) {
      if (snapshotNode) {
        problems.push(problem('TP309', spanOf(snapshotProperty?.keyNode ?? snapshotNode), `toolsSnapshot pins are read only on "provider": "mcp" connectors; ${label} has provider "${provider?.value ?? '(none)'}"`));
      }
    } else {
      // A computed provider may be another one, whose providerConfig is free-form: only the pins
      // are read then (they are "cannot verify"), and nothing is reported as an MCP shape problem.
      const shapeProblems = options.providerComputed ? [] : problems;
      checkShape(configNode, MCP_PROVIDER_CONFIG_SHAPE, `the providerConfig of ${label}`, shapeProblems);
      transport = readTransport(getProperty(configNode, 'transport')?.valueNode, label, shapeProblems);
      const includeNode = getProperty(configNode, 'include')?.valueNode;
      if (includeNode?.type === 'array') {
        include = [];
        const seen = new Set<string>();
        for (const child of includeNode.children ?? []) {
          const entry = stringField(child);
          if (!entry) continue;
          if (seen.has(entry.value)) {
            problems.push(problem('TP308', entry.span, `"${entry.value}" is listed twice in the include of ${label}`));
          }
          seen.add(entry.value);
          include.push(entry);
        }
      }
      if (snapshotNode?.type === 'object') {
        snapshotSpan = spanOf(snapshotNode);
        for (const property of objectProperties(snapshotNode)) {
          const pin = stringField(property.valueNode);
          if (!pin) continue;
          const parsed = parsePin(pin.value, 'sha256');
          const tool = { value: property.key, span: spanOf(property.keyNode) };
          if (!isParsedPin(parsed)) {
            problems.push(problem('TP306', pin.span, `malformed tool pin for "${property.key}" in ${label}: ${parsed.message}`, { data: { tool: property.key } }));
          }
          if (include && !include.some((entry) => entry.value === property.key)) {
            problems.push(
              problem('TP305', tool.span, `"${property.key}" is pinned but not in the include of ${label}, so the connector never selects it; add it to include or remove the pin`, {
                data: { tool: property.key },
              }),
            );
          }
          snapshot.push({ tool, pin, parsed: isParsedPin(parsed) ? parsed : undefined });
        }
      }
    }
  }
  const auth = readAuth(getProperty(node, 'auth')?.valueNode, label, problems);
  return { index, node, name, provider, transport, include, snapshot, snapshotSpan, auth };
}

function readTransport(node: JsonNode | undefined, label: string, problems: Problem[]): TransportModel | undefined {
  if (node?.type !== 'object') return undefined;
  const kindNode = getProperty(node, 'kind')?.valueNode;
  const kind = stringField(kindNode);
  const where = `the transport of ${label}`;
  if (!kindNode) {
    problems.push(problem('TP301', openingSpan(node), `${where} has no "kind"; use "stdio" (a local command) or "http" (Streamable HTTP)`));
    return undefined;
  }
  if (!kind || (kind.value !== 'stdio' && kind.value !== 'http')) {
    problems.push(problem('TP301', spanOf(kindNode), `${where} has kind ${kind ? `"${kind.value}"` : describeNodeType(kindNode)}; use "stdio" (a local command) or "http" (Streamable HTTP)`));
    return undefined;
  }
  if (kind.value === 'stdio') {
    const shapeProblems: Problem[] = [];
    checkShape(node, STDIO_SHAPE, where, shapeProblems);
    // A missing command makes the transport incomplete (TP302) rather than a generic missing field.
    problems.push(...shapeProblems.map((found) => (found.code === 'TP104' ? problem('TP302', spanOf(kindNode), `${where} runs no command: add "command" (and "args")`) : found)));
    const cwd = getProperty(node, 'cwd');
    if (cwd) {
      problems.push(problem('TP303', spanOf(cwd.keyNode), `"cwd" in ${where} is ignored by the runtime: commands start in the workspace folder; make paths in "args" relative to it`));
    }
    const envNode = getProperty(node, 'env')?.valueNode;
    checkLiteralCredentials(envNode, `the env of ${label}`, problems);
    return { kind: 'stdio', span: spanOf(node), command: stringField(getProperty(node, 'command')?.valueNode), args: stringArray(getProperty(node, 'args')?.valueNode), env: stringRecord(envNode) };
  }
  const shapeProblems: Problem[] = [];
  checkShape(node, HTTP_SHAPE, where, shapeProblems);
  problems.push(...shapeProblems.map((found) => (found.code === 'TP104' ? problem('TP302', spanOf(kindNode), `${where} has no "url" to connect to`) : found)));
  const url = stringField(getProperty(node, 'url')?.valueNode);
  if (url && !isHttpUrl(url.value)) {
    problems.push(problem('TP302', url.span, `${where} needs an absolute http:// or https:// URL, found "${url.value}"`));
  }
  const headersNode = getProperty(node, 'headers')?.valueNode;
  checkLiteralCredentials(headersNode, `the headers of ${label}`, problems);
  return { kind: 'http', span: spanOf(node), url, headers: stringRecord(headersNode) };
}

function isHttpUrl(text: string): boolean {
  try {
    const parsed = new URL(text);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

function stringArray(node: JsonNode | undefined): string[] {
  return node?.type === 'array' ? (node.children ?? []).filter((child) => child.type === 'string').map((child) => String(child.value)) : [];
}

/** TP205 for headers or environment entries that hold a credential literally. */
function checkLiteralCredentials(node: JsonNode | undefined, where: string, problems: Problem[]): void {
  if (node?.type !== 'object') return;
  for (const property of objectProperties(node)) {
    const value = property.valueNode;
    if (value?.type !== 'string' || String(value.value).length === 0 || VARIABLE_REFERENCE.test(String(value.value))) continue;
    if (isCredentialKey(property.key)) {
      problems.push(
        problem('TP205', spanOf(value), `"${property.key}" in ${where} holds a credential literally; connector files are committed and logged, so use "auth" with a credentialRef naming an environment variable`, {
          data: { key: property.key },
        }),
      );
    }
  }
}

const AUTH_FIELDS: Record<string, { required: string[]; optional: string[] }> = {
  none: { required: [], optional: [] },
  bearer: { required: ['credentialRef'], optional: [] },
  'api-key': { required: ['credentialRef'], optional: ['headerName'] },
  basic: { required: ['username', 'credentialRef'], optional: [] },
};

function readAuth(node: JsonNode | undefined, label: string, problems: Problem[]): AuthModel | undefined {
  if (node?.type !== 'object') return undefined;
  const where = `the auth of ${label}`;
  const typeNode = getProperty(node, 'type')?.valueNode;
  const type = stringField(typeNode);
  // Own names only: a type such as "constructor" is not a kind of auth.
  const fields = type && Object.hasOwn(AUTH_FIELDS, type.value) ? AUTH_FIELDS[type.value] : undefined;
  if (!type || !fields) {
    const span = typeNode ? spanOf(typeNode) : openingSpan(node);
    problems.push(problem('TP304', span, `${where} needs "type": one of ${Object.keys(AUTH_FIELDS).map((name) => `"${name}"`).join(', ')}`));
    return undefined;
  }
  let valid = true;
  const values: Record<string, string> = {};
  for (const property of objectProperties(node)) {
    if (property.key === 'type') continue;
    if (![...fields.required, ...fields.optional].includes(property.key)) {
      const literal = isCredentialKey(property.key) || property.key === 'password';
      problems.push(
        problem('TP304', spanOf(property.keyNode), literal
          ? `${where} must not hold a credential ("${property.key}"); name an environment variable in "credentialRef" instead`
          : `"${property.key}" is not a field of "${type.value}" auth (fields: ${['type', ...fields.required, ...fields.optional].join(', ')})`),
      );
      valid = false;
      continue;
    }
    const value = property.valueNode;
    if (value?.type !== 'string' || String(value.value).length === 0) {
      problems.push(problem('TP304', value ? spanOf(value) : spanOf(property.keyNode), `"${property.key}" in ${where} must be a non-empty string`));
      valid = false;
      continue;
    }
    if (property.key === 'credentialRef' && !ENVIRONMENT_NAME.test(String(value.value))) {
      problems.push(problem('TP304', spanOf(value), `credentialRef names an environment variable or an editor-held secret, like "GITHUB_MCP_TOKEN"; it never holds the credential itself`));
      valid = false;
      continue;
    }
    values[property.key] = String(value.value);
  }
  for (const required of fields.required) {
    if (!getProperty(node, required)) {
      problems.push(problem('TP304', type.span, `"${type.value}" auth needs "${required}"`));
      valid = false;
    }
  }
  if (!valid) return undefined;
  // Valid: every required field of the type is there, so the defaults below are never taken.
  const { credentialRef = '', username = '', headerName = 'X-API-Key' } = values;
  switch (type.value) {
    case 'none':
      return { type: 'none' };
    case 'bearer':
      return { type: 'bearer', credentialRef };
    case 'api-key':
      return { type: 'api-key', credentialRef, headerName };
    default:
      return { type: 'basic', username, credentialRef };
  }
}

/** TP300 / TP307: connector names follow the registry's pattern and are unique in a file. */
export function checkConnectorNames(model: ConnectorModel): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  for (const instance of model.instances) {
    if (!instance.name) continue;
    if (!CONNECTOR_NAME.test(instance.name.value)) {
      problems.push(problem('TP300', instance.name.span, `connector name "${instance.name.value}" must match ^[a-z_][a-z0-9_]*$ (lowercase letters, digits, underscores): it is also the server's name in the registry`));
    }
    const first = seen.get(instance.name.value);
    if (first !== undefined) {
      problems.push(problem('TP307', instance.name.span, `connector name "${instance.name.value}" is already used by connector #${first + 1} in this file`));
    } else {
      seen.set(instance.name.value, instance.index);
    }
  }
  return problems;
}
