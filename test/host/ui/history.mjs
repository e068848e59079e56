// The Dispatch History UI steps of the host tests: in the real workbench (code-server + Chromium,
// playwright-core), the way a person would: click the "Toolpin" activity-bar item, see the tree
// (server "demo", tool "echo_upper", a hash marked "stale"), expand the stale hash, click one of its
// executions and land in the blueprint with the step's id selected; then an event appended to the
// log (the runtime writing) appears in the tree with no click at all; the stale filter is named in
// the view's title. At the default side bar width no row's label is cut. A screenshot after every step
// (ui-history-<step>.png) and on failure (ui-history-failure-<step>.png), in the results folder.
//
// Data: test/host/workspace/history/runs.events.jsonl (see test/host/suite/history.test.ts for
// what it holds). The in-host suite appends to the workspace copy's log before this runs, so the
// steps rely only on what stays true: a stale hash of echo_upper on demo whose executions all name
// steps of the blueprint "shout-twice" (many-drifted.blueprint.jsonc).
//
// Called by test/host/run-code-server.mjs after the UI smoke steps, on the same page (it loads the
// workbench itself when that page has none). Plain Node ESM.
/* global document */
import * as fs from 'node:fs';
import * as path from 'node:path';

const VIEW_NAME = 'Dispatch History';
/** client/src/dispatchHistoryView.ts STALE_ONLY_MESSAGE. */
const STALE_ONLY_MESSAGE = 'Showing stale hashes only: those the server no longer serves.';
/** The fixture log (workspace-relative). */
const LOG = 'history/runs.events.jsonl';
const SERVER = 'demo';
const TOOL = 'echo_upper';
/** Where the blueprints the fixture log names live (workspace-relative). */
const BLUEPRINT_FILES = {
  'shout-twice': 'many-drifted.blueprint.jsonc',
  'shout-subject': 'drifted.blueprint.jsonc',
  'score-and-tidy': 'good.blueprint.jsonc',
};

/**
 * Runs the steps in order; a step that fails stops the run, and every step not reached counts as
 * failed too. Returns { passed, failed, results } like runUiSmoke.
 *
 * @param {object} options
 * @param {import('playwright-core').Page} options.page   a page of the UI phase (workbench loaded or not)
 * @param {string} options.url                          the workbench URL, used when the page has none
 * @param {string} options.workspaceDir                 the workspace copy (to read the blueprint opened)
 * @param {string} options.resultsDir                   where screenshots go
 * @param {string} options.prefix                       screenshot name prefix ('' or 'vsix-')
 * @param {(line: string) => void} options.log
 * @param {number} options.stepTimeoutMs                 per step
 */
