/**
 * Every package the shipped code imports is declared (issue 9): a bare import in server/src or
 * client/src names a node builtin, `vscode` (the editor provides it), or a package in package.json's
 * `dependencies`. A package that only arrives as some other package's dependency (or as a
 * devDependency's) is missing from a production install and may change version under us.
 *
 * Type-only imports are erased from the bundles, so for them a devDependency (or its `@types/`
 * package) is enough.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..', '..');

export interface ImportSite {
  readonly specifier: string;
  /** `import type …` / `export type …`: erased when compiled. */
  readonly typeOnly: boolean;
}

/**
 * The module specifiers a TypeScript source imports: `import … from`, `export … from`, side-effect
 * `import 'x'`, `require('x')`, `import('x')` (also in `typeof import('x')`). Statements are matched
 * at the start of a line, so a JSDoc line (` * import x from 'y'`) is not an import.
 */
export function importsOf(text: string): ImportSite[] {
  // Comments may quote an import (an example in a doc comment) without loading anything. A `//`
  // after a colon or a quote is left alone: it is inside a URL or a string.
  const source = text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const sites: ImportSite[] = [];
  for (const match of source.matchAll(/^[ \t]*(import|export)\b(\s+type\b)?[^;'"]*?\bfrom\s*(['"])([^'"\n]+)\3/gm)) {
    sites.push({ specifier: match[4]!, typeOnly: match[2] !== undefined });
  }
  for (const match of source.matchAll(/^[ \t]*import\s*(['"])([^'"\n]+)\1/gm)) sites.push({ specifier: match[2]!, typeOnly: false });
  for (const match of source.matchAll(/\b(require|import)\s*\(\s*(['"])([^'"\n]+)\2\s*\)/g)) {
    // `typeof import('x')` is a type; `require('x')` and a bare `import('x')` load at run time.
    const typeOnly = match[1] === 'import' && /\btypeof\s*$/.test(source.slice(Math.max(0, match.index! - 20), match.index));
    sites.push({ specifier: match[3]!, typeOnly });
  }
  return sites;
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for a relative or absolute path. */
export function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function isBuiltin(name: string): boolean {
  return name.startsWith('node:') || builtinModules.includes(name);
}

function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFilesUnder(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

test('importsOf finds every form of import, and only imports', () => {
  const source = [
    "import assert from 'node:assert/strict';",
    "import * as path from \"node:path\";",
    'import {',
    '  createConnection,',
    '  ProposedFeatures,',
    "} from 'vscode-languageserver/node';",
    "import type { Log } from 'sarif';",
    "export { URI } from 'vscode-uri';",
    "export type { Tool } from '@modelcontextprotocol/sdk/types.js';",
    "import './polyfill';",
    "const lazy = (): typeof import('ajv') => require('ajv');",
    "const later = await import('jsonc-parser');",
    '/**',
    " * import fake from 'not-an-import';",
    ' */',
    "const text = 'from \"also-not\"';",
  ].join('\n');
  assert.deepEqual(
    importsOf(source).sort((a, b) => a.specifier.localeCompare(b.specifier) || Number(a.typeOnly) - Number(b.typeOnly)),
    [
      { specifier: './polyfill', typeOnly: false },
      { specifier: '@modelcontextprotocol/sdk/types.js', typeOnly: true },
      { specifier: 'ajv', typeOnly: false },
      { specifier: 'ajv', typeOnly: true },
      { specifier: 'jsonc-parser', typeOnly: false },
      { specifier: 'node:assert/strict', typeOnly: false },
      { specifier: 'node:path', typeOnly: false },
      { specifier: 'sarif', typeOnly: true },
      { specifier: 'vscode-languageserver/node', typeOnly: false },
      { specifier: 'vscode-uri', typeOnly: false },
    ],
  );
  assert.equal(packageOf('@modelcontextprotocol/sdk/client/stdio.js'), '@modelcontextprotocol/sdk');
  assert.equal(packageOf('vscode-languageserver/node'), 'vscode-languageserver');
  assert.equal(packageOf('../server/src/protocol'), undefined);
});

test('every package imported by server/src and client/src is a node builtin, vscode or a declared dependency', () => {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const dependencies = new Set(Object.keys(manifest.dependencies));
  const devDependencies = new Set(Object.keys(manifest.devDependencies));
  const undeclared: string[] = [];
  const seen = new Set<string>();
  for (const file of [...tsFilesUnder(path.join(root, 'server', 'src')), ...tsFilesUnder(path.join(root, 'client', 'src'))]) {
    for (const site of importsOf(readFileSync(file, 'utf8'))) {
      const name = packageOf(site.specifier);
      if (name === undefined || isBuiltin(name) || name === 'vscode') continue;
      seen.add(name);
      if (dependencies.has(name)) continue;
      if (site.typeOnly && (devDependencies.has(name) || devDependencies.has(`@types/${name}`))) continue;
      undeclared.push(`${path.relative(root, file)}: ${site.typeOnly ? 'import type from ' : ''}'${site.specifier}' (${name} is not in dependencies)`);
    }
  }
  assert.deepEqual(undeclared, []);
  // The scan saw the packages the server and client are built on (it did not silently match nothing).
  for (const name of ['vscode-languageserver', 'vscode-languageclient', '@modelcontextprotocol/sdk', 'jsonc-parser']) {
    assert.ok(seen.has(name), `no import of ${name} found: the scan is broken`);
  }
});
