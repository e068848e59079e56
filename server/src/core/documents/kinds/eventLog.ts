/**
 * The runtime's dispatch-history logs (JSON Lines with MCP_DISPATCHED events; docs/formats.md
 * "Dispatch logs"), read by core/history and history/ for the Dispatch History view and
 * `toolpin history`. Which files are logs is the `history.logGlobs` setting's globs (by default
 * `**\/*.events.jsonl`); every `.jsonl` change is watched, and a log glob that names other files
 * is read by the history feature's fallback timer instead.
 */
import type { EventLogKind } from './kind';

/** The logs looked for when `toolpin.history.logGlobs` names none (its default). */
export const DEFAULT_LOG_GLOB = '**/*.events.jsonl';

export const eventLogKind: EventLogKind = {
  id: 'eventLog',
  role: 'events',
  title: 'Dispatch-history logs of the runtime (JSON Lines)',
  patterns: ['*.events.jsonl'],
  examples: ['logs/dispatch.events.jsonl'],
  recognises: (name) => name.endsWith('.jsonl'),
  watchedFiles: ['**/*.jsonl'],
  selectors: [],
  languages: [],
  activationEvents: [],
  settings: ['history.logGlobs'],
};