export async function runUiHistory({ page, url, workspaceDir, resultsDir, prefix, log, stepTimeoutMs = 30_000 }) {
  const results = [];
  const shot = async (name) => {
    const file = path.join(resultsDir, `${prefix}ui-history-${name}.png`);
    try {
      await page.screenshot({ path: file, timeout: 10_000 });
      return path.basename(file);
    } catch (error) {
      log(`screenshot ${path.basename(file)} failed: ${String(error?.message ?? error).split('\n')[0]}`);
      return undefined;
    }
  };

  const sidebar = page.locator('.part.sidebar');
  const rows = sidebar.locator('.monaco-list-row');
  const editor = page.locator('.part.editor .editor-instance .monaco-editor').first();
  // staleHash: the whole hash (from the row's aria-label); staleLabel: the row's shortened label.
  const state = { staleHash: undefined, staleLabel: undefined, execution: undefined, blueprint: undefined, step: undefined };

  const steps = [
    [
      'open',
      `clicking the "Toolpin" activity-bar item shows the ${VIEW_NAME} view`,
      async () => {
        if (!(await page.locator('.monaco-workbench').isVisible().catch(() => false))) {
          await page.goto(url, { waitUntil: 'domcontentloaded' });
          await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: stepTimeoutMs });
        }
        await page.locator('#workbench\\.parts\\.statusbar').waitFor({ state: 'visible', timeout: stepTimeoutMs });
        await page.keyboard.press('Escape');
        const item = page.locator('.part.activitybar .action-item .action-label[aria-label^="Toolpin"]').first();
        await item.waitFor({ state: 'visible', timeout: stepTimeoutMs });
        const label = await item.getAttribute('aria-label');
        await item.click();
        // A container with one view shows the view's name in the side bar's title (no pane header).
        const title = sidebar.locator('.composite.title, .pane-header', { hasText: new RegExp(VIEW_NAME, 'i') }).first();
        await title.waitFor({ state: 'visible', timeout: stepTimeoutMs });
        log(`UI: activity-bar item "${label}" shows "${(await title.innerText()).replace(/\s+/g, ' ').trim()}"`);
      },
    ],
    [
      'tree',
      `the tree shows the server "${SERVER}", the tool "${TOOL}" and a hash marked "stale"`,
      async () => {
        let seen = [];
        await until(
          async () => {
            const tree = (seen = await treeRows(rows));
            const server = tree.find((row) => row.text === SERVER);
            const tool = tree.find((row) => row.text.startsWith(`${TOOL} `) && row.level === (server?.level ?? 0) + 1);
            const stale = tree.find((row) => /^[0-9a-f]{8}…\s+stale · \d+$/.test(row.text) && row.level === (tool?.level ?? 0) + 1);
            if (!server || !tool || !stale) return false;
            state.staleLabel = stale.text.split(/\s/)[0];
            state.staleHash = /^(fnv1a64:[0-9a-f]{16}), /.exec(stale.aria ?? '')?.[1];
            return true;
          },
          stepTimeoutMs,
          () => `rows "${SERVER}", "${TOOL} …" and "<8 hex>… stale · N" in the ${VIEW_NAME} tree; rows now: ${describeRows(seen)}`,
        );
        if (!state.staleHash?.slice('fnv1a64:'.length).startsWith(state.staleLabel.slice(0, -1))) throw new Error(`the stale row's aria-label does not name its whole hash: ${JSON.stringify(seen.find((row) => row.text.startsWith(state.staleLabel)))}`);
        log(`UI: ${seen.length} tree rows: ${describeRows(seen)}`);
        assertLabelsFit(seen, log);
      },
    ],
    [
      'expand',
      'clicking the stale hash expands it: its executions appear, each with blueprint/step',
      async () => {
        await rows.filter({ hasText: state.staleLabel }).first().click();
        let seen = [];
        await until(
          async () => {
            const children = childrenOf((seen = await treeRows(rows)), state.staleLabel);
            // "<id> <step> · <blueprint>" (step first: a cut row loses the blueprint, not the step).
            const executions = children?.filter((row) => /^exec_\S+\s+[\w-]+ · [\w-]+$/.test(row.text)) ?? [];
            if (executions.length === 0 || executions.length !== children.length) return false;
            state.execution = executions[0].text.split(/\s/)[0];
            [, state.step, state.blueprint] = /^\S+\s+([\w-]+) · ([\w-]+)$/.exec(executions[0].text);
            return true;
          },
          stepTimeoutMs,
          () => `execution rows under ${state.staleHash}; rows now: ${describeRows(seen)}`,
        );
        const expanded = await rows.filter({ hasText: state.staleLabel }).first().getAttribute('aria-expanded');
        if (expanded !== 'true') throw new Error(`the stale hash row has aria-expanded=${expanded}`);
        assertLabelsFit(seen, log);
        log(`UI: ${state.staleHash} expanded; newest execution ${state.execution} (${state.blueprint}/${state.step})`);
      },
    ],
    [
      'step',
      'clicking an execution opens its blueprint with the step id selected',
      async () => {
        const file = BLUEPRINT_FILES[state.blueprint];
        if (!file) throw new Error(`the execution names blueprint "${state.blueprint}", which no fixture file holds`);
        const idText = `"id": "${state.step}"`;
        const lines = fs.readFileSync(path.join(workspaceDir, file), 'utf8').split('\n');
        const lineIndex = lines.findIndex((line) => line.includes(idText));
        if (lineIndex === -1) throw new Error(`${file} has no line with ${idText}`);
        const selected = `"${state.step}"`;
        // The selection is the id's string literal and ends after its closing quote, where the
        // cursor is (columns are 1-based).
        const cursorColumn = lines[lineIndex].indexOf(idText) + idText.length + 1;

        await rows.filter({ hasText: state.execution }).first().click();
        await page.locator('.part.editor .tab.active', { hasText: file }).waitFor({ state: 'visible', timeout: stepTimeoutMs });
        await editor.locator('.view-line', { hasText: idText }).waitFor({ state: 'visible', timeout: stepTimeoutMs });
        // The status bar's cursor item: line, column and how much is selected.
        const expected = `Ln ${lineIndex + 1}, Col ${cursorColumn} (${selected.length} selected)`;
        const position = page.locator('#status\\.editor\\.selection');
        await until(async () => (await position.innerText().catch(() => '')).includes(expected), stepTimeoutMs, `the status bar to read "${expected}"`);
        // And in the editor itself: the cursor sits on the step id's line, a selection is drawn there.
        const where = await page.evaluate((needle) => {
          const root = document.querySelector('.part.editor .editor-instance .monaco-editor');
          const line = [...(root?.querySelectorAll('.view-line') ?? [])].find((node) => (node.textContent ?? '').replace(/\u00a0/g, ' ').includes(needle));
          const cursor = root?.querySelector('.cursors-layer .cursor');
          const selections = [...(root?.querySelectorAll('.selected-text') ?? [])];
          const box = (node) => node?.getBoundingClientRect().toJSON();
          return { line: box(line), cursor: box(cursor), selections: selections.map(box) };
        }, idText);
        if (!where.line || !where.cursor) throw new Error(`no ${where.line ? 'cursor' : `view line with ${idText}`} in the editor`);
        const sameBand = (box) => Math.abs(box.y - where.line.y) < where.line.height / 2;
        if (!sameBand(where.cursor)) throw new Error(`the cursor is at y=${where.cursor.y}, the line with ${idText} at y=${where.line.y}`);
        if (!where.selections.some((box) => sameBand(box) && box.width > 0)) throw new Error(`no selection is drawn on the line with ${idText}`);
        log(`UI: ${file} opened, status bar "${(await position.innerText()).trim()}"`);
      },
    ],
    [
      'live',
      'an event appended to the log shows up in the tree by itself (the server polls the log and notifies the view)',
      async () => {
        const countOf = (tree) => {
          const row = tree.find((candidate) => candidate.text.startsWith(`${state.staleLabel} stale · `));
          return row ? Number(/ stale · (\d+)$/.exec(row.text)?.[1]) : undefined;
        };
        const before = countOf(await treeRows(rows));
        if (!Number.isInteger(before)) throw new Error(`no row for ${state.staleHash}: ${describeRows(await treeRows(rows))}`);
        const executionId = `exec_ui_${Date.now().toString(36)}`;
        const event = {
          type: 'MCP_DISPATCHED',
          seq: 100,
          at: new Date().toISOString(),
          executionId,
          blueprint: 'shout-twice',
          stepId: 'shout-subject',
          data: { toolName: TOOL, server: SERVER, schemaHash: state.staleHash },
        };
        const t0 = Date.now();
        fs.appendFileSync(path.join(workspaceDir, LOG), `${JSON.stringify(event)}\n`);
        let seen = [];
        await until(
          async () => {
            seen = await treeRows(rows);
            if (countOf(seen) !== before + 1) return false;
            const stale = seen.find((row) => row.text.startsWith(state.staleLabel));
            // A refreshed tree may fold the hash again: open it as a person would.
            if (stale?.expanded === 'false') await rows.filter({ hasText: state.staleLabel }).first().click();
            return (childrenOf(seen, state.staleLabel) ?? []).some((row) => row.text.startsWith(`${executionId} shout-subject · shout-twice`));
          },
          stepTimeoutMs,
          () => `"${state.staleLabel} stale · ${before + 1}" and a row ${executionId} under it, without a refresh; rows now: ${describeRows(seen)}`,
        );
        log(`UI: the tree showed ${executionId} (count ${before} → ${before + 1}) ${((Date.now() - t0) / 1000).toFixed(1)} s after the append`);
      },
    ],
    [
      'filter',
      'the stale filter (view title action) is named above the tree, and "Show All Hashes" turns it off again',
      async () => {
        const message = sidebar.getByText(STALE_ONLY_MESSAGE);
        if (await message.first().isVisible()) throw new Error('the stale-only message shows before the filter is on');
        await sidebar.hover();
        await sidebar.locator('.action-label[aria-label^="Show Stale Hashes Only"]').first().click();
        await message.first().waitFor({ state: 'visible', timeout: stepTimeoutMs });
        const box = await message.first().boundingBox();
        const tree = await sidebar.locator('.monaco-list').first().boundingBox();
        if (!box || !tree || box.y >= tree.y) throw new Error(`the message is not above the tree: message ${JSON.stringify(box)}, tree ${JSON.stringify(tree)}`);
        log(`UI: with the filter on, "${STALE_ONLY_MESSAGE}" shows above the tree`);
        let seen = [];
        await until(async () => (seen = await treeRows(rows)).length > 0 && seen.every((row) => !/pinned · live|^fnv1a64:\S+ live · /.test(row.text)), stepTimeoutMs, () => `only stale hashes in the tree; rows now: ${describeRows(seen)}`);
        await shot('filter-on');
        await sidebar.hover();
        await sidebar.locator('.action-label[aria-label^="Show All Hashes"]').first().click();
        await message.first().waitFor({ state: 'hidden', timeout: stepTimeoutMs });
      },
    ],
  ];

  let stopped = false;
  for (const [name, what, check] of steps) {
    if (stopped) {
      results.push({ name: `history-${name}`, what, ok: false, error: 'not run: an earlier UI step failed' });
      log(`UI ✘ ${what} (not run)`);
      continue;
    }
    const started = Date.now();
    try {
      await check();
      const file = await shot(name);
      results.push({ name: `history-${name}`, what, ok: true });
      log(`UI ✔ ${what} (${((Date.now() - started) / 1000).toFixed(1)} s${file ? `, ${file}` : ''})`);
    } catch (error) {
      const file = await shot(`failure-${name}`);
      const message = String(error?.message ?? error).split('\n').slice(0, 6).join('\n');
      results.push({ name: `history-${name}`, what, ok: false, error: message });
      log(`UI ✘ ${what}: ${message}${file ? ` (${file})` : ''}`);
      stopped = true;
    }
  }
  const passed = results.filter((result) => result.ok).length;
  return { passed, failed: results.length - passed, results };
}

