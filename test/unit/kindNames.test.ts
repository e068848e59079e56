/**
 * Outside server/src/core/documents/, at most two shipped files name a document kind (issue 24):
 * everything else asks the kinds table (core/documents/kinds/registry.ts) or the accessors of
 * core/documents/documents.ts. A file names a kind when a string literal in its code (not a comment,
 * not a sentence of a message) is a kind's id compared with `===`, `!==` or in a `case`, or a kind's
 * file name or glob. The two that may: core/verify/registry.ts (the origin of servers defined by a
 * document's connector instances) and client/src/documentSelector.ts (the client may import nothing
 * of the server; test/unit/kindsManifest.test.ts holds it to the table).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { documentKinds } from '../../server/src/core/documents/kinds/registry';

const root = path.resolve(__dirname, '..', '..', '..');
const ALLOWED = ['client/src/documentSelector.ts', 'server/src/core/verify/registry.ts'];
/** The file names of the kinds, and the fragments earlier code wrote them with. */
const FILE_NAME = /\.blueprint\.|\.connector\.|objectstack\.json|mcp\.json|\.jsonl\b|policy\.jsonc|json\[c\]/;

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFilesUnder(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The literals of `text` that name a kind, as `line:literal`. */
export function kindNamesIn(text: string, ids: ReadonlySet<string>): string[] {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const parent = node.parent;
      const compared = (ts.isBinaryExpression(parent) && (parent.operatorToken.kind === ts.SyntaxKind.EqualsEqualsEqualsToken || parent.operatorToken.kind === ts.SyntaxKind.ExclamationEqualsEqualsToken)) || ts.isCaseClause(parent);
      const fileName = FILE_NAME.test(node.text) && !/\s\w/.test(node.text);
      if ((compared && ids.has(node.text)) || fileName) found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}:${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('the scan finds a kind compared by name and a kind file name, and not a sentence', () => {
  const ids = new Set(['blueprint', 'source']);
  assert.deepEqual(kindNamesIn("if (analysis.kind === 'source') x();\nconst glob = '**/*.jsonl';\nconst text = 'add a connector, .vscode/mcp.json or .mcp.json';\n// 'blueprint' === kind\n", ids), ['1:source', '2:**/*.jsonl']);
});

test('outside core/documents/, only the two allowed files name a kind', () => {
  const ids = new Set(documentKinds().map((kind) => kind.id));
  const files = [...tsFilesUnder(path.join(root, 'server', 'src')), ...tsFilesUnder(path.join(root, 'client', 'src'))];
  const naming = files
    .map((file) => path.relative(root, file).split(path.sep).join('/'))
    .filter((file) => !file.startsWith('server/src/core/documents/'))
    .filter((file) => kindNamesIn(readFileSync(path.join(root, file), 'utf8'), ids).length > 0)
    .sort();
  assert.ok(naming.length <= 2);
  assert.deepEqual(naming, ALLOWED);
});
