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
 * Trust is refused for a pull request from a fork whatever the input says: its files are the
 * fork author's, and trusting them would start the stdio commands they name with the job's
 * credentials. A recorded trust (`toolpin trust`) is still honoured by the CLI itself.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const env = process.env;
const here = path.dirname(fileURLToPath(import.meta.url));
const cli = env.TOOLPIN_CLI || path.join(here, '..', 'dist', 'cli.js');

/** Whether this run is for a pull request whose head is another repository (a fork). */
function isPullRequestFromFork() {
  if (!['pull_request', 'pull_request_target', 'pull_request_review', 'pull_request_review_comment'].includes(env.GITHUB_EVENT_NAME ?? '')) return false;
  try {
    const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH ?? '', 'utf8'));
    const head = event?.pull_request?.head?.repo?.full_name;
    const base = event?.pull_request?.base?.repo?.full_name ?? env.GITHUB_REPOSITORY;
    // Unknown is treated as a fork: trust needs proof that the code is the repository's own.
    return typeof head !== 'string' || head !== base;
  } catch {
    return true;
  }
}

function fail(message) {
  process.stderr.write(`::error::toolpin action: ${message}\n`);
  process.exit(2);
}

const failOn = (env.INPUT_FAIL_ON || 'drift').trim();
if (!['security', 'drift', 'warning'].includes(failOn)) fail(`fail-on takes security, drift or warning, got "${failOn}"`);
const trustInput = (env.INPUT_TRUST || 'false').trim().toLowerCase();
if (!['true', 'false'].includes(trustInput)) fail(`trust takes true or false, got "${trustInput}"`);
let trust = trustInput === 'true';
if (trust && isPullRequestFromFork()) {
  process.stderr.write('::warning::toolpin action: not trusting the workspace for a pull request from a fork; pins are checked only against what `toolpin trust` recorded\n');
  trust = false;
}
const paths = (env.INPUT_PATHS || '').split(/\s+/).filter(Boolean);
const sarifFile = (env.INPUT_SARIF_FILE || 'toolpin.sarif').trim();
if (/[\r\n]/.test(sarifFile)) fail('sarif-file must be one line');
const workspace = (env.INPUT_WORKSPACE || '').trim();

const args = [cli, 'check', ...paths, '--format', 'markdown', '--fail-on', failOn, '--sarif-file', sarifFile];
if (workspace) args.push('--workspace', workspace);
if (trust) args.push('--trust');

// The child's environment never carries TOOLPIN_TRUST from the job: trust is this script's call.
const childEnv = { ...env };
delete childEnv.TOOLPIN_TRUST;
const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
const chunks = [];
child.stdout.on('data', (chunk) => chunks.push(chunk));
child.on('error', (error) => fail(`cannot run ${cli}: ${error.message}`));
child.on('close', (code) => {
  const markdown = Buffer.concat(chunks).toString('utf8');
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
