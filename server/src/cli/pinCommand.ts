/**
 * `toolpin pin [paths…]`: the re-pin edits of the editor, from the command line. It verifies like
 * `check`, then shows:
 *
 * - each drifted pin with its line change and what changed. When the pin store has the pinned
 *   content, the diff of the description (tool pins) and of the input schema; when it does not,
 *   the live description and schema in full (control characters shown escaped), with a note that
 *   the pinned content is unknown. So a description rewritten to carry instructions is always
 *   printed before it can be re-pinned.
 * - each missing pin (TP401: the server no longer serves the tool). A connector's snapshot entry
 *   can be removed with `--remove-missing`; a blueprint step's tool needs a manual edit (another
 *   tool, or no step), which this command never guesses.
 *
 * It writes only with `--yes` (or after a "y" at a terminal): the new pins in place (comments and
 * formatting kept; a bare pin stays bare), their store entries, and with `--remove-missing` the
 * removal of the missing connector entries (the rest of the file byte for byte). `--tool NAME`
 * limits it to one tool. A drift of the security class (TP407: the new text carries cues of tool
 * poisoning) is never written by a bulk `--yes`: it is shown, left as it is and named, and only
 * `--yes --tool NAME` writes it, one tool at a time.
 *
 * Exit status: 0 nothing drifted or missing, or every change shown was written; 1 changes shown but
 * not written (a dry run, a security-class re-pin left for review, a write refused), or missing pins
 * left that only a manual edit fixes; 2 nothing drifted or
 * missing, but something could not be verified (or no document was found).
 */
import * as path from 'node:path';
import { lineDiff, prettyCanonicalJson, readStoreEntry, storeEntryName } from '../core/review/changes';
import { analyzeDocument, connectorOf, isCompiledStack } from '../core/documents/documents';
import { applyTextEdits, removeSnapshotEntryEdits, replacePinEdit, storeEntries, storeEntry } from '../core/documents/fixes';
import { LineIndex } from '../core/json/lineIndex';
import { isParsedPin, type ParsedPin, parsePin } from '../core/pins/pins';
import { type DriftData, isDriftData, isSecurityData, isUnservedPinData, type SecurityData } from '../core/verify/payloads';
import type { Problem } from '../core/problems';
import { terminalSafe } from '../core/report/terminalText';
import { containsKnownSecret } from '../mcp/credentials';
import { errorMessage } from '../core/json/values';
import { FileLockTimeout, scopeFor, withFileLock, WriteRefused, writeFileSafely } from '../io/safeWrite';
import { readRegularText } from '../io/regularFile';
import { type CheckArgs, type CliDocument, displayPath, type VerifiedWorkspace, verifyPaths } from './checkCommand';
import { type CliIo, readIfPresent } from './io';

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
  /** Set when the drift adds cues of tool poisoning (TP407 on the same pin). */
  readonly security?: SecurityData;
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

/** The live tool's description and schema from a TP400's live content (canonical JSON). */
function liveParts(repin: Repin): { description: string | undefined; inputSchema: unknown } {
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
  const why = entry && !entry.ok ? entry.reason : `no entry ${pinned ? storeEntryName(pinned) : ''} in .toolpin/store`.replace('  ', ' ');
  out.push(`  what changed is unknown: the pinned content is unknown (${why}); review the live content in full:`);
  if (repin.kind === 'tool') {
    out.push(live.description === undefined ? '    live description: (none)' : `    live description:\n${indent(neutralize(live.description), '      | ')}`);
  }
  out.push(live.inputSchema === undefined ? '    live inputSchema: (none)' : `    live inputSchema:\n${indent(neutralize(prettyOrEmpty(live.inputSchema)), '      | ')}`);
  return `${out.join('\n')}\n`;
}

function prettyOrEmpty(value: unknown): string {
  if (value === undefined) return '';
  try {
    return prettyCanonicalJson(value);
  } catch {
    return JSON.stringify(value) ?? '';
  }
}

function where(document: CliDocument, problem: Problem): string {
  const start = new LineIndex(document.text).positionAt(problem.span.offset);
  return `${document.display}:${start.line + 1}:${start.character + 1}`;
}

