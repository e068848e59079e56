/**
 * `toolpin pin [paths…]`: the re-pin edits of the editor, from the command line. It verifies like
 * `check`, then shows each drifted pin with its line change and — when the pin store has the pinned
 * content — what changed and the content diff. It writes only with `--yes` (or after a "y" at a
 * terminal): the new pin in place (comments and formatting kept; a bare pin stays bare) and the new
 * pin's store entry. `--tool NAME` limits it to one tool.
 *
 * Exit status: 0 nothing drifted, or every shown re-pin was written; 1 drift shown but not written
 * (a dry run); 2 nothing drifted, but something could not be verified.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { lineDiff } from '../core/changes';
import { applyTextEdits, replacePinEdit, storeEntry } from '../core/fixes';
import { LineIndex } from '../core/lineIndex';
import { isParsedPin, parsePin } from '../core/pins';
import type { Problem } from '../core/problems';
import { type CheckArgs, type CliDocument, verifyPaths } from './checkCommand';
import type { CliIo } from './io';

export interface PinArgs extends Omit<CheckArgs, 'format'> {
  yes: boolean;
  tool?: string;
  /** Asks a yes/no question at a terminal; undefined when standard input is not a terminal. */
  confirm?: (question: string) => Promise<boolean>;
}

interface Repin {
  document: CliDocument;
  problem: Problem;
  tool: string;
  server: string;
  pinned: string;
  live: string;
  liveContent: string;
}

export async function pinCommand(io: CliIo, args: PinArgs): Promise<number> {
  const verified = await verifyPaths(io, { ...args, format: 'text' }, 'pin');
  const repins: Repin[] = [];
  let unverified = 0;
  for (const document of verified.documents) {
    const result = verified.results.get(document.path)!;
    unverified += result.verdicts.filter((verdict) => verdict.state === 'cannot-verify' || verdict.state === 'ambiguous').length;
    for (const found of result.problems) {
      if (found.code !== 'TP400' || !found.data) continue;
      const data = found.data as { tool: string; server: string; pinned: string; live: string; liveContent: string };
      if (args.tool !== undefined && data.tool !== args.tool) continue;
      repins.push({ document, problem: found, ...data });
    }
  }
  if (repins.length === 0) {
    io.stdout(`Nothing to re-pin${args.tool ? ` for tool "${args.tool}"` : ''}: no drifted pin.${unverified > 0 ? ` ${unverified} pin(s) could not be verified; run toolpin check for details.` : ''}\n`);
    return unverified > 0 ? 2 : 0;
  }

  for (const repin of repins) {
    const lines = new LineIndex(repin.document.text);
    const start = lines.positionAt(repin.problem.span.offset);
    const lineText = repin.document.text.split(/\r?\n/)[start.line] ?? '';
    const updated = applyTextEdits(repin.document.text, [replacePinEdit(repin.problem.span, repin.live)]).split(/\r?\n/)[start.line] ?? '';
    io.stdout(`${repin.document.display}:${start.line + 1}:${start.character + 1}  ${repin.tool} on ${repin.server}\n`);
    io.stdout(`  - ${lineText.trim()}\n  + ${updated.trim()}\n`);
    const message = repin.problem.message;
    const change = /\(([^()]*(?:\([^()]*\)[^()]*)*)\)$/.exec(message)?.[1];
    if (change) io.stdout(change.startsWith('what changed') ? `  ${change}\n` : `  what changed: ${change}\n`);
    const algorithm = repin.pinned.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256';
    const pinned = parsePin(repin.pinned, algorithm);
    if (isParsedPin(pinned)) {
      const stored = await readOptional(io, path.join(verified.workspaceFolder, '.toolpin', 'store', `${pinned.algorithm}-${pinned.hex}.json`));
      if (stored !== undefined) {
        const diff = lineDiff(stored, repin.liveContent);
        if (diff.unified) io.stdout(diff.unified.replace(/^/gm, '    '));
      }
    }
    io.stdout('\n');
  }

  let write = args.yes;
  if (!write && args.confirm) write = await args.confirm(`Write ${repins.length} re-pin(s) and their store entries? [y/N] `);
  if (!write) {
    io.stdout(`${repins.length} drifted pin(s) shown; nothing written. Re-run with --yes to write them.\n`);
    return 1;
  }

  const byDocument = new Map<CliDocument, Repin[]>();
  for (const repin of repins) byDocument.set(repin.document, [...(byDocument.get(repin.document) ?? []), repin]);
  for (const [document, list] of byDocument) {
    const text = applyTextEdits(document.text, list.map((repin) => replacePinEdit(repin.problem.span, repin.live)));
    await writeFile(document.path, text, 'utf8');
  }
  const storeFolder = path.join(verified.workspaceFolder, '.toolpin', 'store');
  await mkdir(storeFolder, { recursive: true });
  for (const repin of repins) {
    const parsed = parsePin(repin.live, repin.live.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256');
    if (!isParsedPin(parsed)) continue;
    const entry = storeEntry(parsed.algorithm, parsed.hex, repin.liveContent);
    await writeFile(path.join(verified.workspaceFolder, entry.relativePath), entry.content, 'utf8');
  }
  io.stdout(`Wrote ${repins.length} re-pin(s) in ${byDocument.size} file(s) and their entries in .toolpin/store.\n`);
  return 0;
}

async function readOptional(io: CliIo, file: string): Promise<string | undefined> {
  try {
    return await io.readFile(file);
  } catch {
    return undefined;
  }
}
