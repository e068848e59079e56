// The UI smoke phase of the host tests: drives the real VS Code workbench (code-server) in Chromium
// through playwright-core, the way a person would: open the drifted blueprint, see the squiggle on
// the pin, hover it, Ctrl+. → "Re-pin", see the text change and the squiggle go, read the status bar
// item and open its problems quick pick. A screenshot after every step (ui-<step>.png) and on
// failure (ui-failure-<step>.png), in the results folder.
//
// Called by test/host/run-code-server.mjs after the in-host suite, in a fresh browser context on
// the same code-server (the suite's extension host is stopped when the suite ends). Plain Node ESM.
/* global document, NodeFilter -- page.evaluate callbacks run in the browser */
import * as path from 'node:path';

/** The fixture: test/host/workspace/ui-drifted.blueprint.jsonc, echo_upper pinned at this hash. */
export const UI_FILE = 'ui-drifted.blueprint.jsonc';
export const REFERENCE_PIN = 'fnv1a64:a76fe8d6d023fca0';
const TOOL = 'echo_upper';
const SERVER = 'demo';

/**
 * Runs the steps in order; a step that fails stops the run, and every step not reached counts as
 * failed too (a UI phase never passes by skipping). Returns { passed, failed, results }.
 *
 * @param {object} options
 * @param {import('playwright-core').Page} options.page   a fresh page (nothing loaded yet)
 * @param {string} options.url                          the workbench URL (folder, payload)
 * @param {string} options.resultsDir                   where screenshots go
 * @param {string} options.prefix                       screenshot name prefix ('' or 'vsix-')
 * @param {(line: string) => void} options.log
 * @param {number} options.stepTimeoutMs                 per step
 */
