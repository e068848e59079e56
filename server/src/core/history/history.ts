/**
 * Dispatch history (docs/formats.md §7, ADR 0063 D4): the read model over `MCP_DISPATCHED` events
 * in `*.events.jsonl` logs. It answers the proactive-repair question "which executions called
 * tool X at schema H", and whether H is the pinned hash, the live hash, or stale.
 *
 * Pure: lines come in, as text (from wherever the caller read them, with their line numbers and
 * byte offsets) or as the log's UTF-8 bytes ({@link HistoryModel.foldLineBytes}, what the reader
 * uses: the common line is read from its bytes by ./eventBytes.ts, without `JSON.parse`, and gives
 * exactly the model the text would), pins and live schema hashes come in as plain values, and a
 * model and a report with a stable JSON shape come out. Parsing never throws; a bad line is a
 * positioned {@link LineProblem}, counted and skipped.
 *
 * Memory is bounded per (server, tool, schemaHash): an exact count, the first and last execution
 * seen, and the most recent K executions (K = `recentLimit`, default 20). All executions of one
 * hash are re-read from the log on request by the I/O layer (server/src/history/logReader.ts).
 *
 * Definitions used throughout (also in the report's doc comments):
 *
 * - A hash is **live** when the server currently serves the tool with that schema pin
 *   (`schemaPin(inputSchema)`, the same `fnv1a64` pin as a blueprint's `expectedSchemaHash`);
 *   it is **pinned** when a blueprint step pins it for that tool (a step with a `server` pins it
 *   on that server only; a step without `server` pins it for the tool on every server).
 *   Connector tool pins (`sha256`, over name + description + schema) are a different pin kind
 *   and are never compared with a schema hash.
 * - The status of a hash is `pinned+live`, `live`, `pinned`, `stale` (known not to be live and
 *   not pinned), or `unknown` (not pinned, and no live listing says whether it is live: the server
 *   could not be listed, was not contacted, or its listing cannot prove the tool is absent).
 *   Without a listing a hash is never called stale.
 * - A hash is **not live** (`live: false`) when a listing of its server proves that the server
 *   serves the tool with another schema, or no longer serves it. Those are the `stale` hashes and
 *   the `pinned` hashes whose pin has drifted. The stale query (`toolpin history --stale`)
 *   selects exactly the executions at hashes that are not live.
 * - An execution **ran after drift** when it ran at a hash that is not live, later (by its `at`
 *   time) than the first execution at the current live hash of the same (server, tool) found in
 *   the logs: by then the server demonstrably served the new schema, so the execution dispatched
 *   with a schema that had already been replaced. Executions at that hash before that moment ran
 *   while their schema may still have been current. When no execution at the live hash is in the
 *   logs, the moment of drift is unknown and "ran after drift" is `null`, never a guess.
 *
 * The module is in four files, all re-exported here (import from this file):
 * - ./events.ts: one line of a log → an event, another type, a blank line or a positioned problem;
 * - ./model.ts: {@link HistoryModel}, the events folded into one state per (server, tool,
 *   schemaHash) across all logs (bounded by K, not by the number of logs), and each log's counters
 *   (./summaries.ts: the per-key summaries it hands out, re-exported by model.ts);
 * - ./live.ts: schema pins, live schemas from listings, and a hash's status;
 * - ./report.ts: the query, the {@link HistoryReport} (the one report type, a stable JSON shape),
 *   the exit status, and {@link HistorySource}: the small interface every source of the history
 *   view implements (the logs through {@link modelHistorySource}; a store answers the same report).
 */
export * from './events';
export * from './model';
export * from './live';
export * from './report';
