/**
 * engine/liveWorkspace.ts: the workspace scan and an editor's first open of the same file.
 *
 * The scan reads every document from disk while the editor may open one of them. Two things must
 * hold, whichever comes first:
 * - the editor's text wins: a disk read that was under way when the editor opened the file must
 *   not replace the open document's analysis with the disk's (it did: the file then showed the
 *   disk's problems until the next keystroke);
 * - opening a file whose text is what the scan read uses the scan's analysis instead of parsing a
 *   large file a second time (issue 13: the second parse was a third of the memory at open).
 * The file system here is in memory, with reads the test releases one by one, so the order is the
 * test's; the listing source is the tests' fake (test/support/fakeListingSource.ts), never asked.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { LiveWorkspace, type WorkspaceFileSystem } from '../../server/src/engine/liveWorkspace';
import { FakeListingSource, FakeServers } from '../support/fakeListingSource';

const FOLDER = path.resolve('/workspace-in-memory');
const FILE = path.join(FOLDER, 'flows', 'a.blueprint.jsonc');

const blueprint = (id: string): string => `{ "blueprint": "b", "formatVersion": 1, "steps": [ { "id": ${JSON.stringify(id)}, "effect": "notify.owner" } ] }`;

/** An in-memory file system whose reads of FILE wait until the test releases them. */
function gatedFileSystem(disk: string): { fileSystem: WorkspaceFileSystem; reads: number; release: () => void; readStarted: Promise<void> } {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const readStarted = new Promise<void>((resolve) => (started = resolve));
  const state = {
    reads: 0,
    release: () => release(),
    readStarted,
    fileSystem: {
      readFile: async (file: string): Promise<string | undefined> => {
        if (file !== FILE) return undefined;
        state.reads++;
        started();
        await gate;
        return disk;
      },
      findDocuments: async (): Promise<string[]> => [FILE],
      listFolder: async (): Promise<string[] | undefined> => undefined,
    } satisfies WorkspaceFileSystem,
  };
  return state;
}

function workspaceOn(fileSystem: WorkspaceFileSystem): LiveWorkspace {
  // No server is configured: the listing source is never asked, and trusts nothing if it were.
  const listings = new FakeListingSource(new FakeServers({}), { trust: () => ({ trusted: false, reason: 'not in this test' }) });
  return new LiveWorkspace({
    fileSystem,
    inventory: () => listings,
    now: () => 0,
    env: {},
    userServers: () => undefined,
    liveEnabled: () => false,
    log: () => undefined,
    setTimeout: () => ({ dispose: () => undefined }),
  });
}

function stepIds(workspace: LiveWorkspace): string[] {
  const analysis = workspace.analysis(FILE);
  assert.ok(analysis && analysis.model.kind === 'blueprint', 'the file is analyzed as a blueprint');
  return analysis.model.steps.map((step) => step.id?.value ?? '?');
}

describe('LiveWorkspace: the scan and the first open of a file', () => {
  test('a disk read under way when the editor opens the file does not replace the editor text', async () => {
    const disk = gatedFileSystem(blueprint('from-disk'));
    const workspace = workspaceOn(disk.fileSystem);
    const scan = workspace.setFolders([FOLDER], 100);
    await disk.readStarted;
    workspace.setOpenDocument(FILE, blueprint('from-editor'));
    disk.release();
    await scan;
    assert.deepEqual(stepIds(workspace), ['from-editor']);
    assert.equal(workspace.text(FILE), blueprint('from-editor'));
  });

  test('opening a file with the text the scan read reuses the scan analysis', async () => {
    const disk = gatedFileSystem(blueprint('same'));
    const workspace = workspaceOn(disk.fileSystem);
    const scan = workspace.setFolders([FOLDER], 100);
    disk.release();
    await scan;
    const scanned = workspace.analysis(FILE);
    assert.ok(scanned, 'the scan analyzed the file');
    const opened = workspace.setOpenDocument(FILE, blueprint('same'));
    assert.equal(opened, scanned, 'the same analysis object: the file was not parsed again');
    // And it is open now: a later disk change does not replace it.
    await workspace.fileChanged(FILE, false);
    assert.equal(workspace.analysis(FILE), scanned);
    assert.equal(disk.reads, 1, 'the disk was read once, by the scan');
  });

  test('opening a file with other text than the disk analyzes the editor text', async () => {
    const disk = gatedFileSystem(blueprint('on-disk'));
    const workspace = workspaceOn(disk.fileSystem);
    const scan = workspace.setFolders([FOLDER], 100);
    disk.release();
    await scan;
    workspace.setOpenDocument(FILE, blueprint('edited'));
    assert.deepEqual(stepIds(workspace), ['edited']);
  });
});

