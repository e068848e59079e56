/**
 * Diagnostics: checks open Toolpin documents and publishes their problems.
 *
 * Contract: each document is checked after `debounceMs` of quiet; a result computed for an older
 * version of a document is dropped; a closed document gets an empty publication so its problems
 * disappear; a document that is not a Toolpin file is never published.
 */
import type { Connection, TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { analyzeDocument, documentKindOf } from '../core/documents';
import type { ToolpinSettings } from '../protocol';
import { runSafeVoid } from '../util/runSafe';
import { problemToDiagnostic } from '../util/toLsp';
import type { ServerRuntime } from '../server';

export interface DiagnosticsFeature {
  /** Re-checks every open document now, e.g. after a settings change. */
  revalidateAll(): void;
}

export function registerDiagnostics(
  connection: Connection,
  documents: TextDocuments<TextDocument>,
  runtime: ServerRuntime,
  settings: () => ToolpinSettings,
): DiagnosticsFeature {
  const pending = new Map<string, ReturnType<ServerRuntime['setTimeout']>>();

  const validateNow = (uri: string): void => {
    pending.delete(uri);
    const document = documents.get(uri);
    if (!document) return;
    const kind = documentKindOf(uri);
    if (!kind) return;
    runSafeVoid(connection.console, `checking ${uri}`, () => {
      const version = document.version;
      const diagnostics = settings().validate.enable
        ? analyzeDocument(kind, document.getText()).problems.map((found) => problemToDiagnostic(document, found))
        : [];
      // The document may have changed while it was checked: publish only for the current version.
      if (documents.get(uri)?.version !== version) return;
      void connection.sendDiagnostics({ uri, version, diagnostics });
    });
  };

  const schedule = (uri: string): void => {
    const existing = pending.get(uri);
    if (existing !== undefined) runtime.clearTimeout(existing);
    pending.set(uri, runtime.setTimeout(() => validateNow(uri), settings().validate.debounceMs));
  };

  documents.onDidOpen((event) => validateNow(event.document.uri));
  documents.onDidChangeContent((event) => schedule(event.document.uri));
  documents.onDidClose((event) => {
    const existing = pending.get(event.document.uri);
    if (existing !== undefined) runtime.clearTimeout(existing);
    pending.delete(event.document.uri);
    if (documentKindOf(event.document.uri)) void connection.sendDiagnostics({ uri: event.document.uri, diagnostics: [] });
  });

  return {
    revalidateAll: () => {
      for (const document of documents.all()) schedule(document.uri);
    },
  };
}
