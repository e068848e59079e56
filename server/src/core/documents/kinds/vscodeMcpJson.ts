/**
 * VS Code's MCP server list of a workspace folder, `.vscode/mcp.json` (its `servers` object): the
 * registry's second source after connector instances (docs/formats.md §5, core/verify/registry.ts).
 * Its changes on disk make the folder's registry be built again.
 */
import { endsWithSegments, type ServerListKind } from './kind';

const LOCATION = ['.vscode', 'mcp.json'];

export const vscodeMcpJsonKind: ServerListKind = {
  id: 'vscodeMcpJson',
  role: 'servers',
  title: "VS Code's MCP server list of a workspace folder",
  patterns: ['.vscode/mcp.json'],
  examples: ['.vscode/mcp.json'],
  recognises: (name) => endsWithSegments(name, LOCATION),
  watchedFiles: ['**/.vscode/mcp.json'],
  selectors: [],
  languages: [],
  activationEvents: [],
  settings: [],
  location: LOCATION,
  serversKey: 'servers',
  origin: 'vscode-mcp-json',
};
