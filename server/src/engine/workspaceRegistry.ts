/**
 * Builds the server registry of a workspace folder from its files: the connector documents Toolpin
 * analyzed, the server lists of the folder (`.vscode/mcp.json`, `.mcp.json`: core/documents/kinds/)
 * and the user-level servers. File reading is injected so the language server can prefer open
 * editor buffers over the disk.
 */
import * as path from 'node:path';
import type { ConnectorModel } from '../core/documents/connector';
import { serverListKinds } from '../core/documents/kinds/registry';
import { connectorServers, readMcpJsonServers, ServerRegistry, type ServerDefinition, type VariableContext } from '../core/verify/registry';

export interface RegistryInputs {
  readonly workspaceFolder: string;
  /** Connector documents of this folder, already analyzed. */
  readonly connectors: ReadonlyArray<{ readonly path: string; readonly model: ConnectorModel }>;
  /**
   * Server definitions of connector documents made earlier (`connectorServers`) and already in
   * path order; they come before those of `connectors`. The language server keeps them between
   * builds, so that a server keeps its identity (and its listing) and a build costs no re-reading.
   */
  readonly connectorDefinitions?: readonly ServerDefinition[];
  /** Reads a file, or undefined when it does not exist or cannot be read. */
  readonly readFile: (file: string) => Promise<string | undefined>;
  /** User-level servers (an mcp.json-style `servers` object), e.g. from an editor setting. */
  readonly userServers?: unknown;
  readonly variables: Omit<VariableContext, 'workspaceFolder'>;
}

export async function buildWorkspaceRegistry(inputs: RegistryInputs): Promise<ServerRegistry> {
  const context: VariableContext = { ...inputs.variables, workspaceFolder: inputs.workspaceFolder };
  const definitions: ServerDefinition[] = [...(inputs.connectorDefinitions ?? [])];
  for (const connector of [...inputs.connectors].sort((a, b) => a.path.localeCompare(b.path))) {
    definitions.push(...connectorServers(connector.path, connector.model, inputs.workspaceFolder));
  }
  // A folder that is not a local path (the folder of a git: or vscode-vfs: document) has no
  // mcp.json files to read: a relative "path" would be read from the process's current folder.
  if (!path.isAbsolute(inputs.workspaceFolder)) return new ServerRegistry(definitions);
  for (const list of serverListKinds()) {
    const file = path.join(inputs.workspaceFolder, ...list.location);
    const text = await inputs.readFile(file);
    if (text !== undefined) definitions.push(...readMcpJsonServers(text, list.serversKey, { kind: list.origin, file }, context));
  }
  if (inputs.userServers && typeof inputs.userServers === 'object') {
    definitions.push(...readMcpJsonServers(JSON.stringify({ servers: inputs.userServers }), 'servers', { kind: 'user-setting' }, context));
  }
  return new ServerRegistry(definitions);
}