/**
 * The rendered rows of the side bar's tree, in screen order (the list is virtual: DOM order is not
 * screen order): text ("<label> <description>", whitespace collapsed), aria-level, aria-expanded.
 */
function treeRows(rows) {
  return rows.evaluateAll((nodes) =>
    nodes
      .map((node) => ({
        // A tree item's label and description are sibling elements: joined with one space.
        text: [node.querySelector('.label-name'), node.querySelector('.label-description')]
          .map((part) => (part?.textContent ?? '').replace(/\s+/g, ' ').trim())
          .filter((part) => part.length > 0)
          .join(' '),
        level: Number(node.getAttribute('aria-level') ?? 0),
        aria: node.getAttribute('aria-label'),
        // Cut: the label's text runs past what the row shows (VS Code ends it with an ellipsis).
        labelCut: (() => {
          const name = node.querySelector('.label-name');
          const box = node.querySelector('.monaco-icon-label-container') ?? node;
          return name ? name.getBoundingClientRect().right > box.getBoundingClientRect().right + 0.5 || name.scrollWidth > name.clientWidth + 0.5 : false;
        })(),
        descriptionCut: (() => {
          const description = node.querySelector('.label-description');
          const box = node.querySelector('.monaco-icon-label-container') ?? node;
          return description ? description.getBoundingClientRect().right > box.getBoundingClientRect().right + 0.5 : false;
        })(),
        width: node.getBoundingClientRect().width,
        expanded: node.getAttribute('aria-expanded'),
        top: node.getBoundingClientRect().top,
      }))
      .sort((a, b) => a.top - b.top),
  );
}

