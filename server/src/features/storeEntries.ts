/**
 * Pin-store entries written by the server, for clients that cannot create files through a
 * WorkspaceEdit (no `create` in `workspace.workspaceEdit.resourceOperations`: Neovim before 0.10
 * without it, eglot, several others). There, a re-pin's or a first pin's code action carries its
 * document edit and, beside it, the command {@link WRITE_STORE_ENTRIES_COMMAND}, which the client
 * runs after applying the edit (LSP: "first the edit is executed and then the command"); the server
 * then writes the entries with io/safeWrite.ts, as `toolpin pin` does. Without this, the pin was
 * written and its store entry silently was not, so the next drift could not say what changed.
 *
 * The arguments come back from the client as untyped JSON and are never trusted: each entry is
 * computed again from the payload (the pin, its content and the tool's definition), the content
 * must hash to the pin (core/review/changes.ts readStoreEntry), content holding a credential is
 * not written, and every write stays inside the document's workspace folder. What was not written
 * is said in a warning that names the entry, the reason and how to finish.
 */
import * as path from 'node:path';
import type { Command, Connection } from 'vscode-languageserver';
import { readStoreEntry } from '../core/review/changes';
import { isParsedPin, parsePin } from '../core/pins/pins';
import { isRecord } from '../core/json/values';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { writeFileSafely } from '../io/safeWrite';
import { runSafe } from '../util/runSafe';
import { uriToPath } from '../util/uris';
import { containsKnownSecret } from '../mcp/credentials';
import { readFullDefinition } from '../core/verify/fullDefinition';
import { storeEntries } from '../core/documents/fixes';

/** The server's command that writes the store entries of an applied re-pin or first pin. */
export const WRITE_STORE_ENTRIES_COMMAND = 'toolpin.server.writeStoreEntries';

/** What a pin's store entries are written from: the live pin, its content and the tool's definition. */
export interface StorePayload {
  readonly tool: string;
  readonly server?: string | undefined;
  readonly live: string;
  readonly liveContent: string;
  readonly liveDefinition?: unknown;
}

/** The store entries of a re-pin: the pinned content and, when the payload has it, the full definition. */
export function storeEntriesFor(data: StorePayload): Array<{ relativePath: string; content: string }> {
  const algorithm = data.live.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256';
  const parsed = parsePin(data.live, algorithm);
  // A store entry is meant to be committed: content holding (or redacted of) a credential is not written.
  if (typeof data.liveContent !== 'string' || containsKnownSecret(data.liveContent) || !isParsedPin(parsed)) return [];
  // The definition comes back from the client: it is written only when it is an entry of this tool.
  const full = typeof data.liveDefinition === 'string' && !containsKnownSecret(data.liveDefinition) && readFullDefinition(data.liveDefinition, data.tool) ? data.liveDefinition : undefined;
  return storeEntries(parsed.algorithm, parsed.hex, data.liveContent, { tool: data.tool, server: typeof data.server === 'string' ? data.server : undefined, content: full });
}

/** What the command answers: the entries written and those that were not, with the reason. */
export interface StoreWriteResult {
  readonly written: string[];
  readonly notWritten: Array<{ readonly entry: string; readonly reason: string }>;
}

/**
 * The command a code action carries beside its edit when the client cannot create files, or
 * undefined when it can (the entries are then in the edit) or there is nothing to write.
 */
export function storeEntriesCommand(uri: string, payloads: readonly StorePayload[], canCreateFiles: boolean): Command | undefined {
  if (canCreateFiles || payloads.length === 0) return undefined;
  const argumentsOf = payloads.map((payload) => ({ tool: payload.tool, server: payload.server, live: payload.live, liveContent: payload.liveContent, ...(payload.liveDefinition !== undefined ? { liveDefinition: payload.liveDefinition } : {}) }));
  return { title: `Write ${payloads.length === 1 ? 'the pin-store entry' : 'the pin-store entries'}`, command: WRITE_STORE_ENTRIES_COMMAND, arguments: [uri, argumentsOf] };
}

function isStorePayload(value: unknown): value is StorePayload {
  return isRecord(value) && typeof value.tool === 'string' && typeof value.live === 'string' && typeof value.liveContent === 'string' && (value.server === undefined || typeof value.server === 'string');
}

/** Writes the entries of `payloads` in the workspace folder of the document `uri`; never throws. */
export async function writeStoreEntries(workspace: LiveWorkspace, uri: unknown, payloads: unknown): Promise<StoreWriteResult> {
  const written: string[] = [];
  const notWritten: Array<{ entry: string; reason: string }> = [];
  if (typeof uri !== 'string' || !uri.startsWith('file:') || !Array.isArray(payloads)) return { written, notWritten: [{ entry: '(all)', reason: 'the command was sent without a document and its pins' }] };
  const folder = workspace.folderOf(uriToPath(uri));
  for (const payload of payloads) {
    if (!isStorePayload(payload)) {
      notWritten.push({ entry: '(unknown)', reason: 'the pin sent back is not a pin payload' });
      continue;
    }
    const parsed = parsePin(payload.live, payload.live.startsWith('fnv1a64:') ? 'fnv1a64' : 'sha256');
    if (!isParsedPin(parsed) || !readStoreEntry(parsed, payload.liveContent).ok) {
      notWritten.push({ entry: payload.live, reason: 'its content does not hash to the pin' });
      continue;
    }
    const entries = storeEntriesFor(payload);
    if (entries.length === 0) notWritten.push({ entry: payload.live, reason: 'the live tool holds a credential value Toolpin gave the server, and the store is meant to be committed' });
    for (const entry of entries) {
      try {
        await writeFileSafely(path.join(folder, entry.relativePath), entry.content, { root: folder });
        written.push(entry.relativePath);
      } catch (error) {
        notWritten.push({ entry: entry.relativePath, reason: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return { written, notWritten };
}

export function registerStoreEntryWrites(connection: Connection, workspace: LiveWorkspace): void {
  connection.onExecuteCommand((params, token) =>
    runSafe<StoreWriteResult | null>(connection.console, 'workspace/executeCommand', token, null, async () => {
      if (params.command !== WRITE_STORE_ENTRIES_COMMAND) return null;
      const [uri, payloads] = params.arguments ?? [];
      const result = await writeStoreEntries(workspace, uri, payloads);
      if (result.notWritten.length > 0) {
        const list = result.notWritten.map((entry) => `${entry.entry} (${entry.reason})`).join('; ');
        void connection.window.showWarningMessage(
          `Toolpin: the pin is in place, but ${result.notWritten.length} pin-store entr${result.notWritten.length === 1 ? 'y was' : 'ies were'} not written: ${list}. Until it is, a later drift of this pin cannot say what changed; run "toolpin pin" after the next drift, or re-pin from an editor that can create files.`,
        );
      }
      return result;
    }),
  );
}
