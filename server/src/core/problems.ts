/**
 * Problems: what the core reports about a document, in offsets, before any editor sees it.
 *
 * Every problem has a stable code from {@link PROBLEM_CODES}. Codes are banded:
 *   TP1xx  the document text itself (JSON syntax, duplicate keys, shapes and unknown keys; values
 *          of TypeScript and JavaScript sources that are computed at run time or cannot be read)
 *   TP2xx  blueprint meaning (steps, channels, schema pins, secrets in arguments)
 *   TP3xx  connector meaning (transport, auth, include, tool pins)
 *   TP4xx  live verification against MCP servers
 * A code, once shipped, keeps its meaning forever; retired codes are never reused.
 */

export type Severity = 'error' | 'warning' | 'information' | 'hint';

/**
 * What the policy did to a finding; reports and hovers show it, the exit status follows it.
 * core/verify/policy.ts sets it (declared here so that a verdict can carry one too).
 */
export type PolicyNote =
  | { readonly kind: 'severity'; readonly defaultSeverity: Severity; readonly text: string }
  | { readonly kind: 'ignored'; readonly defaultSeverity: Severity; readonly until: string; readonly reason: string; readonly text: string };

/** A half-open range of UTF-16 offsets into the document text, as jsonc-parser reports them. */
export interface Span {
  readonly offset: number;
  readonly length: number;
}

export interface ProblemCodeInfo {
  readonly severity: Severity;
  /** A short name for docs and the SARIF rule table. */
  readonly title: string;
}

