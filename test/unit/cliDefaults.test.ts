/**
 * The defaults the CLI's help states are the defaults a run uses: the settings schema's
 * (server/src/settings.ts, which package.json's contributions are held to in settings.test.ts).
 * `toolpin history --help` once said "servers listed at the same time (default 8)" while a run
 * listed 4 at a time.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../../server/src/cli/main';
import type { CliIo } from '../../server/src/cli/io';
import { CHECK_CONCURRENCY } from '../../server/src/engine/timeouts';
import { DEFAULT_SETTINGS } from '../../server/src/settings';

async function help(command: string): Promise<string> {
  let out = '';
  const io: CliIo = {
    readFile: async () => '',
    readStdin: async () => '',
    stdout: (text) => void (out += text),
    stderr: () => undefined,
    stderrIsTerminal: false,
    cwd: process.cwd(),
  };
  assert.equal(await runCli([command, '--help'], io), 0);
  return out;
}

/** The number an option's help gives as its default: `--name X … (default N…`, wrapped lines joined. */
function statedDefault(text: string, option: string): number {
  const options = text.slice(text.indexOf('Options:')).replace(/\s+/g, ' ');
  const at = options.indexOf(` --${option} `);
  assert.ok(at >= 0, `the help describes --${option}`);
  const next = options.indexOf(' --', at + option.length + 3);
  const description = options.slice(at, next < 0 ? undefined : next);
  const stated = /\(default (\d+)/.exec(description);
  assert.ok(stated?.[1] !== undefined, `the help of --${option} states its default: ${description}`);
  return Number(stated[1]);
}

for (const command of ['check', 'pin', 'history']) {
  test(`toolpin ${command} --help states the defaults of the settings schema`, async () => {
    const text = await help(command);
    assert.equal(statedDefault(text, 'timeout'), DEFAULT_SETTINGS.verify.requestTimeoutMs);
    assert.equal(statedDefault(text, 'start-timeout'), DEFAULT_SETTINGS.verify.startTimeoutMs);
    // check, a one-shot batch run, lists more servers at once than the editor's setting (CHECK_CONCURRENCY).
    if (command === 'check') assert.equal(statedDefault(text, 'concurrency'), CHECK_CONCURRENCY);
    if (command === 'history') assert.equal(statedDefault(text, 'concurrency'), DEFAULT_SETTINGS.verify.concurrency);
  });
}

