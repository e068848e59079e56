/**
 * The `toolpin check` report: its stable JSON shape (version 1) and its SARIF 2.1.0 rendering.
 * Pure: it takes texts, verdicts and problems, and gives plain objects.
 *
 * Lines and characters are 0-based in the JSON report (as in LSP) and 1-based in SARIF regions
 * and in the text output. Characters count UTF-16 code units in all three.
 */
import { replacePinEdit, stringLiteral } from '../documents/fixes';
import { LineIndex, type Position } from '../json/lineIndex';
import type { PolicedProblem, PolicedVerdict, PolicyNote } from '../verify/policy';
import { isDriftData } from '../verify/payloads';
import { PROBLEM_CODES, type Severity, type Span } from '../problems';
import type { PinState, ServerListing } from '../verify/verify';

export interface ReportRange {
  start: Position;
  end: Position;
}

export interface ReportPin {
  kind: 'schema' | 'tool' | 'prompt' | 'resource' | 'instructions';
  tool: string;
  server: string | null;
  pinned: string;
  live: string | null;
  state: PinState;
  reason: string | null;
  range: ReportRange;
  /** What `.toolpin/policy.jsonc` did to the pin's finding; absent when nothing. */
  policy?: PolicyNote;
}

export interface ReportProblem {
  code: string;
  severity: Severity;
  message: string;
  range: ReportRange;
  /** What `.toolpin/policy.jsonc` did to the finding (its severity is already the policy's); absent when nothing. */
  policy?: PolicyNote;
  /** The security class of the code: SARIF's `security-severity` (0.0–10.0) as a number, or null for a code that is no security finding. */
  securitySeverity: number | null;
}

export interface ReportServer {
  name: string;
  source: string;
  state: 'listed' | 'unavailable';
  tools: number | null;
  incomplete: string | null;
  reason: string | null;
  message: string | null;
}

export interface CheckReport {
  version: 1;
  files: Array<{ path: string; pins: ReportPin[]; problems: ReportProblem[] }>;
  servers: ReportServer[];
  summary: {
    verified: number;
    drifted: number;
    missing: number;
    ambiguous: number;
    cannotVerify: number;
    problems: number;
    /** Problems of a security class that no policy ignores: what `--fail-on security` fails on. */
    security: number;
  };
}

export interface ReportFileInput {
  /** The path as shown to users: relative to the working folder, with forward slashes. */
  readonly path: string;
  readonly text: string;
  /** Verdicts and problems with the policy already applied (a `policy` note) or without one. */
  readonly verdicts: readonly PolicedVerdict[];
  readonly problems: readonly PolicedProblem[];
  /**
   * Where a pin used in this file is written when another module holds it (`PINS.search` from
   * `./pins`): that module's path as shown to users, its text, and the literal (span and quote).
   * A drift's SARIF fix rewrites the literal there.
   */
  readonly writtenElsewhere?: (span: Span, tool: string) => { readonly path: string; readonly text: string; readonly literal: Span; readonly quote: string | undefined } | undefined;
}

export interface ReportServerInput {
  readonly name: string;
  readonly source: string;
  readonly listing: ServerListing | undefined;
}

function rangeOf(lines: LineIndex, span: { offset: number; length: number }): ReportRange {
  return { start: lines.positionAt(span.offset), end: lines.positionAt(span.offset + span.length) };
}

