/**
 * `toolpin hash <file|->`: prints the schema pin and the tool pin of each MCP tool in a file (or
 * standard input) holding one tool, an array of tools, or a `tools/list` result.
 *
 * Exit status: 0 every tool hashed; 1 some entry could not be read or hashed (the others are still
 * printed); 2 the input could not be read or is not JSON.
 */
import { CanonicalJsonError } from '../core/pins/canonicalJson';
import { parseJsonDocument, valueOf } from '../core/json/jsonDocument';
import { LineIndex } from '../core/json/lineIndex';
import { errorMessage } from '../core/json/values';
import { schemaPin, toolPin } from '../core/pins/pins';
import { readTools } from '../core/verify/toolList';
import type { CliIo } from './io';

export interface HashRow {
  name: string;
  /** Null when the tool has no inputSchema to pin. */
  schemaPin: string | null;
  toolPin: string;
}

export async function hashCommand(io: CliIo, args: { source: string; format: 'text' | 'json' }): Promise<number> {
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
  const { tools, problems } = readTools(valueOf(document.root));
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
