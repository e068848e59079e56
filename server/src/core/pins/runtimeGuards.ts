/**
 * The checks a runtime makes with pins before it trusts a server's `tools/list` (docs/pins-library.md):
 *
 * - {@link verifySchemaPin}: a dispatch guard for one blueprint step (Loom ADR 0063): the step's
 *   `expectedSchemaHash` against the schema pin of the live tool of that name;
 * - {@link verifyToolsSnapshot}: a connector's `toolsSnapshot` against the live list (ObjectStack's
 *   ruling B): the tools whose tool pin changed, with the live pin, and the tools that are gone.
 *
 * Both are pure and synchronous, and never throw on what a server sends: a live tool without an
 * `inputSchema`, or with one that is not plain JSON, has no pin, which counts as drift (a guard
 * fails closed).
 */
import { CanonicalJsonError } from './canonicalJson';
import { schemaPin, toolPin } from './pins';

/** One entry of the `tools` array of a `tools/list` result, as far as the pins read it (other fields may be present). */
export interface ListedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: unknown;
}

/** What a blueprint step pins: the tool it calls and the schema pin it expects (`fnv1a64:<hex16>`). */
export interface SchemaPinExpectation {
  readonly toolName: string;
  readonly expectedSchemaHash: string;
}

/** The live tool's schema differs from the pin. `observedHash` is null when the live tool has no pinnable schema. */
export interface SchemaDrift {
  readonly channel: 'schemaDrift';
  readonly toolName: string;
  readonly expectedSchemaHash: string;
  readonly observedHash: string | null;
}

/** No live tool has the pinned name. */
export interface ToolNotFound {
  readonly channel: 'toolNotFound';
  readonly toolName: string;
}

/** A connector tool whose pin no longer matches: the pin it had and the pin of the live tool. */
export interface ChangedTool {
  readonly toolName: string;
  readonly expectedPin: string;
  readonly livePin: string | null;
}

/** What {@link verifyToolsSnapshot} found; both lists empty means the snapshot holds. */
export interface ToolsSnapshotResult {
  readonly changed: ChangedTool[];
  readonly gone: string[];
}

/** The pin, or null when the value has none (not plain JSON, or no schema at all). */
function pinOrNull(compute: () => string): string | null {
  try {
    return compute();
  } catch (error) {
    if (error instanceof CanonicalJsonError) return null;
    throw error;
  }
}

/** The first live tool of each name (a server that lists a name twice is judged by the first, as a client calls it). */
function byName(tools: readonly ListedTool[]): Map<string, ListedTool> {
  const found = new Map<string, ListedTool>();
  for (const tool of tools) {
    if (tool !== null && typeof tool === 'object' && typeof tool.name === 'string' && !found.has(tool.name)) found.set(tool.name, tool);
  }
  return found;
}

/**
 * A pin as written, made comparable: lowercase, and a bare 64-hex tool pin given its `sha256:`
 * prefix (connectors may write either, docs/formats.md §2).
 */
function comparablePin(pin: string): string {
  const lower = pin.trim().toLowerCase();
  return /^[0-9a-f]{64}$/.test(lower) ? `sha256:${lower}` : lower;
}

/**
 * Checks one schema pin against the live tools. Returns undefined when the live tool of that name
 * has exactly the pinned schema; otherwise the channel the dispatch must refuse on.
 */
export function verifySchemaPin(expectation: SchemaPinExpectation, tools: readonly ListedTool[]): SchemaDrift | ToolNotFound | undefined {
  const { toolName, expectedSchemaHash } = expectation;
  const tool = byName(tools).get(toolName);
  if (!tool) return { channel: 'toolNotFound', toolName };
  const observedHash = tool.inputSchema === undefined ? null : pinOrNull(() => schemaPin(tool.inputSchema));
  if (observedHash !== null && observedHash === comparablePin(expectedSchemaHash)) return undefined;
  return { channel: 'schemaDrift', toolName, expectedSchemaHash, observedHash };
}

/**
 * Checks a connector's `toolsSnapshot` (tool name → tool pin) against the live tools: each pinned
 * tool whose live pin differs is `changed` (with both pins), each pinned tool no longer listed is
 * `gone`. Tools the snapshot does not pin are not its concern. Both lists are in snapshot order.
 */
export function verifyToolsSnapshot(snapshot: Readonly<Record<string, string>>, tools: readonly ListedTool[]): ToolsSnapshotResult {
  const live = byName(tools);
  const changed: ChangedTool[] = [];
  const gone: string[] = [];
  for (const [toolName, expectedPin] of Object.entries(snapshot)) {
    const tool = live.get(toolName);
    if (!tool) {
      gone.push(toolName);
      continue;
    }
    const livePin = pinOrNull(() => toolPin(tool));
    if (livePin === null || typeof expectedPin !== 'string' || livePin !== comparablePin(expectedPin)) changed.push({ toolName, expectedPin, livePin });
  }
  return { changed, gone };
}
