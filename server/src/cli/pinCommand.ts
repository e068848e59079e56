/**
 * `toolpin pin [paths…]`: the re-pin edits of the editor, from the command line. It verifies like
 * `check`, then shows:
 *
 * - each drifted pin with its line change and what changed. When the pin store has the pinned
 *   content, the diff of the description (tool pins) and of the input schema; when it does not,
 *   the live description and schema in full (control characters shown escaped), with a note that
 *   the pinned content is unknown. So a description rewritten to carry instructions is always
 *   printed before it can be re-pinned.
 * - each first pin: a step that names a tool without `expectedSchemaHash` (TP206), and a
 *   connector's selected tools without a `toolsSnapshot` entry (TP405, or no `toolsSnapshot` at
 *   all), shown as added with the tool as it is served now, in full (core/verify/firstPins.ts).
 *   A step that cannot get one (an ambiguous or unknown server, a server that could not be
 *   listed) is named with the reason.
 * - each missing pin (TP401: the server no longer serves the tool). A connector's snapshot entry
 *   can be removed with `--remove-missing`; a blueprint step's tool needs a manual edit (another
 *   tool, or no step), which this command never guesses.
 *
 * It writes only with `--yes` (or after a "y" at a terminal): the new pins in place (comments and
 * formatting kept; a bare pin stays bare), the first pins added, their store entries, and with `--remove-missing` the
 * removal of the missing connector entries (the rest of the file byte for byte). `--tool NAME`
 * limits it to one tool. A drift of the security class (TP407: the new text carries cues of tool
 * poisoning, or a first pin whose live text carries such cues) is never written by a bulk `--yes`: it is shown, left as it is and named, and only
 * `--yes --tool NAME` writes it, one tool at a time.
 *
 * Exit status: 0 nothing drifted or missing, or every change shown was written; 1 changes shown but
 * not written (a dry run, a security-class re-pin left for review, a write refused), or missing pins
 * left that only a manual edit fixes; 2 nothing drifted or
 * missing, but something could not be verified (or no document was found).
 */
import * as path from 'node:path';
import { lineDiff, prettyCanonicalJson, readStoreEntry, storeEntryName } from '../core/review/changes';
import { analyzeDocument, blueprintOf, connectorOf, isBuildOutput } from '../core/documents/documents';
import { pinKind } from '../core/documents/kinds/registry';
import { entryPath, PIN_STORE_FOLDER } from '../core/pins/storeLayout';
import { definedIn } from '../core/verify/registry';
import { type ForeignPin, foreignPinAt } from '../core/documents/source/analyzeSource';
import { addSchemaPinEdits, addSnapshotEdits, applyTextEdits, removeSnapshotEntryEdits, replacePinEdit, setSnapshotEntryEdits, storeEntries, storeEntry, stringLiteral, type TextEdit } from '../core/documents/fixes';
import { type FirstPin, firstSchemaPins, firstToolPins, type NoFirstPin } from '../core/verify/firstPins';
import { describeCues } from '../core/verify/poisoning';
import { listingsFrom, NOT_LISTED } from '../engine/verifyWorkspace';
import { LineIndex } from '../core/json/lineIndex';
import { isParsedPin, type ParsedPin, parsePin } from '../core/pins/pins';
import { type DriftData, isDriftData, isSecurityData, isUnservedPinData, type SecurityData } from '../core/verify/payloads';
import type { Problem, Span } from '../core/problems';
import { terminalSafe } from '../core/report/terminalText';
import { containsKnownSecret } from '../mcp/credentials';
import { errorMessage } from '../core/json/values';
import { FileLockTimeout, scopeFor, withFileLock, WriteRefused, writeFileSafely } from '../io/safeWrite';
import { readRegularText } from '../io/regularFile';
import { type CheckArgs, type CliDocument, displayPath, type VerifiedWorkspace, verifyPaths } from './checkCommand';
import { type CliIo, readIfPresent } from './io';
import { checkLockFiles, pinLockFiles } from './lockfiles';
import { cliTrust } from './trust';

export interface PinArgs extends Omit<CheckArgs, 'format'> {
  yes: boolean;
  tool?: string;
  /** Also remove the snapshot entries of connector tools that are no longer served. */
  removeMissing?: boolean;
  /** Asks a yes/no question at a terminal; undefined when standard input is not a terminal. */
  confirm?: (question: string) => Promise<boolean>;
}

interface Repin extends DriftData {
  readonly document: CliDocument;
  readonly problem: Problem;
  /** Set when the pin is written in another module (`PINS.search` from `./pins`): the literal rewritten is there. */
  readonly foreign?: ForeignPin;
  /** Set when the drift adds cues of tool poisoning (TP407 on the same pin). */
  readonly security?: SecurityData;
}

/** A first pin to add (core/verify/firstPins.ts) in a document. */
interface Addition extends FirstPin {
  readonly document: CliDocument;
}

/** What a store entry is written from: a re-pin's or a first pin's live pin and content. */
interface LivePinned {
  readonly tool: string;
  readonly server: string;
  readonly live: string;
  readonly liveContent: string;
  readonly liveDefinition?: string;
}

interface Missing {
  document: CliDocument;
  problem: Problem;
  kind: 'schema' | 'tool';
  tool: string;
  server: string | undefined;
}

