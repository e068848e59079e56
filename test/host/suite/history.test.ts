/**
 * The Dispatch History view (client/src/dispatchHistoryView.ts, server/src/features/history.ts) in a
 * real extension host, against the fixture log test/host/workspace/history/runs.events.jsonl:
 *
 *   server "demo", echo_upper  at fnv1a64:a76fe8d6d023fca0 (the reference pin: pinned by the
 *                              workspace's blueprints, not live since the runner's control document
 *                              rewrote the schema)            exec_h03, exec_h04, exec_h05
 *                              at fnv1a64:0123456789abcdef (pinned nowhere, not live: stale)
 *                                                             exec_h01, exec_h02 (+ exec_h08, torn)
 *   server "demo", add_numbers at fnv1a64:d21cac35ccab9a0e (pinned by good.blueprint.jsonc and live:
 *                              no control document touches add_numbers)   exec_h04, exec_h06
 *   server "archive" (named by no configuration), reverse_text: live unknown   exec_h07 (no blueprint)
 *
 * plus four events of other types (skipped), one malformed line (line 6, not JSON) and a torn last
 * line (exec_h08: its line end is missing; a test here completes it). Executions name the steps of
 * many-drifted.blueprint.jsonc ("shout-twice"), drifted.blueprint.jsonc ("shout-subject") and
 * good.blueprint.jsonc ("score-and-tidy"), so "Open Blueprint Step" finds them.
 *
 * The live hash of echo_upper is not assumed: drift.test.ts moves the fixture server from control
 * version 2 to 3 (and --grep may leave it at 2), so it is computed from the control file.
 *
 * The tree is checked twice over: the report the view shows (`toolpin/history` through the
 * extension's own client), and the view's provider turning that report into tree items (labels,
 * descriptions, the command an execution runs when clicked). The rendered view is checked by the UI
 * phase (test/host/ui/history.mjs). The trusted tests append to the workspace copy's log: the UI
 * phase, which runs later on the same copy, only relies on what stays true after that.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { HistoryExecutionReport, HistoryReport } from '../../../server/src/protocol';
import { DispatchHistoryProvider } from '../../../client/src/dispatchHistoryView';
import { ECHO_PIN, EXTENSION_ID, fnv1a64Hex, hostEnv, pollUntil, requireLiveFixture, sortedJson, toolpinApi, workspaceFile } from './helpers';

const LOG = 'history/runs.events.jsonl';
const STALE_HASH = 'fnv1a64:0123456789abcdef';
/** add_numbers' input schema as the fixture server serves it (test/fixtures/servers/fixture-server.mjs). */
const ADD_NUMBERS_SCHEMA = {
  type: 'object',
  properties: { a: { type: 'number', description: 'First addend' }, b: { type: 'number', description: 'Second addend' } },
  required: ['a', 'b'],
};
/** Its schema pin, as good.blueprint.jsonc pins it (checked against the schema below). */
const ADD_NUMBERS_PIN = 'fnv1a64:d21cac35ccab9a0e';
const ARCHIVE_HASH = 'fnv1a64:3712870629e19d1d';
/** The fixture's last line is a prefix of this event, without a line end (a torn write). */
const TORN_EVENT = JSON.stringify({
  type: 'MCP_DISPATCHED',
  seq: 14,
  at: '2026-11-25T10:00:00.000Z',
  executionId: 'exec_h08',
  blueprint: 'shout-twice',
  stepId: 'shout-body',
  data: { toolName: 'echo_upper', server: 'demo', schemaHash: STALE_HASH },
});
const MANY_DRIFTED = 'many-drifted.blueprint.jsonc';
/**
 * The most characters a hash's or an execution's label may have: it must fit the side bar at its
 * default width with room for the status (the UI test checks the rendered rows).
 */
const LABEL_BUDGET = 12;

/** A schema hash as a row shows it: its first 8 hex digits (the tooltip has it whole). */
const short = (hash: string): string => `${hash.slice('fnv1a64:'.length, 'fnv1a64:'.length + 8)}…`;

