/**
 * The only place where core types become LSP types: offsets to ranges, problems to diagnostics.
 */
import { type Diagnostic, DiagnosticSeverity, type Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Problem, Severity, Span } from '../core/problems';

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/** The diagnostic `source` every Toolpin diagnostic carries. */
export const DIAGNOSTIC_SOURCE = 'toolpin';

export function spanToRange(document: TextDocument, span: Span): Range {
  return { start: document.positionAt(span.offset), end: document.positionAt(span.offset + span.length) };
}

export function problemToDiagnostic(document: TextDocument, found: Problem): Diagnostic {
  const diagnostic: Diagnostic = {
    range: spanToRange(document, found.span),
    severity: SEVERITY[found.severity],
    code: found.code,
    source: DIAGNOSTIC_SOURCE,
    message: found.message,
  };
  if (found.data) diagnostic.data = found.data;
  return diagnostic;
}
