/**
 * A readable line diff of a store entry and the live content: both pretty-printed in canonical key
 * order, then diffed line by line (jsdiff), so a reviewer sees what a re-pin accepts.
 */
import { structuredPatch } from 'diff';
import { canonicalJson } from '../pins/canonicalJson';
import { isRecord } from '../json/values';

/**
 * Pretty-prints JSON with 2-space indentation and keys sorted as canonical JSON sorts them
 * (UTF-16 code units). Built as a string, like canonicalJson, so integer-like keys keep that order;
 * scalars are written exactly as canonicalJson writes them. Throws CanonicalJsonError on non-JSON.
 */
export function prettyCanonicalJson(value: unknown): string {
  return pretty(value, '');
}

function pretty(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((entry) => `${inner}${pretty(entry, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    if (keys.length === 0) return '{}';
    return `{\n${keys.map((key) => `${inner}${JSON.stringify(key)}: ${pretty(value[key], inner)}`).join(',\n')}\n${indent}}`;
  }
  return canonicalJson(value);
}

export interface DiffLine {
  readonly kind: 'context' | 'added' | 'removed';
  /** The line without its `+`/`-`/space marker. */
  readonly text: string;
}

export interface DiffHunk {
  /** `@@ -3,7 +3,8 @@` */
  readonly header: string;
  readonly lines: readonly DiffLine[];
}

export interface LineDiff {
  /** The pinned side, pretty-printed. */
  readonly before: string;
  /** The live side, pretty-printed. */
  readonly after: string;
  readonly hunks: readonly DiffHunk[];
  readonly added: number;
  readonly removed: number;
  /** A unified diff (`--- pinned`, `+++ live`, hunks); empty when there is no difference. */
  readonly unified: string;
}

export interface LineDiffOptions {
  /** Lines of context around each change; 3 by default. */
  readonly context?: number;
  readonly beforeLabel?: string;
  readonly afterLabel?: string;
}

/**
 * A unified-style line diff of two canonical JSON texts (a store entry and the live content, as
 * `schemaPinContent` / `toolPinContent` give it). Both are pretty-printed first so each member is
 * on its own line; a text that is not JSON is diffed as it is. Never throws.
 */
export function lineDiff(beforeCanonical: string, afterCanonical: string, options: LineDiffOptions = {}): LineDiff {
  const before = prettyText(beforeCanonical);
  const after = prettyText(afterCanonical);
  const beforeLabel = options.beforeLabel ?? 'pinned';
  const afterLabel = options.afterLabel ?? 'live';
  const patch = structuredPatch(beforeLabel, afterLabel, `${before}\n`, `${after}\n`, undefined, undefined, { context: options.context ?? 3 });
  let added = 0;
  let removed = 0;
  const hunks: DiffHunk[] = patch.hunks.map((hunk) => {
    const lines: DiffLine[] = [];
    for (const line of hunk.lines) {
      const marker = line[0];
      if (marker === '+') {
        added++;
        lines.push({ kind: 'added', text: line.slice(1) });
      } else if (marker === '-') {
        removed++;
        lines.push({ kind: 'removed', text: line.slice(1) });
      } else if (marker === ' ') {
        lines.push({ kind: 'context', text: line.slice(1) });
      }
      // "\ No newline at end of file" cannot occur: both sides end with a newline.
    }
    return { header: `@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@`, lines };
  });
  const unified = hunks.length === 0
    ? ''
    : [`--- ${beforeLabel}`, `+++ ${afterLabel}`, ...hunks.flatMap((hunk) => [hunk.header, ...hunk.lines.map(markLine)])].join('\n') + '\n';
  return { before, after, hunks, added, removed, unified };
}

function markLine(line: DiffLine): string {
  return `${line.kind === 'added' ? '+' : line.kind === 'removed' ? '-' : ' '}${line.text}`;
}

function range(start: number, count: number): string {
  return count === 1 ? `${start}` : `${start},${count}`;
}

function prettyText(text: string): string {
  try {
    return prettyCanonicalJson(JSON.parse(text));
  } catch {
    return text;
  }
}
