/**
 * "Re-pin All Drifted in File" is offered wherever Toolpin reads pins (issue 26: the command
 * palette hid it in TypeScript files, where defineConnector and mcpInvoke$ pins are re-pinned
 * too). The `when` clauses of package.json are read as VS Code reads this simple form: any of
 * `editorLangId == <language>` alternatives.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** The languages of the client's document selector (client/src/languageClient.ts) that hold pins. */
const PIN_LANGUAGES = ['toolpin-blueprint', 'toolpin-connector', 'typescript', 'typescriptreact', 'javascript', 'javascriptreact'];

function languagesOf(when: string): string[] {
  return when.split('||').map((alternative) => {
    const match = /^\s*editorLangId == ([\w-]+)\s*$/.exec(alternative);
    assert.ok(match, `an alternative this test cannot read: "${alternative}"`);
    return match[1]!;
  });
}

for (const menu of ['commandPalette', 'editor/context']) {
  test(`${menu}: Re-pin All Drifted in File is shown in every language that holds pins`, () => {
    const entry = (manifest.contributes.menus[menu] as Array<{ command: string; when: string }>).find((item) => item.command === 'toolpin.repinFile');
    assert.ok(entry, `${menu} has toolpin.repinFile`);
    assert.deepEqual(languagesOf(entry.when).sort(), [...PIN_LANGUAGES].sort());
  });
}