export function buildReport(files: readonly ReportFileInput[], servers: readonly ReportServerInput[]): CheckReport {
  const summary = { verified: 0, drifted: 0, missing: 0, ambiguous: 0, cannotVerify: 0, problems: 0, security: 0 };
  const reportFiles = files.map((file) => {
    const lines = new LineIndex(file.text);
    const pins: ReportPin[] = file.verdicts.map((verdict) => ({
      kind: verdict.kind,
      tool: verdict.tool,
      server: verdict.server ?? null,
      pinned: verdict.pinned,
      live: verdict.live ?? null,
      state: verdict.state,
      reason: verdict.reason ?? null,
      range: rangeOf(lines, verdict.span),
      ...(verdict.policy ? { policy: verdict.policy } : {}),
    }));
    for (const pin of pins) {
      if (pin.state === 'verified') summary.verified++;
      else if (pin.state === 'drifted') summary.drifted++;
      else if (pin.state === 'missing') summary.missing++;
      else if (pin.state === 'ambiguous') summary.ambiguous++;
      else summary.cannotVerify++;
    }
    const problems = [...file.problems]
      .sort((a, b) => a.span.offset - b.span.offset)
      .map((found): ReportProblem => ({
        code: found.code,
        severity: found.severity,
        message: found.message,
        range: rangeOf(lines, found.span),
        ...(found.policy ? { policy: found.policy } : {}),
        securitySeverity: SECURITY_SEVERITY.get(found.code) ?? null,
      }));
    summary.problems += problems.length;
    summary.security += problems.filter(isFailingSecurityProblem).length;
    return { path: file.path, pins, problems };
  });
  const reportServers = servers.map((server): ReportServer => {
    const listing = server.listing;
    if (!listing || listing.status === 'pending') {
      return { name: server.name, source: server.source, state: 'unavailable', tools: null, incomplete: null, reason: 'not-needed', message: 'not listed: no pin refers to it' };
    }
    if (listing.status === 'listed') {
      return { name: server.name, source: server.source, state: 'listed', tools: listing.listing.tools.length, incomplete: listing.listing.incomplete?.message ?? null, reason: null, message: null };
    }
    return { name: server.name, source: server.source, state: 'unavailable', tools: null, incomplete: null, reason: listing.reason, message: listing.message };
  });
  return { version: 1, files: reportFiles, servers: reportServers, summary };
}

/**
 * The exit status of `toolpin check`: 0 every pin verified and no error; 1 any drift, missing
 * tool or error-level problem; 2 nothing of that, but something could not be verified.
 */
/**
 * The security class of each code that is a security finding: SARIF's `security-severity`
 * (0.0–10.0; GitHub ranks 9.0 and up as critical), the JSON report's `securitySeverity`. The one
 * table both formats read.
 */
export const SECURITY_SEVERITY: ReadonlyMap<string, number> = new Map([['TP407', 9.0]]);

/** Codes that are security findings: SARIF marks them, and `--fail-on security` fails on them alone. */
export const SECURITY_CODES: ReadonlySet<string> = new Set(SECURITY_SEVERITY.keys());

/** A security finding that no policy ignores: what `--fail-on security` and `summary.security` count. */
function isFailingSecurityProblem(found: Pick<ReportProblem, 'code' | 'policy'>): boolean {
  return SECURITY_CODES.has(found.code) && found.policy?.kind !== 'ignored';
}

/**
 * What makes `check` exit 1: `security` only security findings; `drift` (the default) any drift,
 * missing tool or error; `warning` those and any warning too. Exit 2 (could not verify) is the
 * same for every level: an unreachable server is never a pass.
 */
export type FailOn = 'security' | 'drift' | 'warning';

export function exitStatusOf(report: CheckReport, couldNotReadSomething: boolean, failOn: FailOn = 'drift'): 0 | 1 | 2 {
  const problems = report.files.flatMap((file) => file.problems);
  // An ignored security finding does not fail `--fail-on security`; a drifted or missing pin whose
  // finding a policy relaxed (ignored, or given a lower severity) fails only through its problems.
  const hasSecurity = problems.some(isFailingSecurityProblem);
  const failingPins = report.files.some((file) => file.pins.some((pin) => (pin.state === 'drifted' || pin.state === 'missing') && pin.policy === undefined));
  const hasError = problems.some((found) => found.severity === 'error');
  const hasWarning = problems.some((found) => found.severity === 'warning');
  if (failOn === 'security') {
    if (hasSecurity) return 1;
  } else if (failingPins || hasError || (failOn === 'warning' && hasWarning)) return 1;
  if (report.summary.cannotVerify > 0 || report.summary.ambiguous > 0 || couldNotReadSomething) return 2;
  return 0;
}

const SARIF_LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note', hint: 'note' };

function sarifRegion(range: ReportRange): Record<string, number> {
  return { startLine: range.start.line + 1, startColumn: range.start.character + 1, endLine: range.end.line + 1, endColumn: range.end.character + 1 };
}

