/**
 * Commands, as a table of small factories: each entry names a command contributed in package.json
 * and builds its handler from what the extension holds.
 */
import * as vscode from 'vscode';

export interface CommandContext {
  readonly outputChannel: vscode.OutputChannel;
}

const COMMANDS: Record<string, (context: CommandContext) => (...args: unknown[]) => unknown> = {
  'toolpin.showOutput': ({ outputChannel }) => () => outputChannel.show(true),
};

export function registerCommands(extensionContext: vscode.ExtensionContext, context: CommandContext): void {
  for (const [id, factory] of Object.entries(COMMANDS)) {
    extensionContext.subscriptions.push(vscode.commands.registerCommand(id, factory(context)));
  }
}