export async function runUiSmoke({ page, url, resultsDir, prefix, log, stepTimeoutMs = 30_000 }) {
  const results = [];
  const shot = async (name) => {
    const file = path.join(resultsDir, `${prefix}ui-${name}.png`);
    try {
      await page.screenshot({ path: file, timeout: 10_000 });
      return path.basename(file);
    } catch (error) {
      log(`screenshot ${path.basename(file)} failed: ${String(error?.message ?? error).split('\n')[0]}`);
      return undefined;
    }
  };

  const editor = page.locator('.part.editor .editor-instance .monaco-editor').first();
  const state = { live: undefined };

  /** Each step: a name (the screenshot's), what it checks, and the check. */
  const steps = [
    [
      'open',
      `the workbench loads and opens ${UI_FILE} (Quick Open)`,
      async () => {
        const t0 = Date.now();
        const lap = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
        await page.goto(url, { waitUntil: 'domcontentloaded' });
        await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: stepTimeoutMs });
        // The status bar appears late in the start-up; Quick Open works once it is there.
        await page.locator('#workbench\\.parts\\.statusbar').waitFor({ state: 'visible', timeout: stepTimeoutMs });
        const workbench = lap();
        await openWithQuickOpen(page, UI_FILE, stepTimeoutMs);
        const quickOpen = lap();
        await page.locator('.part.editor .tab.active', { hasText: UI_FILE }).waitFor({ state: 'visible', timeout: stepTimeoutMs });
        await editor.locator('.view-line', { hasText: REFERENCE_PIN }).waitFor({ state: 'visible', timeout: stepTimeoutMs });
        log(`UI: workbench up at ${workbench}, Quick Open found the file at ${quickOpen}, editor shown at ${lap()}`);
      },
    ],
    [
      'squiggle',
      'a .squiggly-error lies under the drifted pin',
      async () => {
        await until(
          async () => {
            const pin = await textRect(page, REFERENCE_PIN);
            if (!pin) return false;
            const squiggles = await editor.locator('.squiggly-error').evaluateAll((nodes) => nodes.map((node) => node.getBoundingClientRect().toJSON()));
            return squiggles.some((box) => overlaps(box, pin));
          },
          stepTimeoutMs,
          `a .squiggly-error overlapping the text ${REFERENCE_PIN}`,
        );
      },
    ],
    [
      'hover',
      `hovering the pin shows .monaco-hover with "drifted", "${TOOL}" and both hashes`,
      async () => {
        const hover = page.locator('.monaco-hover:visible', { hasText: 'drifted' });
        await until(
          async () => {
            const pin = await textRect(page, REFERENCE_PIN);
            if (!pin) return false;
            // Re-entering the pin restarts the hover delay if an earlier attempt was too early.
            await page.mouse.move(pin.x + pin.width / 2, pin.y + pin.height / 2 + 1);
            await page.mouse.move(pin.x + pin.width / 2 + 2, pin.y + pin.height / 2);
            return hover
              .first()
              .waitFor({ state: 'visible', timeout: 3_000 })
              .then(() => true)
              .catch(() => false);
          },
          stepTimeoutMs,
          '.monaco-hover with "drifted"',
        );
        const text = await hover.first().innerText();
        for (const needle of ['drifted', TOOL, SERVER, REFERENCE_PIN]) {
          if (!text.includes(needle)) throw new Error(`the hover lacks ${JSON.stringify(needle)}:\n${text}`);
        }
        state.live = [...text.matchAll(/fnv1a64:[0-9a-f]{16}/g)].map((match) => match[0]).find((pin) => pin !== REFERENCE_PIN);
        if (!state.live) throw new Error(`the hover shows no live hash besides the pinned one:\n${text}`);
        log(`UI: hover shows live ${state.live}`);
      },
    ],
    [
      'quickfix',
      'Ctrl+. on the pin opens .action-widget with "Re-pin" and "Review and re-pin"',
      async () => {
        const widget = page.locator('.action-widget:visible');
        const repinRow = widget.locator('.monaco-list-row', { hasText: new RegExp(`Re-pin "${TOOL}" to ${state.live ?? 'fnv1a64:'}`) });
        let attempts = 0;
        // A person presses Ctrl+. again when the menu did not come up (e.g. the code actions were
        // asked for while the server was re-checking the file): so does this step, bounded.
        await until(
          async () => {
            attempts++;
            await page.keyboard.press('Escape');
            const pin = await textRect(page, REFERENCE_PIN);
            if (!pin) throw new Error(`the pin ${REFERENCE_PIN} is no longer in the editor`);
            await page.mouse.click(pin.x + pin.width / 2, pin.y + pin.height / 2);
            await page.mouse.move(5, 5); // away from the text: no hover over the menu
            await page.keyboard.press('Escape');
            await page.keyboard.press('Control+.');
            return repinRow
              .waitFor({ state: 'visible', timeout: 5_000 })
              .then(() => true)
              .catch(() => false);
          },
          stepTimeoutMs,
          `.action-widget with a row "Re-pin "${TOOL}" to …"`,
        );
        if (attempts > 1) log(`UI: the quick fix menu came up at Ctrl+. attempt ${attempts}`);
        await widget.locator('.monaco-list-row', { hasText: `Review and re-pin "${TOOL}"` }).waitFor({ state: 'visible', timeout: stepTimeoutMs });
      },
    ],
    [
      'repin',
      'choosing "Re-pin" replaces the pin in the editor with the live hash',
      async () => {
        const row = page.locator('.action-widget:visible .monaco-list-row', { hasText: new RegExp(`Re-pin "${TOOL}" to`) });
        await row.first().click();
        // (hasText normalizes whitespace, so Monaco's non-breaking spaces match plain ones.)
        await editor.locator('.view-line', { hasText: `"expectedSchemaHash": "${state.live}"` }).waitFor({ state: 'visible', timeout: stepTimeoutMs });
        if ((await editor.locator('.view-line', { hasText: REFERENCE_PIN }).count()) !== 0) throw new Error('the old pin is still in the editor');
      },
    ],
    [
      'cleared',
      'the squiggle is gone once the pin is verified, and the code lens says "all verified"',
      async () => {
        await until(async () => (await editor.locator('.squiggly-error').count()) === 0, stepTimeoutMs, 'no .squiggly-error left in the editor');
        // The code lens above the blueprint's name follows the diagnostics (the server asks the
        // editor to refresh its lenses after each publication): no "drifted", no "Re-pin all".
        const t0 = Date.now();
        const lens = editor.locator('.codelens-decoration');
        await until(
          async () => {
            const text = (await lens.allInnerTexts()).join(' | ');
            return text.includes('1 pin · all verified') && !text.includes('drifted') && !text.includes('Re-pin all');
          },
          stepTimeoutMs,
          async () => `the code lens to read "1 pin · all verified"; it reads "${(await lens.allInnerTexts()).join(' | ')}"`,
        );
        log(`UI: code lens "${(await lens.allInnerTexts()).join(' | ').replace(/\s+/g, ' ')}" ${((Date.now() - t0) / 1000).toFixed(1)} s after the squiggle went`);
      },
    ],
    [
      'status',
      'the Toolpin status bar item shows the servers and the pins',
      async () => {
        const item = page.locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: /\d+\/\d+ servers/ });
        await item.first().waitFor({ state: 'visible', timeout: stepTimeoutMs });
        await until(async () => /1\/1 servers/.test(await item.first().innerText()), stepTimeoutMs, 'the status bar item to read "1/1 servers"');
        const id = await item.first().getAttribute('id');
        log(`UI: status bar item ${id ? `#${id} ` : ''}reads "${(await item.first().innerText()).replace(/\s+/g, ' ').trim()}"`);
      },
    ],
    [
      'problems',
      'clicking the status bar item opens the "Toolpin problems" quick pick',
      async () => {
        await page.locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: /\d+\/\d+ servers/ }).first().click();
        const quickPick = page.locator('.quick-input-widget:visible');
        await quickPick.waitFor({ state: 'visible', timeout: stepTimeoutMs });
        await until(async () => (await quickPick.innerText()).includes('Toolpin problems'), stepTimeoutMs, 'the quick pick titled "Toolpin problems"');
        await quickPick.locator('.monaco-list-row').first().waitFor({ state: 'visible', timeout: stepTimeoutMs });
      },
    ],
  ];

  let stopped = false;
  for (const [name, what, check] of steps) {
    if (stopped) {
      results.push({ name, what, ok: false, error: 'not run: an earlier UI step failed' });
      log(`UI ✘ ${what} (not run)`);
      continue;
    }
    const started = Date.now();
    try {
      await check();
      const file = await shot(name);
      results.push({ name, what, ok: true });
      log(`UI ✔ ${what} (${((Date.now() - started) / 1000).toFixed(1)} s${file ? `, ${file}` : ''})`);
    } catch (error) {
      const file = await shot(`failure-${name}`);
      const message = String(error?.message ?? error).split('\n').slice(0, 6).join('\n');
      results.push({ name, what, ok: false, error: message });
      log(`UI ✘ ${what}: ${message}${file ? ` (${file})` : ''}`);
      stopped = true;
    }
  }
  if (!stopped) await page.keyboard.press('Escape').catch(() => {});
  const passed = results.filter((result) => result.ok).length;
  return { passed, failed: results.length - passed, results };
}

