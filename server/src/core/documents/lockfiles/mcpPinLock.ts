/**
 * `mcp-pin.lock` (mcp-pin 0.2, `lockfileVersion: 1`, committed beside `.mcp.json`) as a Toolpin
 * document: read with positions, checked against its own hashes (each definition against its
 * `hash`, the `setHash`, `promptsHash` and `instructionsHash`: TP122 naming the entry when one no
 * longer matches), verified per server against the live surface of the server `.mcp.json`
 * declares under the same name (TP123–TP125; TP127 when the server's `id` no longer matches the
 * command `.mcp.json` declares) and re-pinned in mcp-pin's own format (its lockfile.js `toEntry`:
 * member order, definitions kept as their canonical JSON, two-space indentation).
 *
 * Hashes are mcp-pin's Tool definition hash v1 (core/pins/mcpPin.ts): the whole definition as
 * sent, bare hex. The lock keeps each definition, so a drift names the members that changed.
 */
import { type JsonNode, objectProperties, parseJsonDocument, spanOf, valueOf } from '../../json/jsonDocument';
import { problem, type Problem, type Span } from '../../problems';
import { mcpPinCanonical, mcpPinDefinitionHash, mcpPinInstructionsHash, mcpPinSetHash } from '../../pins/mcpPin';
import { sha256Hex } from '../../pins/sha256';
import { isRecord } from '../../json/values';
import {
  describeChanges,
  detectIndent,
  keySpan,
  listWords,
  type LockEntryVerdict,
  type LockFieldChange,
  type LockProblemData,
  type LockSurface,
  type LockVerification,
  member,
  objectValue,
  readArray,
  readString,
  serializeLock,
} from './lockModel';

export const MCP_PIN_LOCK_FILE = 'mcp-pin.lock';

/** What a lock Toolpin creates says about itself (mcp-pin's own wording, naming the writer). */
export const MCP_PIN_ABOUT = 'Written by toolpin pin. These are the MCP tool definitions this project approved. Review changes to this file like a dependency update.';

export interface McpPinDefinitionEntry {
  readonly name: string;
  readonly nameSpan: Span;
  readonly hash: string;
  readonly hashSpan: Span;
  readonly definition: unknown;
}

export interface McpPinServerEntry {
  /** The server's name: its key in the lock and in `.mcp.json`. */
  readonly name: string;
  readonly keySpan: Span;
  readonly id: { readonly value: string; readonly span: Span };
  readonly setHash: { readonly value: string; readonly span: Span };
  readonly tools: readonly McpPinDefinitionEntry[];
  readonly toolsSpan: Span;
  /** Absent in locks that predate prompts (mcp-pin 0.1.4 and earlier). */
  readonly prompts?: readonly McpPinDefinitionEntry[];
  readonly promptsSpan?: Span;
  readonly promptsHash?: { readonly value: string; readonly span: Span };
  /** Absent in locks that predate instructions; null value: the server sent none. */
  readonly instructionsHash?: { readonly value: string | null; readonly span: Span };
  readonly instructions?: string | null;
}

export interface McpPinLockModel {
  readonly servers: readonly McpPinServerEntry[];
  /** The whole document as JSON.parse reads it, member order kept, for re-pinning. */
  readonly value: Record<string, unknown>;
  readonly indent: string | number;
}

/** mcp-pin's server id: the first 16 hex digits of SHA-256 of the command line as written, joined by spaces. */
export function mcpPinServerId(command: string, args: readonly string[]): string {
  return sha256Hex([command, ...args].join(' ')).slice(0, 16);
}