export const PROBLEM_CODES = {
  TP100: { severity: 'error', title: 'JSON syntax error' },
  TP101: { severity: 'error', title: 'Duplicate key' },
  TP102: { severity: 'warning', title: 'Unknown key' },
  TP103: { severity: 'error', title: 'Wrong value type' },
  TP104: { severity: 'error', title: 'Missing required field' },
  TP105: { severity: 'error', title: 'Unsupported format version' },
  TP106: { severity: 'information', title: 'More problems than are shown' },
  TP110: { severity: 'information', title: 'Value computed at run time' },
  TP111: { severity: 'warning', title: 'Source statement cannot be read' },
  TP112: { severity: 'error', title: 'Pins in code that cannot be read' },
  TP113: { severity: 'warning', title: 'Module too large to read' },
  TP120: { severity: 'error', title: 'Lock file cannot be read' },
  TP121: { severity: 'error', title: 'Unsupported lock version' },
  TP122: { severity: 'error', title: 'Lock entry does not match its own digest' },
  TP123: { severity: 'error', title: 'Locked entry drifted' },
  TP124: { severity: 'error', title: 'Locked entry not served' },
  TP125: { severity: 'error', title: 'Served entry not in the lock' },
  TP126: { severity: 'information', title: 'Lock cannot be verified' },
  TP127: { severity: 'error', title: 'Locked server launch changed' },
  TP128: { severity: 'warning', title: 'Lock approval does not cover its digest' },

  TP200: { severity: 'error', title: 'Duplicate step id' },
  TP201: { severity: 'error', title: 'Channel target is not a step' },
  TP202: { severity: 'error', title: 'Unknown channel name' },
  TP203: { severity: 'warning', title: 'Channels on a step that is not mcp.invoke' },
  TP204: { severity: 'error', title: 'Malformed schema pin' },
  TP205: { severity: 'error', title: 'Credential written as a literal' },
  TP206: { severity: 'warning', title: 'Step is not pinned' },
  TP207: { severity: 'error', title: 'Malformed secret reference' },

  TP300: { severity: 'error', title: 'Invalid connector name' },
  TP301: { severity: 'error', title: 'Invalid transport kind' },
  TP302: { severity: 'error', title: 'Transport is incomplete' },
  TP303: { severity: 'warning', title: 'Authored transport.cwd is ignored' },
  TP304: { severity: 'error', title: 'Invalid auth' },
  TP305: { severity: 'error', title: 'Pinned tool excluded by include' },
  TP306: { severity: 'error', title: 'Malformed tool pin' },
  TP307: { severity: 'error', title: 'Duplicate connector name' },
  TP308: { severity: 'warning', title: 'Duplicate include entry' },
  TP309: { severity: 'warning', title: 'Pins on a connector that is not MCP' },

  TP400: { severity: 'error', title: 'Pin drifted' },
  TP401: { severity: 'error', title: 'Pinned tool not served' },
  TP402: { severity: 'warning', title: 'Tool served by several servers' },
  TP403: { severity: 'information', title: 'Pin cannot be verified' },
  TP404: { severity: 'warning', title: 'Include entry not served' },
  TP405: { severity: 'warning', title: 'Selected tool not pinned' },
  TP406: { severity: 'error', title: 'Unknown server' },
  TP407: { severity: 'error', title: 'Drift adds tool-poisoning cues' },
  TP408: { severity: 'warning', title: 'Tool behaviour changed outside the pin' },
  TP409: { severity: 'information', title: 'Tool metadata changed outside the pin' },
  TP410: { severity: 'error', title: 'Argument does not match the live input schema' },
  TP411: { severity: 'information', title: 'Live input schema cannot be used for checking' },
  TP412: { severity: 'error', title: 'Policy ignore expired' },
  TP413: { severity: 'error', title: 'Invalid policy entry' },
} as const satisfies Record<string, ProblemCodeInfo>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** One finding against a document. `message` is complete without its code or position. */
export interface Problem {
  readonly code: ProblemCode;
  readonly severity: Severity;
  readonly message: string;
  readonly span: Span;
  /** Machine-readable details for fixes and reports; never contains a secret value. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** Builds a problem with its code's default severity unless one is given. */
export function problem(
  code: ProblemCode,
  span: Span,
  message: string,
  options: { severity?: Severity; data?: Record<string, unknown> } = {},
): Problem {
  const result: Problem = {
    code,
    severity: options.severity ?? PROBLEM_CODES[code].severity,
    message,
    span,
    ...(options.data ? { data: options.data } : {}),
  };
  return result;
}

/**
 * The most problems reported for one file. A broken multi-megabyte file can hold hundreds of
 * thousands of syntax errors; reporting them all costs gigabytes (the CLI's JSON report, the
 * editor's publication) and helps no one. The first ones by position are kept, then one TP106.
 */
export const MAX_PROBLEMS_PER_FILE = 1000;

/** How many problems a TP106 stands for. */
function omittedBy(found: Problem): number {
  const omitted = found.data?.omitted;
  return typeof omitted === 'number' ? omitted : 0;
}

/** The TP106 that stands for `omitted` problems not shown, at `span`. */
export function moreProblems(omitted: number, span: Span, limit = MAX_PROBLEMS_PER_FILE): Problem {
  return problem('TP106', span, `${omitted} more problem(s) in this file are not shown: Toolpin reports the first ${limit}; fix these and check again`, {
    data: { omitted, limit },
  });
}

/**
 * The first `limit` problems of a file by position, plus one TP106 that says how many more there
 * are (earlier TP106s, e.g. from the parser, are merged into it). Sorted; the input is not changed.
 */
export function capProblems(problems: readonly Problem[], limit = MAX_PROBLEMS_PER_FILE): Problem[] {
  let omitted = 0;
  let firstOmitted: Span | undefined;
  const rest: Problem[] = [];
  for (const found of problems) {
    if (found.code === 'TP106') {
      omitted += omittedBy(found);
      if (!firstOmitted || found.span.offset < firstOmitted.offset) firstOmitted = found.span;
    } else rest.push(found);
  }
  rest.sort((a, b) => a.span.offset - b.span.offset);
  if (rest.length > limit) {
    omitted += rest.length - limit;
    const dropped = rest[limit]!.span;
    if (!firstOmitted || dropped.offset < firstOmitted.offset) firstOmitted = dropped;
    rest.length = limit;
  }
  if (omitted > 0) rest.push(moreProblems(omitted, { offset: firstOmitted!.offset, length: Math.min(1, firstOmitted!.length) }, limit));
  return rest;
}