/** Throws when a row's label is cut at the current (default) side bar width; logs cut descriptions. */
function assertLabelsFit(tree, log) {
  const cut = tree.filter((row) => row.labelCut);
  if (cut.length > 0) throw new Error(`labels cut at a ${Math.round(tree[0]?.width ?? 0)} px wide side bar: ${describeRows(cut)}`);
  // A hash row's status and count are what the view is for: they must not be cut either.
  const statusCut = tree.filter((row) => row.descriptionCut && /^[0-9a-f]{8}… /.test(row.text));
  if (statusCut.length > 0) throw new Error(`hash statuses cut at a ${Math.round(tree[0]?.width ?? 0)} px wide side bar: ${describeRows(statusCut)}`);
  const shortened = tree.filter((row) => row.descriptionCut);
  log(`UI: ${tree.length} rows in ${Math.round(tree[0]?.width ?? 0)} px, no label cut; ${shortened.length === 0 ? 'no description cut either' : `descriptions ending in an ellipsis: ${describeRows(shortened)}`}`);
}

function describeRows(tree) {
  return tree.length === 0 ? '(none)' : tree.map((row) => `[${row.level}${row.expanded === null ? '' : row.expanded === 'true' ? '-' : '+'}] ${row.text}`).join(' | ');
}

/** The rows right under the row starting with `label` (one level deeper), or undefined. */
function childrenOf(tree, label) {
  const at = tree.findIndex((row) => row.text.startsWith(label));
  if (at === -1) return undefined;
  const children = [];
  for (const row of tree.slice(at + 1)) {
    if (row.level <= tree[at].level) break;
    if (row.level === tree[at].level + 1) children.push(row);
  }
  return children;
}

/** Bounded poll of an async condition (the UI has no events to wait on from here); `what` may be a function. */
async function until(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