export async function pinCommand(terminalIo: CliIo, args: PinArgs): Promise<number> {
  // Tool names, messages, change summaries and diffs come from servers: shown with controls made visible.
  const io: CliIo = { ...terminalIo, stdout: (text) => terminalIo.stdout(terminalSafe(text)) };
  const verified = await verifyPaths(io, { ...args, format: 'text' }, 'pin');
  if (verified.documents.length === 0 && verified.couldNotRead) return 2;
  const repins: Repin[] = [];
  const missing: Missing[] = [];
  let unverified = 0;
  for (const document of verified.documents) {
    const result = verified.results.get(document.path)!;
    unverified += result.verdicts.filter((verdict) => (verdict.state === 'cannot-verify' || verdict.state === 'ambiguous') && (args.tool === undefined || verdict.tool === args.tool)).length;
    const changes = changesOf(document, result.problems, args.tool);
    repins.push(...changes.repins);
    missing.push(...changes.missing);
  }
  if (verified.couldNotRead) unverified++;
  const builtOutput = refuseBuildOutput(io, verified, repins);
  repins.splice(0, repins.length, ...repins.filter((repin) => !builtOutput.includes(repin)));
  if (builtOutput.length > 0 && repins.length === 0 && missing.length === 0) return 1;
  const forTool = args.tool ? ` for tool "${args.tool}"` : '';
  if (repins.length === 0 && missing.length === 0) {
    io.stdout(`Nothing to re-pin${forTool}: no drifted or missing pin.${unverified > 0 ? ` ${unverified} pin(s) or file(s) could not be verified; run toolpin check for details.` : ''}\n`);
    return unverified > 0 ? 2 : 0;
  }

  for (const repin of repins) await showRepin(io, verified.workspaceFolder, repin);

  const removable = missing.filter((entry) => entry.kind === 'tool');
  const manual = missing.filter((entry) => entry.kind === 'schema');
  for (const entry of missing) {
    io.stdout(`${where(entry.document, entry.problem)}  MISSING  ${entry.tool}${entry.server ? ` on ${entry.server}` : ''}: ${entry.problem.message}\n`);
    io.stdout(
      entry.kind === 'tool'
        ? `  ${args.removeMissing ? 'the snapshot entry will be removed' : 'toolpin pin --remove-missing --yes removes this snapshot entry'}\n\n`
        : "  a blueprint step's tool cannot be re-pinned or removed automatically: edit the step (another tool, or no step)\n\n",
    );
  }

  const removals = args.removeMissing ? removable : [];
  const changes = repins.length + removals.length;
  if (changes === 0) {
    io.stdout(
      `${missing.length} missing pin(s) shown${removable.length > 0 ? `; re-run with --remove-missing --yes to remove the ${removable.length} connector snapshot entr${removable.length === 1 ? 'y' : 'ies'}` : ''}${manual.length > 0 ? `; ${manual.length} blueprint step(s) need a manual edit` : ''}. Nothing written.\n`,
    );
    return 1;
  }

  let write = args.yes;
  const what = [repins.length > 0 ? `${repins.length} re-pin(s) and their store entries` : '', removals.length > 0 ? `${removals.length} removal(s) of missing snapshot entries` : ''].filter(Boolean).join(' and ');
  if (!write && args.confirm) write = await args.confirm(`Write ${what}? [y/N] `);
  if (!write) {
    const parts = [repins.length > 0 ? `${repins.length} drifted pin(s)` : '', missing.length > 0 ? `${missing.length} missing pin(s)` : ''].filter(Boolean).join(' and ');
    const hint = missing.length > removals.length && removable.length > removals.length ? ' (add --remove-missing to remove the missing connector entries)' : '';
    io.stdout(`${parts} shown; nothing written. Re-run with --yes to write ${what}${hint}.\n`);
    return 1;
  }

  const byDocument = new Map<CliDocument, { repins: Repin[]; removals: Missing[] }>();
  const of = (document: CliDocument) => {
    let entry = byDocument.get(document);
    if (!entry) byDocument.set(document, (entry = { repins: [], removals: [] }));
    return entry;
  };
  // A drift of the security class (TP407) is reviewed one tool at a time: a bulk write leaves it.
  const heldBack = args.tool === undefined ? repins.filter((repin) => repin.security !== undefined) : [];
  for (const repin of repins) if (!heldBack.includes(repin)) of(repin.document).repins.push(repin);
  for (const removal of removals) of(removal.document).removals.push(removal);
  const outcome: WriteOutcome = { repinned: 0, removed: 0, files: 0, notWritten: 0, refused: 0 };
  for (const [document, list] of byDocument) {
    await writeDocument(io, verified, document, list, args.tool, outcome);
  }
  const done = [
    outcome.repinned > 0 || outcome.removed === 0 ? `${outcome.repinned} re-pin(s)` : '',
    outcome.removed > 0 ? `${outcome.removed} removal(s) of missing snapshot entries` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  io.stdout(`Wrote ${done} in ${outcome.files} file(s)${outcome.repinned > 0 ? ` and ${outcome.refused > 0 ? `${outcome.repinned - outcome.refused} of ` : ''}their entries in .toolpin/store` : ''}.\n`);
  for (const repin of heldBack) {
    io.stdout(
      `${where(repin.document, repin.problem)}  ${repin.tool} on ${repin.server}: not written: its drift carries cues of tool poisoning (TP407); review it above, then re-pin it alone: toolpin pin --yes --tool ${JSON.stringify(repin.tool)}\n`,
    );
  }
  const left = manual.length + (removable.length - outcome.removed);
  if (left > 0) io.stdout(`${left} missing pin(s) left that need a manual edit.\n`);
  if (outcome.notWritten > 0) io.stdout(`${outcome.notWritten} change(s) not written; run toolpin pin again to see them.\n`);
  if (heldBack.length > 0) io.stdout(`${heldBack.length} security-class re-pin(s) left for review, one tool at a time.\n`);
  return left > 0 || outcome.notWritten > 0 || outcome.refused > 0 || heldBack.length > 0 ? 1 : 0;
}

/** One re-pin as the run shows it: the line before and after, what changed, security cues, the content. */
async function showRepin(io: CliIo, workspaceFolder: string, repin: Repin): Promise<void> {
  const start = new LineIndex(repin.document.text).positionAt(repin.problem.span.offset);
  const lineText = repin.document.text.split(/\r?\n/)[start.line] ?? '';
  const updated = applyTextEdits(repin.document.text, [replacePinEdit(repin.problem.span, repin.live, repin.document.text)]).split(/\r?\n/)[start.line] ?? '';
  io.stdout(`${where(repin.document, repin.problem)}  ${repin.tool} on ${repin.server}\n`);
  io.stdout(`  - ${lineText.trim()}\n  + ${updated.trim()}\n`);
  const change = repin.summary;
  // "what changed is unknown" is said below, with the store entry that is missing.
  if (change && !change.startsWith('what changed is unknown')) io.stdout(change.startsWith('what changed') ? `  ${change}\n` : `  what changed: ${change}\n`);
  if (repin.security) {
    io.stdout(`  SECURITY: the ${repin.security.pinnedKnown ? 'rewritten' : 'live'} text carries cues of tool poisoning; review it before re-pinning:\n`);
    for (const cue of repin.security.cues) io.stdout(`    - ${cue.label}: "${neutralize(cue.evidence)}"\n`);
  }
  const pinned = parseAnyPin(repin.pinned);
  const stored = pinned ? await readIfPresent(io, path.join(workspaceFolder, '.toolpin', 'store', storeEntryName(pinned))) : undefined;
  io.stdout(contentLines(repin, stored));
  io.stdout('\n');
}

/**
 * The re-pins that would edit ObjectStack's compiled stack (`dist/objectstack.json`), said and
 * returned: it is a build output (`os compile` rewrites it, and it is usually not committed), so
 * `pin` never writes it. The pin belongs in the source module that defines the connector, which is
 * named when the workspace has one (its own drift is re-pinned there when it is checked too).
 */
function refuseBuildOutput(io: CliIo, verified: VerifiedWorkspace, repins: readonly Repin[]): Repin[] {
  const refused = repins.filter((repin) => isCompiledStack(repin.document.path));
  for (const repin of refused) {
    const source = verified.registry.definitions.find((definition) => definition.name === repin.server && definition.origin.kind === 'connector' && definition.origin.file !== undefined && !isCompiledStack(definition.origin.file));
    const there = source?.origin.file ? `re-pin it in ${displayPath(io.cwd, source.origin.file)}, which defines connector "${repin.server}", then run os compile` : `no module of this workspace defines connector "${repin.server}": write the pin where the stack is authored (defineConnector, or defineStack's connectors), then run os compile`;
    io.stdout(`${where(repin.document, repin.problem)}  ${repin.tool} on ${repin.server}: not written: ${repin.document.display} is a build output of os compile; ${there}\n`);
  }
  return refused;
}

interface WriteOutcome {
  repinned: number;
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
      repins.push({ document, problem: found, ...data, ...(security && isSecurityData(security.data) ? { security: security.data } : {}) });
    } else if (found.code === 'TP401' && isUnservedPinData(found.data)) {
      const data = found.data;
      if (tool !== undefined && data.tool !== tool) continue;
      missing.push({ document, problem: found, kind: data.kind, tool: data.tool, server: data.server });
    }
  }
  return { repins, missing };
}

