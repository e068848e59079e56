/**
 * Helpers for data-driven check tests: run the analysis of one document and describe each problem
 * by its code and the exact text its span covers, so a test states both what and where.
 */
import { analyzeDocument, type DocumentKind } from '../../server/src/core/documents/documents';

export interface SeenProblem {
  code: string;
  covers: string;
}

export function problemsOf(kind: DocumentKind, text: string): SeenProblem[] {
  return analyzeDocument(kind, text).problems.map((found) => ({
    code: found.code,
    covers: text.slice(found.span.offset, found.span.offset + found.span.length),
  }));
}

export function messagesOf(kind: DocumentKind, text: string): string[] {
  return analyzeDocument(kind, text).problems.map((found) => `${found.code} ${found.message}`);
}

/** A valid blueprint with one pinned mcp.invoke step; tests derive broken variants from it. */
export function blueprintText(steps: string, extraTop = ''): string {
  return `{
  // a comment, as JSONC allows
  "blueprint": "triage-inbound-issue",
  "formatVersion": 1,${extraTop}
  "steps": [${steps}],
}`;
}

export const PINNED_STEP = `{
      "id": "open-issue",
      "effect": "mcp.invoke",
      "input": {
        "toolName": "create_issue",
        "expectedSchemaHash": "fnv1a64:8465e642361d6375",
        "arguments": { "title": "Inbound: {{event.subject}}", "token": { "$secret": "GITHUB_TOKEN" } }
      },
      "on": { "schemaDrift": "repair", "toolNotFound": "notify" }
    },
    { "id": "repair", "effect": "notify.owner" },
    { "id": "notify", "effect": "notify.owner" }`;