/**
 * The re-pin of each drift (TP400) of a file, keyed by where its result starts: a SARIF `fix`
 * that replaces the pin string (quotes included) with the live pin in the pinned style, the same
 * edit the editor's quick fix and `toolpin pin` make. It is offered for review, never applied
 * by Toolpin; the pin store entry is written by `toolpin pin`, which shows the diff first.
 */
function repinFixes(file: ReportFileInput | undefined, uri: string): Map<string, Record<string, unknown>> {
  const fixes = new Map<string, Record<string, unknown>>();
  if (!file) return fixes;
  const lines = new LineIndex(file.text);
  for (const found of file.problems) {
    if (found.code !== 'TP400' || !isDriftData(found.data)) continue;
    const range = rangeOf(lines, found.span);
    // A pin imported from another module is rewritten where that module writes it.
    const elsewhere = file.writtenElsewhere?.(found.span, found.data.tool);
    const change = elsewhere
      ? { uri: elsewhere.path, region: rangeOf(new LineIndex(elsewhere.text), elsewhere.literal), text: stringLiteral(found.data.live, elsewhere.quote) }
      : { uri, region: range, text: replacePinEdit(found.span, found.data.live, file.text).content };
    fixes.set(`${found.code}:${range.start.line}:${range.start.character}`, {
      description: { text: `Re-pin "${found.data.tool}" to ${found.data.live}${elsewhere ? ` in ${elsewhere.path}, where it is written` : ''} after reviewing what changed (toolpin pin shows the diff)` },
      artifactChanges: [
        {
          artifactLocation: { uri: change.uri, uriBaseId: '%SRCROOT%' },
          // The same literal the editor's re-pin writes: the pin in the quote it was written in.
          replacements: [{ deletedRegion: sarifRegion(change.region), insertedContent: { text: change.text } }],
        },
      ],
    });
  }
  return fixes;
}

/**
 * Renders the report as SARIF 2.1.0, one result per problem (drift, missing and the rest). With
 * the report's inputs (in the order of `report.files`), each drift carries its re-pin as a `fix`.
 */
export function toSarif(report: CheckReport, toolVersion: string, inputs: readonly ReportFileInput[] = []): Record<string, unknown> {
  const rules = Object.entries(PROBLEM_CODES).map(([id, info]) => ({
    id,
    name: info.title.replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ? next.toUpperCase() : '')),
    shortDescription: { text: info.title },
    defaultConfiguration: { level: SARIF_LEVEL[info.severity] },
    // GitHub code scanning ranks security results by this property (0.0–10.0; 9.0 and up is critical).
    ...(SECURITY_SEVERITY.has(id) ? { properties: { tags: ['security'], 'security-severity': SECURITY_SEVERITY.get(id)!.toFixed(1) } } : {}),
  }));
  const ruleIndex = new Map(rules.map((rule, index) => [rule.id, index]));
  const results = report.files.flatMap((file, fileIndex) => {
    const fixes = repinFixes(inputs[fileIndex], file.path);
    return file.problems.map((found) => {
      const fix = fixes.get(`${found.code}:${found.range.start.line}:${found.range.start.character}`);
      // A finding a policy ignores keeps its own level and carries the ignore as a SARIF
      // suppression (accepted, with the reason and the expiry), so code scanning shows it as
      // dismissed by the repository rather than as a plain note (issue 22 §5).
      const ignored = found.policy?.kind === 'ignored' ? found.policy : undefined;
      return {
      ruleId: found.code,
      ruleIndex: ruleIndex.get(found.code),
      level: SARIF_LEVEL[ignored ? ignored.defaultSeverity : found.severity],
      message: { text: found.message },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: file.path, uriBaseId: '%SRCROOT%' },
            region: sarifRegion(found.range),
          },
        },
      ],
      ...(fix ? { fixes: [fix] } : {}),
      ...(ignored ? { suppressions: [{ kind: 'external', status: 'accepted', justification: `${ignored.reason} (ignored by .toolpin/policy.jsonc until ${ignored.until})` }] } : {}),
      };
    });
  });
  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'toolpin', version: toolVersion, semanticVersion: toolVersion, rules } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
}
