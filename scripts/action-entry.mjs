#!/usr/bin/env node
/**
 * The entry of the GitHub Action (action.yml): runs `toolpin check` once with the action's
 * inputs, writes the SARIF report to `sarif-file`, appends the markdown report to the job
 * summary ($GITHUB_STEP_SUMMARY) and exits with check's own status (0 pass, 1 fail, 2 could not
 * verify; docs in README "## CI").
 *
 * Inputs arrive as environment variables, as GitHub passes them to actions: INPUT_PATHS (paths
 * separated by newlines or spaces; default the workspace), INPUT_FAIL_ON (security, drift or
 * warning), INPUT_TRUST (true or false), INPUT_SARIF_FILE, INPUT_WORKSPACE. TOOLPIN_CLI names the
 * built CLI (default: dist/cli.js next to this script's folder).
 *
 * Code from a fork never runs (docs/trust.md): on a pull request whose head is a fork, and on a
 * workflow_run triggered by one, the check is structure-only (`--structure-only`: no server starts,
 * no credential is read or sent), whatever `trust`, TOOLPIN_TRUST or a recorded `toolpin trust`
 * says, and the job summary says so and how to verify after merge. Every input is data: options
 * end (`--`) before the paths, and option values are passed as `--name=value`, so a path named
 * `--trust` is a path.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const env = process.env;
const here = path.dirname(fileURLToPath(import.meta.url));
const cli = env.TOOLPIN_CLI || path.join(here, '..', 'dist', 'cli.js');

const PULL_REQUEST_EVENTS = ['pull_request', 'pull_request_target', 'pull_request_review', 'pull_request_review_comment'];

/** True when a head repository is not the base one: marked a fork, or another name, or unknown. */
function headIsAnotherRepository(head, base) {
  // Unknown is treated as a fork: running code needs proof that it is the repository's own.
  if (head === null || typeof head !== 'object' || typeof head.full_name !== 'string') return true;
  if (head.fork === true) return true;
  return typeof base !== 'string' || head.full_name !== base;
}

/**
 * Why this run is for code from a fork (a sentence), or undefined when it is not: a pull request
 * whose head repository is a fork or another repository, or a workflow_run whose triggering run
 * was such a pull request. An unreadable event of those kinds counts as a fork.
 */
function forkReason() {
  const name = env.GITHUB_EVENT_NAME ?? '';
  if (!PULL_REQUEST_EVENTS.includes(name) && name !== 'workflow_run') return undefined;
  let event;
  try {
    event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH ?? '', 'utf8'));
  } catch {
    return `the ${name} event could not be read, so its code is treated as a fork's`;
  }
  if (name === 'workflow_run') {
    const run = event?.workflow_run;
    if (!run || typeof run !== 'object') return 'the workflow_run event names no run, so its code is treated as a fork\'s';
    if (!PULL_REQUEST_EVENTS.includes(run.event)) return undefined;
    const base = run.repository?.full_name ?? event?.repository?.full_name ?? env.GITHUB_REPOSITORY;
    return headIsAnotherRepository(run.head_repository, base) ? `this workflow_run was triggered by a pull request from ${run.head_repository?.full_name ?? 'an unknown repository'}` : undefined;
  }
  const head = event?.pull_request?.head?.repo;
  const base = event?.pull_request?.base?.repo?.full_name ?? env.GITHUB_REPOSITORY;
  return headIsAnotherRepository(head, base) ? `this is a pull request from ${head?.full_name ?? 'an unknown repository'}` : undefined;
}

function fail(message) {
  process.stderr.write(`::error::toolpin action: ${message}\n`);
  process.exit(2);
}

const failOn = (env.INPUT_FAIL_ON || 'drift').trim();
if (!['security', 'drift', 'warning'].includes(failOn)) fail(`fail-on takes security, drift or warning, got "${failOn}"`);
const trustInput = (env.INPUT_TRUST || 'false').trim().toLowerCase();
if (!['true', 'false'].includes(trustInput)) fail(`trust takes true or false, got "${trustInput}"`);
const fork = forkReason();
const trust = trustInput === 'true' && fork === undefined;
if (fork !== undefined) {
  process.stderr.write(`::warning::toolpin action: ${fork}; checking structure only: no server is started and no credential is sent, whatever trust, TOOLPIN_TRUST or a recorded trust says\n`);
}
const paths = (env.INPUT_PATHS || '').split(/\s+/).filter(Boolean);
const sarifFile = (env.INPUT_SARIF_FILE || 'toolpin.sarif').trim();
if (/[\r\n]/.test(sarifFile)) fail('sarif-file must be one line');
const workspace = (env.INPUT_WORKSPACE || '').trim();

// Options first, each value joined to its name; then `--`, so every path is a path.
const args = [cli, 'check', '--format=markdown', `--fail-on=${failOn}`, `--sarif-file=${sarifFile}`];
if (workspace) args.push(`--workspace=${workspace}`);
if (fork !== undefined) args.push('--structure-only');
else if (trust) args.push('--trust');
args.push('--', ...paths);

// The child's environment never carries TOOLPIN_TRUST from the job: trust is this script's call.
const childEnv = { ...env };
delete childEnv.TOOLPIN_TRUST;

/** The job summary's note for a fork's code: what did not run and how to verify after merge. */
function forkNote() {
  return [
    '> **Toolpin checked structure only: code from a fork.** ',
    `> ${fork.charAt(0).toUpperCase()}${fork.slice(1)}. For code from a fork nothing runs and no secret is sent, whatever the workflow's \`trust\` or a recorded trust says, `,
    '> so no pin was verified against a live server. Verify after merge (the workflow on `push` to the base branch), ',
    '> or locally in a checkout you have reviewed: `toolpin trust` then `toolpin check`.',
    '',
    '',
  ].join('\n');
}

const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
const chunks = [];
child.stdout.on('data', (chunk) => chunks.push(chunk));
child.on('error', (error) => fail(`cannot run ${cli}: ${error.message}`));
child.on('close', (code) => {
  const markdown = (fork !== undefined ? forkNote() : '') + Buffer.concat(chunks).toString('utf8');
  process.stdout.write(markdown);
  if (env.GITHUB_STEP_SUMMARY) {
    try {
      appendFileSync(env.GITHUB_STEP_SUMMARY, `${markdown}\n`, 'utf8');
    } catch (error) {
      process.stderr.write(`::warning::toolpin action: cannot append to the job summary: ${error.message}\n`);
    }
  }
  if (env.GITHUB_OUTPUT) {
    try {
      appendFileSync(env.GITHUB_OUTPUT, `sarif-file=${sarifFile}\nexit-code=${code ?? 2}\n`, 'utf8');
    } catch {
      // Outputs are a convenience; the exit status below is what gates the job.
    }
  }
  // A child killed by a signal gave no verdict: that is "could not verify", never a pass.
  process.exit(code ?? 2);
});
