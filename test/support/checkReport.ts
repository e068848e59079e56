/**
 * The one way the tests read a `toolpin check --format json` report: parsed, then validated
 * against the published schema (schemas/check-report.schema.json, version 1) with Ajv in strict
 * mode, and held to what this build always writes (each problem's `securitySeverity`, the
 * summary's `security`). A report that does not match fails the test that produced it, naming
 * every mismatch, so every CLI test that reads a report also checks the schema (issue 25).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';

const root = path.resolve(__dirname, '..', '..', '..');
const validate = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(path.join(root, 'schemas', 'check-report.schema.json'), 'utf8')));

/** The report of `stdout`, validated; throws with each schema error when it does not match. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each test reads the fields it asserts, as JSON.parse would give them.
export function parseCheckReport(stdout: string): any {
  const report: unknown = JSON.parse(stdout);
  if (!validate(report)) throw new Error(`the JSON report does not match schemas/check-report.schema.json:\n${(validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`).join('\n')}`);
  const { files, summary } = report as { files: Array<{ problems: Array<Record<string, unknown>> }>; summary: Record<string, unknown> };
  if (typeof summary.security !== 'number') throw new Error('the JSON report has no summary.security');
  for (const file of files) for (const found of file.problems) if (!('securitySeverity' in found)) throw new Error(`problem ${String(found.code)} has no securitySeverity`);
  return report;
}
