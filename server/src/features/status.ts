/**
 * The workspace status for status displays: every server's state and the pin counts of all
 * documents, sent as `toolpin/status` whenever results may have changed (debounced).
 */
import type { Connection } from 'vscode-languageserver';
import type { LiveWorkspace } from '../engine/liveWorkspace';
import { type ServerStatus, StatusNotification, type StatusParams } from '../protocol';
import type { ServerRuntime } from '../runtime';
import { runSafe } from '../util/runSafe';

export async function computeStatus(workspace: LiveWorkspace): Promise<StatusParams> {
  const pins = { verified: 0, drifted: 0, missing: 0, ambiguous: 0, cannotVerify: 0 };
  const servers = new Map<string, ServerStatus>();
  for (const file of workspace.paths()) {
    const verification = await workspace.verification(file);
    for (const verdict of verification.verdicts) {
      if (verdict.state === 'verified') pins.verified++;
      else if (verdict.state === 'drifted') pins.drifted++;
      else if (verdict.state === 'missing') pins.missing++;
      else if (verdict.state === 'ambiguous') pins.ambiguous++;
      else pins.cannotVerify++;
    }
    for (const { definition, listing } of await workspace.servers(file)) {
      if (servers.has(definition.name)) continue;
      servers.set(definition.name, {
        name: definition.name,
        state: !listing ? 'pending' : listing.status === 'listed' ? 'listed' : listing.status === 'pending' ? 'pending' : 'unavailable',
        tools: listing?.status === 'listed' ? listing.listing.tools.length : null,
        message: listing?.status === 'unavailable' ? listing.message : null,
        listedAt: listing?.status === 'listed' ? listing.listedAt : listing?.status === 'unavailable' ? (listing.lastGood?.listedAt ?? null) : null,
      });
    }
  }
  return { servers: [...servers.values()].sort((a, b) => a.name.localeCompare(b.name)), pins };
}

export function registerStatus(connection: Connection, workspace: LiveWorkspace, runtime: ServerRuntime): { schedule(): void } {
  let timer: unknown;
  let last = '';
  const send = async (): Promise<void> => {
    timer = undefined;
    const status = await runSafe(connection.console, 'status', undefined, undefined, () => computeStatus(workspace));
    if (!status || !('pins' in status)) return;
    const text = JSON.stringify(status);
    if (text === last) return;
    last = text;
    void connection.sendNotification(StatusNotification, status);
  };
  const schedule = (): void => {
    if (timer !== undefined) runtime.clearTimeout(timer);
    timer = runtime.setTimeout(() => void send(), 300);
  };
  workspace.onDidChange(() => schedule());
  return { schedule };
}