describe('LiveWorkspace: an open file is held once', () => {
  test('the scan analysis kept at open holds no copy of the disk text beside the editor text', () => {
    // In a fresh process with --expose-gc: the heap held by a workspace that scanned a large file
    // and then opened it with the same text (a different, equal string, as an editor sends it)
    // against one that only opened it. The scan's analysis used to hold views of the disk's
    // string, so the first held both texts (issue 13: 2.3 MB more for the 10,000-step file).
    const out = path.resolve(__dirname, '..', '..');
    const script = `
      const path = require('node:path');
      const { LiveWorkspace } = require(${JSON.stringify(path.join(out, 'server', 'src', 'engine', 'liveWorkspace.js'))});
      const { FakeListingSource, FakeServers } = require(${JSON.stringify(path.join(out, 'test', 'support', 'fakeListingSource.js'))});
      const { generate } = require(${JSON.stringify(path.join(out, 'bench', 'support', 'generatedBlueprint.js'))});
      const FOLDER = path.resolve('/workspace-in-memory');
      const FILE = path.join(FOLDER, 'flows', 'big.blueprint.jsonc');
      // Each call makes a new string, so the disk's text is held by the workspace alone.
      const text = () => generate(5000).text;
      const workspaceOn = (scanned) => {
        const listings = new FakeListingSource(new FakeServers({}), { trust: () => ({ trusted: false, reason: 'test' }) });
        return new LiveWorkspace({
          fileSystem: {
            readFile: async (file) => (scanned && file === FILE ? text() : undefined),
            findDocuments: async () => (scanned ? [FILE] : []),
            listFolder: async () => undefined,
          },
          inventory: () => listings, now: () => 0, env: {}, userServers: () => undefined, liveEnabled: () => false,
          log: () => undefined, setTimeout: () => ({ dispose: () => undefined }),
        });
      };
      const held = async (scanned) => {
        gc();
        const before = process.memoryUsage().heapUsed;
        const workspace = workspaceOn(scanned);
        await workspace.setFolders([FOLDER], 100);
        const editorText = text();
        if (!workspace.setOpenDocument(FILE, editorText)) throw new Error('not analyzed');
        gc();
        const bytes = process.memoryUsage().heapUsed - before;
        return { bytes, keep: [workspace, editorText] };
      };
      (async () => {
        const opened = await held(false);
        const scannedThenOpened = await held(true);
        process.stdout.write(JSON.stringify({ opened: opened.bytes, scannedThenOpened: scannedThenOpened.bytes, textLength: text().length }));
      })();
    `;
    const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const measured: unknown = JSON.parse(run.stdout);
    assert.ok(typeof measured === 'object' && measured !== null && 'opened' in measured && 'scannedThenOpened' in measured && 'textLength' in measured);
    const { opened, scannedThenOpened, textLength } = measured;
    assert.ok(typeof opened === 'number' && typeof scannedThenOpened === 'number' && typeof textLength === 'number', run.stdout);
    // One-byte text: a second copy would add about textLength bytes.
    assert.ok(scannedThenOpened - opened < textLength / 2, `scanned then opened holds ${scannedThenOpened - opened} bytes more than opened alone (text: ${textLength} bytes)`);
  });
});