/** One execution as compared here: id, blueprint/step, seq, line, time, ran after drift. */
function executionLine(execution: HistoryExecutionReport): string {
  return `${execution.executionId} ${execution.blueprint ?? '-'}/${execution.stepId ?? '-'} seq ${execution.seq} line ${execution.line} ${execution.at} afterDrift ${String(execution.ranAfterDrift)} log ${execution.log}`;
}

/** The report without times of day that depend on the clock (lastSeen/firstSeen are compared apart). */
function shapeOf(report: HistoryReport): unknown {
  return report.servers.map((server) => ({
    server: server.server,
    tools: server.tools.map((tool) => ({
      tool: tool.tool,
      liveState: tool.liveState,
      liveHash: tool.liveHash,
      hashes: tool.hashes.map((hash) => ({
        schemaHash: hash.schemaHash,
        status: hash.status,
        pinned: hash.pinned,
        live: hash.live,
        count: hash.count,
        ranAfterDrift: hash.ranAfterDrift,
        executionsComplete: hash.executionsComplete,
        executions: hash.executions.map(executionLine),
      })),
    })),
  }));
}

function describeReport(report: HistoryReport | null | undefined): string {
  return report ? JSON.stringify({ summary: report.summary, shape: shapeOf(report) }, null, 1) : String(report);
}

const exec = (id: string, blueprint: string | null, step: string | null, seq: number, line: number, at: string, afterDrift: boolean | null) =>
  `${id} ${blueprint ?? '-'}/${step ?? '-'} seq ${seq} line ${line} ${at} afterDrift ${String(afterDrift)} log ${LOG}`;

/** The executions of the fixture log, newest first per hash, as the report lists them. */
function fixtureExecutions(afterDrift: { reference: boolean | null; stale: boolean | null; add: boolean | null }) {
  return {
    reference: [
      exec('exec_h05', 'shout-twice', 'shout-body', 11, 11, '2026-11-23T12:00:00.000Z', afterDrift.reference),
      exec('exec_h04', 'shout-twice', 'shout-subject', 8, 8, '2026-11-22T11:00:00.000Z', afterDrift.reference),
      exec('exec_h03', 'shout-subject', 'shout', 7, 7, '2026-11-22T10:00:00.000Z', afterDrift.reference),
    ],
    stale: [
      exec('exec_h02', 'shout-twice', 'shout-body', 4, 4, '2026-11-20T09:30:00.000Z', afterDrift.stale),
      exec('exec_h01', 'shout-twice', 'shout-subject', 2, 2, '2026-11-20T09:00:01.000Z', afterDrift.stale),
    ],
    add: [
      exec('exec_h06', 'score-and-tidy', 'score', 12, 12, '2026-11-24T09:00:00.000Z', afterDrift.add),
      exec('exec_h04', 'shout-twice', 'score', 9, 9, '2026-11-22T11:00:01.000Z', afterDrift.add),
    ],
    archive: [exec('exec_h07', null, null, 13, 13, '2026-11-24T09:05:00.000Z', null)],
  };
}

/** The fixture log's counters before any test appended to it. */
const FIXTURE_LOG = { log: LOG, lines: 13, blank: 0, dispatched: 8, skipped: 4, malformed: 1, torn: 1, problemsTruncated: false };

function logOf(report: HistoryReport) {
  const log = report.logs.find((candidate) => candidate.log === LOG);
  assert.ok(log, `the report lists no log ${LOG}; logs: ${report.logs.map((l) => l.log).join(', ') || '(none)'}`);
  return log;
}

function hashOf(report: HistoryReport, server: string, tool: string, schemaHash: string) {
  return report.servers.find((s) => s.server === server)?.tools.find((t) => t.tool === tool)?.hashes.find((h) => h.schemaHash === schemaHash);
}

