/**
 * The repository's policy, `.toolpin/policy.jsonc` (severity overrides and expiring ignores;
 * core/verify/policy.ts, engine/policyFile.ts). Its own mistakes (TP413) are shown where it is
 * edited, and a change re-presents every finding of its folder.
 */
import { endsWithSegments, type PolicyKind } from './kind';

/** The policy file's path from a workspace folder, by segments (core/verify/policy.ts `POLICY_FILE`). */
export const POLICY_LOCATION: readonly string[] = ['.toolpin', 'policy.jsonc'];

export const policyKind: PolicyKind = {
  id: 'policyFile',
  role: 'policy',
  title: "The repository's policy: severity overrides and expiring ignores",
  patterns: ['.toolpin/policy.jsonc'],
  examples: ['.toolpin/policy.jsonc'],
  recognises: (name) => endsWithSegments(name, POLICY_LOCATION),
  watchedFiles: ['**/.toolpin/policy.jsonc'],
  selectors: [{ scheme: 'file', pattern: '**/.toolpin/policy.jsonc' }],
  languages: [],
  activationEvents: [],
  jsonValidation: { fileMatch: ['**/.toolpin/policy.jsonc'], url: './schemas/policy.schema.json' },
  settings: [],
};
