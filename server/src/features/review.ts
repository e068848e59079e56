/**
 * "Review and re-pin…": the details of a pin (both contents, what changed) for a diff the user
 * reads, and a re-pin that applies only if the live hash is still the one reviewed — the server
 * lists the tool's server again first, which closes the race between reading a diff and approving
 * it ("blind approve").
 */
import type { Connection, TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { classifySchemaPinChange, classifyToolPinChange, prettyCanonicalJson, readStoreEntry } from '../core/review/changes';
import { setSnapshotEntryEdits, storeEntries } from '../core/documents/fixes';
import { fullDefinitionContent } from '../core/verify/fullDefinition';
import { pinTargetAt } from '../core/documents/locate';
import { formatPin, isParsedPin, parsePin, schemaPin, schemaPinContent } from '../core/pins/pins';
import { liveToolPin } from '../core/verify/verify';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { PinDetailsRequest, type PinDetails, type PinLocation, RepinRequest } from '../protocol';
import { containsKnownSecret, redactKnownSecretsDeep } from '../mcp/credentials';
import { runSafe } from '../util/runSafe';
import { uriToPath } from '../util/uris';
import { buildWorkspaceEdit, type EditBuilder, placeRepins } from './codeActions';
import { foreignPinAt } from '../core/documents/source/analyzeSource';
import { whereWritten } from './hover';

function pretty(canonical: string): string {
  try {
    return prettyCanonicalJson(JSON.parse(canonical));
  } catch {
    return canonical;
  }
}

interface Resolved {
  document: TextDocument;
  details: PinDetails;
  target: NonNullable<ReturnType<typeof pinTargetAt>>;
  liveContentCanonical: string | null;
  /** The live tool's full-definition entry content (core/verify/fullDefinition.ts), when it is plain JSON. */
  liveDefinition: string | undefined;
}

async function resolve(location: PinLocation, documents: TextDocuments<TextDocument>, workspace: LiveWorkspace): Promise<Resolved | null> {
  const document = documents.get(location.uri);
  if (!document) return null;
  const file = uriToPath(document.uri);
  workspace.setOpenDocument(file, document.getText());
  const analysis = workspace.analysis(file);
  const target = analysis ? pinTargetAt(analysis, document.offsetAt(location.position)) : undefined;
  if (!target) return null;
  const verification = await workspace.verification(file);
  const pinSpan = target.pinSpan;
  const verdict = pinSpan ? verification.verdicts.find((candidate) => candidate.span.offset === pinSpan.offset) : undefined;
  const { definition, listing } = await workspace.serverFor(file, target.kind, target.tool, verdict?.server ?? target.server);
  const tools = listing?.status === 'listed' ? listing.listing.tools.filter((tool) => tool.name === target.tool) : [];
  let live: string | null = null;
  let liveContentCanonical: string | null = null;
  const inputSchema = tools[0]?.inputSchema;
  if (tools.length > 0) {
    if (target.kind === 'tool') {
      const pin = liveToolPin(tools);
      if ('pin' in pin) {
        live = pin.pin;
        liveContentCanonical = pin.content;
      }
    } else if (inputSchema !== undefined) {
      liveContentCanonical = schemaPinContent(inputSchema);
      live = schemaPin(inputSchema);
    }
  }
  const stored = target.pin ? await workspace.pinnedContent(file, target.pin) : undefined;
  let change: string | null = null;
  if (target.pin && stored !== undefined && tools[0]) {
    const entry = readStoreEntry(target.pin, stored);
    if (entry.ok) change = (entry.pin === 'schema' ? classifySchemaPinChange(entry.inputSchema, tools[0]) : classifyToolPinChange(entry.tool, tools[0])).summary;
  }
  const details: PinDetails = {
    kind: target.kind,
    tool: target.tool,
    server: definition?.name ?? null,
    state: verdict?.state ?? 'unpinned',
    pinned: target.pin ? formatPin(target.pin.algorithm, target.pin.hex, target.pin.style) : null,
    live,
    pinnedContent: stored !== undefined ? pretty(stored) : null,
    liveContent: liveContentCanonical !== null ? pretty(liveContentCanonical) : null,
    change,
  };
  // A pin imported from another module is reviewed at its use and rewritten where it is written.
  const foreign = analysis && target.pinSpan ? foreignPinAt(analysis.model, target.pinSpan, target.tool) : undefined;
  if (foreign) details.writtenIn = await whereWritten(workspace, file, foreign);
  return { document, details, target, liveContentCanonical, liveDefinition: tools[0] ? fullDefinitionContent(tools[0].raw) : undefined };
}

export function registerReview(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  workspace: LiveWorkspace,
  options: () => EditBuilder,
): void {
  connection.onRequest(PinDetailsRequest, (location, token) =>
    runSafe(connection.console, 'toolpin/pinDetails', token, null, async () => redactKnownSecretsDeep((await resolve(location, documents, workspace))?.details ?? null)),
  );

  connection.onRequest(RepinRequest, (params, token) =>
    runSafe(connection.console, 'toolpin/repin', token, { applied: false as const, reason: 'internal error' }, async () => {
      const before = await resolve(params, documents, workspace);
      if (!before) return { applied: false as const, reason: 'there is no pin at this position' };
      // List the server again: the approval must hold for what the server serves now.
      if (before.details.server) await workspace.refresh([before.details.server]);
      const now = await resolve(params, documents, workspace);
      if (!now?.details.live || !now.liveContentCanonical) return { applied: false as const, reason: `the server no longer serves "${before.details.tool}" in a form that can be pinned` };
      const algorithm = now.target.kind === 'schema' ? 'fnv1a64' : 'sha256';
      const expected = parsePin(params.expectedLive, algorithm);
      const current = parsePin(now.details.live, algorithm);
      if (!isParsedPin(expected) || !isParsedPin(current) || expected.hex !== current.hex) {
        return {
          applied: false as const,
          reason: `the live tool changed after your review: you reviewed ${params.expectedLive}, the server now serves ${now.details.live}. Review it again.`,
        };
      }
      const style = now.target.pin?.style ?? 'prefixed';
      const newPin = formatPin(current.algorithm, current.hex, style);
      const text = now.document.getText();
      const placed = now.target.pinSpan !== undefined ? await placeRepins(uriToPath(now.document.uri), workspace, text, [{ span: now.target.pinSpan, data: { tool: now.target.tool, live: newPin } }]) : undefined;
      if (placed && placed.count === 0) return { applied: false as const, reason: `the module that writes this pin (${now.details.writtenIn ?? 'another module'}) cannot be edited` };
      const edits =
        placed !== undefined
          ? placed.local
          : now.target.kind === 'tool'
            ? setSnapshotEntryEdits(text, now.target.instance, now.target.tool, newPin)
            : [];
      if (edits.length === 0) return { applied: false as const, reason: 'this step has no expectedSchemaHash to re-pin' };
      // A store entry is meant to be committed: one holding a credential value is not written.
      const folder = workspace.folderOf(uriToPath(now.document.uri));
      const full = now.liveDefinition !== undefined && !containsKnownSecret(now.liveDefinition) ? now.liveDefinition : undefined;
      const entries = containsKnownSecret(now.liveContentCanonical) ? [] : storeEntries(current.algorithm, current.hex, now.liveContentCanonical, { tool: now.target.tool, server: now.details.server ?? undefined, content: full }).map((entry) => ({ folder, ...entry }));
      return { applied: true as const, edit: buildWorkspaceEdit(now.document, edits, entries, options(), placed?.elsewhere) };
    }),
  );
}

