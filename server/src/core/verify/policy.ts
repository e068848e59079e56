/**
 * The repository's policy (`.toolpin/policy.jsonc`, schemas/policy.schema.json): per server or
 * tool, severity overrides of live-verification findings, and ignores that carry a reason and an
 * expiry date. Pure: the text and "today" are handed in.
 *
 * Contract: a policy changes only how a finding is presented (its severity, and a note on why) —
 * never a pin, a verdict's state or whether the finding is reported. An ignored finding is still
 * reported, as information, with "ignored by .toolpin/policy.jsonc until DATE: REASON"; an ignore
 * past its date no longer applies and adds a TP412 error next to the finding it covered. Only the
 * live-verification band (TP4xx) can be overridden or ignored: the structure of a file is not a
 * matter of policy.
 */
import { getProperty, type JsonNode, parseJsonDocument, spanOf, stringField } from '../json/jsonDocument';
import { PROBLEM_CODES, type PolicyNote, type Problem, type ProblemCode, problem, type Severity, type Span } from '../problems';
import { checkShape, type Shape } from '../json/shape';
import { isOneOf } from '../json/values';
import { POLICY_LOCATION } from '../documents/kinds/policy';
import type { PinVerdict, VerificationResult } from './verify';

/** Where the policy lives, relative to a workspace folder (its kind: core/documents/kinds/policy.ts). */
export const POLICY_FILE = POLICY_LOCATION.join('/');

const SEVERITIES: readonly Severity[] = ['error', 'warning', 'information', 'hint'];

/** Which findings an entry covers: a server name, a tool name, both or neither (every finding). */
export interface PolicyScope {
  readonly server?: string;
  readonly tool?: string;
}

export interface SeverityRule extends PolicyScope {
  /** The severity each code takes in this scope. */
  readonly severity: Readonly<Partial<Record<ProblemCode, Severity>>>;
}

export interface IgnoreEntry extends PolicyScope {
  readonly codes: readonly ProblemCode[];
  readonly reason: string;
  /** `YYYY-MM-DD`; the ignore applies up to and including this day (UTC). */
  readonly expires: string;
}

export interface Policy {
  readonly rules: readonly SeverityRule[];
  readonly ignore: readonly IgnoreEntry[];
}

export const EMPTY_POLICY: Policy = { rules: [], ignore: [] };

// PolicyNote lives in core/problems.ts, so that verify.ts can name it on a verdict without importing this file.
export type { PolicyNote } from '../problems';

export interface PolicyAnalysis {
  readonly policy: Policy;
  /** Problems of the policy file itself, in its offsets. */
  readonly problems: Problem[];
}

const SCOPE_PROPERTIES = { server: { kind: 'string' }, tool: { kind: 'string' } } as const;

const POLICY_SHAPE: Shape = {
  kind: 'object',
  properties: {
    $schema: { kind: 'string' },
    version: { kind: 'number' },
    rules: {
      kind: 'array',
      items: { kind: 'object', properties: { ...SCOPE_PROPERTIES, severity: { kind: 'object', properties: {}, otherMembers: { kind: 'string' } } }, required: ['severity'] },
    },
    ignore: {
      kind: 'array',
      items: {
        kind: 'object',
        properties: { ...SCOPE_PROPERTIES, codes: { kind: 'array', items: { kind: 'string' } }, reason: { kind: 'string' }, expires: { kind: 'string' } },
        required: ['codes', 'reason', 'expires'],
      },
    },
  },
};

/** True when `code` names a live-verification code a policy may change. */
function isPolicyCode(code: string): code is ProblemCode {
  return Object.hasOwn(PROBLEM_CODES, code) && code.startsWith('TP4');
}

/** A real calendar day written `YYYY-MM-DD`. */
export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === value;
}

function invalid(span: Span, message: string): Problem {
  return problem('TP413', span, `${POLICY_FILE}: ${message}`);
}

function scopeOf(node: JsonNode, problems: Problem[], where: string): PolicyScope | undefined {
  const scope: { server?: string; tool?: string } = {};
  for (const key of ['server', 'tool'] as const) {
    const field = stringField(getProperty(node, key)?.valueNode);
    if (!field) continue;
    if (field.value.length === 0) {
      problems.push(invalid(field.span, `"${key}" in ${where} is empty; leave it out to cover every ${key}`));
      return undefined;
    }
    scope[key] = field.value;
  }
  return scope;
}

function codeProblem(code: string, span: Span, where: string): Problem {
  return invalid(span, `${where} names "${code}", which is not a live-verification code (TP4xx) of docs/diagnostics.md; only those can be changed by a policy`);
}