/** Reads an `mcp-pin.lock`; never throws. The model is undefined when the text is no readable lock. */
export function parseMcpPinLock(text: string): { model: McpPinLockModel | undefined; problems: Problem[] } {
  const document = parseJsonDocument(text);
  const problems: Problem[] = [...document.problems];
  const root = document.root;
  if (!root || root.type !== 'object') {
    if (document.problems.length === 0) problems.push(problem('TP120', root ? spanOf(root) : { offset: 0, length: 0 }, 'mcp-pin.lock: the file must hold one JSON object (mcp-pin\'s lockfile format)'));
    return { model: undefined, problems };
  }
  if (document.problems.some((found) => found.code === 'TP101')) return { model: undefined, problems };
  const version = member(root, 'lockfileVersion');
  if (version?.type !== 'number' || version.value !== 1) {
    problems.push(
      version?.type === 'number'
        ? problem('TP121', spanOf(version), `mcp-pin.lock: lockfileVersion ${String(version.value)} is not supported: Toolpin reads lockfileVersion 1`)
        : problem('TP120', version ? spanOf(version) : keySpan(root, 'lockfileVersion'), 'mcp-pin.lock: "lockfileVersion" must be the number 1'),
    );
    return { model: undefined, problems };
  }
  const serversNode = member(root, 'servers');
  if (serversNode?.type !== 'object') {
    problems.push(problem('TP120', serversNode ? spanOf(serversNode) : keySpan(root, 'servers'), 'mcp-pin.lock: "servers" must be an object of server entries by name'));
    return { model: undefined, problems };
  }
  const servers: McpPinServerEntry[] = [];
  for (const property of objectProperties(serversNode)) {
    const entry = property.valueNode ? readServerEntry(property.key, spanOf(property.keyNode), property.valueNode, problems) : undefined;
    if (entry) servers.push(entry);
  }
  return { model: { servers, value: objectValue(root)!, indent: detectIndent(text) }, problems };
}

function readServerEntry(name: string, keySpanOfName: Span, node: JsonNode, problems: Problem[]): McpPinServerEntry | undefined {
  const where = `mcp-pin.lock server "${name}"`;
  if (node.type !== 'object') {
    problems.push(problem('TP120', spanOf(node), `${where}: the entry must be an object`));
    return undefined;
  }
  const id = readString(node, 'id', where, problems);
  const setHash = readString(node, 'setHash', where, problems);
  const tools = readDefinitions(node, 'tools', where, problems);
  const promptsNode = member(node, 'prompts');
  const prompts = promptsNode === undefined ? undefined : readDefinitions(node, 'prompts', where, problems);
  const promptsHash = promptsNode === undefined ? undefined : readString(node, 'promptsHash', where, problems);
  const instructionsHashNode = member(node, 'instructionsHash');
  const instructionsHash = instructionsHashNode === undefined ? undefined : readString(node, 'instructionsHash', where, problems, { nullable: true });
  const instructionsNode = member(node, 'instructions');
  const instructions = instructionsNode === undefined ? undefined : readString(node, 'instructions', where, problems, { nullable: true });
  if (id?.value == null || setHash?.value == null || !tools) return undefined;
  if ((promptsNode !== undefined && (!prompts || promptsHash?.value == null)) || (instructionsHashNode !== undefined && !instructionsHash)) return undefined;
  return {
    name,
    keySpan: keySpanOfName,
    id: { value: id.value, span: id.span },
    setHash: { value: setHash.value, span: setHash.span },
    tools,
    toolsSpan: keySpan(node, 'tools'),
    ...(prompts && promptsHash?.value != null ? { prompts, promptsSpan: keySpan(node, 'prompts'), promptsHash: { value: promptsHash.value, span: promptsHash.span } } : {}),
    ...(instructionsHash ? { instructionsHash } : {}),
    ...(instructions ? { instructions: instructions.value } : {}),
  };
}

function readDefinitions(node: JsonNode, key: 'tools' | 'prompts', where: string, problems: Problem[]): McpPinDefinitionEntry[] | undefined {
  const elements = readArray(node, key, where, problems);
  if (!elements) return undefined;
  const entries: McpPinDefinitionEntry[] = [];
  for (const [index, element] of elements.entries()) {
    const at = `${where} ${key}[${index}]`;
    if (element.type !== 'object') {
      problems.push(problem('TP120', spanOf(element), `${at}: an entry must be an object with name, hash and definition`));
      return undefined;
    }
    const name = readString(element, 'name', at, problems);
    const hash = readString(element, 'hash', at, problems);
    const definition = member(element, 'definition');
    if (!definition) problems.push(problem('TP120', spanOf(element), `${at}: "definition" is missing`));
    if (name?.value == null || hash?.value == null || !definition) return undefined;
    entries.push({ name: name.value, nameSpan: name.span, hash: hash.value, hashSpan: hash.span, definition: valueOf(definition) });
  }
  return entries;
}

