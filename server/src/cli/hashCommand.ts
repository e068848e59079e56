/**
 * `toolpin hash <file|->`: prints the schema pin and the tool pin of each MCP tool in a file (or
 * standard input) holding one tool, an array of tools, or a `tools/list` result.
 *
 * `--profile mcp-pin` prints mcp-pin's hashes instead (Tool definition hash v1, core/pins/mcpPin.ts):
 * each whole definition's hash, the listing's set hash and, for an `initialize` result holding
 * `instructions`, the instructions hash; `--profile warden` prints mcp-warden's per-field hashes of
 * each tool (core/pins/warden.ts: `description_hash`, `input_schema_hash`, `capabilities`, the
 * skeleton's digest and `entry_digest`, as a `warden.lock` records them); `--profile all` prints
 * every profile. A file with a repeated
 * member name is refused before anything is hashed (TP101), as both definitions require.
 *
 * Exit status: 0 every tool hashed; 1 some entry could not be read or hashed (the others are still
 * printed); 2 the input could not be read or is not JSON.
 */
import { CanonicalJsonError } from '../core/pins/canonicalJson';
import { parseJsonDocument, valueOf } from '../core/json/jsonDocument';
import { LineIndex } from '../core/json/lineIndex';
import { errorMessage } from '../core/json/values';
import { schemaPin, toolPin } from '../core/pins/pins';
import { mcpPinDefinitionHash, mcpPinInstructionsHash, mcpPinSetHash } from '../core/pins/mcpPin';
import { wardenHash, wardenToolEntry, type WardenToolEntry } from '../core/pins/warden';
import { isRecord } from '../core/json/values';
import { readTools } from '../core/verify/toolList';
import type { CliIo } from './io';

export interface HashRow {
  name: string;
  /** Null when the tool has no inputSchema to pin. */
  schemaPin: string | null;
  toolPin: string;
}

/** The hash definitions `toolpin hash --profile` prints: Toolpin's pins, mcp-pin's v1 hashes, or both. */
export type HashProfile = 'toolpin' | 'mcp-pin' | 'warden' | 'all';
export const HASH_PROFILES: readonly HashProfile[] = ['toolpin', 'mcp-pin', 'warden', 'all'];

/** mcp-pin's hashes of a listing: per whole definition, the set, and the instructions when given. */
export interface McpPinHashes {
  profile: 'mcp-pin';
  tools: Array<{ name: string; definitionHash: string }>;
  setHash: string | null;
  setHashError?: string;
  instructionsHash: string | null;
}

/** The definitions as sent (every member), from one tool, an array, a tools/list or an initialize-with-tools result. */
function rawDefinitions(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (isRecord(value) && Array.isArray(value.tools)) return value.tools;
  return isRecord(value) && 'name' in value ? [value] : [];
}

function mcpPinHashes(value: unknown): McpPinHashes {
  const definitions = rawDefinitions(value);
  const tools = definitions.filter(isRecord).filter((definition) => typeof definition.name === 'string').map((definition) => ({ name: definition.name as string, definitionHash: mcpPinDefinitionHash(definition) }));
  const set = mcpPinSetHash(definitions);
  const instructions = isRecord(value) && typeof value.instructions === 'string' ? value.instructions : null;
  return {
    profile: 'mcp-pin',
    tools,
    setHash: 'setHash' in set ? set.setHash : null,
    ...('error' in set ? { setHashError: set.error } : {}),
    instructionsHash: mcpPinInstructionsHash(instructions),
  };
}

function printMcpPin(io: CliIo, hashes: McpPinHashes): void {
  const width = Math.max(4, ...hashes.tools.map((row) => row.name.length));
  for (const row of hashes.tools) io.stdout(`${row.name.padEnd(width)}  mcp-pin definition ${row.definitionHash}\n`);
  io.stdout(`${'(set)'.padEnd(width)}  mcp-pin set        ${hashes.setHash ?? `(none: ${hashes.setHashError ?? 'no listing'})`}\n`);
  if (hashes.instructionsHash !== null) io.stdout(`${'(instructions)'.padEnd(width)}  mcp-pin instructions ${hashes.instructionsHash}\n`);
}

/** mcp-warden's entry of each tool with a string name, as a `warden.lock` records it. */
function wardenEntries(value: unknown): WardenToolEntry[] {
  return rawDefinitions(value)
    .filter(isRecord)
    .flatMap((definition) => (typeof definition.name === 'string' ? [wardenToolEntry({ name: definition.name, description: definition.description, inputSchema: definition.inputSchema })] : []));
}