/** Server text for the terminal: the core's one neutraliser (core/report/terminalText.ts). */
export const neutralize = terminalSafe;

function indent(text: string, prefix: string): string {
  return text.replace(/\n$/, '').replace(/^/gm, prefix);
}

function parseAnyPin(pin: string): ParsedPin | undefined {
  const parsed = parsePin(pin, pin.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256');
  return isParsedPin(parsed) ? parsed : undefined;
}

/** The live tool's description and schema from a TP400's (or a first pin's) live content (canonical JSON). */
function liveParts(repin: Pick<Repin, 'kind' | 'liveContent'>): { description: string | undefined; inputSchema: unknown } {
  try {
    const value: unknown = JSON.parse(repin.liveContent);
    if (repin.kind === 'schema') return { description: undefined, inputSchema: value };
    if (typeof value !== 'object' || value === null) return { description: undefined, inputSchema: undefined };
    const description = 'description' in value ? value.description : undefined;
    return { description: typeof description === 'string' ? description : undefined, inputSchema: 'inputSchema' in value ? value.inputSchema : undefined };
  } catch {
    return { description: undefined, inputSchema: undefined };
  }
}

/** What the dry run shows of a drifted pin's content: the diffs, or the live content in full. */
function contentLines(repin: Repin, stored: string | undefined): string {
  const pinned = parseAnyPin(repin.pinned);
  const live = liveParts(repin);
  const entry = pinned && stored !== undefined ? readStoreEntry(pinned, stored) : undefined;
  const out: string[] = [];
  if (entry?.ok) {
    const pinnedDescription = entry.pin === 'tool' ? entry.tool.description : undefined;
    const pinnedSchema = entry.pin === 'tool' ? entry.tool.inputSchema : entry.inputSchema;
    if (entry.pin === 'tool' && (pinnedDescription ?? '') !== (live.description ?? '')) {
      const diff = lineDiff(neutralize(pinnedDescription ?? ''), neutralize(live.description ?? ''), { beforeLabel: 'pinned description', afterLabel: 'live description' });
      out.push(indent(diff.unified, '    '));
    }
    const schemaDiff = lineDiff(prettyOrEmpty(pinnedSchema), prettyOrEmpty(live.inputSchema), { beforeLabel: 'pinned inputSchema', afterLabel: 'live inputSchema' });
    if (schemaDiff.unified) out.push(indent(neutralize(schemaDiff.unified), '    '));
    return out.length > 0 ? `${out.join('\n')}\n` : '';
  }
  const why = entry && !entry.ok ? entry.reason : `no entry ${pinned ? storeEntryName(pinned) : ''} in ${PIN_STORE_FOLDER}`.replace('  ', ' ');
  out.push(`  what changed is unknown: the pinned content is unknown (${why}); review the live content in full:`);
  out.push(...liveContentLines(repin.kind, live));
  return `${out.join('\n')}\n`;
}

/** The live description (tool pins) and input schema, in full, indented for the terminal. */
function liveContentLines(kind: 'schema' | 'tool', live: { description: string | undefined; inputSchema: unknown }): string[] {
  const out: string[] = [];
  if (kind === 'tool') {
    out.push(live.description === undefined ? '    live description: (none)' : `    live description:\n${indent(neutralize(live.description), '      | ')}`);
  }
  out.push(live.inputSchema === undefined ? '    live inputSchema: (none)' : `    live inputSchema:\n${indent(neutralize(prettyOrEmpty(live.inputSchema)), '      | ')}`);
  return out;
}

function prettyOrEmpty(value: unknown): string {
  if (value === undefined) return '';
  try {
    return prettyCanonicalJson(value);
  } catch {
    return JSON.stringify(value) ?? '';
  }
}

function where(document: CliDocument, at: { readonly span: Span }): string {
  const start = new LineIndex(document.text).positionAt(at.span.offset);
  return `${document.display}:${start.line + 1}:${start.character + 1}`;
}

export async function pinCommand(terminalIo: CliIo, args: PinArgs): Promise<number> {
  // Tool names, messages, change summaries and diffs come from servers: shown with controls made visible.
  const io: CliIo = { ...terminalIo, stdout: (text) => terminalIo.stdout(terminalSafe(text)) };
  const verified = await verifyPaths(io, { ...args, format: 'text' }, 'pin');
  let lockStatus: 0 | 1 | 2 | undefined;
  if (verified.lockFiles.length > 0) {
    const env = args.env ?? process.env;
    const locks = await checkLockFiles(io, verified.lockFiles, {
      workspaceFolder: verified.workspaceFolder,
      env,
      offline: args.offline === true,
      trust: async () => (await cliTrust(verified.workspaceFolder, args.trust, env, io)).decide,
      ...(args.requestTimeoutMs !== undefined ? { requestTimeoutMs: args.requestTimeoutMs } : {}),
      ...(args.startTimeoutMs !== undefined ? { startTimeoutMs: args.startTimeoutMs } : {}),
    });
    lockStatus = await pinLockFiles(io, locks, { workspaceFolder: verified.workspaceFolder, now: new Date(), write: async () => args.yes || (args.confirm ? args.confirm('Write the re-pinned lockfile(s)? [y/N] ') : false) });
    // Lockfiles alone: their outcome is the command's.
    if (verified.documents.length === 0 && !verified.couldNotRead) return lockStatus;
  }
  const documentStatus = await pinDocuments(io, args, verified);
  if (lockStatus === undefined) return documentStatus;
  return documentStatus === 1 || lockStatus === 1 ? 1 : documentStatus === 2 || lockStatus === 2 ? 2 : 0;
}

/** `pin` for Toolpin's own documents (blueprints, connectors, modules). */
async function pinDocuments(io: CliIo, args: PinArgs, verified: VerifiedWorkspace): Promise<number> {
  if (verified.documents.length === 0 && verified.couldNotRead) return 2;
  const repins: Repin[] = [];
  const missing: Missing[] = [];
  const additions: Addition[] = [];
  const noFirstPin: Array<NoFirstPin & { document: CliDocument }> = [];
  let unverified = 0;
  for (const document of verified.documents) {
    const result = verified.results.get(document.path)!;
    unverified += result.verdicts.filter((verdict) => (verdict.state === 'cannot-verify' || verdict.state === 'ambiguous') && (args.tool === undefined || verdict.tool === args.tool)).length;
    const changes = changesOf(document, result.problems, args.tool);
    repins.push(...changes.repins);
    missing.push(...changes.missing);
    const first = firstPinsOf(document, verified, args.tool);
    additions.push(...first.additions);
    noFirstPin.push(...first.cannot);
  }
  if (verified.couldNotRead) unverified++;
  const builtOutput = refuseBuildOutput(io, verified, [...repins, ...additions]);
  repins.splice(0, repins.length, ...repins.filter((repin) => !builtOutput.includes(repin)));
  additions.splice(0, additions.length, ...additions.filter((addition) => !builtOutput.includes(addition)));
  const forTool = args.tool ? ` for tool "${args.tool}"` : '';
  const manualFirstPins = sayNoFirstPins(io, noFirstPin);
  unverified += noFirstPin.length - manualFirstPins;
  if (builtOutput.length > 0 && repins.length === 0 && missing.length === 0 && additions.length === 0) return 1;
  if (repins.length === 0 && missing.length === 0 && additions.length === 0) {
    io.stdout(`Nothing to re-pin${forTool}: no drifted or missing pin, and no first pin to add.${unverified > 0 ? ` ${unverified} pin(s) or file(s) could not be verified; run toolpin check for details.` : ''}\n`);
    if (unverified > 0) return 2;
    return manualFirstPins > 0 ? 1 : 0;
  }

  const definingTexts = await definingModules(repins);
  for (const repin of repins) await showRepin(io, verified.workspaceFolder, repin, definingTexts);
  for (const addition of additions) showAddition(io, addition);

  const removable = missing.filter((entry) => entry.kind === 'tool');
  const manual = missing.filter((entry) => entry.kind === 'schema');
  for (const entry of missing) showMissing(io, entry, args.removeMissing === true);

  const removals = args.removeMissing ? removable : [];
  const changes = repins.length + additions.length + removals.length;
  if (changes === 0) {
    io.stdout(
      `${missing.length} missing pin(s) shown${removable.length > 0 ? `; re-run with --remove-missing --yes to remove the ${removable.length} connector snapshot entr${removable.length === 1 ? 'y' : 'ies'}` : ''}${manual.length > 0 ? `; ${manual.length} blueprint step(s) need a manual edit` : ''}. Nothing written.\n`,
    );
    return 1;
  }

  let write = args.yes;
  const pins = [repins.length > 0 ? `${repins.length} re-pin(s)` : '', additions.length > 0 ? `${additions.length} first pin(s)` : ''].filter(Boolean).join(' and ');
  const what = [pins ? `${pins} and their store entries` : '', removals.length > 0 ? `${removals.length} removal(s) of missing snapshot entries` : ''].filter(Boolean).join(' and ');
  if (!write && args.confirm) write = await args.confirm(`Write ${what}? [y/N] `);
  if (!write) {
    const parts = [repins.length > 0 ? `${repins.length} drifted pin(s)` : '', additions.length > 0 ? `${additions.length} first pin(s)` : '', missing.length > 0 ? `${missing.length} missing pin(s)` : ''].filter(Boolean).join(' and ');
    const hint = missing.length > removals.length && removable.length > removals.length ? ' (add --remove-missing to remove the missing connector entries)' : '';
    io.stdout(`${parts} shown; nothing written. Re-run with --yes to write ${what}${hint}.\n`);
    return 1;
  }

  const byDocument = new Map<CliDocument, Shown>();
  const of = (document: CliDocument): Shown => {
    let entry = byDocument.get(document);
    if (!entry) byDocument.set(document, (entry = { repins: [], removals: [], additions: [] }));
    return entry;
  };
  // A drift of the security class (TP407), and a first pin whose live text carries the same cues,
  // are reviewed one tool at a time: a bulk write leaves them.
  const heldBack = args.tool === undefined ? repins.filter((repin) => repin.security !== undefined) : [];
  const heldBackFirst = args.tool === undefined ? additions.filter((addition) => addition.cues.length > 0) : [];
  const foreign = new Map<string, Repin[]>();
  for (const repin of repins) {
    if (heldBack.includes(repin)) continue;
    if (repin.foreign) foreign.set(repin.foreign.file, [...(foreign.get(repin.foreign.file) ?? []), repin]);
    else of(repin.document).repins.push(repin);
  }
  for (const addition of additions) if (!heldBackFirst.includes(addition)) of(addition.document).additions.push(addition);
  for (const removal of removals) of(removal.document).removals.push(removal);
  const outcome: WriteOutcome = { repinned: 0, added: 0, removed: 0, files: 0, notWritten: 0, refused: 0 };
  for (const [document, list] of byDocument) {
    await writeDocument(io, verified, document, list, args.tool, outcome);
  }
  for (const [file, list] of foreign) await writeDefiningModule(io, verified, file, list, outcome);
  io.stdout(wroteLine(outcome));
  for (const repin of heldBack) {
    io.stdout(
      `${where(repin.document, repin.problem)}  ${repin.tool} on ${repin.server}: not written: its drift carries cues of tool poisoning (TP407); review it above, then re-pin it alone: toolpin pin --yes --tool ${JSON.stringify(repin.tool)}\n`,
    );
  }
  const left = manual.length + (removable.length - outcome.removed) + manualFirstPins;
  if (left > 0) io.stdout(`${left} missing pin(s) left that need a manual edit.\n`);
  if (outcome.notWritten > 0) io.stdout(`${outcome.notWritten} change(s) not written; run toolpin pin again to see them.\n`);
  if (heldBack.length > 0) io.stdout(`${heldBack.length} security-class re-pin(s) left for review, one tool at a time.\n`);
  sayFirstPinsLeft(io, heldBackFirst, noFirstPin.length - manualFirstPins);
  return left > 0 || outcome.notWritten > 0 || outcome.refused > 0 || heldBack.length + heldBackFirst.length > 0 ? 1 : 0;
}

/** One missing pin and what can be done about it. */
function showMissing(io: CliIo, entry: Missing, removeMissing: boolean): void {
  io.stdout(`${where(entry.document, entry.problem)}  MISSING  ${entry.tool}${entry.server ? ` on ${entry.server}` : ''}: ${entry.problem.message}\n`);
  io.stdout(
    entry.kind === 'tool'
      ? `  ${removeMissing ? 'the snapshot entry will be removed' : 'toolpin pin --remove-missing --yes removes this snapshot entry'}\n\n`
      : "  a blueprint step's tool cannot be re-pinned or removed automatically: edit the step (another tool, or no step)\n\n",
  );
}

/** "Wrote N re-pin(s) and M first pin(s) in F file(s) and their entries in .toolpin/store." */
function wroteLine(outcome: WriteOutcome): string {
  const done = [
    outcome.repinned > 0 || (outcome.removed === 0 && outcome.added === 0) ? `${outcome.repinned} re-pin(s)` : '',
    outcome.added > 0 ? `${outcome.added} first pin(s)` : '',
    outcome.removed > 0 ? `${outcome.removed} removal(s) of missing snapshot entries` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  const pinned = outcome.repinned + outcome.added;
  return `Wrote ${done} in ${outcome.files} file(s)${pinned > 0 ? ` and ${outcome.refused > 0 ? `${pinned - outcome.refused} of ` : ''}their entries in ${PIN_STORE_FOLDER}` : ''}.\n`;
}

/**
 * Names each step that cannot get its first pin, with the reason; returns how many need a manual
 * edit (an unknown or ambiguous server, a tool not served). The others (a server that could not be
 * listed) count as pins that could not be verified.
 */
function sayNoFirstPins(io: CliIo, noFirstPin: ReadonlyArray<NoFirstPin & { document: CliDocument }>): number {
  for (const entry of noFirstPin) io.stdout(`${where(entry.document, entry)}  ${entry.tool}${entry.server ? ` on ${entry.server}` : ''}: no first pin: ${entry.reason}\n`);
  if (noFirstPin.length > 0) io.stdout('\n');
  return noFirstPin.filter((entry) => entry.state === 'manual').length;
}

/** Says which first pins were held back for review (cues of tool poisoning), and how many steps got none for an unlisted server. */
function sayFirstPinsLeft(io: CliIo, heldBack: readonly Addition[], unlisted: number): void {
  for (const addition of heldBack) {
    io.stdout(`${where(addition.document, addition)}  ${addition.tool} on ${addition.server}: first pin not written: its live text carries cues of tool poisoning; review it above, then pin it alone: toolpin pin --yes --tool ${JSON.stringify(addition.tool)}\n`);
  }
  if (heldBack.length > 0) io.stdout(`${heldBack.length} first pin(s) whose live text carries cues of tool poisoning left for review, one tool at a time.\n`);
  if (unlisted > 0) io.stdout(`${unlisted} step(s) got no first pin because their server could not be listed; run toolpin check for details.\n`);
}

/** The changes of one document that were shown and are to be written. */
interface Shown {
  repins: Repin[];
  removals: Missing[];
  additions: Addition[];
}

/** The first pins of one document (core/verify/firstPins.ts), limited to `tool`, and the steps that get none. */
function firstPinsOf(document: CliDocument, verified: VerifiedWorkspace, tool: string | undefined): { additions: Addition[]; cannot: Array<NoFirstPin & { document: CliDocument }> } {
  const listingFor = listingsFrom(verified.listings, NOT_LISTED);
  const blueprint = blueprintOf(document);
  const connector = connectorOf(document);
  const schema = blueprint ? firstSchemaPins(blueprint, document.problems, { registry: verified.registry, listingFor }) : { pins: [], cannot: [] };
  const tools = connector ? firstToolPins(document.path, connector, verified.registry.definitions, { listingFor }) : [];
  const wanted = (entry: { tool: string }): boolean => tool === undefined || entry.tool === tool;
  return {
    additions: [...schema.pins, ...tools].filter(wanted).map((pin) => ({ ...pin, document })),
    cannot: schema.cannot.filter(wanted).map((entry) => ({ ...entry, document })),
  };
}

/** The last analysis made for a first pin: showing a connector's many first pins parses its text once. */
let lastAnalysis: { path: string; text: string; analysis: ReturnType<typeof analyzeDocument> } | undefined;

function analysisOf(document: CliDocument, text: string): ReturnType<typeof analyzeDocument> {
  if (lastAnalysis?.path !== document.path || lastAnalysis.text !== text) lastAnalysis = { path: document.path, text, analysis: analyzeDocument(document.kind, text, document.path) };
  return lastAnalysis.analysis;
}

/**
 * Adds first pins to `text`, each on a fresh analysis: a connector without a toolsSnapshot gets one
 * with all of its first pins, the others are added one at a time. A pin whose place is gone is said
 * and counted as not written.
 */
function addFirstPins(io: CliIo, document: CliDocument, target: CliDocument, start: string, additions: readonly Addition[], outcome: WriteOutcome): { text: string; added: Addition[] } {
  let text = start;
  const added: Addition[] = [];
  for (const group of additionGroups(additions)) {
    const snapshot = group.length > 1 ? newSnapshotEdits(target, text, group) : [];
    if (snapshot.length > 0) {
      text = applyTextEdits(text, snapshot);
      added.push(...group);
      continue;
    }
    for (const addition of group) {
      const edits = additionEdits(target, text, addition);
      if (edits.length === 0) {
        io.stderr(`toolpin pin: could not add the first pin of "${addition.tool}" in ${document.display}; add ${addition.live} by hand\n`);
        outcome.notWritten++;
        continue;
      }
      text = applyTextEdits(text, edits);
      added.push(addition);
    }
  }
  return { text, added };
}

/** First pins grouped for writing: a step's alone, a connector instance's together. */
function additionGroups(additions: readonly Addition[]): Addition[][] {
  const groups = new Map<string, Addition[]>();
  additions.forEach((addition, position) => {
    const key = addition.kind === 'tool' ? `tool ${addition.index}` : `schema ${position}`;
    const group = groups.get(key);
    if (group) group.push(addition);
    else groups.set(key, [addition]);
  });
  return [...groups.values()];
}

/** The edits that add a new `toolsSnapshot` with a group's first pins, when its instance has none. */
function newSnapshotEdits(document: CliDocument, text: string, group: readonly Addition[]): TextEdit[] {
  const first = group[0]!;
  const instance = connectorOf(analysisOf(document, text))?.instances[first.index];
  if (instance?.name?.value !== first.server) return [];
  return addSnapshotEdits(text, instance, group.map((addition) => ({ tool: addition.tool, pin: addition.live })), { source: pinKind(document.kind).pinEdits === 'source-style' });
}

/** Shows a first pin: where, the member added, and the tool as it is served now, in full. */
function showAddition(io: CliIo, addition: Addition): void {
  const edits = additionEdits(addition.document, addition.document.text, addition);
  io.stdout(`${where(addition.document, addition)}  ${addition.tool} on ${addition.server}: first pin (added)\n`);
  for (const edit of edits) for (const line of edit.content.split(/\r?\n/)) if (line.trim() && line.trim() !== ',') io.stdout(`  + ${line.trim()}\n`);
  if (edits.length === 0) io.stdout(`  + ${addition.kind === 'schema' ? 'expectedSchemaHash' : `toolsSnapshot.${addition.tool}`}: ${addition.live} (the place to add it could not be found: add it by hand)\n`);
  if (addition.cues.length > 0) io.stdout(`  SECURITY: the live text carries cues of tool poisoning (${neutralize(describeCues([...addition.cues]))}); review it before pinning\n`);
  io.stdout('  a first pin accepts the tool as it is served now; review it:\n');
  io.stdout(`${liveContentLines(addition.kind, liveParts(addition)).join('\n')}\n\n`);
}

/**
 * The edits that add one first pin to `text` (the document's text, possibly with earlier changes
 * applied), found on a fresh analysis of it: the step or instance by its index, checked to be the
 * same tool or server. Empty when it is not there any more.
 */
function additionEdits(document: CliDocument, text: string, addition: FirstPin): TextEdit[] {
  const analysis = analysisOf(document, text);
  if (addition.kind === 'schema') {
    const step = blueprintOf(analysis)?.steps[addition.index];
    return step?.mcp?.toolName?.value === addition.tool && !step.mcp.expectedSchemaHash ? addSchemaPinEdits(text, step, addition.live) : [];
  }
  const instance = connectorOf(analysis)?.instances[addition.index];
  return instance?.name?.value === addition.server ? setSnapshotEntryEdits(text, instance, addition.tool, addition.live, { source: pinKind(document.kind).pinEdits === 'source-style' }) : [];
}

/** One re-pin as the run shows it: the line before and after, what changed, security cues, the content. */
async function showRepin(io: CliIo, workspaceFolder: string, repin: Repin, definingTexts: ReadonlyMap<string, string>): Promise<void> {
  // A pin imported from another module is shown where it is written, naming its use.
  const shown = repinLine(io, repin, definingTexts);
  io.stdout(`${shown.where}  ${repin.tool} on ${repin.server}\n`);
  io.stdout(`  - ${shown.before}\n  + ${shown.after}\n`);
  const change = repin.summary;
  // "what changed is unknown" is said below, with the store entry that is missing.
  if (change && !change.startsWith('what changed is unknown')) io.stdout(change.startsWith('what changed') ? `  ${change}\n` : `  what changed: ${change}\n`);
  if (repin.security) {
    io.stdout(`  SECURITY: the ${repin.security.pinnedKnown ? 'rewritten' : 'live'} text carries cues of tool poisoning; review it before re-pinning:\n`);
    for (const cue of repin.security.cues) io.stdout(`    - ${cue.label}: "${neutralize(cue.evidence)}"\n`);
  }
  const pinned = parseAnyPin(repin.pinned);
  const stored = pinned ? await readIfPresent(io, path.join(workspaceFolder, ...entryPath(pinned.algorithm, pinned.hex).split('/'))) : undefined;
  io.stdout(contentLines(repin, stored));
  io.stdout('\n');
}

/**
 * The re-pins that would edit ObjectStack's compiled stack (`dist/objectstack.json`), said and
 * returned: it is a build output (`os compile` rewrites it, and it is usually not committed), so
 * `pin` never writes it. The pin belongs in the source module that defines the connector, which is
 * named when the workspace has one (its own drift is re-pinned there when it is checked too).
 */
function refuseBuildOutput<Change extends Repin | Addition>(io: CliIo, verified: VerifiedWorkspace, changes: readonly Change[]): Change[] {
  const refused = changes.filter((change) => isBuildOutput(change.document.path));
  for (const change of refused) {
    const repin = { ...change, problem: 'problem' in change ? change.problem : { span: change.span } };
    const source = verified.registry.definitions.find((definition) => definition.name === repin.server && definition.origin.file !== undefined && definedIn(definition, definition.origin.file) && !isBuildOutput(definition.origin.file));
    const there = source?.origin.file ? `re-pin it in ${displayPath(io.cwd, source.origin.file)}, which defines connector "${repin.server}", then run os compile` : `no module of this workspace defines connector "${repin.server}": write the pin where the stack is authored (defineConnector, or defineStack's connectors), then run os compile`;
    io.stdout(`${where(repin.document, repin.problem)}  ${repin.tool} on ${repin.server}: not written: ${repin.document.display} is a build output of os compile; ${there}\n`);
  }
  return refused;
}

interface WriteOutcome {
  repinned: number;
  /** First pins added. */
  added: number;
  removed: number;
  files: number;
  notWritten: number;
  /** Store entries refused because they hold a credential value. */
  refused: number;
}

/** The same change in another analysis of the file: same code, tool, server, kind and pins. */
function sameRepin(a: Repin, b: Repin): boolean {
  return a.kind === b.kind && a.tool === b.tool && a.server === b.server && a.pinned === b.pinned && a.live === b.live;
}

function sameAddition(a: FirstPin, b: FirstPin): boolean {
  return a.kind === b.kind && a.tool === b.tool && a.server === b.server && a.live === b.live && a.index === b.index;
}

function sameMissing(a: Missing, b: Missing): boolean {
  return a.kind === b.kind && a.tool === b.tool && a.server === b.server;
}

/** The TP400 re-pins and TP401 missing pins of one verified document, limited to `tool`. */
function changesOf(document: CliDocument, problems: readonly Problem[], tool: string | undefined): { repins: Repin[]; missing: Missing[] } {
  const repins: Repin[] = [];
  const missing: Missing[] = [];
  for (const found of problems) {
    if (found.code === 'TP400' && isDriftData(found.data)) {
      const data = found.data;
      if (tool !== undefined && data.tool !== tool) continue;
      const security = problems.find((other) => other.code === 'TP407' && other.span.offset === found.span.offset);
      const foreign = foreignPinAt(document.model, found.span, data.tool);
      repins.push({ document, problem: found, ...data, ...(security && isSecurityData(security.data) ? { security: security.data } : {}), ...(foreign ? { foreign } : {}) });
    } else if (found.code === 'TP401' && isUnservedPinData(found.data)) {
      const data = found.data;
      if (tool !== undefined && data.tool !== tool) continue;
      missing.push({ document, problem: found, kind: data.kind, tool: data.tool, server: data.server });
    }
  }
  return { repins, missing };
}

/**
 * Writes one document's re-pins, first pins and removals, never over a change made since it was read. Under
 * the file's lock (io/safeWrite.ts, which serialises Toolpin processes) the file is read again;
 * when its text is not the text the edits were computed from (another `toolpin pin`, an editor),
 * the document is analysed and verified again on the new text, with the listings already fetched,
 * and only the changes that were shown are applied where the analysis finds them now. A change
 * that is no longer there is reported: already made (the pin holds the live value), or not written
 * (the pin holds another value now). The store entries are written before the file, so a pin
 * never names content the store lacks. The file is replaced atomically, keeping its mode.
 */
async function writeDocument(
  io: CliIo,
  verified: Awaited<ReturnType<typeof verifyPaths>>,
  document: CliDocument,
  shown: Shown,
  tool: string | undefined,
  outcome: WriteOutcome,
): Promise<void> {
  const shownCount = shown.repins.length + shown.removals.length + shown.additions.length;
  try {
    const scope = scopeFor(document.path, verified.workspaceFolder);
    const onStale = (lock: string, whose: string): void => io.stderr(`toolpin pin: took over the stale lock ${displayPath(io.cwd, lock)} (${terminalSafe(whose)})\n`);
    await withFileLock(document.path, scope, async () => {
      let current: string;
      try {
        current = await readRegularText(document.path);
      } catch (error) {
        io.stderr(`toolpin pin: ${document.display} could not be read again before writing (${errorMessage(error)}); nothing written to it\n`);
        outcome.notWritten += shownCount;
        return;
      }
      let target = document;
      let list = shown;
      if (current !== document.text) {
        const analysis = analyzeDocument(document.kind, current, document.path, undefined, verified.modules);
        target = { ...document, model: analysis.model, text: current, problems: analysis.problems };
        const result = verified.verifyAgain(target);
        const now = changesOf(target, result.problems, tool);
        const repins = now.repins.filter((repin) => shown.repins.some((was) => sameRepin(was, repin)));
        const removals = now.missing.filter((entry) => entry.kind === 'tool' && shown.removals.some((was) => sameMissing(was, entry)));
        const additions = firstPinsOf(target, verified, tool).additions.filter((addition) => shown.additions.some((was) => sameAddition(was, addition)));
        const gone = shown.repins.filter((was) => !repins.some((repin) => sameRepin(was, repin)));
        // A pin verified now at the live value was re-pinned by someone else (a bare pin has no prefix).
        const hex = (pin: string) => pin.slice(pin.indexOf(':') + 1).toLowerCase();
        const alreadyDone = gone.filter((was) => result.verdicts.some((verdict) => verdict.state === 'verified' && verdict.tool === was.tool && verdict.pinned !== undefined && hex(verdict.pinned) === hex(was.live)));
        const notDone = gone.length - alreadyDone.length + (shown.removals.length - removals.length) + (shown.additions.length - additions.length);
        io.stderr(
          `toolpin pin: ${document.display} changed since it was read; its changes were computed again on the new text` +
            `${alreadyDone.length > 0 ? `; ${alreadyDone.length} re-pin(s) were already made` : ''}` +
            `${notDone > 0 ? `; ${notDone} change(s) not written because the pin or entry changed meanwhile` : ''}\n`,
        );
        outcome.notWritten += notDone;
        list = { repins, removals, additions };
      }

      // The pin literal keeps its own quote (a source file's '…' or `…`).
      let text = applyTextEdits(target.text, list.repins.map((repin) => replacePinEdit(repin.problem.span, repin.live, target.text)));
      const first = addFirstPins(io, document, target, text, list.additions, outcome);
      text = first.text;
      const addedPins = first.added;
      const added = addedPins.length;
      let removed = 0;
      // Removals one at a time, each on a fresh analysis: two removals in one snapshot would
      // otherwise both claim the comma between them.
      for (const removal of list.removals) {
        const instanceIndex = (connectorOf(target)?.instances ?? []).findIndex((instance) => removal.problem.span.offset >= instance.node.offset && removal.problem.span.offset <= instance.node.offset + instance.node.length);
        // Source files too: the cut reads only the commas, whitespace and comments between entries.
        const fresh = pinKind(target.kind).servers === 'none' ? undefined : connectorOf(analyzeDocument(target.kind, text, target.path, undefined, verified.modules));
        const instance = fresh?.instances[instanceIndex];
        const edits = instance ? removeSnapshotEntryEdits(text, instance, removal.tool) : [];
        if (edits.length === 0) {
          io.stderr(`toolpin pin: could not remove the snapshot entry of "${removal.tool}" in ${document.display}; remove it by hand\n`);
          continue;
        }
        text = applyTextEdits(text, edits);
        removed++;
      }
      if (list.repins.length + addedPins.length > 0) await writeStoreEntries(io, verified.workspaceFolder, [...list.repins, ...addedPins], outcome);
      if (text !== current) {
        await writeFileSafely(document.path, text, scope);
        outcome.files++;
      }
      outcome.repinned += list.repins.length;
      outcome.added += added;
      outcome.removed += removed;
    }, { onStale });
  } catch (error) {
    const reason = error instanceof FileLockTimeout ? error.message : error instanceof WriteRefused ? terminalSafe(error.message) : `${document.display} could not be written: ${errorMessage(error)}`;
    io.stderr(`toolpin pin: ${reason}; nothing written to ${document.display}\n`);
    outcome.notWritten += shownCount;
  }
}

/** The texts of the modules that define imported pins, read once; a module that cannot be read is absent. */
async function definingModules(repins: readonly Repin[]): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for (const repin of repins) {
    const file = repin.foreign?.file;
    if (file === undefined || texts.has(file)) continue;
    try {
      texts.set(file, await readRegularText(file));
    } catch {
      // Said when it is written; the dry run shows the use instead.
    }
  }
  return texts;
}

/** Where a re-pin is written and its line before and after: the use's line, or the defining module's (naming the use). */
function repinLine(io: CliIo, repin: Repin, definingTexts: ReadonlyMap<string, string>): { where: string; before: string; after: string } {
  const foreign = repin.foreign;
  const definingText = foreign ? definingTexts.get(foreign.file) : undefined;
  if (!foreign || definingText === undefined) {
    const start = new LineIndex(repin.document.text).positionAt(repin.problem.span.offset);
    const lineText = repin.document.text.split(/\r?\n/)[start.line] ?? '';
    const updated = applyTextEdits(repin.document.text, [replacePinEdit(repin.problem.span, repin.live, repin.document.text)]).split(/\r?\n/)[start.line] ?? '';
    return { where: where(repin.document, repin.problem), before: lineText.trim(), after: updated.trim() };
  }
  const start = new LineIndex(definingText).positionAt(foreign.literal.offset);
  const lineText = definingText.split(/\r?\n/)[start.line] ?? '';
  const updated = applyTextEdits(definingText, [foreignPinEdit(foreign, repin.live)]).split(/\r?\n/)[start.line] ?? '';
  return { where: `${displayPath(io.cwd, foreign.file)}:${start.line + 1}:${start.character + 1} (used at ${where(repin.document, repin.problem)})`, before: lineText.trim(), after: updated.trim() };
}

/** The edit that rewrites an imported pin where it is written, in its own quote. */
function foreignPinEdit(foreign: ForeignPin, live: string): { offset: number; length: number; content: string } {
  return { offset: foreign.literal.offset, length: foreign.literal.length, content: stringLiteral(live, foreign.quote) };
}

/**
 * Writes the re-pins of pins that modules import from `file` (`./pins.ts`): each literal is
 * rewritten where it is written, and nothing else. Under the file's lock the file is read again;
 * a literal that no longer holds the pin shown is not written (it changed meanwhile), and a
 * literal that several uses would set to different values (two servers pinned by one constant)
 * is not written either: the constant must be split by hand.
 */
async function writeDefiningModule(io: CliIo, verified: VerifiedWorkspace, file: string, repins: readonly Repin[], outcome: WriteOutcome): Promise<void> {
  const display = displayPath(io.cwd, file);
  try {
    const scope = scopeFor(file, verified.workspaceFolder);
    await withFileLock(file, scope, async () => {
      const current = await readRegularText(file);
      const byLiteral = new Map<number, Repin[]>();
      for (const repin of repins) byLiteral.set(repin.foreign!.literal.offset, [...(byLiteral.get(repin.foreign!.literal.offset) ?? []), repin]);
      const edits: Array<{ offset: number; length: number; content: string }> = [];
      const written: Repin[] = [];
      for (const [, uses] of byLiteral) {
        const first = uses[0]!;
        const literal = first.foreign!.literal;
        const now = current.slice(literal.offset, literal.offset + literal.length);
        if (!now.includes(first.pinned)) {
          io.stderr(`toolpin pin: ${display} changed since it was read; the pin of ${first.tool} there was not written\n`);
          outcome.notWritten += uses.length;
        } else if (uses.some((use) => use.live !== first.live)) {
          io.stderr(`toolpin pin: the pin at ${display} is used for ${uses.map((use) => `${use.tool} on ${use.server}`).join(' and ')}, which now need different pins; not written: give each its own constant\n`);
          outcome.notWritten += uses.length;
        } else {
          edits.push(foreignPinEdit(first.foreign!, first.live));
          written.push(first);
          outcome.repinned += uses.length;
        }
      }
      if (written.length === 0) return;
      await writeStoreEntries(io, verified.workspaceFolder, written, outcome);
      await writeFileSafely(file, applyTextEdits(current, edits), scope);
      outcome.files++;
    });
  } catch (error) {
    const reason = error instanceof FileLockTimeout ? error.message : error instanceof WriteRefused ? terminalSafe(error.message) : `${display} could not be written: ${errorMessage(error)}`;
    io.stderr(`toolpin pin: ${reason}; nothing written to ${display}\n`);
    outcome.notWritten += repins.length;
  }
}

/** The pin store's entries of the re-pins and first pins (content-addressed: an existing entry is the same bytes). */
async function writeStoreEntries(io: CliIo, workspaceFolder: string, repins: readonly LivePinned[], outcome: WriteOutcome): Promise<void> {
  // Every entry is written inside the workspace: a planted link at an entry's name (which the
  // server chooses through the live hash) or at .toolpin/store is refused (io/safeWrite.ts).
  const scope = { root: workspaceFolder };
  for (const repin of repins) {
    const parsed = parseAnyPin(repin.live);
    if (!parsed) continue;
    const entry = storeEntry(parsed.algorithm, parsed.hex, repin.liveContent);
    // A store entry is meant to be committed: one that holds a credential value is never written.
    if (containsKnownSecret(entry.content)) {
      outcome.refused++;
      io.stderr(`toolpin pin: not writing ${entry.relativePath}: the live tool "${terminalSafe(repin.tool)}" on ${terminalSafe(repin.server)} contains a credential value Toolpin gave the server, and the store is meant to be committed\n`);
      continue;
    }
    await writeFileSafely(path.join(workspaceFolder, entry.relativePath), entry.content, scope);
    // The whole definition as served beside it (core/verify/fullDefinition.ts), unless it holds a credential.
    const full = storeEntries(parsed.algorithm, parsed.hex, repin.liveContent, { tool: repin.tool, server: repin.server, content: repin.liveDefinition })[1];
    if (full && !containsKnownSecret(full.content)) await writeFileSafely(path.join(workspaceFolder, full.relativePath), full.content, scope);
  }
}

