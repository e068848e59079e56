/**
 * The files the language server asks the client to watch cover every document kind (issue 24):
 * the watcher globs come from the kinds table, so a kind cannot be recognised by the server and
 * missed by the watcher, as ObjectStack's compiled stack (`dist/objectstack.json`) was.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { Minimatch } from 'minimatch';
import { DidChangeWatchedFilesNotification, type RegistrationParams } from 'vscode-languageserver-protocol';
import { documentKinds } from '../../../server/src/core/documents/kinds/registry';
import { pathToUri } from '../../../server/src/util/uris';
import { startInProcessServer } from '../../support/inProcessServer';
import { waitFor } from '../../support/waiting';

/** The watcher globs of the server's registration for `workspace/didChangeWatchedFiles`. */
function watchedGlobs(registrations: readonly RegistrationParams[]): string[] {
  return registrations
    .flatMap((params) => params.registrations)
    .filter((registration) => registration.method === DidChangeWatchedFilesNotification.method)
    .flatMap((registration): unknown[] => {
      const options: unknown = registration.registerOptions;
      const watchers: unknown = typeof options === 'object' && options !== null ? Reflect.get(options, 'watchers') : undefined;
      return Array.isArray(watchers) ? watchers : [];
    })
    .flatMap((watcher) => {
      const glob: unknown = typeof watcher === 'object' && watcher !== null ? Reflect.get(watcher, 'globPattern') : undefined;
      return typeof glob === 'string' ? [glob] : [];
    });
}

test('the watched files cover every kind, the compiled stack included', async () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolpin-watched-'));
  const registrations: RegistrationParams[] = [];
  const server = await startInProcessServer({
    rootUri: pathToUri(folder),
    acceptRegistrations: true,
    onRegistration: (params) => registrations.push(params),
    capabilities: { workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
  });
  try {
    await waitFor('the server registers its watchers', () => watchedGlobs(registrations).length > 0, 10_000);
    const matchers = watchedGlobs(registrations).map((glob) => new Minimatch(glob, { dot: true }));
    const examples = ['dist/objectstack.json', 'flow.blueprint.json', 'github.connector.jsonc', 'src/tools.ts', '.vscode/mcp.json', '.mcp.json', 'runs.events.jsonl', '.toolpin/policy.jsonc', ...documentKinds().flatMap((kind) => kind.examples)];
    const missed = examples.filter((example) => !matchers.some((matcher) => matcher.match(example)));
    assert.deepEqual(missed, [], `globs: ${watchedGlobs(registrations).join(', ')}`);
  } finally {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});
