/**
 * The MCP server list at the root of a workspace folder, `.mcp.json` (its `mcpServers` object, as
 * other MCP clients write it): the registry's third source (docs/formats.md §5,
 * core/verify/registry.ts). Its changes on disk make the folder's registry be built again.
 */
import { endsWithSegments, type ServerListKind } from './kind';

const LOCATION = ['.mcp.json'];

export const dotMcpJsonKind: ServerListKind = {
  id: 'dotMcpJson',
  role: 'servers',
  title: 'The MCP server list at the root of a workspace folder',
  patterns: ['.mcp.json'],
  examples: ['.mcp.json'],
  recognises: (name) => endsWithSegments(name, LOCATION),
  watchedFiles: ['**/.mcp.json'],
  selectors: [],
  languages: [],
  activationEvents: [],
  settings: [],
  location: LOCATION,
  serversKey: 'mcpServers',
  origin: 'mcp-json',
};
