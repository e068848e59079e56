/**
 * The one typed file of Toolpin's custom LSP messages, shared by the server and every client.
 * It imports only `vscode-languageserver-protocol` types, so the VS Code client can import it
 * without pulling server code. Each message says who sends it.
 */
import { NotificationType, RequestType, RequestType0, type WorkspaceEdit } from 'vscode-languageserver-protocol';
import type { HistoryExecutionReport, HistoryHashReport, HistoryReport, HistoryToolReport } from './core/history/history';

/** The dispatch-history report shapes, re-exported so clients import only this file. */
export type { HistoryExecutionReport, HistoryHashReport, HistoryReport, HistoryToolReport };

/** The settings the server reads under the `toolpin` section: server/src/settings.ts (`parseSettings`). */

/** What the client passes in `initializationOptions`. */
export interface ToolpinInitializationOptions {
  settings?: unknown;
  /**
   * Whether the workspace is trusted (VS Code's workspace trust). Absent: the client says nothing,
   * and only folders the user recorded with `toolpin trust` are trusted (docs/formats.md §10).
   */
  trusted?: boolean;
}

/** Client → server: the workspace trust changed (VS Code: the user trusted the workspace). */
export const DidChangeTrustNotification = new NotificationType<{ trusted: boolean }>('toolpin/didChangeTrust');

/**
 * Server → client: the value of a credential the editor holds (VS Code: SecretStorage), or null.
 * The server asks only in a trusted workspace, only for names a connector's `credentialRef` gives.
 */
/** The secret-storage name of the team store's password (`Toolpin: Set History Store Password`). */
export const STORE_PASSWORD_CREDENTIAL = 'TOOLPIN_HISTORY_STORE_PASSWORD';
export const GetCredentialRequest = new RequestType<{ name: string }, { value: string | null }, void>('toolpin/getCredential');

/** Client → server: list the named servers (all when omitted) again, now. */
export const RefreshRequest = new RequestType<{ servers?: string[] }, void, void>('toolpin/refresh');

/** Client → server: forget every cached listing, including the last good ones. */
export const ClearCacheRequest = new RequestType0<void, void>('toolpin/clearCache');

export interface RepinEditsParams {
  readonly uri: string;
}

export interface RepinEditsResult {
  /** Every re-pin of the document's drifted pins with their store entries; null when nothing drifted. */
  readonly edit: WorkspaceEdit | null;
  /** How many pins the edit re-pins. */
  readonly repins: number;
}

/**
 * Client → server: the re-pins of every drifted pin of one document, as one edit, for the
 * "Re-pin All Drifted" commands. Unlike the fix-all code action, it holds re-pins only (no other
 * fix) and says how many, so no client reads a count out of a title.
 */
export const RepinEditsRequest = new RequestType<RepinEditsParams, RepinEditsResult, void>('toolpin/repinEdits');

/** One server's state, for status displays. */
export interface ServerStatus {
  name: string;
  /** `off`: live verification is turned off (`toolpin.verify.enable`), so the server is not contacted. */
  state: 'listed' | 'pending' | 'unavailable' | 'off';
  tools: number | null;
  message: string | null;
  /** Milliseconds since the epoch of the last good listing. */
  listedAt: number | null;
}

/** Server → client: the servers' states and the pin counts of the workspace changed. */
export interface StatusParams {
  servers: ServerStatus[];
  pins: { verified: number; drifted: number; missing: number; ambiguous: number; cannotVerify: number };
  /** `off` when `toolpin.verify.enable` is false: pins get no verdict, and no problem, until it is turned on. */
  verification: 'live' | 'off';
}
export const StatusNotification = new NotificationType<StatusParams>('toolpin/status');

/** What the server reports about itself: used by clients for status displays and by tests. */
export interface ServerInfoResult {
  /** The Toolpin version the server was built from. */
  version: string;
  /** Problem codes the server can publish, with their default severity and title. */
  problemCodes: Array<{ code: string; severity: string; title: string }>;
}

/** Client → server: describe the server. */
export const ServerInfoRequest = new RequestType0<ServerInfoResult, void>('toolpin/serverInfo');

/** Where a pin is: a document and a position on the pin, its tool name or its snapshot key. */
export interface PinLocation {
  uri: string;
  position: { line: number; character: number };
}

/** What a review shows: the pin, the live pin, and both contents when they are known. */
export interface PinDetails {
  kind: 'schema' | 'tool';
  tool: string;
  server: string | null;
  state: 'verified' | 'drifted' | 'missing' | 'ambiguous' | 'cannot-verify' | 'unpinned';
  pinned: string | null;
  live: string | null;
  /** The pinned canonical content from the pin store, pretty-printed; null when not stored. */
  pinnedContent: string | null;
  /** The live canonical content, pretty-printed; null when the tool is not listed. */
  liveContent: string | null;
  /** One line on what changed, when both contents are known. */
  change: string | null;
  /**
   * Where the pin is written when another module holds it (`src/pins.ts:3:9`, relative to the
   * workspace folder): the re-pin rewrites it there. Absent when it is written where it is used.
   */
  writtenIn?: string;
}

/** Client → server: the details of the pin at a location, for "Review and re-pin…" and "Compare". */
export const PinDetailsRequest = new RequestType<PinLocation, PinDetails | null, void>('toolpin/pinDetails');

/**
 * Client → server: re-pin the pin at a location, but only if the server still serves the live pin
 * the user reviewed (`expectedLive`): the server lists the tool's server again first. Returns the
 * edit (with the store entry) to apply, or why it refused.
 */
export const RepinRequest = new RequestType<PinLocation & { expectedLive: string }, { applied: true; edit: WorkspaceEdit } | { applied: false; reason: string }, void>('toolpin/repin');

/**
 * Client → server: the dispatch history of the workspace (the same report as `toolpin history
 * --format json`). The tree's report. `store` is there when `toolpin.history.store` is set: the store's URL
 * (without a password) and, when it could not be read (down, refused, untrusted, a password in the
 * setting…), why, in full; the report is then empty.
 */
export type HistoryViewReport = HistoryReport & { store?: { url: string; problem: string | null } };
export const HistoryRequest = new RequestType<{ staleOnly?: boolean }, HistoryViewReport | null, void>('toolpin/history');

/** Client → server: every execution at one (server, tool, schema hash), read again from the logs. */
export const HistoryExecutionsRequest = new RequestType<{ server: string; tool: string; schemaHash: string }, HistoryExecutionReport[], void>('toolpin/historyExecutions');

/** Client → server: where a blueprint's step is, to open it from an execution. */
export const LocateStepRequest = new RequestType<{ blueprint: string; stepId: string }, { uri: string; range: { start: { line: number; character: number }; end: { line: number; character: number } } } | null, void>('toolpin/locateStep');

/** Server → client: the dispatch history changed (a log grew, a listing changed); ask again. */
export const HistoryChangedNotification = new NotificationType<{ logs: number }>('toolpin/historyChanged');
