/**
 * `toolpin check --format markdown`: the report as a GitHub job summary or pull-request comment.
 * Pure: it takes the report, the problems with their payloads, and a lookup of pinned content.
 *
 * Tool names, server names, descriptions, schemas and the messages that quote them come from
 * servers (or from the files under review) and are untrusted. Every such piece is shown only in
 * a code span or in a fenced code block whose fence is longer than any backtick run inside
 * (core/report/markdown.ts), so it cannot close the block, start a heading, or inject a link, an image
 * or HTML, and GitHub's autolinking does not reach inside code. The only markup outside code is
 * this file's own words. Control and bidirectional characters are shown as `\u{…}` escapes.
 */
import { lineDiff, prettyCanonicalJson, readStoreEntry, storeEntryName } from '../review/changes';
import { PIN_STORE_FOLDER } from '../pins/storeLayout';
import { isDriftData, isSecurityData, type DriftData, type SecurityData } from '../verify/payloads';
import { isParsedPin, type ParsedPin, parsePin } from '../pins/pins';
import type { CheckReport, ReportFileInput } from './report';
import { LineIndex } from '../json/lineIndex';
import { isRecord } from '../json/values';
import { terminalSafe } from './terminalText';
import { codeBlock, inlineCode } from './markdown';

/** GitHub refuses a job summary over 1 MiB; the report stops well before, and says so. */
export const MARKDOWN_LIMIT = 900_000;

/** Diffs longer than this many lines are cut (with a note): a summary is for review, not archive. */
const DIFF_LINE_LIMIT = 120;

export interface MarkdownOptions {
  /** The text of a pin's store entry (`.toolpin/store`), when there is one. */
  readonly pinnedContent?: (pin: ParsedPin) => string | undefined;
  /** Whether the run was offline (`--offline`): pins were not verified. */
  readonly offline?: boolean;
}

function parseAnyPin(pin: string): ParsedPin | undefined {
  const parsed = parsePin(pin, pin.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256');
  return isParsedPin(parsed) ? parsed : undefined;
}

function pretty(value: unknown): string {
  if (value === undefined) return '';
  try {
    return prettyCanonicalJson(value);
  } catch {
    return JSON.stringify(value) ?? '';
  }
}

function capLines(text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length <= DIFF_LINE_LIMIT) return lines.join('\n');
  return [...lines.slice(0, DIFF_LINE_LIMIT), `… ${lines.length - DIFF_LINE_LIMIT} more line(s); run toolpin pin for the whole diff`].join('\n');
}

/** Indents a block so that it belongs to the list item above it. */
function inItem(block: string): string {
  return block.replace(/^(?=.)/gm, '  ');
}

/** The description diff (tool pins) and input-schema diff of a drift, or the live content in full. */
function contentOf(drift: DriftData, options: MarkdownOptions): string[] {
  let live: { description?: unknown; inputSchema?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(drift.liveContent);
    if (drift.kind === 'schema') live = { inputSchema: parsed };
    else if (isRecord(parsed)) live = { description: parsed.description, inputSchema: parsed.inputSchema };
  } catch {
    // Unreadable live content: shown as nothing, the summary line still says what changed.
  }
  const liveDescription = typeof live.description === 'string' ? live.description : '';
  const pinned = parseAnyPin(drift.pinned);
  const stored = pinned ? options.pinnedContent?.(pinned) : undefined;
  const entry = pinned && stored !== undefined ? readStoreEntry(pinned, stored) : undefined;
  const out: string[] = [];
  if (entry?.ok) {
    if (entry.pin === 'tool' && (entry.tool.description ?? '') !== liveDescription) {
      const diff = lineDiff(entry.tool.description ?? '', liveDescription, { beforeLabel: 'pinned description', afterLabel: 'live description' });
      out.push('Description:', codeBlock(capLines(diff.unified), 'diff'));
    }
    const pinnedSchema = entry.pin === 'tool' ? entry.tool.inputSchema : entry.inputSchema;
    const schemaDiff = lineDiff(pretty(pinnedSchema), pretty(live.inputSchema), { beforeLabel: 'pinned inputSchema', afterLabel: 'live inputSchema' });
    if (schemaDiff.unified) out.push('Input schema:', codeBlock(capLines(schemaDiff.unified), 'diff'));
    return out;
  }
  const why = entry && !entry.ok ? entry.reason : `no entry ${pinned ? storeEntryName(pinned) : 'for the pin'} in ${PIN_STORE_FOLDER}`;
  out.push(`The pinned content is unknown (${inlineCode(why)}); review the live content in full:`);
  if (drift.kind === 'tool') out.push('Live description:', codeBlock(capLines(liveDescription), 'text'));
  out.push('Live input schema:', codeBlock(capLines(pretty(live.inputSchema)), 'json'));
  return out;
}

function securityLines(security: SecurityData): string[] {
  const lead = security.pinnedKnown ? 'the rewritten text adds cues of tool poisoning' : 'the live text carries cues of tool poisoning (the pinned content is unknown, so they may not be new)';
  return [
    `> **Security (TP407):** ${lead}. Review the change before re-pinning.`,
    ...security.cues.map((cue) => `> - ${cue.label}: ${inlineCode(cue.evidence)}`),
  ];
}