/**
 * Reads a policy text. Never throws: syntax errors, wrong shapes and bad values are problems in
 * the policy file, and an entry with a problem is left out of the policy (it changes nothing).
 */
/** The codes of the security class (core/report/report.ts SECURITY_CODES): their ignores are bounded. */
const SECURITY_CLASS: ReadonlySet<string> = new Set(['TP407']);
/** An ignore of a security-class finding expires within this many days of the day it is read. */
export const SECURITY_IGNORE_MAX_DAYS = 90;

/**
 * Reads a policy file. `now` (injected) bounds the ignores of security-class codes: one whose
 * expiry is more than {@link SECURITY_IGNORE_MAX_DAYS} days ahead is refused with TP413 at its
 * expiry, so the finding is reported as if it were not ignored.
 */
export function parsePolicy(text: string, now: number): PolicyAnalysis {
  const document = parseJsonDocument(text);
  const problems: Problem[] = [...document.problems];
  const root = document.root;
  if (!root) return { policy: EMPTY_POLICY, problems };
  const shapeProblems: Problem[] = [];
  checkShape(root, POLICY_SHAPE, 'policy', shapeProblems);
  problems.push(...shapeProblems);
  if (root.type !== 'object') return { policy: EMPTY_POLICY, problems };

  const rules: SeverityRule[] = [];
  const rulesNode = getProperty(root, 'rules')?.valueNode;
  (rulesNode?.type === 'array' ? rulesNode.children ?? [] : []).forEach((node, index) => {
    const where = `rules[${index}]`;
    if (node.type !== 'object') return;
    const scope = scopeOf(node, problems, where);
    const severityNode = getProperty(node, 'severity')?.valueNode;
    if (!scope || severityNode?.type !== 'object') return;
    const severity: Partial<Record<ProblemCode, Severity>> = {};
    let ok = true;
    for (const member of severityNode.children ?? []) {
      const [keyNode, valueNode] = member.children ?? [];
      if (!keyNode || !valueNode) continue;
      const code = String(keyNode.value);
      if (!isPolicyCode(code)) {
        problems.push(codeProblem(code, spanOf(keyNode), `"severity" in ${where}`));
        ok = false;
        continue;
      }
      const value: unknown = valueNode.value;
      if (valueNode.type !== 'string' || !isOneOf(SEVERITIES, value)) {
        if (valueNode.type === 'string') problems.push(invalid(spanOf(valueNode), `the severity of ${code} in ${where} must be one of ${SEVERITIES.join(', ')}, found "${String(valueNode.value)}"`));
        ok = false;
        continue;
      }
      severity[code] = value;
    }
    if (ok) rules.push({ ...scope, severity });
  });

  const ignore: IgnoreEntry[] = [];
  const ignoreNode = getProperty(root, 'ignore')?.valueNode;
  (ignoreNode?.type === 'array' ? ignoreNode.children ?? [] : []).forEach((node, index) => {
    const where = `ignore[${index}]`;
    if (node.type !== 'object') return;
    const scope = scopeOf(node, problems, where);
    const codesNode = getProperty(node, 'codes')?.valueNode;
    const reason = stringField(getProperty(node, 'reason')?.valueNode);
    const expires = stringField(getProperty(node, 'expires')?.valueNode);
    let ok = scope !== undefined && codesNode?.type === 'array' && reason !== undefined && expires !== undefined;
    const codes: ProblemCode[] = [];
    for (const codeNode of codesNode?.type === 'array' ? codesNode.children ?? [] : []) {
      if (codeNode.type !== 'string') continue;
      const code = String(codeNode.value);
      if (isPolicyCode(code)) codes.push(code);
      else {
        problems.push(codeProblem(code, spanOf(codeNode), `"codes" in ${where}`));
        ok = false;
      }
    }
    if (codesNode?.type === 'array' && (codesNode.children ?? []).length === 0) {
      problems.push(invalid(spanOf(codesNode), `"codes" in ${where} is empty: name the codes this ignore covers`));
      ok = false;
    }
    if (reason && reason.value.trim().length === 0) {
      problems.push(invalid(reason.span, `"reason" in ${where} is empty: say why the finding may be ignored`));
      ok = false;
    }
    if (expires && !isCalendarDate(expires.value)) {
      problems.push(invalid(expires.span, `"expires" in ${where} must be a date written YYYY-MM-DD, found "${expires.value}"`));
      ok = false;
    }
    const security = codes.filter((code) => SECURITY_CLASS.has(code));
    const latest = dayOf(now + SECURITY_IGNORE_MAX_DAYS * 86_400_000);
    if (ok && expires && security.length > 0 && expires.value > latest) {
      problems.push(invalid(expires.span, `the ignore of the security-class code ${security.join(', ')} in ${where} expires on ${expires.value}, more than ${SECURITY_IGNORE_MAX_DAYS} days ahead: it must expire by ${latest}; until then the finding is reported`));
      ok = false;
    }
    if (ok && scope && reason && expires) ignore.push({ ...scope, codes, reason: reason.value.trim(), expires: expires.value });
  });
  return { policy: { rules, ignore }, problems };
}

