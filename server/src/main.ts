/**
 * The language server's process entry. The transport (`--stdio`, `--node-ipc`, `--socket=N`) is
 * chosen by vscode-languageserver from the command line, as every LSP client expects.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './server';

startServer(createConnection(ProposedFeatures.all));
