/**
 * `warden.lock` (mcp-warden, "MCP Lock Format v1", `schema_version: 3`) as a Toolpin document:
 * read with positions, its own integrity digests checked (a lock whose `entry_digest`,
 * `command_digest` or `overall_digest` no longer matches what it records was edited by hand or
 * tampered with: TP122 naming the entry), verified against the live surface of the server its own
 * `server` block launches (TP123 drift naming the fields and both hashes, TP124 gone, TP125 added),
 * and re-pinned in mcp-warden's own format (core/pins/warden.ts computes every hash).
 *
 * The lock records hashes only, never the definitions, so a drift names the fields that changed,
 * not the text. `findings` are informational and kept as they are; `pin` is kept except that a
 * re-pin records the time and withdraws an approval that no longer covers the digest, as
 * `mcp-warden pin` without `--approve` does.
 */
import { type JsonNode, parseJsonDocument, spanOf } from '../../json/jsonDocument';
import { problem, type Problem, type Span } from '../../problems';
import { isRecord } from '../../json/values';
import {
  compareCodePoints,
  WARDEN_SCHEMA_VERSION,
  wardenCommandDigest,
  wardenHash,
  wardenOverallDigest,
  wardenPromptEntry,
  wardenResourceEntry,
  wardenStoredEntryDigest,
  wardenToolEntry,
} from '../../pins/warden';
import {
  describeChanges,
  detectIndent,
  keySpan,
  type LockEntryKind,
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

export const WARDEN_LOCK_FILE = 'warden.lock';

type WardenEntryKind = Exclude<LockEntryKind, 'instructions'>;

export interface WardenEntryModel {
  readonly kind: WardenEntryKind;
  /** The tool's or prompt's name, the resource's URI. */
  readonly name: string;
  readonly value: Record<string, unknown>;
  readonly nameSpan: Span;
  readonly entryDigest: string;
  readonly digestSpan: Span;
}

export interface WardenLockModel {
  readonly schemaVersion: number;
  readonly server: {
    readonly command: string;
    readonly args: readonly string[];
    readonly url: string | null;
    readonly commandDigest: string;
    readonly span: Span;
    readonly digestSpan: Span;
  };
  readonly tools: readonly WardenEntryModel[];
  readonly resources: readonly WardenEntryModel[];
  readonly prompts: readonly WardenEntryModel[];
  /** Where each list's key is, for entries a server serves that the lock lacks. */
  readonly listSpans: Readonly<Record<'tools' | 'resources' | 'prompts', Span>>;
  readonly overallDigest: { readonly value: string; readonly span: Span };
  readonly approvedDigest: { readonly value: string; readonly span: Span } | undefined;
  /** The whole document as JSON.parse reads it, member order kept, for re-pinning. */
  readonly value: Record<string, unknown>;
  readonly indent: string | number;
}

const LIST_KEYS: ReadonlyArray<readonly ['tools' | 'resources' | 'prompts', WardenEntryKind]> = [
  ['tools', 'tool'],
  ['resources', 'resource'],
  ['prompts', 'prompt'],
];

/** How the lock's server is named in messages and reports: its launch as written, or its URL. */
export function wardenServerName(model: Pick<WardenLockModel, 'server'>): string {
  return model.server.url ?? [model.server.command, ...model.server.args].join(' ');
}

/** Reads a `warden.lock`; never throws. The model is undefined when the text is no readable lock. */
export function parseWardenLock(text: string): { model: WardenLockModel | undefined; problems: Problem[] } {
  const document = parseJsonDocument(text);
  const problems: Problem[] = [...document.problems];
  const root = document.root;
  if (!root || root.type !== 'object') {
    if (document.problems.length === 0) problems.push(problem('TP120', root ? spanOf(root) : { offset: 0, length: 0 }, 'warden.lock: the file must hold one JSON object (mcp-warden\'s lock format)'));
    return { model: undefined, problems };
  }
  if (document.problems.some((found) => found.code === 'TP101')) return { model: undefined, problems };
  const version = member(root, 'schema_version');
  if (version?.type !== 'number' || version.value !== WARDEN_SCHEMA_VERSION) {
    problems.push(
      version?.type === 'number'
        ? problem('TP121', spanOf(version), `warden.lock: schema_version ${String(version.value)} is not supported: Toolpin reads schema_version ${WARDEN_SCHEMA_VERSION} (re-pin the lock with mcp-warden or toolpin pin to upgrade it)`)
        : problem('TP120', version ? spanOf(version) : keySpan(root, 'schema_version'), 'warden.lock: "schema_version" must be the number 3'),
    );
    return { model: undefined, problems };
  }
  const server = readServer(root, problems);
  const lists: Partial<Record<'tools' | 'resources' | 'prompts', WardenEntryModel[]>> = {};
  for (const [key, kind] of LIST_KEYS) {
    const elements = readArray(root, key, 'warden.lock', problems);
    if (elements) lists[key] = elements.flatMap((element, index) => readEntry(element, kind, `warden.lock ${key}[${index}]`, problems));
  }
  const overall = readString(root, 'overall_digest', 'warden.lock', problems);
  const pin = member(root, 'pin');
  const approvedDigest = member(pin, 'approved_digest');
  const approved = member(pin, 'approved');
  if (!server || !lists.tools || !lists.resources || !lists.prompts || overall?.value == null) return { model: undefined, problems };
  return {
    model: {
      schemaVersion: WARDEN_SCHEMA_VERSION,
      server,
      tools: lists.tools,
      resources: lists.resources,
      prompts: lists.prompts,
      listSpans: { tools: keySpan(root, 'tools'), resources: keySpan(root, 'resources'), prompts: keySpan(root, 'prompts') },
      overallDigest: { value: overall.value, span: overall.span },
      approvedDigest: approved?.type === 'boolean' && approved.value === true && approvedDigest?.type === 'string' ? { value: String(approvedDigest.value), span: spanOf(approvedDigest) } : undefined,
      value: objectValue(root)!,
      indent: detectIndent(text),
    },
    problems,
  };
}

function readServer(root: JsonNode, problems: Problem[]): WardenLockModel['server'] | undefined {
  const node = member(root, 'server');
  if (node?.type !== 'object') {
    problems.push(problem('TP120', node ? spanOf(node) : keySpan(root, 'server'), 'warden.lock: "server" must be an object with the launch (command, args) or url'));
    return undefined;
  }
  const digest = readString(node, 'command_digest', 'warden.lock server', problems);
  const urlNode = member(node, 'url');
  const url = urlNode?.type === 'string' && String(urlNode.value) !== '' ? String(urlNode.value) : null;
  const commandNode = member(node, 'command');
  const argsNode = member(node, 'args');
  const args = argsNode?.type === 'array' ? (argsNode.children ?? []) : [];
  const stringArgs = args.every((arg) => arg.type === 'string');
  if (url === null && (commandNode?.type !== 'string' || String(commandNode.value) === '' || argsNode?.type !== 'array' || !stringArgs)) {
    problems.push(problem('TP120', spanOf(node), 'warden.lock server: a launch needs "command" (a non-empty string) and "args" (an array of strings), or a "url"'));
    return undefined;
  }
  if (digest?.value == null) return undefined;
  return {
    command: commandNode?.type === 'string' ? String(commandNode.value) : '',
    args: stringArgs ? args.map((arg) => String(arg.value)) : [],
    url,
    commandDigest: digest.value,
    span: commandNode ? spanOf(commandNode) : spanOf(node),
    digestSpan: digest.span,
  };
}

function readEntry(node: JsonNode, kind: WardenEntryKind, where: string, problems: Problem[]): WardenEntryModel[] {
  if (node.type !== 'object') {
    problems.push(problem('TP120', spanOf(node), `${where}: an entry must be an object`));
    return [];
  }
  const name = readString(node, kind === 'resource' ? 'uri' : 'name', where, problems);
  const digest = readString(node, 'entry_digest', where, problems);
  if (name?.value == null || digest?.value == null) return [];
  return [{ kind, name: name.value, value: objectValue(node)!, nameSpan: name.span, entryDigest: digest.value, digestSpan: digest.span }];
}

function entryLabel(entry: Pick<WardenEntryModel, 'kind' | 'name'>): string {
  return `${entry.kind === 'tool' ? 'tools' : entry.kind === 'resource' ? 'resources' : 'prompts'}/${entry.name}`;
}

function data(model: WardenLockModel, entry: string, changes?: readonly LockFieldChange[]): LockProblemData {
  return { lockKind: 'warden', server: wardenServerName(model), entry, ...(changes ? { changes } : {}) };
}

/**
 * The lock's own integrity: each entry against its `entry_digest`, the launch against
 * `command_digest`, the digests against `overall_digest`, and an approval against the digest it
 * approved (TP128). Returns the problems and the entries that do not match their own digest.
 */
export function checkWardenIntegrity(model: WardenLockModel): { problems: Problem[]; tampered: ReadonlySet<string> } {
  const problems: Problem[] = [];
  const tampered = new Set<string>();
  for (const entry of [...model.tools, ...model.resources, ...model.prompts]) {
    const recomputed = safeDigest(() => wardenStoredEntryDigest(entry.value));
    if (recomputed === entry.entryDigest) continue;
    tampered.add(entryLabel(entry));
    problems.push(
      problem(
        'TP122',
        entry.digestSpan,
        `warden.lock entry ${entryLabel(entry)} does not match its own entry_digest (recorded ${entry.entryDigest}, its fields hash to ${recomputed ?? 'nothing: a value is not JSON'}): the entry was edited by hand or tampered with; re-pin it from the server`,
        { data: data(model, entryLabel(entry), [{ field: 'entry_digest', locked: entry.entryDigest, live: recomputed ?? null }]) },
      ),
    );
  }
  const command = wardenCommandDigest(model.server);
  if (command !== model.server.commandDigest) {
    problems.push(
      problem('TP122', model.server.digestSpan, `warden.lock server launch "${wardenServerName(model)}" does not match its command_digest (recorded ${model.server.commandDigest}, the launch hashes to ${command}): the launch was edited by hand or tampered with`, {
        data: data(model, 'server', [{ field: 'command_digest', locked: model.server.commandDigest, live: command }]),
      }),
    );
  }
  const overall = recordedOverallDigest(model);
  if (overall !== model.overallDigest.value) {
    problems.push(
      problem('TP122', model.overallDigest.span, `warden.lock overall_digest does not match the lock's own entries (recorded ${model.overallDigest.value}, they hash to ${overall}): the lock was edited by hand or tampered with`, {
        data: data(model, 'overall_digest', [{ field: 'overall_digest', locked: model.overallDigest.value, live: overall }]),
      }),
    );
  }
  if (model.approvedDigest && model.approvedDigest.value !== model.overallDigest.value) {
    problems.push(
      problem('TP128', model.approvedDigest.span, `warden.lock approval covers ${model.approvedDigest.value}, not the lock's overall_digest ${model.overallDigest.value}: the surface changed without a new approval`, {
        data: data(model, 'approved_digest'),
      }),
    );
  }
  return { problems, tampered };
}

function safeDigest(compute: () => string): string | undefined {
  try {
    return compute();
  } catch {
    return undefined;
  }
}

function recordedOverallDigest(model: WardenLockModel): string {
  const digests = (entries: readonly WardenEntryModel[]): string[] => entries.map((entry) => entry.entryDigest);
  return wardenOverallDigest({ schemaVersion: model.schemaVersion, commandDigest: model.server.commandDigest, tools: digests(model.tools), resources: digests(model.resources), prompts: digests(model.prompts) });
}

/** The live entries of a surface, computed as mcp-warden would; an entry's `inspection` is kept from the lock. */
export function liveWardenEntries(surface: LockSurface, locked?: WardenLockModel): Record<'tools' | 'resources' | 'prompts', Array<Record<string, unknown> & { entry_digest: string }>> {
  const inspections = new Map<string, Record<string, unknown>>();
  for (const entry of locked?.tools ?? []) {
    const inspection = entry.value.inspection;
    if (isRecord(inspection)) inspections.set(entry.name, inspection);
  }
  const records = (list: readonly unknown[] | undefined): Array<Record<string, unknown>> => (list ?? []).filter(isRecord);
  const named = (item: Record<string, unknown>): string => (typeof item.name === 'string' ? item.name : String(item.name ?? ''));
  const tools = records(surface.tools).map((tool) => wardenToolEntry({ name: named(tool), description: tool.description, inputSchema: tool.inputSchema }, inspections.get(named(tool))));
  const resources = records(surface.resources).flatMap((resource) => (typeof resource.uri === 'string' ? [wardenResourceEntry({ ...resource, uri: resource.uri })] : []));
  const prompts = records(surface.prompts).map((prompt) => wardenPromptEntry({ name: named(prompt), description: prompt.description, arguments: prompt.arguments }));
  return {
    tools: tools.sort((a, b) => compareCodePoints(a.name, b.name)),
    resources: resources.sort((a, b) => compareCodePoints(a.uri, b.uri)),
    prompts: prompts.sort((a, b) => compareCodePoints(a.name, b.name)),
  };
}

/** The hashed fields of an entry that differ from the live entry (a structure compares by its hash). */
function changedFields(locked: Record<string, unknown>, live: Record<string, unknown>): LockFieldChange[] {
  const changes: LockFieldChange[] = [];
  const fields = [...new Set([...Object.keys(locked), ...Object.keys(live)])].filter((field) => field !== 'entry_digest' && field !== 'name' && field !== 'uri');
  const shown = (value: unknown): string | null => {
    if (value === undefined) return null;
    if (typeof value === 'string') return value;
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return `[${value.join(', ')}]`;
    return safeDigest(() => wardenHash(value)) ?? null;
  };
  for (const field of fields) {
    const before = shown(locked[field]);
    const after = shown(live[field]);
    if (before !== after) changes.push({ field, locked: before, live: after });
  }
  return changes;
}

/**
 * Verifies a lock against its server's live surface: the integrity first (a tampered entry is
 * "tampered", whatever the server says), then each recorded entry against the live one, then the
 * entries served that the lock lacks. Resources and prompts a server does not list count as none
 * (as mcp-warden captures them); a listing that failed (undefined) leaves them unverified.
 */
export function verifyWardenLock(model: WardenLockModel, surface: LockSurface): LockVerification {
  const integrity = checkWardenIntegrity(model);
  const problems: Problem[] = [...integrity.problems];
  const verdicts: LockEntryVerdict[] = [];
  const live = liveWardenEntries(surface, model);
  const server = wardenServerName(model);
  const lists: ReadonlyArray<readonly ['tools' | 'resources' | 'prompts', WardenEntryKind, readonly WardenEntryModel[], boolean]> = [
    ['tools', 'tool', model.tools, true],
    ['resources', 'resource', model.resources, surface.resources !== undefined],
    ['prompts', 'prompt', model.prompts, surface.prompts !== undefined],
  ];
  for (const [key, kind, entries, listed] of lists) {
    const liveByName = new Map(live[key].map((entry) => [String(kind === 'resource' ? entry.uri : entry.name), entry]));
    for (const entry of entries) {
      const label = entryLabel(entry);
      const liveEntry = liveByName.get(entry.name);
      liveByName.delete(entry.name);
      const base = { kind, name: entry.name, server, locked: entry.entryDigest, span: entry.nameSpan };
      if (integrity.tampered.has(label)) {
        verdicts.push({ ...base, state: 'tampered', live: liveEntry?.entry_digest ?? null, changes: [], reason: `the entry does not match its own entry_digest; re-pin ${label} from the server` });
      } else if (!listed) {
        verdicts.push({ ...base, state: 'cannot-verify', live: null, changes: [], reason: `the server's ${key} could not be listed` });
      } else if (!liveEntry) {
        const reason = `${label} is in warden.lock but the server (${server}) no longer serves it`;
        verdicts.push({ ...base, state: 'missing', live: null, changes: [], reason });
        problems.push(problem('TP124', entry.nameSpan, reason, { data: data(model, label) }));
      } else if (liveEntry.entry_digest === entry.entryDigest) {
        verdicts.push({ ...base, state: 'verified', live: liveEntry.entry_digest, changes: [] });
      } else {
        const changes = changedFields(entry.value, liveEntry);
        const reason = `${label} drifted from warden.lock: ${describeChanges(changes.length > 0 ? changes : [{ field: 'entry_digest', locked: entry.entryDigest, live: liveEntry.entry_digest }])}`;
        verdicts.push({ ...base, state: 'drifted', live: liveEntry.entry_digest, changes, reason });
        problems.push(problem('TP123', entry.nameSpan, reason, { data: data(model, label, changes) }));
      }
    }
    if (!listed) continue;
    for (const [name, extra] of liveByName) {
      const label = `${key}/${name}`;
      const reason = `${label} is served (${server}) but not in warden.lock: re-pin to record it`;
      verdicts.push({ kind, name, server, state: 'added', locked: null, live: extra.entry_digest, changes: [], span: model.listSpans[key], reason });
      problems.push(problem('TP125', model.listSpans[key], reason, { data: data(model, label) }));
    }
  }
  return { verdicts, problems };
}

/**
 * The lock re-pinned to the live surface in mcp-warden's own format: every member where it was
 * (unknown members kept), the entries rebuilt and sorted as mcp-warden sorts them, the digests
 * recomputed, the file's indentation and final line feed kept. `now` is the pin time
 * (`2026-06-06T14:22:05Z`), recorded only when something changed. An approval that does not
 * cover the new digest is withdrawn: the new surface was not approved.
 */
export function repinWardenLock(model: WardenLockModel, surface: LockSurface, now: string): string {
  const live = liveWardenEntries(surface, model);
  const value: Record<string, unknown> = { ...model.value };
  value.schema_version = WARDEN_SCHEMA_VERSION;
  const commandDigest = wardenCommandDigest(model.server);
  value.server = { ...(isRecord(value.server) ? value.server : {}), command_digest: commandDigest };
  // A list the server could not give keeps what the lock recorded.
  const kept = (entries: readonly WardenEntryModel[]): Array<Record<string, unknown> & { entry_digest: string }> => entries.map((entry) => ({ ...entry.value, entry_digest: entry.entryDigest }));
  const tools = live.tools;
  const resources = surface.resources === undefined ? kept(model.resources) : live.resources;
  const prompts = surface.prompts === undefined ? kept(model.prompts) : live.prompts;
  value.tools = tools;
  value.resources = resources;
  value.prompts = prompts;
  const digests = (list: ReadonlyArray<{ entry_digest: string }>): string[] => list.map((entry) => entry.entry_digest);
  const overall = wardenOverallDigest({ schemaVersion: WARDEN_SCHEMA_VERSION, commandDigest, tools: digests(tools), resources: digests(resources), prompts: digests(prompts) });
  value.overall_digest = overall;
  // Nothing changed (the same surface, an intact lock): the file stays as it is, pin time included.
  const unchanged = serializeLock(value, model.indent);
  if (unchanged === serializeLock(model.value, model.indent)) return unchanged;
  const pin = value.pin;
  if (isRecord(pin)) {
    const next: Record<string, unknown> = { ...pin, created_at: now };
    if (next.approved === true && next.approved_digest !== overall) {
      next.approved = false;
      next.approver = null;
      next.approved_at = null;
      next.approved_digest = null;
    }
    value.pin = next;
  }
  return serializeLock(value, model.indent);
}
