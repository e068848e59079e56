/**
 * The commands that need the engine, the MCP client or the language server: everything of the CLI
 * but `hash`, `--version` and the help. The build bundles this module into dist/commands.js, which
 * dist/cli.js loads only when one of these commands runs (server/src/cli/main.ts), so that
 * `toolpin hash` starts about as fast as Node itself. dist/commands.js is also the editor's
 * language server: VS Code starts `dist/cli.js lsp --node-ipc`, other editors `toolpin lsp --stdio`.
 */

export { checkCommand, checkWorkspaceFolder } from './checkCommand';
export { historyCommand } from './historyCommand';
export { pinCommand } from './pinCommand';
export { trustCommand } from './trustCommand';
export { useWorkspaceSourceNames } from '../io/sourceNamesFile';

/**
 * The language server's process entry (server/src/main.ts): `toolpin lsp`. Loaded only when that
 * command runs: `check`, `pin` and the others then carry neither the server nor its LSP and
 * settings libraries (about 12 MiB and a tenth of a second of a cold `toolpin check`, issue 13).
 */
export function startLanguageServer(transport: 'stdio' | 'node-ipc'): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred on purpose, as said above
  const entry: typeof import('../main') = require('../main');
  entry.startLanguageServer(transport);
}
export { endProcessTreesOnSignals } from '../mcp/processTree';
