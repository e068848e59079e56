/**
 * Completion from the live inventory: tool names in `toolName`, `include` entries and
 * `toolsSnapshot` keys; server names in `server`; the live pin as the value of
 * `expectedSchemaHash` or of a `toolsSnapshot` entry.
 */
import { getLocation } from 'jsonc-parser';
import { type CompletionItem, CompletionItemKind, type Connection, type TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { BlueprintModel } from '../core/blueprint';
import type { ConnectorModel } from '../core/connector';
import { nestsTooDeep } from '../core/jsonDocument';
import type { ListedTool } from '../core/listing';
import { schemaPin, toolPin } from '../core/pins';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { runSafe } from '../util/runSafe';
import { uriToPath } from '../util/uris';

function toolItem(tool: ListedTool, server: string, quoted: boolean): CompletionItem {
  return {
    label: tool.name,
    kind: CompletionItemKind.Function,
    detail: `tool on ${server}`,
    documentation: tool.description,
    insertText: quoted ? tool.name : JSON.stringify(tool.name),
  };
}

function pinItem(pin: string, detail: string, quoted: boolean): CompletionItem {
  return { label: pin, kind: CompletionItemKind.Value, detail, insertText: quoted ? pin : JSON.stringify(pin), preselect: true };
}

function safePin(compute: () => string): string | undefined {
  try {
    return compute();
  } catch {
    return undefined;
  }
}

export function registerCompletion(connection: Connection, documents: TextDocuments<TextDocument>, workspace: LiveWorkspace): void {
  connection.onCompletion((params, token) =>
    runSafe<CompletionItem[]>(connection.console, 'completion', token, [], async () => {
      const document = documents.get(params.textDocument.uri);
      if (!document) return [];
      return computeCompletion(document, document.offsetAt(params.position), workspace);
    }),
  );
}

export async function computeCompletion(document: TextDocument, offset: number, workspace: LiveWorkspace): Promise<CompletionItem[]> {
  const file = uriToPath(document.uri);
  const text = document.getText();
  const analysis = workspace.setOpenDocument(file, text) ?? workspace.analysis(file);
  if (!analysis || nestsTooDeep(text)) return [];
  const location = getLocation(text, offset);
  const path = location.path;
  const last = path[path.length - 1];
  const inString = location.previousNode?.type === 'string';
  const servers = await workspace.servers(file);
  const listed = (name?: string): Array<{ server: string; tools: ListedTool[] }> =>
    servers
      .filter((entry) => !name || entry.definition.name === name)
      .flatMap((entry) => (entry.listing?.status === 'listed' ? [{ server: entry.definition.name, tools: entry.listing.listing.tools }] : []));

  if (analysis.kind === 'blueprint') {
    if (location.isAtPropertyKey) return [];
    const stepIndex = path[0] === 'steps' && typeof path[1] === 'number' ? path[1] : undefined;
    if (stepIndex === undefined || path[2] !== 'input') return [];
    const step = (analysis.model as BlueprintModel).steps.find((candidate) => candidate.index === stepIndex);
    const server = step?.mcp?.server?.value;
    if (last === 'toolName') return listed(server).flatMap((entry) => entry.tools.map((tool) => toolItem(tool, entry.server, inString)));
    if (last === 'server') return servers.map((entry) => ({ label: entry.definition.name, kind: CompletionItemKind.Module, detail: entry.definition.origin.kind, insertText: inString ? entry.definition.name : JSON.stringify(entry.definition.name) }));
    if (last === 'expectedSchemaHash' && step?.mcp?.toolName) {
      const toolName = step.mcp.toolName.value;
      return listed(server).flatMap((entry) =>
        entry.tools
          .filter((tool) => tool.name === toolName && tool.inputSchema !== undefined)
          .flatMap((tool) => {
            const pin = safePin(() => schemaPin(tool.inputSchema));
            return pin ? [pinItem(pin, `live schema pin of ${toolName} on ${entry.server}`, inString)] : [];
          }),
      );
    }
    return [];
  }

  // Connectors: find the instance whose providerConfig the cursor is in.
  const model = analysis.model as ConnectorModel;
  const configAt = path.indexOf('providerConfig');
  if (configAt < 0) return [];
  const instance = model.instances.find((candidate) => offset >= candidate.node.offset && offset <= candidate.node.offset + candidate.node.length);
  const name = instance?.name?.value;
  if (!name) return [];
  const { listing } = await workspace.serverFor(file, 'tool', '', name);
  const tools = listing?.status === 'listed' ? listing.listing.tools : [];
  const section = path[configAt + 1];
  if (section === 'include' && !location.isAtPropertyKey) return tools.map((tool) => toolItem(tool, name, inString));
  if (section === 'toolsSnapshot') {
    if (location.isAtPropertyKey) {
      const selected = instance!.include ? new Set(instance!.include.map((entry) => entry.value)) : undefined;
      return tools.filter((tool) => !selected || selected.has(tool.name)).map((tool) => toolItem(tool, name, inString));
    }
    const toolName = path[configAt + 2];
    const tool = tools.find((candidate) => candidate.name === toolName);
    const pin = tool ? safePin(() => toolPin(tool)) : undefined;
    return pin ? [pinItem(pin, `live tool pin of ${String(toolName)} on ${name}`, inString)] : [];
  }
  return [];
}
