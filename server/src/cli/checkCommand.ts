/**
 * `toolpin check [paths…]`: finds blueprint and connector files and reports their problems with
 * `file:line:col`. This first version runs the checks that need no live server; live verification
 * of pins is added on top of the same report shape.
 *
 * Exit status: 0 no error-level problem; 1 an error-level problem; 2 a path could not be read.
 */
import { readdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { analyzeDocument, documentKindOf } from '../core/documents';
import { LineIndex } from '../core/lineIndex';
import type { Problem } from '../core/problems';
import type { CliIo } from './io';

const SKIPPED_FOLDERS = new Set(['node_modules', '.git']);

/** Finds Toolpin documents under the given paths, in a stable (sorted) order. */
export async function findDocuments(paths: readonly string[]): Promise<{ files: string[]; unreadable: Array<{ path: string; reason: string }> }> {
  const files = new Set<string>();
  const unreadable: Array<{ path: string; reason: string }> = [];
  const visit = async (target: string, explicit: boolean): Promise<void> => {
    let info;
    try {
      info = await stat(target);
    } catch (error) {
      unreadable.push({ path: target, reason: (error as NodeJS.ErrnoException).code ?? String(error) });
      return;
    }
    if (info.isDirectory()) {
      if (!explicit && SKIPPED_FOLDERS.has(path.basename(target))) return;
      const entries = await readdir(target);
      for (const entry of entries.sort()) await visit(path.join(target, entry), false);
    } else if (explicit || documentKindOf(target)) {
      files.add(target);
    }
  };
  for (const target of paths) await visit(target, true);
  return { files: [...files].sort(), unreadable };
}

export interface ReportedProblem {
  code: string;
  severity: string;
  message: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

export interface CheckReport {
  version: 1;
  files: Array<{ path: string; pins: never[]; problems: ReportedProblem[] }>;
  summary: { verified: number; drifted: number; missing: number; cannotVerify: number; problems: number };
}

function toReported(lines: LineIndex, found: Problem): ReportedProblem {
  return {
    code: found.code,
    severity: found.severity,
    message: found.message,
    range: { start: lines.positionAt(found.span.offset), end: lines.positionAt(found.span.offset + found.span.length) },
  };
}

export async function checkCommand(io: CliIo, args: { paths: string[]; format: 'text' | 'json' }): Promise<number> {
  const roots = args.paths.length > 0 ? args.paths : ['.'];
  const { files, unreadable } = await findDocuments(roots.map((root) => path.resolve(io.cwd, root)));
  const report: CheckReport = { version: 1, files: [], summary: { verified: 0, drifted: 0, missing: 0, cannotVerify: 0, problems: 0 } };
  let status = 0;
  for (const missing of unreadable) {
    io.stderr(`toolpin check: cannot read ${path.relative(io.cwd, missing.path) || '.'}: ${missing.reason}\n`);
    status = 2;
  }
  for (const file of files) {
    const relative = path.relative(io.cwd, file).split(path.sep).join('/');
    const kind = documentKindOf(file);
    if (!kind) {
      io.stderr(`toolpin check: ${relative} is not a blueprint or connector file (*.blueprint.json[c], *.connector.json[c])\n`);
      status = 2;
      continue;
    }
    let text: string;
    try {
      text = await io.readFile(file);
    } catch (error) {
      io.stderr(`toolpin check: cannot read ${relative}: ${(error as Error).message}\n`);
      status = 2;
      continue;
    }
    const lines = new LineIndex(text);
    const problems = analyzeDocument(kind, text).problems.map((found) => toReported(lines, found));
    report.files.push({ path: relative, pins: [], problems });
    report.summary.problems += problems.length;
    if (problems.some((found) => found.severity === 'error') && status === 0) status = 1;
  }
  if (args.format === 'json') {
    io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const file of report.files) {
      if (file.problems.length === 0) continue;
      io.stdout(`${file.path}\n`);
      for (const found of file.problems) {
        io.stdout(`  ${file.path}:${found.range.start.line + 1}:${found.range.start.character + 1}  ${found.severity.padEnd(7)}  ${found.code}  ${found.message}\n`);
      }
    }
    const errorCount = report.files.reduce((sum, file) => sum + file.problems.filter((found) => found.severity === 'error').length, 0);
    io.stdout(`${report.files.length} file(s) checked, ${report.summary.problems} problem(s), ${errorCount} error(s)\n`);
  }
  return status;
}
