/**
 * The machine-readable payloads (`Problem.data`, which becomes `Diagnostic.data`) that code
 * actions read. Each is declared once here: the core builds it with this type, and the language
 * server checks a received payload with the guard next to it, because a client sends `data` back
 * as untyped JSON (and may send anything, or nothing).
 *
 * They are type aliases, not interfaces, so that they are assignable to the
 * `Record<string, unknown>` that {@link problem} takes.
 */

/** TP400: a pin that drifted, with everything a re-pin needs. */
export type DriftData = {
  readonly kind: 'schema' | 'tool';
  readonly tool: string;
  readonly server: string;
  /** The pin as written. */
  readonly pinned: string;
  /** The live pin, in the style the pinned one was written in (a bare tool pin stays bare). */
  readonly live: string;
  readonly style: 'prefixed' | 'bare';
  /** Exactly the canonical JSON that `live` hashes: the content of its pin-store entry. */
  readonly liveContent: string;
  /** The live tool's full-definition entry content (core/verify/fullDefinition.ts), when it is plain JSON. */
  readonly liveDefinition?: string;
  /** What kind of change the store entry shows, or `unknown` without one. */
  readonly change: string;
  /** The change in one line (`description only`, or why it is unknown), as the message says it. */
  readonly summary: string;
};

/** TP407: a drift whose new model-readable text carries cues of tool poisoning (core/verify/poisoning.ts). */
export type SecurityData = {
  readonly tool: string;
  readonly server: string;
  readonly cues: ReadonlyArray<{ readonly kind: string; readonly label: string; readonly evidence: string }>;
  /** False when the pinned content is unknown, so the cues may be old. */
  readonly pinnedKnown: boolean;
};

/**
 * TP401, when the pinned tool looks renamed: exactly one served tool that no pin of the file names
 * has the pinned input schema, or the pinned description, or is the pinned tool under a new name.
 */
export type RenameData = {
  /** The served tool that looks like the pinned one under a new name. */
  readonly tool: string;
  readonly server: string;
  /** What matched: `content` (all but the name), `input schema` or `description`. */
  readonly match: 'content' | 'input schema' | 'description';
  /** The renamed tool's live pin, in the style the pin was written in. */
  readonly live: string;
  /** Exactly the canonical JSON that `live` hashes: the content of its pin-store entry. */
  readonly liveContent: string;
};

/** TP401: a pinned tool that the server no longer serves. */
export type UnservedPinData = {
  readonly kind: 'schema' | 'tool';
  readonly tool: string;
  /** The server named by the step or connector; absent for a step without `server`. */
  readonly server?: string;
  /** Set when a served, unpinned tool looks like its rename. */
  readonly rename?: RenameData;
};

/** TP405: a selected tool without a pin, and its live pin when it can be pinned. */
export type UnpinnedToolData = {
  readonly kind: 'tool';
  readonly tool: string;
  readonly server: string;
  readonly live?: string;
  /** Exactly the canonical JSON that `live` hashes. */
  readonly liveContent?: string;
  /** The live tool's full-definition entry content (core/verify/fullDefinition.ts), when it is plain JSON. */
  readonly liveDefinition?: string;
};

/** TP406: a step's `server` that names no configured server, and the one it probably meant. */
export type UnknownServerData = {
  readonly server: string;
  /** The one configured name close enough to be a typo of `server`, if there is exactly one. */
  readonly suggestion?: string;
};

/** TP404: an `include` entry that the server does not serve, and the served tool it probably meant. */
export type UnservedIncludeData = {
  readonly tool: string;
  readonly server: string;
  /** The one served, not yet included tool close enough to be a typo of `tool`, if any. */
  readonly suggestion?: string;
};

function isObject(data: unknown): data is object {
  return typeof data === 'object' && data !== null;
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

/** Whether `data` is a {@link DriftData} (the fields a re-pin needs are present and typed). */
export function isDriftData(data: unknown): data is DriftData {
  return (
    isObject(data) &&
    'kind' in data && (data.kind === 'schema' || data.kind === 'tool') &&
    'tool' in data && typeof data.tool === 'string' &&
    'live' in data && typeof data.live === 'string' &&
    'liveContent' in data && typeof data.liveContent === 'string'
  );
}

/** Whether `data` is an {@link UnservedPinData}. */
export function isUnservedPinData(data: unknown): data is UnservedPinData {
  return isObject(data) && 'kind' in data && (data.kind === 'schema' || data.kind === 'tool') && 'tool' in data && typeof data.tool === 'string';
}

/** The rename of a TP401 payload, when it carries a well-formed one. */
export function renameOf(data: unknown): RenameData | undefined {
  if (!isUnservedPinData(data) || !('rename' in data)) return undefined;
  return isRenameData(data.rename) ? data.rename : undefined;
}

function isRenameData(rename: unknown): rename is RenameData {
  return (
    isObject(rename) &&
    'tool' in rename && typeof rename.tool === 'string' &&
    'server' in rename && typeof rename.server === 'string' &&
    'live' in rename && typeof rename.live === 'string' &&
    'liveContent' in rename && typeof rename.liveContent === 'string' &&
    'match' in rename && (rename.match === 'content' || rename.match === 'input schema' || rename.match === 'description')
  );
}

/** Whether `data` is an {@link UnpinnedToolData} that carries the live pin (so it can be pinned). */
export function isPinnableToolData(data: unknown): data is UnpinnedToolData & { readonly live: string; readonly liveContent: string } {
  return (
    isObject(data) &&
    'tool' in data && typeof data.tool === 'string' &&
    'live' in data && typeof data.live === 'string' &&
    'liveContent' in data && typeof data.liveContent === 'string'
  );
}

/** Whether `data` is an {@link UnknownServerData}. */
export function isUnknownServerData(data: unknown): data is UnknownServerData {
  return isObject(data) && 'server' in data && typeof data.server === 'string' && optionalString('suggestion' in data ? data.suggestion : undefined);
}

/** Whether `data` is an {@link UnservedIncludeData}. */
export function isUnservedIncludeData(data: unknown): data is UnservedIncludeData {
  return (
    isObject(data) &&
    'tool' in data && typeof data.tool === 'string' &&
    'server' in data && typeof data.server === 'string' &&
    optionalString('suggestion' in data ? data.suggestion : undefined)
  );
}

export function isSecurityData(data: unknown): data is SecurityData {
  return isObject(data) && 'tool' in data && typeof data.tool === 'string' && 'cues' in data && Array.isArray(data.cues);
}
