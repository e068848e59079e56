/**
 * The README's demo section shows real output: the two commands `npm run demo` (scripts/demo.sh)
 * runs are run here the same way (from the repository root, on examples/), and their standard
 * output must equal the README's sample blocks character for character. Nothing is normalised:
 * the example's servers are bundled at fixed versions and its pins and log are fixed, so nothing
 * in the output varies between runs or machines. When a change alters the output, the README is
 * updated with it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');
const cli = path.join(root, 'dist', 'cli.js');

/** The fenced code blocks of the README's "## The demo" section, in order. */
function demoBlocks(): string[] {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## The demo\n');
  assert.ok(start >= 0, 'README.md has a "## The demo" section');
  const next = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/^```\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

/** The commands of scripts/demo.sh, run as it runs them. */
function demo(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('the README demo samples are the real output of the demo commands', { timeout: 240_000 }, () => {
  const script = fs.readFileSync(path.join(root, 'scripts', 'demo.sh'), 'utf8');
  const checkArgs = ['check', '--trust', '--workspace', 'examples', 'examples'];
  const historyArgs = ['history', '--trust', '--workspace', 'examples', '--stale'];
  assert.ok(script.includes(`node dist/cli.js ${checkArgs.join(' ')}\n`), 'scripts/demo.sh runs the check sampled here');
  assert.ok(script.includes(`node dist/cli.js ${historyArgs.join(' ')}\n`), 'scripts/demo.sh runs the history sampled here');

  const blocks = demoBlocks();
  assert.equal(blocks.length, 2, 'the demo section has two sample blocks: check, then history');
  const [checkSample, historySample] = blocks as [string, string];

  const check = demo(checkArgs);
  assert.equal(check.status, 1, check.stderr);
  assert.equal(check.stdout, checkSample, 'README.md "## The demo": the check sample differs from the real output');
  assert.match(checkSample, /; 13 problem\(s\)\n$/);

  const history = demo(historyArgs);
  assert.equal(history.status, 1, history.stderr);
  assert.equal(history.stdout, historySample, 'README.md "## The demo": the history sample differs from the real output');
  assert.equal(history.stderr, '', 'the example log has no torn or malformed line to warn about');
});