function covers(scope: PolicyScope, found: Problem): boolean {
  const tool = found.data?.tool;
  const server = found.data?.server;
  if (scope.tool !== undefined && tool !== scope.tool) return false;
  if (scope.server !== undefined && server !== scope.server) return false;
  return true;
}

function scopeText(scope: PolicyScope): string {
  if (scope.server && scope.tool) return `tool "${scope.tool}" on server "${scope.server}"`;
  if (scope.tool) return `tool "${scope.tool}"`;
  if (scope.server) return `server "${scope.server}"`;
  return 'every tool';
}

/** The UTC day of a time, `YYYY-MM-DD`. */
export function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** A problem as a policy presents it: the note, and the severity the note gives. */
export type PolicedProblem = Problem & { readonly policy?: PolicyNote };

/**
 * Applies a policy to live-verification problems. For each problem, the first ignore that covers
 * it and has not expired makes it information with a note; otherwise the last severity rule
 * that covers it sets its severity (later rules are more specific by convention: they win).
 * An expired ignore that would have covered a problem adds a TP412 error at the problem's span.
 * The order of problems is kept; the input is not changed.
 */
export function applyPolicy(problems: readonly Problem[], policy: Policy, now: number): PolicedProblem[] {
  if (policy.rules.length === 0 && policy.ignore.length === 0) return [...problems];
  const today = dayOf(now);
  const result: PolicedProblem[] = [];
  for (const found of problems) {
    const ignores = policy.ignore.filter((entry) => entry.codes.includes(found.code) && covers(entry, found));
    const active = ignores.find((entry) => entry.expires >= today);
    if (active) {
      const text = `ignored by ${POLICY_FILE} until ${active.expires}: ${active.reason}`;
      result.push({ ...found, severity: 'information', message: `${found.message} (${text})`, policy: { kind: 'ignored', defaultSeverity: found.severity, until: active.expires, reason: active.reason, text } });
      continue;
    }
    const rule = [...policy.rules].reverse().find((candidate) => candidate.severity[found.code] !== undefined && covers(candidate, found));
    const severity = rule?.severity[found.code];
    if (rule && severity && severity !== found.severity) {
      const text = `severity ${severity} (not ${found.severity}) by ${POLICY_FILE} for ${scopeText(rule)}`;
      result.push({ ...found, severity, message: `${found.message} (${text})`, policy: { kind: 'severity', defaultSeverity: found.severity, text } });
    } else result.push(found);
    for (const expired of ignores) {
      result.push(
        problem('TP412', found.span, `the ignore of ${found.code} for ${scopeText(expired)} in ${POLICY_FILE} expired on ${expired.expires} (reason given: ${expired.reason}); fix the finding, or renew the ignore with a new date after review`, {
          data: { ...(found.data?.tool !== undefined ? { tool: found.data.tool } : {}), ...(found.data?.server !== undefined ? { server: found.data.server } : {}), code: found.code, expires: expired.expires },
        }),
      );
    }
  }
  return result;
}

/** A verdict as a policy presents it: the note of the pin's own finding (TP400–TP403), if any. */
export type PolicedVerdict = PinVerdict & { readonly policy?: PolicyNote };

const PIN_CODES: ReadonlySet<string> = new Set(['TP400', 'TP401', 'TP402', 'TP403']);

/**
 * Applies a policy to one document's verification: its problems as {@link applyPolicy} does, and
 * each verdict gets the note of its own pin finding, so that an exit status that counts drifted
 * and missing pins can tell a relaxed one. The verdicts' states are never changed.
 */
export function applyPolicyToVerification<T extends VerificationResult>(result: T, policy: Policy, now: number): T {
  if (policy.rules.length === 0 && policy.ignore.length === 0) return result;
  const problems = applyPolicy(result.problems, policy, now);
  const notes = new Map<string, PolicyNote>();
  for (const found of problems) if (found.policy && PIN_CODES.has(found.code)) notes.set(`${found.span.offset}:${found.span.length}`, found.policy);
  const verdicts = result.verdicts.map((verdict): PolicedVerdict => {
    const span = verdict.problemSpan;
    const note = span ? notes.get(`${span.offset}:${span.length}`) : undefined;
    return note ? { ...verdict, policy: note } : verdict;
  });
  return { ...result, problems, verdicts };
}
