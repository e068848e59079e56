/**
 * The workspace status for status displays: every server's state and the pin counts of all
 * documents, sent as `toolpin/status` whenever results may have changed.
 *
 * Contract: the pin counts are the sums of what the diagnostics feature last published (see
 * `DiagnosticsFeature.published`), so a status display never disagrees with the Problems panel for
 * longer than one short debounce after a publication; an edit that fixes a pin, a revalidation
 * after a listing arrives and a closed document all publish, and so all reach the status.
 */
import type { Connection } from 'vscode-languageserver';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { type ServerStatus, StatusNotification, type StatusParams } from '../protocol';
import type { ServerRuntime, Timer } from '../runtime';
import { notifySafely, runSafe } from '../util/runSafe';
import { type DiagnosticsFeature, emptyPinCounts, type PinCounts } from './diagnostics';

/**
 * Coalesces the publications of one burst (a revalidation publishes every document within a few
 * milliseconds) into one notification, well inside the second a display may lag.
 */
export const STATUS_DEBOUNCE_MS = 50;

/**
 * A status costs time in proportion to the workspace's servers and documents; the wait before the
 * next one is at least this many times what the last one cost, so that in a long burst of events
 * (thousands of documents opened, closed or listed) statuses take a bounded share of the time
 * instead of one full status per short pause.
 */
export const STATUS_COST_FACTOR = 4;

/** The status from the published pin counts and the servers of the workspace's documents. */
export async function computeStatus(workspace: LiveWorkspace, published: ReadonlyMap<string, PinCounts>): Promise<StatusParams> {
  const pins = emptyPinCounts();
  for (const counts of published.values()) {
    pins.verified += counts.verified;
    pins.drifted += counts.drifted;
    pins.missing += counts.missing;
    pins.ambiguous += counts.ambiguous;
    pins.cannotVerify += counts.cannotVerify;
  }
  const servers = new Map<string, ServerStatus>();
  const live = workspace.liveVerification();
  // Per folder, not per document: every document of a folder has the same servers, and a walk of
  // each document's servers would cost documents × servers per status.
  for (const folder of workspace.documentFolders()) {
    for (const { definition, listing } of await workspace.serversIn(folder)) {
      if (servers.has(definition.name)) continue;
      servers.set(definition.name, {
        name: definition.name,
        state: !live ? 'off' : !listing ? 'pending' : listing.status === 'listed' ? 'listed' : listing.status === 'pending' ? 'pending' : 'unavailable',
        tools: listing?.status === 'listed' ? listing.listing.tools.length : null,
        message: listing?.status === 'unavailable' ? listing.message : null,
        listedAt: listing?.status === 'listed' ? listing.listedAt : listing?.status === 'unavailable' ? (listing.lastGood?.listedAt ?? null) : null,
      });
    }
  }
  return { servers: [...servers.values()].sort((a, b) => a.name.localeCompare(b.name)), pins, verification: live ? 'live' : 'off' };
}

export function registerStatus(connection: Connection, workspace: LiveWorkspace, diagnostics: DiagnosticsFeature, runtime: ServerRuntime): { schedule(): void } {
  let timer: Timer | undefined;
  let last = '';
  let lastCostMs = 0;
  const send = async (): Promise<void> => {
    timer = undefined;
    const started = Date.now();
    try {
      const status = await runSafe(connection.console, 'status', undefined, undefined, () => computeStatus(workspace, diagnostics.published()));
      if (!status || !('pins' in status)) return;
      const text = JSON.stringify(status);
      if (text === last) return;
      last = text;
      notifySafely(() => connection.sendNotification(StatusNotification, status));
    } finally {
      lastCostMs = Date.now() - started;
    }
  };
  const schedule = (): void => {
    timer?.dispose();
    timer = runtime.setTimeout(() => void send(), Math.max(STATUS_DEBOUNCE_MS, STATUS_COST_FACTOR * lastCostMs));
  };
  // Listing changes alter the servers' states; publications alter the pin counts.
  workspace.onDidChange(() => schedule());
  diagnostics.onDidPublish(() => schedule());
  return { schedule };
}
