/**
 * Hover on a pin, a `toolName`, a `toolsSnapshot` key or an `include` entry: the state, pinned and
 * live hash, the server, when it was last listed, the live tool (description and schema, readable),
 * and — when the pin store has the pinned content — what changed and the pinned → live diff.
 *
 * Tool names, descriptions and schemas come from servers and are untrusted: they are shown only in
 * code spans and fenced blocks (core/report/markdown.ts), never as markdown or command links.
 */
import * as path from 'node:path';
import { type ForeignPin, foreignPinAt } from '../core/documents/source/analyzeSource';
import { LineIndex } from '../core/json/lineIndex';
import { type Connection, type Hover, MarkupKind, type TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { classifySchemaPinChange, classifyToolPinChange, lineDiff, prettyCanonicalJson, readStoreEntry } from '../core/review/changes';
import { type PinTarget, pinTargetAt } from '../core/documents/locate';
import type { ListedTool } from '../core/verify/listing';
import { type ParsedPin, schemaPinContent, toolPinContent } from '../core/pins/pins';
import { PIN_STORE_FOLDER } from '../core/pins/storeLayout';
import { isSecurityData } from '../core/verify/payloads';
import { describeAge, type PinVerdict } from '../core/verify/verify';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { redactKnownSecrets } from '../mcp/credentials';
import { runSafe } from '../util/runSafe';
import { codeBlock, inlineCode } from '../core/report/markdown';
import { spanToRange } from '../util/toLsp';
import { uriToPath } from '../util/uris';

const STATE_TEXT: Record<PinVerdict['state'], string> = {
  verified: '✓ verified',
  drifted: '✗ drifted',
  missing: '✗ missing (not served)',
  ambiguous: '⚠ ambiguous',
  'cannot-verify': '? cannot verify',
};

/**
 * How hover text is written: markdown for a client that declares it in `hover.contentFormat`,
 * plain text otherwise (issue 26: Neovim 0.7 and eglot showed the raw markdown tables). Server
 * text is shown literally in both: in code spans and fences, or as plain lines.
 */
interface HoverWriter {
  readonly kind: MarkupKind;
  code(text: string): string;
  strong(text: string): string;
  block(text: string, language: string): string;
  /** Rows of Toolpin's own text (hashes, ages): a table in markdown, "label: value" lines otherwise. */
  rows(rows: ReadonlyArray<readonly [string, string]>): string[];
  rule(): string;
}

const MARKDOWN_WRITER: HoverWriter = {
  kind: MarkupKind.Markdown,
  code: inlineCode,
  strong: (text) => `**${text}**`,
  block: codeBlock,
  rows: (rows) => ['| | |', '|---|---|', ...rows.map(([label, value]) => `| ${label} | ${value} |`)],
  rule: () => '---',
};

const PLAIN_WRITER: HoverWriter = {
  kind: MarkupKind.PlainText,
  code: (text) => text.replace(/[\r\n]+/g, ' '),
  strong: (text) => text,
  block: (text) => text,
  rows: (rows) => rows.map(([label, value]) => `${label}: ${value}`),
  rule: () => '────────',
};

/** Whether a client's `textDocument.hover.contentFormat` lets markdown through (absent: plain text, as the LSP says). */
export function hoverFormatOf(contentFormat: readonly string[] | undefined): MarkupKind {
  return (contentFormat ?? []).includes(MarkupKind.Markdown) ? MarkupKind.Markdown : MarkupKind.PlainText;
}

export function registerHover(connection: Connection, documents: TextDocuments<TextDocument>, workspace: LiveWorkspace, now: () => number, format: () => MarkupKind = () => MarkupKind.Markdown): void {
  connection.onHover((params, token) =>
    runSafe<Hover | null>(connection.console, 'hover', token, null, async () => {
      const document = documents.get(params.textDocument.uri);
      if (!document) return null;
      return computeHover(document, document.offsetAt(params.position), workspace, now(), format());
    }),
  );
}

export async function computeHover(document: TextDocument, offset: number, workspace: LiveWorkspace, now: number, format: MarkupKind = MarkupKind.Markdown): Promise<Hover | null> {
  const write = format === MarkupKind.Markdown ? MARKDOWN_WRITER : PLAIN_WRITER;
  const file = uriToPath(document.uri);
  workspace.setOpenDocument(file, document.getText());
  const analysis = workspace.analysis(file);
  if (!analysis) return null;
  const target = pinTargetAt(analysis, offset);
  if (!target) return null;
  const verification = await workspace.verification(file);
  const pinSpan = target.pinSpan;
  const verdict = pinSpan ? verification.verdicts.find((candidate) => candidate.span.offset === pinSpan.offset) : undefined;
  const { definition, listing } = await workspace.serverFor(file, target.kind, target.tool, verdict?.server ?? target.server);
  const liveTool = listing?.status === 'listed' ? listing.listing.tools.find((tool) => tool.name === target.tool) : undefined;

  // Layout: a one-line heading (state, pin kind, tool, server); why, when the state needs a
  // reason; the hashes; what changed; then the live tool below a rule. The diagnostic message is
  // not repeated: editors show it next to the hover already.
  const lines: string[] = [];
  const kind = target.kind === 'schema' ? 'schema pin' : 'tool pin';
  const state = verdict ? STATE_TEXT[verdict.state] : !target.pin ? (target.pinSpan ? 'malformed pin' : 'not pinned') : undefined;
  lines.push(`${state ? `${write.strong(state)} · ` : ''}${kind} of ${write.code(target.tool)}${definition ? ` on ${write.code(definition.name)}` : ''}`);
  // A drift of the security class is reviewed before anything else is read: the cues and the
  // pinned → live diff come first, right under the title (issue 22 §5).
  const pin = target.pin;
  const security = pin && liveTool && verdict?.state === 'drifted' ? verification.problems.find((found) => found.code === 'TP407' && pinSpan && found.span.offset === pinSpan.offset) : undefined;
  if (pin && security && isSecurityData(security.data) && liveTool) {
    lines.push('', `${write.strong('⚠ Security:')} the ${security.data.pinnedKnown ? 'rewritten' : 'live'} text carries cues of tool poisoning; review it before re-pinning:`);
    for (const cue of security.data.cues) lines.push(`- ${cue.label}: ${write.code(cue.evidence)}`);
    lines.push('', ...(await changeSection(workspace, file, target, pin, liveTool, write)));
  }
  // A pin imported from another module is rewritten there: the hover says where.
  const foreign = target.pinSpan ? foreignPinAt(analysis.model, target.pinSpan, target.tool) : undefined;
  if (foreign) lines.push('', `Written in ${write.code(await whereWritten(workspace, file, foreign))}, which this module imports it from; a re-pin rewrites it there.`);
  // Drift is explained by "What changed" below; other states need their reason.
  if (verdict?.reason && verdict.state !== 'verified' && verdict.state !== 'drifted') lines.push('', `Why: ${write.code(verdict.reason)}`);
  // What the repository's policy did to this pin's finding (its reason is the repository's text).
  const policy = verdict?.policy;
  if (policy) lines.push('', `Policy: ${write.code(policy.text)}`);
  // Server text never goes into a table cell: a "|" there would split the cell even inside a code
  // span. The table holds only Toolpin's own text (hashes, ages).
  const rows: Array<[string, string]> = [];
  if (target.pinSpan || verdict) {
    rows.push(['pinned', verdict ? write.code(verdict.pinned) : target.pin ? write.code(`${target.pin.algorithm}:${target.pin.hex}`) : '—']);
    rows.push(['live', verdict?.live ? write.code(verdict.live) : '—']);
  }
  rows.push(['hash', target.kind === 'schema' ? 'fnv1a64 of inputSchema' : 'sha256 of name, description, inputSchema']);
  if (listing?.status === 'listed') rows.push(['last listed', describeAge(now - listing.listedAt)]);
  else if (listing?.status === 'unavailable') rows.push(['server', `cannot list${listing.lastGood ? ` (last listed ${describeAge(now - listing.lastGood.listedAt)})` : ''}`]);
  else if (listing?.status === 'pending') rows.push(['server', 'listing…']);
  lines.push('', ...write.rows(rows));
  if (listing?.status === 'unavailable') lines.push('', `Server: ${write.code(listing.message)}`);

  if (pin && liveTool && verdict?.state === 'drifted' && !(security && isSecurityData(security.data))) {
    lines.push('', ...(await changeSection(workspace, file, target, pin, liveTool, write)));
  }
  if (liveTool) {
    lines.push('', write.rule(), '', write.strong('Live tool'));
    if (liveTool.description !== undefined) lines.push('', write.block(liveTool.description, 'text'));
    if (liveTool.inputSchema !== undefined) lines.push('', write.block(prettyCanonicalJson(liveTool.inputSchema), 'json'));
  }
  return {
    // A server may echo a credential it was given into a description, a schema or an error.
    contents: { kind: write.kind, value: redactKnownSecrets(lines.join('\n')) },
    range: spanToRange(document, target.on === 'pin' && target.pinSpan ? target.pinSpan : spanOfTarget(target)),
  };
}

/** Where an imported pin is written: its module relative to the workspace folder, line and column (1-based). */
export async function whereWritten(workspace: LiveWorkspace, file: string, foreign: ForeignPin): Promise<string> {
  const relative = path.relative(workspace.folderOf(file), foreign.file).split(path.sep).join('/');
  const text = await workspace.moduleText(foreign.file);
  if (text === undefined) return relative;
  const start = new LineIndex(text).positionAt(foreign.literal.offset);
  return `${relative}:${start.line + 1}:${start.character + 1}`;
}

function spanOfTarget(target: PinTarget): { offset: number; length: number } {
  if (target.kind === 'schema' || target.on === 'key') return target.toolSpan;
  return target.instance.include?.find((candidate) => candidate.value === target.tool)?.span ?? target.pinSpan ?? target.toolSpan;
}

async function changeSection(workspace: LiveWorkspace, file: string, target: PinTarget, pin: ParsedPin, liveTool: ListedTool, write: HoverWriter): Promise<string[]> {
  const stored = await workspace.pinnedContent(file, pin);
  if (stored === undefined) {
    return [`${write.strong('What changed:')} unknown — the pinned content is not in ${write.code(PIN_STORE_FOLDER)} (pins written by hand or by other tools). Re-pinning with Toolpin records it, so the next change shows a diff.`];
  }
  const entry = readStoreEntry(pin, stored);
  if (!entry.ok) return [`${write.strong('What changed:')} unknown — ${write.code(entry.reason)}`];
  const report = entry.pin === 'schema' ? classifySchemaPinChange(entry.inputSchema, liveTool) : classifyToolPinChange(entry.tool, liveTool);
  const liveContent = target.kind === 'schema' ? schemaPinContent(liveTool.inputSchema) : toolPinContent(liveTool);
  const diff = lineDiff(stored, liveContent);
  const lines = [`${write.strong('What changed:')} ${write.code(report.summary)}`];
  if (report.liveBehaviour) lines.push(`Live tool behaviour (annotations, not pinned): ${write.code(report.liveBehaviour)}`);
  if (diff.unified) lines.push('', write.block(diff.unified.trimEnd(), 'diff'));
  return lines;
}
