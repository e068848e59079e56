// Connectors written in code (docs/formats.md "Source files"): Toolpin reads the defineConnector
// calls of this module as it reads *.connector.json files. The MCP connector below is the
// rug-pull server again, pinned in code when it was first connected; it has changed since.
import { defineConnector } from '@objectstack/spec/integration';

const crmBase = (path: string): string => `https://crm.example.com${path}`;

/** A REST connector: Toolpin reads only MCP connectors, so its computed URL is left alone. */
export const crmRest = defineConnector({
  name: 'crm_rest',
  provider: 'rest',
  providerConfig: { baseUrl: crmBase('/v2') },
});

/** The notes server, from code: one pin still verifies, one has drifted. */
export const notesCode = defineConnector({
  name: 'notes_code',
  label: 'Notes tools (MCP, from code)',
  provider: 'mcp',
  providerConfig: {
    transport: { kind: 'stdio', command: 'node', args: ['servers/bundled/rugpull-server.mjs'] },
    include: ['echo_upper', 'reverse_text'],
    toolsSnapshot: {
      echo_upper: 'sha256:e836896e83a3d8284258b1c6d416de0b8c6e00b7dfc8153334522c587023f454',
      reverse_text: `sha256:aa73d3eba7293fb00e9847ef4d7723d9b6676e206a3591de67b61431b0a71d4a`, // re-pins keep the backticks
    },
  },
  auth: { type: 'none' },
});

export const allConnectors = [crmRest, notesCode];
