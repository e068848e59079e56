/**
 * The language server's process entry. The transport (`--stdio`, `--node-ipc`, `--socket=N`) is
 * chosen by vscode-languageserver from the command line, as every LSP client expects.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { endProcessTreesOnSignals } from './mcp/processTree';
import { startServer } from './server';

// A signal ends every server this process started before it exits (mcp/processTree.ts); the
// other exit paths (the client's exit notification, its process gone) run the exit hook.
endProcessTreesOnSignals();
startServer(createConnection(ProposedFeatures.all));