function data(server: string, entry: string, changes?: readonly LockFieldChange[]): LockProblemData {
  return { lockKind: 'mcp-pin', server, entry, ...(changes ? { changes } : {}) };
}

function definitionHash(definition: unknown): string | undefined {
  try {
    return mcpPinDefinitionHash(definition);
  } catch {
    return undefined;
  }
}

/**
 * One server entry's own integrity: each definition against its hash and name, the set hashes
 * against the definitions, the instructions hash against the instructions. Returns the problems
 * and the `tools/NAME` / `prompts/NAME` / `instructions` entries that do not match.
 */
export function checkMcpPinIntegrity(entry: McpPinServerEntry): { problems: Problem[]; tampered: ReadonlySet<string> } {
  const problems: Problem[] = [];
  const tampered = new Set<string>();
  const lists: Array<readonly ['tools' | 'prompts', readonly McpPinDefinitionEntry[], { value: string; span: Span } | undefined]> = [['tools', entry.tools, entry.setHash]];
  if (entry.prompts) lists.push(['prompts', entry.prompts, entry.promptsHash]);
  for (const [key, definitions, recordedSet] of lists) {
    for (const definition of definitions) {
      const hash = definitionHash(definition.definition);
      const definedName = isRecord(definition.definition) ? definition.definition.name : undefined;
      if (hash === definition.hash && definedName === definition.name) continue;
      tampered.add(`${key}/${definition.name}`);
      const why = hash !== definition.hash ? `its definition hashes to ${hash ?? 'nothing (not JSON)'}, not to the recorded ${definition.hash}` : `its definition is named ${JSON.stringify(definedName)}`;
      problems.push(
        problem('TP122', definition.hashSpan, `mcp-pin.lock server "${entry.name}" entry ${key}/${definition.name} does not match its own hash: ${why}; the entry was edited by hand or tampered with`, {
          data: data(entry.name, `${key}/${definition.name}`, [{ field: 'hash', locked: definition.hash, live: hash ?? null }]),
        }),
      );
    }
    if (!recordedSet) continue;
    const set = mcpPinSetHash(definitions.map((definition) => definition.definition));
    const recomputed = 'setHash' in set ? set.setHash : null;
    if (recomputed !== recordedSet.value) {
      const field = key === 'tools' ? 'setHash' : 'promptsHash';
      problems.push(
        problem('TP122', recordedSet.span, `mcp-pin.lock server "${entry.name}" ${field} does not match its ${key} (recorded ${recordedSet.value}, they hash to ${recomputed ?? 'nothing'}): the entry was edited by hand or tampered with`, {
          data: data(entry.name, field, [{ field, locked: recordedSet.value, live: recomputed }]),
        }),
      );
    }
  }
  if (entry.instructionsHash && entry.instructions !== undefined && mcpPinInstructionsHash(entry.instructions) !== entry.instructionsHash.value) {
    tampered.add('instructions');
    problems.push(
      problem('TP122', entry.instructionsHash.span, `mcp-pin.lock server "${entry.name}" instructionsHash does not match its instructions: the entry was edited by hand or tampered with`, {
        data: data(entry.name, 'instructions', [{ field: 'instructionsHash', locked: entry.instructionsHash.value, live: mcpPinInstructionsHash(entry.instructions) }]),
      }),
    );
  }
  return { problems, tampered };
}

/** The members of two definitions that differ, each with the hash of its canonical form (null when absent). */
function changedMembers(locked: unknown, live: unknown): LockFieldChange[] {
  const record = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
  const before = record(locked);
  const after = record(live);
  const hashOf = (value: unknown): string | null => (value === undefined ? null : (definitionHash(value) ?? null));
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .sort()
    .map((field) => ({ field, locked: hashOf(before[field]), live: hashOf(after[field]) }))
    .filter((change) => change.locked !== change.live);
}

