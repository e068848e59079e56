#!/usr/bin/env node
// Lists the shipped files over 800 lines and the functions over 100 lines, the sizes a person can
// hold (issue 24), read with the TypeScript compiler API so comments and strings never decide what
// a function is.
//
//   node scripts/code-sizes.mjs            every file and function over the limits; exit 1 if any
//   node scripts/code-sizes.mjs --top 10   the ten longest files and functions, over the limits or not
//
// The trees are server/src, client/src and scripts (tests may be longer where a table of cases
// reads better). A function is a declaration, a method, a constructor, an accessor, a function
// expression or an arrow function; its lines run from its first token to its last, both counted,
// with the functions nested in it. test/unit/codeSizes.test.ts runs the same finder and fails when
// a file or a function is over its limit.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ts = require('typescript');

export const MAX_FILE_LINES = 800;
export const MAX_FUNCTION_LINES = 100;
/** The trees the limits hold for, relative to the repository's root. */
export const TREES = ['server/src', 'client/src', 'scripts'];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function sourceFilesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFilesUnder(full);
    return /\.(ts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every source file of the trees, as absolute paths, sorted. */
export function shippedSources(base = root) {
  return TREES.flatMap((tree) => sourceFilesUnder(path.join(base, tree))).sort();
}

function lineCount(text) {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** A readable name of a function node: its own name, its variable's or property's, or `<anonymous>`. */
function nameOf(node, source) {
  if (node.name !== undefined) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent !== undefined && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name !== undefined) {
    return parent.name.getText(source);
  }
  if (parent !== undefined && ts.isCallExpression(parent)) return `<callback of ${parent.expression.getText(source).slice(0, 40)}>`;
  return '<anonymous>';
}

function isFunctionLike(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node)
  );
}

/**
 * Every function of one source text with its length in lines: `{ name, line, lines }`, `line`
 * 1-based. Declarations without a body (overloads, `declare`) are left out.
 */
export function functionLengths(fileName, text) {
  const kind = fileName.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind);
  const found = [];
  const visit = (node) => {
    if (isFunctionLike(node) && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ name: nameOf(node, source), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Files and functions of `files` (absolute paths) with their sizes, paths relative to `base`. */
export function measure(files, base = root, read = (file) => readFileSync(file, 'utf8')) {
  const fileSizes = [];
  const functionSizes = [];
  for (const file of files) {
    const text = read(file);
    const relative = path.relative(base, file).split(path.sep).join('/');
    fileSizes.push({ file: relative, lines: lineCount(text) });
    for (const fn of functionLengths(file, text)) functionSizes.push({ file: relative, ...fn });
  }
  fileSizes.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file));
  functionSizes.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
  return { files: fileSizes, functions: functionSizes };
}

/** The files over {@link MAX_FILE_LINES} and the functions over {@link MAX_FUNCTION_LINES}. */
export function overLimits(sizes) {
  return {
    files: sizes.files.filter((entry) => entry.lines > MAX_FILE_LINES),
    functions: sizes.functions.filter((entry) => entry.lines > MAX_FUNCTION_LINES),
  };
}

function main(argv) {
  const sizes = measure(shippedSources());
  const topAt = argv.indexOf('--top');
  if (topAt >= 0) {
    const count = Number(argv[topAt + 1] ?? 10);
    console.log(`Longest files (limit ${MAX_FILE_LINES}):`);
    for (const entry of sizes.files.slice(0, count)) console.log(`  ${String(entry.lines).padStart(5)}  ${entry.file}`);
    console.log(`Longest functions (limit ${MAX_FUNCTION_LINES}):`);
    for (const entry of sizes.functions.slice(0, count)) console.log(`  ${String(entry.lines).padStart(5)}  ${entry.file}:${entry.line} ${entry.name}`);
    return 0;
  }
  const over = overLimits(sizes);
  for (const entry of over.files) console.log(`${entry.file}: ${entry.lines} lines (limit ${MAX_FILE_LINES})`);
  for (const entry of over.functions) console.log(`${entry.file}:${entry.line}: ${entry.name} is ${entry.lines} lines (limit ${MAX_FUNCTION_LINES})`);
  return over.files.length + over.functions.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
