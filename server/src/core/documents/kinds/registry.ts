/**
 * The one registry of document kinds: every kind module of this folder, in the order their names
 * are tried. Discovery (io/fileFinder.ts), the language server (its watched files, the workspace,
 * the features), the CLI (its help, check, pin, trust), the VS Code client's manifest (a unit test
 * holds package.json and the client's document selector to {@link clientSelectors}) and the docs
 * (docs/document-kinds.md, compared by a unit test) all read it.
 *
 * To add a kind: a module beside this one declaring it (./kind.ts says what), and a line in
 * {@link BUILT_IN}; ARCHITECTURE.md "To add a document kind" lists the rest.
 */
import { blueprintKind } from './blueprint';
import { compiledStackKind } from './compiledStack';
import { connectorKind } from './connector';
import { dotMcpJsonKind } from './dotMcpJson';
import { eventLogKind } from './eventLog';
import type { ClientSelector, DocumentKind, KindDeclaration, PinKind, ServerListKind } from './kind';
import { policyKind } from './policy';
import { sourceKind } from './source';
import { vscodeMcpJsonKind } from './vscodeMcpJson';

/** The built-in kinds. A file is of the first kind that recognises its name. */
const BUILT_IN: readonly KindDeclaration[] = [blueprintKind, connectorKind, sourceKind, compiledStackKind, vscodeMcpJsonKind, dotMcpJsonKind, eventLogKind, policyKind];

let kinds: readonly KindDeclaration[] = BUILT_IN;

/** Every kind, built-in ones first, in the order names are tried. */
export function documentKinds(): readonly KindDeclaration[] {
  return kinds;
}

/**
 * Adds a kind after the built-in ones (a test's kind, or one a build adds); `dispose` removes it.
 * An id already registered is refused: ids name a kind everywhere.
 */
export function registerDocumentKind(kind: KindDeclaration): { dispose(): void } {
  if (kinds.some((known) => known.id === kind.id)) throw new Error(`a document kind "${kind.id}" is already registered`);
  kinds = [...kinds, kind];
  return {
    dispose: () => {
      kinds = kinds.filter((known) => known !== kind);
    },
  };
}

/** The kind of a file by its name, path or URI, or undefined when Toolpin does not read it. */
export function kindOfFile(fileNameOrUri: string): KindDeclaration | undefined {
  return kinds.find((kind) => kind.recognises(fileNameOrUri));
}

/** The kind with pin sites a file is, or undefined (not a document, or a file of another role). */
export function pinKindOfFile(fileNameOrUri: string): PinKind | undefined {
  const kind = kindOfFile(fileNameOrUri);
  return kind?.role === 'pins' ? kind : undefined;
}

/** The registered kind with pin sites of this id; an unknown id is a programming error. */
export function pinKind(id: DocumentKind): PinKind {
  const kind = kinds.find((known) => known.id === id);
  if (kind?.role !== 'pins') throw new Error(`no document kind with pin sites is registered as "${id}"`);
  return kind;
}

/** The kinds with pin sites (analyzed, verified, re-pinned). */
export function pinKinds(): readonly PinKind[] {
  return kinds.flatMap((kind) => (kind.role === 'pins' ? [kind] : []));
}

/** The server lists a workspace folder may hold, in the registry's order of precedence. */
export function serverListKinds(): readonly ServerListKind[] {
  return kinds.flatMap((kind) => (kind.role === 'servers' ? [kind] : []));
}

/** The globs of every file whose changes on disk the language server must hear of. */
export function watchedFileGlobs(): string[] {
  return kinds.flatMap((kind) => kind.watchedFiles);
}

/** The VS Code client's document selector: every kind's filters, in the registry's order. */
export function clientSelectors(): ClientSelector[] {
  return kinds.flatMap((kind) => kind.selectors);
}

/** The file names of the kinds with pin sites as people write them, for help texts. */
export function documentPatterns(): string[] {
  return pinKinds().flatMap((kind) => kind.patterns);
}
