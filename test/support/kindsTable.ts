/**
 * The table of docs/document-kinds.md, rendered from the kinds registry. test/unit/kindsManifest.test.ts
 * compares the page with it; after a build, `node -e "console.log(require('./out/test/support/kindsTable.js').renderKindsTable())"`
 * prints it.
 */
import { documentKinds } from '../../server/src/core/documents/kinds/registry';

/** The table of docs/document-kinds.md, rendered from the registry (the page holds it between the markers). */
export function renderKindsTable(): string {
  const code = (items: readonly string[]): string => (items.length === 0 ? '—' : items.map((item) => `\`${item}\``).join(', '));
  const rows = documentKinds().map((kind) => `| \`${kind.id}\` | ${kind.role} | ${kind.title} | ${code(kind.patterns)} | ${code(kind.watchedFiles)} | ${code(kind.settings.map((name) => `toolpin.${name}`))} |`);
  return ['| Kind | Role | What | Files | Watched | Settings |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}