/** `toolpin/history` through the extension's own client: the request the view sends. */
async function historyReport(staleOnly: boolean): Promise<HistoryReport> {
  const report = await toolpinApi().client!.sendRequest<HistoryReport | null>('toolpin/history', { staleOnly });
  assert.ok(report, 'toolpin/history answered null (the server failed to build the report; see the Toolpin output)');
  return report;
}

/** Asks for the report until `accept` holds (bounded); fails with the last report. */
async function reportWhere(staleOnly: boolean, accept: (report: HistoryReport) => boolean, what: string, timeoutMs = 20_000): Promise<HistoryReport> {
  const deadline = Date.now() + timeoutMs;
  let last: HistoryReport | undefined;
  for (;;) {
    last = await historyReport(staleOnly);
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last report:\n${describeReport(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The live schema pin of echo_upper under the runner's (or drift.test's) control document. */
function echoLiveHash(controlFile: string): string {
  const control = JSON.parse(fs.readFileSync(controlFile, 'utf8')) as { rewrite?: { echo_upper?: { inputSchema?: unknown } } };
  const schema = control.rewrite?.echo_upper?.inputSchema;
  return schema === undefined ? ECHO_PIN.REFERENCE : `fnv1a64:${fnv1a64Hex(sortedJson(schema))}`;
}

/**
 * The view's provider over the extension's running client (the same class the extension registers;
 * a second instance, never registered). Requests go by method name: the test module's copy of the
 * protocol types is not the bundled client's.
 */
function viewProvider(): DispatchHistoryProvider {
  const client = toolpinApi().client!;
  const shim = { sendRequest: (type: { method: string }, params: unknown) => client.sendRequest(type.method, params) };
  return new DispatchHistoryProvider(() => shim as unknown as LanguageClient);
}

type TreeNode = Awaited<ReturnType<DispatchHistoryProvider['getChildren']>>[number];

/** Every node of the tree, depth first: `<depth> <label> — <description> [<contextValue>] $(<icon>)`. */
async function treeLines(provider: DispatchHistoryProvider): Promise<{ lines: string[]; nodes: Array<{ node: TreeNode; item: vscode.TreeItem }> }> {
  const lines: string[] = [];
  const nodes: Array<{ node: TreeNode; item: vscode.TreeItem }> = [];
  const walk = async (parent: TreeNode | undefined, depth: number): Promise<void> => {
    for (const node of await provider.getChildren(parent)) {
      const item = provider.getTreeItem(node);
      nodes.push({ node, item });
      const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
      const description = typeof item.description === 'string' ? item.description : '';
      const icon = (item.iconPath as { id?: unknown } | undefined)?.id ?? '';
      lines.push(`${depth} ${label} — ${description} [${item.contextValue ?? ''}] $(${String(icon)})`);
      await walk(node, depth + 1);
    }
  };
  await walk(undefined, 0);
  return { lines, nodes };
}

async function activateThroughTheView(): Promise<void> {
  // What a person does: show the Toolpin container, focus the view. Opening the view activates the
  // extension (onView) if nothing else has yet.
  await vscode.commands.executeCommand('workbench.view.extension.toolpin');
  await vscode.commands.executeCommand('toolpin.dispatchHistory.focus');
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is not installed in this host`);
  await pollUntil(() => extension.isActive, 20_000, `${EXTENSION_ID} to activate`);
}

(hostEnv.trust === 'trusted' ? describe : describe.skip)('Dispatch History view (trusted workspace)', () => {
  let controlFile: string;
  let echoLive: string;

  before(async () => {
    controlFile = requireLiveFixture().controlFile;
    await activateThroughTheView();
  });

  after(async () => {
    // Leave the view as a user would find it (the filter is view state, not a setting).
    await vscode.commands.executeCommand('toolpin.history.showAllHashes');
  });

  it('the report shows every server, tool, hash, status, count and execution of the fixture log', async () => {
    echoLive = echoLiveHash(controlFile);
    assert.ok(([ECHO_PIN.V2, ECHO_PIN.V3] as string[]).includes(echoLive), `echo_upper's live hash ${echoLive} is control version 2 or 3`);
    assert.equal(`fnv1a64:${fnv1a64Hex(sortedJson(ADD_NUMBERS_SCHEMA))}`, ADD_NUMBERS_PIN, 'the add_numbers pin is the schema pin of its schema');
    // The server lists "demo" on demand: until then its hashes are unknown.
    const report = await reportWhere(
      false,
      (r) => hashOf(r, 'demo', 'echo_upper', STALE_HASH)?.live === false && hashOf(r, 'demo', 'add_numbers', ADD_NUMBERS_PIN)?.live === true,
      'the demo server\'s listing in the history report',
    );
    const executions = fixtureExecutions({ reference: null, stale: null, add: false });
    assert.deepEqual(
      shapeOf(report),
      [
        {
          server: 'archive',
          tools: [
            {
              tool: 'reverse_text',
              liveState: 'unknown',
              liveHash: null,
              hashes: [{ schemaHash: ARCHIVE_HASH, status: 'unknown', pinned: false, live: null, count: 1, ranAfterDrift: null, executionsComplete: true, executions: executions.archive }],
            },
          ],
        },
        {
          server: 'demo',
          tools: [
            {
              tool: 'add_numbers',
              liveState: 'served',
              liveHash: ADD_NUMBERS_PIN,
              hashes: [{ schemaHash: ADD_NUMBERS_PIN, status: 'pinned+live', pinned: true, live: true, count: 2, ranAfterDrift: 0, executionsComplete: true, executions: executions.add }],
            },
            {
              tool: 'echo_upper',
              liveState: 'served',
              liveHash: echoLive,
              // Newest last execution first. No execution at the live hash is in the log, so when
              // the drift happened is unknown: "ran after drift" is null, never a guess.
              hashes: [
                { schemaHash: ECHO_PIN.REFERENCE, status: 'pinned', pinned: true, live: false, count: 3, ranAfterDrift: null, executionsComplete: true, executions: executions.reference },
                { schemaHash: STALE_HASH, status: 'stale', pinned: false, live: false, count: 2, ranAfterDrift: null, executionsComplete: true, executions: executions.stale },
              ],
            },
          ],
        },
      ],
      describeReport(report),
    );
    const echo = report.servers[1]!.tools[1]!;
    assert.equal(echo.liveFirstSeen, null, 'no execution at the live hash');
    assert.ok(
      echo.pins.some((pin) => pin.hash === ECHO_PIN.REFERENCE && pin.blueprint === 'ui-shout' && pin.file === workspaceFile('ui-drifted.blueprint.jsonc').fsPath && !pin.anyServer),
      `ui-drifted.blueprint.jsonc pins the reference hash on demo (never re-pinned in-host):\n${JSON.stringify(echo.pins)}`,
    );
    assert.ok(report.servers[0]!.tools[0]!.liveReason?.includes('archive'), `live unknown says why: ${report.servers[0]!.tools[0]!.liveReason}`);
    assert.deepEqual(hashOf(report, 'demo', 'echo_upper', STALE_HASH)!.firstSeen, { at: '2026-11-20T09:00:01.000Z', seq: 2 });
    assert.deepEqual(hashOf(report, 'demo', 'echo_upper', STALE_HASH)!.lastSeen, { at: '2026-11-20T09:30:00.000Z', seq: 4 });

    // The log: other event types skipped, the malformed line and the torn last line reported.
    const log = logOf(report);
    assert.deepEqual({ ...log, problems: undefined }, { ...FIXTURE_LOG, problems: undefined });
    assert.deepEqual(
      log.problems.map((p) => `${p.line} ${p.reason}`),
      ['6 not-json', '14 torn'],
    );
    assert.deepEqual(report.summary, {
      logs: 1,
      lines: 13,
      dispatched: 8,
      skipped: 4,
      malformed: 1,
      torn: 1,
      hashes: 4,
      executions: 8,
      staleExecutions: 5,
      unknownExecutions: 1,
      ranAfterDrift: null,
    });
  });

  it('the view turns the report into the tree: labels, statuses with counts, executions with blueprint/step', async () => {
    const { lines, nodes } = await treeLines(viewProvider());
    // Short rows (issue: labels were cut at the default side bar width): the label names the
    // thing, the description says status and count or blueprint/step; ages and times are in the
    // tooltips, long hashes are shortened (the tooltip has them whole).
    assert.equal(short(ECHO_PIN.REFERENCE), 'a76fe8d6…');
    assert.deepEqual(lines, [
      '0 archive —  [server] $(server)',
      '1 reverse_text — live unknown [] $(tools)',
      `2 ${short(ARCHIVE_HASH)} — live unknown · 1 [hash] $(question)`,
      '3 exec_h07 — ? · ? [execution] $(history)',
      '0 demo —  [server] $(server)',
      `1 add_numbers — live ${short(ADD_NUMBERS_PIN)} [] $(tools)`,
      `2 ${short(ADD_NUMBERS_PIN)} — pinned · live · 2 [hash] $(pass)`,
      '3 exec_h06 — score · score-and-tidy [execution] $(history)',
      '3 exec_h04 — score · shout-twice [execution] $(history)',
      `1 echo_upper — live ${short(echoLive)} [] $(tools)`,
      // (Context value "hash.stale": every hash that is not live, pinned or not.)
      `2 ${short(ECHO_PIN.REFERENCE)} — pinned · stale · 3 [hash.stale] $(warning)`,
      '3 exec_h05 — shout-body · shout-twice [execution] $(history)',
      '3 exec_h04 — shout-subject · shout-twice [execution] $(history)',
      '3 exec_h03 — shout · shout-subject [execution] $(history)',
      `2 ${short(STALE_HASH)} — stale · 2 [hash.stale] $(warning)`,
      '3 exec_h02 — shout-body · shout-twice [execution] $(history)',
      '3 exec_h01 — shout-subject · shout-twice [execution] $(history)',
    ]);
    // What left the rows is in the tooltips: full hashes, last seen, blueprint/step with the time.
    const tooltipOf = (item: vscode.TreeItem) => (typeof item.tooltip === 'string' ? item.tooltip : (item.tooltip?.value ?? ''));
    for (const { node, item } of nodes) {
      const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
      if (node.kind === 'hash' || node.kind === 'execution') assert.ok(label.length <= LABEL_BUDGET, `"${label}" has ${label.length} characters; at most ${LABEL_BUDGET} leave room for the status`);
      if (node.kind === 'tool' && node.tool.liveHash) assert.ok(tooltipOf(item).includes(node.tool.liveHash), tooltipOf(item));
      if (node.kind === 'hash') {
        assert.ok(tooltipOf(item).includes(node.hash.schemaHash), tooltipOf(item));
        assert.ok(tooltipOf(item).includes(`last seen `) && tooltipOf(item).includes(node.hash.lastSeen.at), tooltipOf(item));
        assert.ok(item.accessibilityInformation?.label.startsWith(`${node.hash.schemaHash}, `), 'screen readers hear the whole hash');
      }
      if (node.kind === 'execution') {
        assert.ok(tooltipOf(item).includes(node.execution.executionId) && tooltipOf(item).includes(node.execution.at), tooltipOf(item));
        assert.ok(tooltipOf(item).includes(`${node.execution.log}:${node.execution.line}`), tooltipOf(item));
      }
    }
    // Servers and tools open expanded, hashes collapsed; a click on an execution opens its step.
    for (const { node, item } of nodes) {
      const expected =
        node.kind === 'server' || node.kind === 'tool'
          ? vscode.TreeItemCollapsibleState.Expanded
          : node.kind === 'hash'
            ? vscode.TreeItemCollapsibleState.Collapsed
            : vscode.TreeItemCollapsibleState.None;
      assert.equal(item.collapsibleState, expected, `collapsible state of a ${node.kind} node`);
      if (node.kind === 'execution') {
        assert.equal(item.command?.command, 'toolpin.history.openStep');
        assert.deepEqual(item.command?.arguments, [node]);
      }
    }
  });

  it('toolpin.history.showStaleOnly: the stale query lists exactly the executions at hashes that are not live', async () => {
    await vscode.commands.executeCommand('toolpin.history.showStaleOnly');
    const report = await historyReport(true);
    assert.equal(report.query.stale, true);
    const listed = report.servers.flatMap((server) =>
      server.tools.flatMap((tool) => tool.hashes.flatMap((hash) => hash.executions.map((execution) => `${server.server}/${tool.tool}@${hash.schemaHash} ${execution.executionId}`))),
    );
    assert.deepEqual(listed, [
      `demo/echo_upper@${ECHO_PIN.REFERENCE} exec_h05`,
      `demo/echo_upper@${ECHO_PIN.REFERENCE} exec_h04`,
      `demo/echo_upper@${ECHO_PIN.REFERENCE} exec_h03`,
      `demo/echo_upper@${STALE_HASH} exec_h02`,
      `demo/echo_upper@${STALE_HASH} exec_h01`,
    ]);
    assert.ok(
      report.servers.every((server) => server.tools.every((tool) => tool.hashes.every((hash) => hash.live === false))),
      'every listed hash is not live',
    );
    assert.equal(report.summary.hashes, 2);
    assert.equal(report.summary.staleExecutions, 5);
    assert.equal(report.summary.executions, 5);
    // The archive's execution can be neither ruled in nor out: counted as unknown.
    assert.equal(report.summary.unknownExecutions, 1);
    await vscode.commands.executeCommand('toolpin.history.showAllHashes');
    assert.equal((await historyReport(false)).summary.hashes, 4, 'all hashes again');
  });

  it('toolpin.history.copyExecutionId returns the id and puts it on the clipboard', async () => {
    const report = await historyReport(false);
    const execution = hashOf(report, 'demo', 'echo_upper', STALE_HASH)!.executions[0]!;
    await vscode.env.clipboard.writeText('something else');
    const copied = await vscode.commands.executeCommand<string | undefined>('toolpin.history.copyExecutionId', { kind: 'execution', execution });
    assert.equal(copied, 'exec_h02');
    assert.equal(await vscode.env.clipboard.readText(), 'exec_h02');
    assert.equal(await vscode.commands.executeCommand('toolpin.history.copyExecutionId', { kind: 'hash' }), undefined, 'nothing to copy from a non-execution node');
  });

  it('toolpin.history.openStep opens the blueprint with the step id selected', async () => {
    const report = await historyReport(false);
    const execution = hashOf(report, 'demo', 'echo_upper', STALE_HASH)!.executions.find((e) => e.executionId === 'exec_h02')!;
    assert.equal(await vscode.commands.executeCommand('toolpin.history.openStep', { kind: 'execution', execution }), true);
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor, 'an editor is active');
    assert.equal(editor.document.uri.toString(), workspaceFile(MANY_DRIFTED).toString());
    assert.equal(editor.document.getText(editor.selection), '"shout-body"');
    assert.ok(editor.document.lineAt(editor.selection.start.line).text.includes('"id": "shout-body"'), 'the selection is the step\'s id');

    // The same as clicking the tree item: its command, with its arguments.
    const { nodes } = await treeLines(viewProvider());
    const item = nodes.find(({ node }) => node.kind === 'execution' && node.execution.executionId === 'exec_h03')?.item;
    assert.ok(item?.command, 'the exec_h03 item has a command');
    assert.equal(await vscode.commands.executeCommand(item.command.command, ...(item.command.arguments ?? [])), true);
    const clicked = vscode.window.activeTextEditor;
    assert.equal(clicked?.document.uri.toString(), workspaceFile('drifted.blueprint.jsonc').toString());
    assert.equal(clicked.document.getText(clicked.selection), '"shout"');

    // An execution that names no blueprint has no step to open.
    const orphan = hashOf(report, 'archive', 'reverse_text', ARCHIVE_HASH)!.executions[0]!;
    assert.equal(await vscode.commands.executeCommand('toolpin.history.openStep', { kind: 'execution', execution: orphan }), false);
  });

  it('appending to the log makes the counts grow (the torn line once completed, then a new event)', async () => {
    const file = workspaceFile(LOG).fsPath;
    const text = fs.readFileSync(file, 'utf8');
    const lastLine = text.slice(text.lastIndexOf('\n') + 1);
    assert.ok(lastLine.length > 0 && TORN_EVENT.startsWith(lastLine), `the fixture ends in a torn prefix of the exec_h08 event; it ends in:\n${lastLine}`);

    // 1. The rest of the torn line: now a complete event at the stale hash.
    const t0 = Date.now();
    fs.appendFileSync(file, `${TORN_EVENT.slice(lastLine.length)}\n`);
    const completed = await reportWhere(false, (r) => hashOf(r, 'demo', 'echo_upper', STALE_HASH)?.count === 3, 'the stale hash to count 3 (torn line completed)', 15_000);
    const stale = hashOf(completed, 'demo', 'echo_upper', STALE_HASH)!;
    assert.equal(stale.executions[0]!.executionId, 'exec_h08', 'the completed line is the newest execution at the stale hash');
    assert.equal(stale.lastSeen.seq, 14);
    assert.deepEqual({ ...logOf(completed), problems: undefined }, { ...FIXTURE_LOG, lines: 14, dispatched: 9, torn: 0, problems: undefined });
    assert.deepEqual(
      logOf(completed).problems.map((p) => `${p.line} ${p.reason}`),
      ['6 not-json'],
    );
    // 2. A new execution at the live hash of add_numbers.
    const at = new Date().toISOString();
    fs.appendFileSync(
      file,
      `${JSON.stringify({ type: 'MCP_DISPATCHED', seq: 15, at, executionId: 'exec_h09', blueprint: 'score-and-tidy', stepId: 'score', data: { toolName: 'add_numbers', server: 'demo', schemaHash: ADD_NUMBERS_PIN } })}\n`,
    );
    const grown = await reportWhere(false, (r) => hashOf(r, 'demo', 'add_numbers', ADD_NUMBERS_PIN)?.count === 3, 'the add_numbers live hash to count 3', 15_000);
    assert.equal(hashOf(grown, 'demo', 'add_numbers', ADD_NUMBERS_PIN)!.executions[0]!.executionId, 'exec_h09');
    assert.equal(grown.summary.dispatched, 10);
    assert.equal(grown.summary.staleExecutions, 6);
    console.log(`      (both appends seen within ${Date.now() - t0} ms)`);

    // The view's tree shows them too.
    const { lines } = await treeLines(viewProvider());
    assert.ok(lines.includes(`2 ${short(STALE_HASH)} — stale · 3 [hash.stale] $(warning)`), lines.join('\n'));
    assert.ok(lines.includes(`2 ${short(ADD_NUMBERS_PIN)} — pinned · live · 3 [hash] $(pass)`), lines.join('\n'));
  });
});

