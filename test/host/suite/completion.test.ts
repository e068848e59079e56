/**
 * Completion in the real workbench (issue 14): accepting the preselected suggestion inside an
 * empty string must leave valid JSONC. VS Code's JSON language features deliver their value items
 * with an insert/replace range pair; in VS Code's default "insert" mode the string's closing quote
 * survived (`"mcp.invoke""`). package.json gives both Toolpin languages replace mode, as the JSON
 * extension does for json and jsonc. The edits go through the suggest widget itself
 * (triggerSuggest, then acceptSelectedSuggestion), so the editor applies them as a user's Enter does.
 */
import * as assert from 'node:assert/strict';
import { parse, type ParseError } from 'jsonc-parser';
import * as vscode from 'vscode';
import { hostEnv, LANGUAGE_ID, openAndActivate, pollUntil, workspaceFile } from './helpers';

const SCRATCH = 'completion-scratch.blueprint.jsonc';

function scratch(input: string, effect = '"mcp.invoke"'): string {
  return `{
  "blueprint": "scratch",
  "formatVersion": 1,
  "steps": [
    { "id": "a", "effect": ${effect}, "input": ${input} }
  ]
}
`;
}

function syntaxErrors(text: string): ParseError[] {
  const errors: ParseError[] = [];
  parse(text, errors, { allowTrailingComma: false, disallowComments: false });
  return errors;
}

/**
 * Puts the cursor `delta` characters into `needle`, waits until the providers offer `expected`,
 * opens the suggest widget and accepts its selection.
 */
async function acceptSuggestionAt(editor: vscode.TextEditor, needle: string, delta: number, expected: string): Promise<string> {
  const before = editor.document.getText();
  const at = editor.document.positionAt(before.indexOf(needle) + delta);
  await pollUntil(
    async () => {
      const list = await vscode.commands.executeCommand<vscode.CompletionList>('vscode.executeCompletionItemProvider', editor.document.uri, at);
      return list.items.some((item) => (typeof item.label === 'string' ? item.label : item.label.label) === expected);
    },
    20_000,
    `${expected} to be offered at ${needle}`,
  );
  editor.selection = new vscode.Selection(at, at);
  await vscode.commands.executeCommand('editor.action.triggerSuggest');
  // The widget fills asynchronously: accept until the document changes.
  await pollUntil(
    async () => {
      await vscode.commands.executeCommand('acceptSelectedSuggestion');
      return editor.document.getText() !== before;
    },
    20_000,
    `a suggestion to be accepted at ${needle}`,
  );
  return editor.document.getText();
}

describe('completion in the workbench', () => {
  let editor: vscode.TextEditor;

  before(async () => {
    await vscode.workspace.fs.writeFile(workspaceFile(SCRATCH), Buffer.from(scratch('{ "toolName": "t" }')));
    const document = await openAndActivate(SCRATCH);
    assert.equal(document.languageId, LANGUAGE_ID);
    editor = await vscode.window.showTextDocument(document);
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await vscode.workspace.fs.delete(workspaceFile(SCRATCH));
  });

  async function reset(text: string): Promise<void> {
    await editor.edit((edit) => edit.replace(new vscode.Range(editor.document.positionAt(0), editor.document.positionAt(editor.document.getText().length)), text));
  }

  it('both Toolpin languages use replace-mode suggestions', () => {
    for (const languageId of ['toolpin-blueprint', 'toolpin-connector']) {
      assert.equal(vscode.workspace.getConfiguration('editor', { languageId }).get('suggest.insertMode'), 'replace', languageId);
    }
  });

  it("the schema's effect example, accepted inside an empty string, leaves valid JSONC", async () => {
    await reset(scratch('{ "toolName": "t" }', '""'));
    const text = await acceptSuggestionAt(editor, '"effect": ""', '"effect": "'.length, '"mcp.invoke"');
    assert.deepEqual(syntaxErrors(text), [], text);
    assert.match(text, /"effect": "mcp\.invoke",/);
  });

  (hostEnv.trust === 'trusted' ? it : it.skip)("Toolpin's live tool name, accepted inside a partly typed string, leaves valid JSONC", async () => {
    await reset(scratch('{ "server": "demo", "toolName": "ad" }'));
    const text = await acceptSuggestionAt(editor, '"toolName": "ad"', '"toolName": "ad'.length, 'add_numbers');
    assert.deepEqual(syntaxErrors(text), [], text);
    assert.match(text, /"toolName": "add_numbers" \}/);
  });
});