/** The live definitions with a string name, by name (the first of a repeated name). */
function liveByName(definitions: readonly unknown[]): Map<string, unknown> {
  const map = new Map<string, unknown>();
  for (const definition of definitions) {
    const name = isRecord(definition) ? definition.name : undefined;
    if (typeof name === 'string' && !map.has(name)) map.set(name, definition);
  }
  return map;
}

/**
 * Verifies one server entry against the server's live surface. `declared` is the command line
 * `.mcp.json` declares for the server, as written (variables unresolved), for the `id` check.
 */
export function verifyMcpPinServer(entry: McpPinServerEntry, surface: LockSurface, declared?: { readonly command: string; readonly args: readonly string[] }): LockVerification {
  const integrity = checkMcpPinIntegrity(entry);
  const problems: Problem[] = [...integrity.problems];
  const verdicts: LockEntryVerdict[] = [];
  if (declared && mcpPinServerId(declared.command, declared.args) !== entry.id.value) {
    const id = mcpPinServerId(declared.command, declared.args);
    problems.push(
      problem('TP127', entry.id.span, `mcp-pin.lock server "${entry.name}" was locked for another launch: its id ${entry.id.value} is not that of the command .mcp.json declares ("${[declared.command, ...declared.args].join(' ')}", id ${id}); re-pin after review`, {
        data: data(entry.name, 'id', [{ field: 'id', locked: entry.id.value, live: id }]),
      }),
    );
  }
  const lists: Array<readonly ['tool' | 'prompt', 'tools' | 'prompts', readonly McpPinDefinitionEntry[], readonly unknown[] | undefined, Span]> = [['tool', 'tools', entry.tools, surface.tools, entry.toolsSpan]];
  if (entry.prompts) lists.push(['prompt', 'prompts', entry.prompts, surface.prompts, entry.promptsSpan ?? entry.toolsSpan]);
  for (const [kind, key, definitions, liveList, listSpan] of lists) {
    const live = liveList === undefined ? undefined : liveByName(liveList);
    for (const definition of definitions) {
      const label = `${key}/${definition.name}`;
      const base = { kind, name: definition.name, server: entry.name, locked: definition.hash, span: definition.nameSpan };
      const liveDefinition = live?.get(definition.name);
      live?.delete(definition.name);
      const liveHash = liveDefinition === undefined ? null : (definitionHash(liveDefinition) ?? null);
      if (integrity.tampered.has(label)) {
        verdicts.push({ ...base, state: 'tampered', live: liveHash, changes: [], reason: `the definition does not match its own hash; re-pin ${label} from the server` });
      } else if (!live) {
        verdicts.push({ ...base, state: 'cannot-verify', live: null, changes: [], reason: `the server's ${key} could not be listed` });
      } else if (liveDefinition === undefined) {
        const reason = `${label} is in mcp-pin.lock but server "${entry.name}" no longer serves it`;
        verdicts.push({ ...base, state: 'missing', live: null, changes: [], reason });
        problems.push(problem('TP124', definition.nameSpan, reason, { data: data(entry.name, label) }));
      } else if (liveHash === definition.hash) {
        verdicts.push({ ...base, state: 'verified', live: liveHash, changes: [] });
      } else {
        const changes = changedMembers(definition.definition, liveDefinition);
        const reason = `${label} on server "${entry.name}" drifted from mcp-pin.lock: definition hash changed (locked ${definition.hash}, live ${liveHash ?? 'none'})${changes.length > 0 ? `; ${listWords(changes.map((change) => change.field))} changed` : ''}`;
        verdicts.push({ ...base, state: 'drifted', live: liveHash, changes, reason });
        problems.push(problem('TP123', definition.nameSpan, reason, { data: data(entry.name, label, [{ field: 'hash', locked: definition.hash, live: liveHash }, ...changes]) }));
      }
    }
    for (const [name, extra] of live ?? []) {
      const label = `${key}/${name}`;
      const reason = `${label} is served by server "${entry.name}" but not in mcp-pin.lock: re-pin to record it`;
      verdicts.push({ kind, name, server: entry.name, state: 'added', locked: null, live: definitionHash(extra) ?? null, changes: [], span: listSpan, reason });
      problems.push(problem('TP125', listSpan, reason, { data: data(entry.name, label) }));
    }
  }
  verifyInstructions(entry, surface, verdicts, problems, integrity.tampered.has('instructions'));
  return { verdicts, problems };
}