(hostEnv.trust === 'untrusted' ? describe : describe.skip)('Dispatch History view (untrusted workspace)', () => {
  before(activateThroughTheView);

  it('still reads the logs, but without a listing no hash is live or stale', async () => {
    const report = await reportWhere(false, (r) => r.summary.dispatched === 8, 'the fixture log read');
    const executions = fixtureExecutions({ reference: null, stale: null, add: null });
    const unknown = (schemaHash: string, pinned: boolean, count: number, listed: string[]) => ({
      schemaHash,
      status: pinned ? 'pinned' : 'unknown',
      pinned,
      live: null,
      count,
      ranAfterDrift: null,
      executionsComplete: true,
      executions: listed,
    });
    assert.deepEqual(
      shapeOf(report),
      [
        { server: 'archive', tools: [{ tool: 'reverse_text', liveState: 'unknown', liveHash: null, hashes: [unknown(ARCHIVE_HASH, false, 1, executions.archive)] }] },
        {
          server: 'demo',
          tools: [
            { tool: 'add_numbers', liveState: 'unknown', liveHash: null, hashes: [unknown(ADD_NUMBERS_PIN, true, 2, executions.add)] },
            {
              tool: 'echo_upper',
              liveState: 'unknown',
              liveHash: null,
              hashes: [unknown(ECHO_PIN.REFERENCE, true, 3, executions.reference), unknown(STALE_HASH, false, 2, executions.stale)],
            },
          ],
        },
      ],
      describeReport(report),
    );
    assert.equal(report.summary.staleExecutions, 0, 'nothing is called stale without a listing');
    assert.equal(report.summary.unknownExecutions, 8);
    for (const tool of report.servers.flatMap((server) => server.tools)) {
      assert.ok(tool.liveReason, `${tool.tool}: live unknown says why`);
    }
    console.log(`      (liveReason of demo/echo_upper: ${report.servers[1]!.tools[1]!.liveReason})`);
    assert.deepEqual({ ...logOf(report), problems: undefined }, { ...FIXTURE_LOG, problems: undefined });
    // Opening a step needs no server either.
    const execution = hashOf(report, 'demo', 'echo_upper', STALE_HASH)!.executions[0]!;
    assert.equal(await vscode.commands.executeCommand('toolpin.history.openStep', { kind: 'execution', execution }), true);
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), workspaceFile(MANY_DRIFTED).toString());
  });

  it('the tree marks no hash stale and every tool "live unknown"', async () => {
    const { lines, nodes } = await treeLines(viewProvider());
    assert.equal(nodes.filter(({ node }) => node.kind === 'execution').length, 8, lines.join('\n'));
    for (const { node, item } of nodes) {
      if (node.kind === 'tool') assert.equal(item.description, 'live unknown', lines.join('\n'));
      if (node.kind === 'hash') {
        assert.equal(item.contextValue, 'hash', `${node.hash.schemaHash} is not marked stale:\n${lines.join('\n')}`);
        assert.equal((item.iconPath as { id?: string }).id, 'question', `${node.hash.schemaHash} has the "unknown" icon`);
        assert.doesNotMatch(String(item.description), /^stale/, lines.join('\n'));
      }
    }
  });

  // The CLI prints "pinned (live unknown)" for the same hash: no live answer is not "stale".
  it('a pinned hash with no live answer is labelled "pinned · live unknown", never "not live" or "stale"', async () => {
    const { lines, nodes } = await treeLines(viewProvider());
    let seen = 0;
    for (const { node, item } of nodes) {
      if (node.kind !== 'hash' || node.hash.live !== null || node.hash.status !== 'pinned') continue;
      seen++;
      assert.match(String(item.description), /^pinned · live unknown · \d+$/, lines.join('\n'));
      assert.doesNotMatch(String(item.description), /not live|stale/, lines.join('\n'));
    }
    assert.equal(seen, 2, `the two pinned hashes of the fixture (add_numbers, echo_upper):\n${lines.join('\n')}`);
  });

  it('with the stale filter hiding every hash, one message row says so and leads back to all hashes', async () => {
    const provider = viewProvider();
    provider.staleOnly = true;
    const roots = await provider.getChildren();
    assert.equal(roots.length, 1, `one row, not the "no logs" welcome of an empty tree: ${JSON.stringify(roots)}`);
    const item = provider.getTreeItem(roots[0]!);
    assert.equal(item.label, 'No stale hashes');
    assert.equal(item.command?.command, 'toolpin.history.showAllHashes');
    const tooltip = typeof item.tooltip === 'string' ? item.tooltip : '';
    assert.match(tooltip, /None of the 8 executions/);
    assert.match(tooltip, /8 have no live answer/, 'untrusted: nothing is listed, so all 8 may or may not be stale');
    provider.staleOnly = false;
    provider.refresh();
    const all = await provider.getChildren();
    assert.deepEqual(all.map((node) => node.kind), ['server', 'server'], 'without the filter: the servers');
  });
});