function printWarden(io: CliIo, entries: readonly WardenToolEntry[]): void {
  const width = Math.max(4, ...entries.map((entry) => entry.name.length));
  for (const entry of entries) {
    const pad = ' '.repeat(width);
    io.stdout(`${entry.name.padEnd(width)}  warden description_hash  ${entry.description_hash}\n`);
    io.stdout(`${pad}  warden input_schema_hash ${entry.input_schema_hash}\n`);
    io.stdout(`${pad}  warden capabilities      ${entry.capabilities.length > 0 ? entry.capabilities.join(', ') : '(none)'}\n`);
    io.stdout(`${pad}  warden schema_skeleton   ${wardenHash(entry.schema_skeleton)} (${Object.keys(entry.schema_skeleton.props).length} paths)\n`);
    io.stdout(`${pad}  warden entry_digest      ${entry.entry_digest}\n`);
  }
}

export async function hashCommand(io: CliIo, args: { source: string; format: 'text' | 'json'; profile?: HashProfile }): Promise<number> {
  const profile = args.profile ?? 'toolpin';
  let text: string;
  const label = args.source === '-' ? '<stdin>' : args.source;
  try {
    text = args.source === '-' ? await io.readStdin() : await io.readFile(args.source);
  } catch (error) {
    io.stderr(`toolpin hash: cannot read ${label}: ${errorMessage(error)}\n`);
    return 2;
  }
  const document = parseJsonDocument(text);
  if (document.problems.length > 0 || !document.root) {
    const lines = new LineIndex(text);
    for (const found of document.problems) {
      const position = lines.positionAt(found.span.offset);
      io.stderr(`${label}:${position.line + 1}:${position.character + 1}: error ${found.code}: ${found.message}\n`);
    }
    return 2;
  }
  const root = valueOf(document.root);
  if (profile === 'mcp-pin') {
    const hashes = mcpPinHashes(root);
    if (args.format === 'json') io.stdout(`${JSON.stringify(hashes, null, 2)}\n`);
    else printMcpPin(io, hashes);
    return hashes.setHash === null ? 1 : 0;
  }
  if (profile === 'warden') {
    const entries = wardenEntries(root);
    if (args.format === 'json') io.stdout(`${JSON.stringify({ profile: 'warden', tools: entries }, null, 2)}\n`);
    else printWarden(io, entries);
    return entries.length > 0 ? 0 : 1;
  }
  const { tools, problems } = readTools(root);
  let status = problems.length > 0 ? 1 : 0;
  for (const found of problems) {
    io.stderr(`${label}: ${found.path || '/'}: ${found.message}\n`);
  }
  if (tools.length === 0 && problems.length > 0) return 2;

  const rows: HashRow[] = [];
  for (const tool of tools) {
    try {
      rows.push({
        name: tool.name,
        schemaPin: tool.inputSchema === undefined ? null : schemaPin(tool.inputSchema),
        toolPin: toolPin(tool),
      });
    } catch (error) {
      if (!(error instanceof CanonicalJsonError)) throw error;
      io.stderr(`${label}: tool "${tool.name}": ${error.message}\n`);
      status = 1;
    }
  }
  if (profile === 'all') {
    const hashes = mcpPinHashes(root);
    if (args.format === 'json') {
      io.stdout(`${JSON.stringify({ toolpin: rows, mcpPin: hashes, warden: { profile: 'warden', tools: wardenEntries(root) } }, null, 2)}\n`);
      return status;
    }
    const width = Math.max(4, ...rows.map((row) => row.name.length));
    for (const row of rows) io.stdout(`${row.name.padEnd(width)}  ${row.schemaPin ?? '(no inputSchema)'}  ${row.toolPin}\n`);
    printMcpPin(io, hashes);
    printWarden(io, wardenEntries(root));
    return hashes.setHash === null ? 1 : status;
  }
  if (args.format === 'json') {
    io.stdout(`${JSON.stringify(rows, null, 2)}\n`);
  } else {
    const width = Math.max(4, ...rows.map((row) => row.name.length));
    for (const row of rows) {
      io.stdout(`${row.name.padEnd(width)}  ${row.schemaPin ?? '(no inputSchema)'}  ${row.toolPin}\n`);
    }
  }
  return status;
}