/**
 * Writes one document's re-pins and removals, never over a change made since it was read. Under
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
  shown: { repins: Repin[]; removals: Missing[] },
  tool: string | undefined,
  outcome: WriteOutcome,
): Promise<void> {
  const shownCount = shown.repins.length + shown.removals.length;
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
        const analysis = analyzeDocument(document.kind, current, document.path);
        target = { ...document, model: analysis.model, text: current, problems: analysis.problems };
        const result = verified.verifyAgain(target);
        const now = changesOf(target, result.problems, tool);
        const repins = now.repins.filter((repin) => shown.repins.some((was) => sameRepin(was, repin)));
        const removals = now.missing.filter((entry) => entry.kind === 'tool' && shown.removals.some((was) => sameMissing(was, entry)));
        const gone = shown.repins.filter((was) => !repins.some((repin) => sameRepin(was, repin)));
        // A pin verified now at the live value was re-pinned by someone else (a bare pin has no prefix).
        const hex = (pin: string) => pin.slice(pin.indexOf(':') + 1).toLowerCase();
        const alreadyDone = gone.filter((was) => result.verdicts.some((verdict) => verdict.state === 'verified' && verdict.tool === was.tool && verdict.pinned !== undefined && hex(verdict.pinned) === hex(was.live)));
        const notDone = gone.length - alreadyDone.length + (shown.removals.length - removals.length);
        io.stderr(
          `toolpin pin: ${document.display} changed since it was read; its changes were computed again on the new text` +
            `${alreadyDone.length > 0 ? `; ${alreadyDone.length} re-pin(s) were already made` : ''}` +
            `${notDone > 0 ? `; ${notDone} change(s) not written because the pin or entry changed meanwhile` : ''}\n`,
        );
        outcome.notWritten += notDone;
        list = { repins, removals };
      }

      // The pin literal keeps its own quote (a source file's '…' or `…`).
      let text = applyTextEdits(target.text, list.repins.map((repin) => replacePinEdit(repin.problem.span, repin.live, target.text)));
      let removed = 0;
      // Removals one at a time, each on a fresh analysis: two removals in one snapshot would
      // otherwise both claim the comma between them.
      for (const removal of list.removals) {
        const instanceIndex = (connectorOf(target)?.instances ?? []).findIndex((instance) => removal.problem.span.offset >= instance.node.offset && removal.problem.span.offset <= instance.node.offset + instance.node.length);
        // Source files too: the cut reads only the commas, whitespace and comments between entries.
        const fresh = target.kind === 'blueprint' ? undefined : connectorOf(analyzeDocument(target.kind, text, target.path));
        const instance = fresh?.instances[instanceIndex];
        const edits = instance ? removeSnapshotEntryEdits(text, instance, removal.tool) : [];
        if (edits.length === 0) {
          io.stderr(`toolpin pin: could not remove the snapshot entry of "${removal.tool}" in ${document.display}; remove it by hand\n`);
          continue;
        }
        text = applyTextEdits(text, edits);
        removed++;
      }
      if (list.repins.length > 0) await writeStoreEntries(io, verified.workspaceFolder, list.repins, outcome);
      if (text !== current) {
        await writeFileSafely(document.path, text, scope);
        outcome.files++;
      }
      outcome.repinned += list.repins.length;
      outcome.removed += removed;
    }, { onStale });
  } catch (error) {
    const reason = error instanceof FileLockTimeout ? error.message : error instanceof WriteRefused ? terminalSafe(error.message) : `${document.display} could not be written: ${errorMessage(error)}`;
    io.stderr(`toolpin pin: ${reason}; nothing written to ${document.display}\n`);
    outcome.notWritten += shownCount;
  }
}

/** The pin store's entries of the re-pins (content-addressed: an existing entry is the same bytes). */
async function writeStoreEntries(io: CliIo, workspaceFolder: string, repins: readonly Repin[], outcome: WriteOutcome): Promise<void> {
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

