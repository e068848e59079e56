/**
 * The dispatch-history tree read from a team store (`toolpin.history.store`, issue 27,
 * docs/history-store.md) instead of the workspace's logs.
 *
 * Contract:
 * - the store is contacted only when every check passes, in this order: the URL carries no
 *   password (a settings file is no place for credentials; the password comes from the editor's
 *   secret storage, PGPASSWORD or `.pgpass`), it is a `postgres://` URL, and the workspace is
 *   trusted for it (ServerTrust.decideSetting: the rules of the `toolpin.servers` setting). A
 *   failed check is the answer's `problem`, in full, and nothing is sent anywhere;
 * - one connection per store URL, opened on the first request, LISTENs on the store's channel:
 *   every ingest that commits new dispatches NOTIFYs there, and each notification is handed on
 *   (`changed`), so the tree follows the store without a refresh and without a timer;
 * - a connection that fails or ends is dropped and reported as changed; the next request opens a
 *   new one (there is no reconnect timer);
 * - the answer is computed in SQL (store/storeModel.ts), never by loading the events.
 */
import type * as Pg from 'pg';
import type { Execution, HistoryKey } from '../core/history/history';
import { DEFAULT_RECENT_LIMIT } from '../core/history/model';
import type { TrustVerdict } from '../core/trust';
import { errorMessage } from '../core/json/values';
import { connectStore, redactUrl, STORE_CHANNEL, storeFailure, storeSchemaVersion, storeUrlProblem, unreadableSchema, urlHasPassword } from '../store/historyStore';
import { allExecutionsOf, StoreModel } from '../store/storeModel';

export interface StoreAccess {
  /** Whether the workspace may send credentials to the store; `what` completes "Toolpin did not …". */
  trust(what: string): TrustVerdict;
  /** The editor's secret for the store, when it holds one (undefined: PGPASSWORD or `.pgpass`). */
  password(): Promise<string | undefined>;
  /** The store's content changed (a NOTIFY), or its connection was lost. */
  changed(): void;
  log(line: string): void;
}

export type StoreAnswer = { readonly url: string; readonly model: StoreModel; readonly problem: null } | { readonly url: string; readonly model: null; readonly problem: string };

/** Why the store of the setting may not be contacted, before anything is sent; undefined when it may. */
export function storeSettingProblem(url: string, trust: StoreAccess['trust']): string | undefined {
  if (urlHasPassword(url)) {
    return (
      `the setting toolpin.history.store holds a password (${redactUrl(url)}): a settings file is no place for credentials, so Toolpin did not contact the store. ` +
      'Remove the password from the URL and give it by PGPASSWORD, ~/.pgpass or the command "Toolpin: Set History Store Password" (secret storage).'
    );
  }
  const shape = storeUrlProblem(url);
  if (shape) return `the setting toolpin.history.store: ${shape}`;
  const verdict = trust(`contact the history store ${redactUrl(url)}`);
  return verdict.trusted ? undefined : verdict.reason;
}

export class StoreHistory {
  private url = '';
  private connection: Promise<Pg.Client> | undefined;

  constructor(private readonly access: StoreAccess) {}

  /** Whether a store is configured (the tree reads it, not the logs). */
  get configured(): boolean {
    return this.url !== '';
  }

  /** Takes the setting's value; true when it changed (the old connection is closed). */
  configure(url: string): boolean {
    if (url === this.url) return false;
    this.url = url;
    this.drop();
    return true;
  }

  /** Forgets the connection, so that the next request checks trust and connects again. */
  drop(): void {
    const connection = this.connection;
    this.connection = undefined;
    void connection?.then((client) => client.end()).catch(() => undefined);
  }

  /** The store's answer for the tree, or why there is none. */
  async read(recentLimit = DEFAULT_RECENT_LIMIT): Promise<StoreAnswer> {
    const url = this.url;
    const shown = redactUrl(url);
    const problem = storeSettingProblem(url, (what) => this.access.trust(what));
    if (problem) return { url: shown, model: null, problem };
    try {
      const client = await this.client(url);
      const unreadable = unreadableSchema(url, await storeSchemaVersion(client));
      if (unreadable) return { url: shown, model: null, problem: unreadable.message };
      return { url: shown, model: await StoreModel.load(client, { recentLimit }), problem: null };
    } catch (error) {
      // The connection may be the cause: the next request opens a new one.
      if (this.url === url) this.drop();
      return { url: shown, model: null, problem: errorMessage(storeFailure(url, error)) };
    }
  }

  /** Every execution of one key, from the store (the "Show all" of a hash). */
  async allExecutions(key: HistoryKey): Promise<Execution[]> {
    if (storeSettingProblem(this.url, (what) => this.access.trust(what))) return [];
    return allExecutionsOf(await this.client(this.url), key);
  }

  dispose(): void {
    this.url = '';
    this.drop();
  }

  /** The open connection, LISTENing, or a new one. */
  private client(url: string): Promise<Pg.Client> {
    if (this.connection) return this.connection;
    const opening = this.open(url);
    this.connection = opening;
    // A failed open is not kept: the next request tries again.
    opening.catch(() => {
      if (this.connection === opening) this.connection = undefined;
    });
    return opening;
  }

  private async open(url: string): Promise<Pg.Client> {
    const password = await this.access.password();
    const client = await connectStore(url, password !== undefined ? { password } : {});
    const lost = (): void => {
      if (this.connection === undefined) return;
      void this.connection.then((current) => {
        if (current !== client) return;
        this.connection = undefined;
        this.access.log(`toolpin: the history store ${redactUrl(url)} closed the connection; it is opened again on the next request`);
        this.access.changed();
      }, () => undefined);
    };
    client.on('notification', (message) => {
      if (message.channel === STORE_CHANNEL) this.access.changed();
    });
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.query(`LISTEN ${STORE_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    return client;
  }
}