/**
 * Renders the report. `files` are the report's inputs, in the same order as `report.files`: they
 * carry the problems' payloads (the drift's summary, live pin and content; the security cues).
 */
export function toMarkdown(report: CheckReport, files: readonly ReportFileInput[], options: MarkdownOptions = {}): string {
  const s = report.summary;
  const pins = s.verified + s.drifted + s.missing + s.ambiguous + s.cannotVerify;
  const security = report.files.reduce((count, file) => count + file.problems.filter((found) => found.code === 'TP407').length, 0);
  const verdict = security > 0 ? 'security finding' : s.drifted + s.missing > 0 ? 'drift' : s.cannotVerify + s.ambiguous > 0 ? 'not everything could be verified' : 'all pins verified';
  // One section per file (and one for the servers), so a cut falls between sections, never
  // inside a fenced block.
  const sections: string[][] = [];
  let out: string[] = [
    `## Toolpin check: ${verdict}`,
    '',
    `${report.files.length} file(s), ${pins} pin(s): ${s.verified} verified, ${s.drifted} drifted, ${s.missing} missing, ${s.ambiguous} ambiguous, ` +
      `${s.cannotVerify} cannot verify${options.offline ? ' (offline)' : ''}; ${s.problems} problem(s)${security > 0 ? `, ${security} security finding(s)` : ''}.`,
  ];

  for (const [index, file] of report.files.entries()) {
    const input = files[index];
    if (file.pins.length === 0 && file.problems.length === 0) continue;
    sections.push(out);
    out = [];
    const lines = input ? new LineIndex(input.text) : undefined;
    const lineOf = (offset: number): number => (lines ? lines.positionAt(offset).line + 1 : 0);
    out.push('', `### ${inlineCode(file.path)}`, '');
    const problems = input?.problems ?? [];
    const drifts = problems.flatMap((found) => (found.code === 'TP400' && isDriftData(found.data) ? [{ found, drift: found.data }] : []));
    if (drifts.length > 0) {
      out.push('**Drifted**', '');
      for (const { found, drift } of drifts) {
        const cues = problems.find((other) => other.code === 'TP407' && other.span.offset === found.span.offset && isSecurityData(other.data))?.data;
        out.push(`- ${inlineCode(drift.tool)} on ${inlineCode(drift.server)} (${drift.kind} pin, line ${lineOf(found.span.offset)}): ${inlineCode(drift.summary)}`);
        out.push(inItem(['', `Re-pin: ${inlineCode(drift.pinned)} → ${inlineCode(drift.live)}`].join('\n')));
        if (isSecurityData(cues)) out.push('', inItem(securityLines(cues).join('\n')));
        for (const part of contentOf(drift, options)) out.push('', inItem(part));
        out.push('');
      }
    }
    const others = file.pins.filter((pin) => pin.state !== 'verified' && pin.state !== 'drifted');
    if (others.length > 0) {
      out.push('**Missing or not verified**', '');
      for (const pin of others) {
        out.push(`- ${pin.state} (line ${pin.range.start.line + 1}): ${pin.kind} pin of ${inlineCode(pin.tool)}${pin.server ? ` on ${inlineCode(pin.server)}` : ''}: ${inlineCode(pin.reason ?? '')}`);
      }
      out.push('');
    }
    const verified = file.pins.filter((pin) => pin.state === 'verified').length;
    if (verified > 0) out.push(`${verified} pin(s) verified.`, '');
    const rest = file.problems.filter((found) => !['TP400', 'TP401', 'TP402', 'TP403'].includes(found.code));
    if (rest.length > 0) {
      out.push('**Problems**', '');
      for (const found of rest) {
        const line = `- ${found.code} ${found.severity} (line ${found.range.start.line + 1}): ${inlineCode(found.message)}`;
        out.push(found.code === 'TP407' ? `${line} — **security**` : line);
      }
      out.push('');
    }
  }

  const unlisted = report.servers.filter((server) => server.state === 'unavailable' && server.reason !== 'not-needed');
  if (unlisted.length > 0) {
    sections.push(out);
    out = [];
    out.push('', '### Servers that could not be listed', '');
    for (const server of unlisted) out.push(`- ${inlineCode(server.name)} (${inlineCode(server.source)}): ${inlineCode(server.message ?? server.reason ?? '')}`);
  }
  sections.push(out);
  const rendered = sections.map((section) => section.join('\n'));
  let kept = rendered.length;
  while (kept > 1 && rendered.slice(0, kept).join('\n').length > MARKDOWN_LIMIT) kept--;
  let text = rendered.slice(0, kept).join('\n');
  if (kept < rendered.length) text += `\n\n… ${rendered.length - kept} more section(s) left out: GitHub limits a job summary to 1 MiB; run toolpin check for the rest.`;
  // Controls and bidirectional characters are shown as escapes: the report is also printed to CI
  // logs (which act on ANSI sequences), and a U+202E would reorder what a reviewer reads.
  text = `${terminalSafe(text).trimEnd()}\n`;
  return text;
}
