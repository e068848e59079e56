/**
 * Issue 22 §5: a repository's policy cannot silence a security-class finding for ever. An ignore
 * of TP407 must expire within 90 days of the day the policy is read; a later expiry is refused
 * with a positioned TP413 naming the expiry, and the finding is reported as if not ignored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyPolicy, parsePolicy } from '../../server/src/core/verify/policy';
import { problem } from '../../server/src/core/problems';

const NOW = Date.UTC(2026, 11, 6);

function policyWith(codes: string[], expires: string): string {
  return `{ "ignore": [ { "tool": "add_numbers", "codes": ${JSON.stringify(codes)}, "reason": "reviewed with the vendor", "expires": "${expires}" } ] }`;
}

const poisoned = problem('TP407', { offset: 3, length: 10 }, 'tool "add_numbers" changed and its rewritten text adds cues of tool poisoning', { data: { tool: 'add_numbers', server: 'notes' } });

test('an ignore of TP407 expiring after 90 days is refused at its expiry, and TP407 stays an error', () => {
  const text = policyWith(['TP407'], '2027-12-31');
  const { policy, problems } = parsePolicy(text, NOW);
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.code, 'TP413');
  assert.equal(text.slice(problems[0]!.span.offset, problems[0]!.span.offset + problems[0]!.span.length), '"2027-12-31"');
  assert.match(problems[0]!.message, /security-class code TP407 in ignore\[0\] expires on 2027-12-31, more than 90 days ahead: it must expire by 2027-03-06/);
  assert.equal(policy.ignore.length, 0);
  assert.equal(applyPolicy([poisoned], policy, NOW)[0]!.severity, 'error');
});

test('within 90 days it is honoured; other codes keep any expiry', () => {
  const within = parsePolicy(policyWith(['TP407'], '2027-03-06'), NOW);
  assert.deepEqual(within.problems, []);
  assert.equal(applyPolicy([poisoned], within.policy, NOW)[0]!.severity, 'information');
  assert.deepEqual(parsePolicy(policyWith(['TP400'], '2030-01-01'), NOW).problems, []);
});
