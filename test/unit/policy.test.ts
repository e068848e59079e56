/**
 * The policy's pure core (core/verify/policy.ts): reading `.toolpin/policy.jsonc` with positioned
 * problems, and applying severity overrides and dated ignores to live-verification findings,
 * with "now" injected. Verification itself runs for real (verifyConnector on a drifted pin), so
 * the findings are the ones the CLI and the editor get.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyzeConnector } from '../../server/src/core/documents/connector';
import { readListedTool, type ListedTool } from '../../server/src/core/verify/listing';
import { applyPolicy, applyPolicyToVerification, isCalendarDate, parsePolicy, type Policy, type PolicedProblem, type PolicedVerdict } from '../../server/src/core/verify/policy';
import { type Problem, problem } from '../../server/src/core/problems';
import { connectorServers, ServerRegistry } from '../../server/src/core/verify/registry';
import { verifyConnector } from '../../server/src/core/verify/verify';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0); // 2026-12-01

function covered(text: string, found: Problem): string {
  return text.slice(found.span.offset, found.span.offset + found.span.length);
}

function drift(tool: string, server: string): Problem {
  return problem('TP400', { offset: 10, length: 5 }, `connector "${server}": tool "${tool}" on server "${server}" changed since it was pinned`, { data: { tool, server } });
}

describe('parsePolicy', () => {
  test('a well-formed policy becomes rules and ignores, with no problem', () => {
    const { policy, problems } = parsePolicy(`{
      // comments and trailing commas, as JSONC allows
      "rules": [ { "server": "memory", "tool": "read_graph", "severity": { "TP400": "warning" } }, ],
      "ignore": [ { "server": "notes_tools", "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2027-01-31" } ],
    }`, Date.now());
    assert.deepEqual(problems, []);
    assert.deepEqual(policy, {
      rules: [{ server: 'memory', tool: 'read_graph', severity: { TP400: 'warning' } }],
      ignore: [{ server: 'notes_tools', tool: 'add_numbers', codes: ['TP400'], reason: 'upstream fix pending', expires: '2027-01-31' }],
    });
  });

  test('a missing reason or expiry is a positioned TP104 and the ignore is left out', () => {
    const text = '{ "ignore": [ { "tool": "a", "codes": ["TP400"], "expires": "2027-01-31" }, { "tool": "b", "codes": ["TP400"], "reason": "r" } ] }';
    const { policy, problems } = parsePolicy(text, Date.now());
    assert.deepEqual(policy.ignore, []);
    assert.deepEqual(
      problems.map((found) => [found.code, covered(text, found), found.message]),
      [
        ['TP104', '{', '"ignore" in policy[0] is missing the required field "reason"'],
        ['TP104', '{', '"ignore" in policy[1] is missing the required field "expires"'],
      ],
    );
    assert.equal(problems[0]!.span.offset, text.indexOf('{ "tool": "a"'));
    assert.equal(problems[1]!.span.offset, text.indexOf('{ "tool": "b"'));
  });

  test('bad values are TP413 on the value: a date that is not a day, a code outside TP4xx, an unknown severity, an empty reason', () => {
    const text = `{
      "rules": [ { "severity": { "TP400": "fatal" } }, { "severity": { "TP206": "hint" } } ],
      "ignore": [
        { "codes": ["TP400"], "reason": "r", "expires": "2027-02-30" },
        { "codes": ["TP999"], "reason": "r", "expires": "2027-01-31" },
        { "codes": ["TP400"], "reason": "  ", "expires": "2027-01-31" },
        { "codes": [], "reason": "r", "expires": "2027-01-31" }
      ]
    }`;
    const { policy, problems } = parsePolicy(text, Date.now());
    assert.deepEqual(policy, { rules: [], ignore: [] });
    assert.deepEqual(
      problems.map((found) => [found.code, covered(text, found)]),
      [
        ['TP413', '"fatal"'],
        ['TP413', '"TP206"'],
        ['TP413', '"2027-02-30"'],
        ['TP413', '"TP999"'],
        ['TP413', '"  "'],
        ['TP413', '[]'],
      ],
    );
    assert.match(problems[2]!.message, /"expires" in ignore\[0\] must be a date written YYYY-MM-DD, found "2027-02-30"/);
  });

  test('garbage never throws: syntax errors, wrong types, a non-object root', () => {
    for (const text of ['', '{', '[]', '"x"', '{ "rules": 3, "ignore": {} }', '{ "ignore": [ 1, null, { "codes": "TP400" } ] }', '{ "rules": [ { "severity": { "TP400": 1 } } ] }', '\u0000\uffff']) {
      const { policy, problems } = parsePolicy(text, Date.now());
      assert.ok(Array.isArray(policy.rules) && Array.isArray(policy.ignore), text);
      if (text.trim().length > 0) assert.ok(problems.length > 0, `${JSON.stringify(text)} has a problem`);
    }
  });

  test('calendar dates are real days', () => {
    assert.equal(isCalendarDate('2028-02-29'), true);
    assert.equal(isCalendarDate('2027-02-29'), false);
    assert.equal(isCalendarDate('2027-1-31'), false);
  });
});

describe('applyPolicy', () => {
  const policy = (text: string): Policy => {
    const parsed = parsePolicy(text, Date.now());
    assert.deepEqual(parsed.problems, []);
    return parsed.policy;
  };

  test('a severity override changes the severity of the covered finding only, and says so', () => {
    const rules = policy('{ "rules": [ { "server": "memory", "tool": "read_graph", "severity": { "TP400": "warning" } } ] }');
    const [overridden, other, otherServer] = applyPolicy([drift('read_graph', 'memory'), drift('create_entities', 'memory'), drift('read_graph', 'other')], rules, NOW);
    assert.equal(overridden!.severity, 'warning');
    assert.match(overridden!.message, /\(severity warning \(not error\) by \.toolpin\/policy\.jsonc for tool "read_graph" on server "memory"\)$/);
    assert.deepEqual(overridden!.policy, { kind: 'severity', defaultSeverity: 'error', text: 'severity warning (not error) by .toolpin/policy.jsonc for tool "read_graph" on server "memory"' });
    assert.equal(other!.severity, 'error');
    assert.equal(other!.policy, undefined);
    assert.equal(otherServer!.severity, 'error');
  });

  test('the last covering rule wins; a rule without scope covers every finding of its code', () => {
    const rules = policy('{ "rules": [ { "severity": { "TP400": "information" } }, { "server": "memory", "severity": { "TP400": "warning" } } ] }');
    const result = applyPolicy([drift('read_graph', 'memory'), drift('x', 'other')], rules, NOW);
    assert.deepEqual(result.map((found) => found.severity), ['warning', 'information']);
  });

  test('an ignore before its date makes the finding information with the reason and date', () => {
    const ignores = policy('{ "ignore": [ { "server": "notes_tools", "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2026-12-01" } ] }');
    const [ignored] = applyPolicy([drift('add_numbers', 'notes_tools')], ignores, NOW);
    assert.equal(ignored!.severity, 'information');
    assert.ok(ignored!.message.endsWith('(ignored by .toolpin/policy.jsonc until 2026-12-01: upstream fix pending)'), ignored!.message);
    assert.deepEqual(ignored!.policy, { kind: 'ignored', defaultSeverity: 'error', until: '2026-12-01', reason: 'upstream fix pending', text: 'ignored by .toolpin/policy.jsonc until 2026-12-01: upstream fix pending' });
  });

  test('an expired ignore leaves the finding as it is and adds a TP412 error at its span', () => {
    const ignores = policy('{ "ignore": [ { "tool": "add_numbers", "codes": ["TP400"], "reason": "upstream fix pending", "expires": "2026-11-30" } ] }');
    const found = drift('add_numbers', 'notes_tools');
    const result = applyPolicy([found], ignores, NOW);
    assert.equal(result.length, 2);
    assert.deepEqual(result[0], found);
    assert.equal(result[1]!.code, 'TP412');
    assert.equal(result[1]!.severity, 'error');
    assert.deepEqual(result[1]!.span, found.span);
    assert.equal(result[1]!.message, 'the ignore of TP400 for tool "add_numbers" in .toolpin/policy.jsonc expired on 2026-11-30 (reason given: upstream fix pending); fix the finding, or renew the ignore with a new date after review');
  });

  test('an ignore covers only its codes; structure problems are never touched', () => {
    const ignores = policy('{ "ignore": [ { "codes": ["TP401"], "reason": "r", "expires": "2027-01-31" } ] }');
    const structure = problem('TP102', { offset: 0, length: 1 }, 'unknown key', { data: { key: 'x' } });
    const result = applyPolicy([drift('a', 'b'), structure], ignores, NOW);
    assert.deepEqual(result, [drift('a', 'b'), structure]);
  });
});

describe('applyPolicyToVerification on a real verification', () => {
  const TOOL = { name: 'add_numbers', description: 'Add two numbers.', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } };
  const text = JSON.stringify({ name: 'notes_tools', provider: 'mcp', providerConfig: { transport: { kind: 'stdio', command: 'node' }, toolsSnapshot: { add_numbers: `sha256:${'0'.repeat(64)}` } } });
  const model = analyzeConnector(text).model;
  const definitions = connectorServers('/w/notes.connector.json', model, '/w');
  const registry = new ServerRegistry(definitions);
  const verification = verifyConnector('/w/notes.connector.json', model, definitions, {
    registry,
    now: NOW,
    listingFor: () => ({ status: 'listed', listing: { tools: [readListedTool(TOOL) as ListedTool], malformedEntries: [], duplicateNames: [], pages: 1, incomplete: undefined, ttlMs: undefined }, listedAt: NOW }),
  });

  test('the verdict stays drifted and carries the note of its relaxed TP400', () => {
    assert.equal(verification.verdicts[0]!.state, 'drifted');
    const ignores = parsePolicy('{ "ignore": [ { "server": "notes_tools", "tool": "add_numbers", "codes": ["TP400"], "reason": "r", "expires": "2027-01-31" } ] }', Date.now()).policy;
    const result = applyPolicyToVerification(verification, ignores, NOW);
    const verdict = result.verdicts[0] as PolicedVerdict;
    assert.equal(verdict.state, 'drifted');
    assert.equal(verdict.live, verification.verdicts[0]!.live, 'the live pin is reported as it is: nothing is re-pinned');
    assert.equal(verdict.policy?.kind, 'ignored');
    const drifted = result.problems.find((found) => found.code === 'TP400') as PolicedProblem;
    assert.equal(drifted.severity, 'information');
    assert.deepEqual(drifted.data, verification.problems.find((found) => found.code === 'TP400')!.data, 'the re-pin payload is unchanged');
  });

  test('an empty policy returns the verification untouched', () => {
    assert.equal(applyPolicyToVerification(verification, { rules: [], ignore: [] }, NOW), verification);
  });
});