function verifyInstructions(entry: McpPinServerEntry, surface: LockSurface, verdicts: LockEntryVerdict[], problems: Problem[], tampered: boolean): void {
  if (!entry.instructionsHash) return;
  const locked = entry.instructionsHash.value;
  const base = { kind: 'instructions' as const, name: 'instructions', server: entry.name, locked, span: entry.instructionsHash.span, changes: [] };
  if (tampered) {
    verdicts.push({ ...base, state: 'tampered', live: null, reason: 'the instructions do not match their own hash; re-pin them from the server' });
    return;
  }
  if (surface.instructions === undefined) {
    verdicts.push({ ...base, state: 'cannot-verify', live: null, reason: "the server's instructions could not be read" });
    return;
  }
  const live = mcpPinInstructionsHash(surface.instructions);
  if (live === locked) {
    verdicts.push({ ...base, state: 'verified', live });
    return;
  }
  const changes = [{ field: 'instructionsHash', locked, live }];
  const reason = `the instructions of server "${entry.name}" drifted from mcp-pin.lock: ${describeChanges(changes)}`;
  verdicts.push({ ...base, state: 'drifted', live, changes, reason });
  problems.push(problem('TP123', entry.instructionsHash.span, reason, { data: data(entry.name, 'instructions', changes) }));
}

/** JSON text (a canonical form Toolpin wrote) as a value. */
function parseJson(text: string): unknown {
  return JSON.parse(text);
}

/** Definitions as mcp-pin's `toEntry` records them: sorted by name (UTF-16 order), each with its hash and canonical definition. */
function lockDefinitions(definitions: readonly unknown[]): Array<{ name: string; hash: string; definition: unknown }> {
  return definitions
    .flatMap((definition) => (isRecord(definition) && typeof definition.name === 'string' ? [{ name: definition.name, hash: mcpPinDefinitionHash(definition), definition: parseJson(mcpPinCanonical(definition)) }] : []))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A server's lock entry for a live surface, in mcp-pin's member order. Throws CanonicalJsonError on a definition that is not JSON. */
export function mcpPinServerEntryValue(id: string, surface: LockSurface): Record<string, unknown> {
  const tools = lockDefinitions(surface.tools);
  const set = mcpPinSetHash(surface.tools);
  const value: Record<string, unknown> = { id, setHash: 'setHash' in set ? set.setHash : null, tools };
  if (surface.prompts !== undefined) {
    const prompts = mcpPinSetHash(surface.prompts);
    value.promptsHash = 'setHash' in prompts ? prompts.setHash : null;
    value.prompts = lockDefinitions(surface.prompts);
  }
  const instructions = surface.instructions ?? null;
  value.instructionsHash = mcpPinInstructionsHash(instructions);
  value.instructions = instructions;
  return value;
}

/**
 * The lock with one server's entry written from its live surface: re-pinned in place (the other
 * servers and members as they were), or added after the others (a first pin). `model` undefined:
 * a new lock. The id is that of the command line `.mcp.json` declares, as written.
 */
export function repinMcpPinServer(model: McpPinLockModel | undefined, server: string, declared: { readonly command: string; readonly args: readonly string[] }, surface: LockSurface): string {
  const value: Record<string, unknown> = model ? { ...model.value } : { lockfileVersion: 1, about: MCP_PIN_ABOUT, servers: {} };
  const servers = { ...(isRecord(value.servers) ? value.servers : {}) };
  servers[server] = mcpPinServerEntryValue(mcpPinServerId(declared.command, declared.args), surface);
  value.servers = servers;
  return serializeLock(value, model?.indent ?? 2);
}
