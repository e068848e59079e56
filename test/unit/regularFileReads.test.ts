/**
 * Issue 25, "files that are not what they seem": every module of server/src reads files through
 * server/src/io/regularFile.ts (regular files only, opened without blocking), so that a named pipe
 * or a device in place of a file can hang no reader. This test reads server/src with the
 * TypeScript compiler API and fails, naming the file and line, when another module calls a
 * reading function of `fs` itself (readFile, readFileSync, open, openSync, createReadStream,
 * read, readSync, openAsBlob), whether imported by name or through `fs`, `fs.promises` or
 * `promises as …`. The writes side (io/atomicWrite.ts, io/safeWrite.ts) has a test of its own.
 *
 * It also holds the module's own contract on real files: a FIFO, a folder and a regular file,
 * synchronously and not.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import ts from 'typescript';
import { NotARegularFile, readRegularFile, readRegularFileSync, readRegularText, readRegularTextSync } from '../../server/src/io/regularFile';
import { within } from '../support/waiting';

const root = path.resolve(__dirname, '..', '..', '..');
const sourceRoot = path.join(root, 'server', 'src');

/** Modules allowed to read by themselves, each with its reason. */
const EXEMPT: ReadonlyMap<string, string> = new Map([
  ['io/regularFile.ts', 'the one reader'],
  ['io/atomicWrite.ts', 'the writes side: its lock file and temporary files (held by the writes test)'],
  ['io/safeWrite.ts', 'the writes side: its lock file and temporary files (held by the writes test)'],
  ['mcp/processTree.ts', 'reads only the kernel\'s /proc files of processes it started, never a path a user names'],
]);

const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises']);
const READERS = new Set(['readFile', 'readFileSync', 'open', 'openSync', 'createReadStream', 'read', 'readSync', 'openAsBlob']);

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFilesUnder(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Each direct read in one module, as `line: call`. */
export function directReads(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const readerNames = new Set<string>();
  const namespaces = new Set<string>();
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier) || !FS_MODULES.has(statement.moduleSpecifier.text)) continue;
    const clause = statement.importClause;
    if (!clause) continue;
    if (clause.name) namespaces.add(clause.name.text);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        const imported = (element.propertyName ?? element.name).text;
        if (imported === 'promises') namespaces.add(element.name.text);
        if (READERS.has(imported)) readerNames.add(element.name.text);
      }
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isIdentifier(callee) && callee.text === 'require' && node.arguments.some((argument) => ts.isStringLiteral(argument) && FS_MODULES.has(argument.text))) at(node, 'require of fs');
      if (ts.isIdentifier(callee) && readerNames.has(callee.text)) at(node, `${callee.text}()`);
      if (ts.isPropertyAccessExpression(callee) && READERS.has(callee.name.text)) {
        const target = callee.expression;
        const base = ts.isIdentifier(target) ? target.text : ts.isPropertyAccessExpression(target) && ts.isIdentifier(target.expression) && target.name.text === 'promises' ? target.expression.text : undefined;
        if (base !== undefined && namespaces.has(base)) at(node, `${base}.${callee.name.text}()`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('every file read goes through io/regularFile.ts', () => {
  test('no module of server/src reads a file by itself', () => {
    const offenders: string[] = [];
    for (const file of tsFilesUnder(sourceRoot)) {
      const relative = path.relative(sourceRoot, file).split(path.sep).join('/');
      if (EXEMPT.has(relative)) continue;
      for (const read of directReads(file, readFileSync(file, 'utf8'))) offenders.push(`server/src/${relative}:${read}`);
    }
    assert.deepEqual(offenders, [], `read these through server/src/io/regularFile.ts:\n${offenders.join('\n')}`);
  });

  test('the scan finds each form of a direct read (it is no empty check)', () => {
    const forms = [
      "import { readFileSync } from 'node:fs'; readFileSync('x');",
      "import { readFile as read } from 'node:fs/promises'; void read('x');",
      "import * as fs from 'fs'; fs.openSync('x', 'r');",
      "import { promises as fs } from 'node:fs'; void fs.readFile('x');",
      "import fs from 'node:fs'; fs.promises.open('x');",
      "import { createReadStream } from 'node:fs'; createReadStream('x');",
    ];
    for (const form of forms) assert.equal(directReads('form.ts', form).length, 1, form);
    assert.deepEqual(directReads('fine.ts', "import { writeFile, stat } from 'node:fs/promises'; void writeFile('x', ''); void stat('x');"), []);
  });
});

describe('readRegularFile and friends', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'toolpin-regular-file-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  const fifo = path.join(scratch, 'pipe.json');
  const folder = path.join(scratch, 'folder.json');
  const regular = path.join(scratch, 'regular.json');
  const link = path.join(scratch, 'link.json');
  const posix = process.platform !== 'win32';
  if (posix) assert.equal(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo works here');
  mkdirSync(folder);
  writeFileSync(regular, '{"é": 1}');
  symlinkSync(regular, link);

  test('a regular file is read whole, as bytes and as UTF-8 text, sync and async', async () => {
    assert.equal(await readRegularText(regular), '{"é": 1}');
    assert.equal(readRegularTextSync(regular), '{"é": 1}');
    assert.deepEqual(await readRegularFile(regular), Buffer.from('{"é": 1}'));
    assert.deepEqual(readRegularFileSync(regular), Buffer.from('{"é": 1}'));
    assert.equal(await readRegularText(link), '{"é": 1}', 'a link to a regular file is followed by default');
    assert.throws(() => readRegularFileSync(link, { noFollow: true }), 'noFollow refuses the link itself');
    assert.equal(readRegularFileSync(regular, { accept: () => false }), undefined);
  });

  test('a FIFO is refused at once, without a writer, and named', { skip: !posix && 'no FIFOs here' }, async () => {
    await within(assert.rejects(readRegularText(fifo), (error: unknown) => error instanceof NotARegularFile && error.message === 'not a regular file (a named pipe (FIFO)); skipped'), 5_000, 'an async read of a FIFO to end');
    assert.throws(() => readRegularFileSync(fifo), /not a regular file \(a named pipe \(FIFO\)\); skipped/);
  });

  test('a folder is refused with what it is; a missing file keeps its system error', async () => {
    await assert.rejects(readRegularFile(folder), /not a regular file \(a folder\); skipped/);
    assert.throws(() => readRegularTextSync(folder), (error: unknown) => error instanceof NotARegularFile && error.code === 'ENOTREG');
    await assert.rejects(readRegularText(path.join(scratch, 'absent.json')), { code: 'ENOENT' });
  });
});