/** Quick Open (Ctrl+P): type the file name, wait for its row, Enter. */
async function openWithQuickOpen(page, name, timeoutMs) {
  const input = page.locator('.quick-input-widget:visible input');
  await until(
    async () => {
      await page.keyboard.press('Control+P');
      return input
        .waitFor({ state: 'visible', timeout: 2_000 })
        .then(() => true)
        .catch(() => false);
    },
    timeoutMs,
    'Quick Open',
  );
  await input.fill(name);
  await page.locator('.quick-input-widget:visible .monaco-list-row', { hasText: name }).first().waitFor({ state: 'visible', timeout: timeoutMs });
  await page.keyboard.press('Enter');
}

/**
 * The client rectangle of `needle` in the visible editor lines (Monaco splits a line into token
 * spans, so the text is found across them), or undefined.
 */
function textRect(page, needle) {
  return page.evaluate((text) => {
    for (const line of document.querySelectorAll('.part.editor .editor-instance .monaco-editor .view-line')) {
      const content = line.textContent ?? '';
      const at = content.indexOf(text);
      if (at === -1) continue;
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      const range = document.createRange();
      let offset = 0;
      let startSet = false;
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const length = node.textContent.length;
        if (!startSet && at < offset + length) {
          range.setStart(node, at - offset);
          startSet = true;
        }
        if (startSet && at + text.length <= offset + length) {
          range.setEnd(node, at + text.length - offset);
          const box = range.getBoundingClientRect();
          return { x: box.x, y: box.y, width: box.width, height: box.height };
        }
        offset += length;
      }
    }
    return undefined;
  }, needle);
}

function overlaps(a, b) {
  const horizontal = a.x < b.x + b.width && b.x < a.x + a.width;
  // A squiggle is drawn along the bottom of its line: compare with the line band of the text.
  const vertical = a.y < b.y + b.height + 4 && b.y - 4 < a.y + a.height;
  return horizontal && vertical && a.width > 0;
}

/** Bounded poll of an async condition (the UI has no events to wait on from here). */
async function until(condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${typeof what === 'function' ? await what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
