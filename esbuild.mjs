// One build script for everything that ships and everything that is tested.
//
// Bundles (what ships):
//   dist/client.js  the VS Code extension; `vscode` stays external because the host provides it.
//   dist/server.js  the language server, self-contained, started by the client over IPC or stdio.
//   dist/cli.js     the `toolpin` command line, self-contained, runnable by plain `node`.
// Transpiled, not bundled (what is tested): every .ts file under server/src, client/src, test and
// bench is emitted one-to-one under out/, so tests import the same modules the bundles are made of.
import * as esbuild from 'esbuild';
import { readdirSync, statSync, chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';

// The version every bundle reports (serverInfo, SARIF, --version) is package.json's, injected here.
const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
const define = { __TOOLPIN_VERSION__: JSON.stringify(version) };

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** Lists .ts files under a folder, recursively, skipping test fixtures that are data. */
function tsFilesUnder(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry === 'node_modules' || entry === 'fixtures') continue;
      found.push(...tsFilesUnder(path));
    } else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) {
      found.push(path);
    }
  }
  return found;
}

const shared = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  // jsonc-parser's UMD entry confuses bundlers; its ESM entry bundles cleanly.
  mainFields: ['module', 'main'],
  define,
};

const builds = [
  { ...shared, entryPoints: ['client/src/extension.ts'], outfile: 'dist/client.js', external: ['vscode'] },
  { ...shared, entryPoints: ['server/src/main.ts'], outfile: 'dist/server.js' },
  {
    ...shared,
    entryPoints: ['server/src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    // The example workspace's MCP servers, each bundled into one file inside the example, so the
    // folder runs wherever it is copied and from the installed extension (examples/README.md).
    // ES modules, like their sources; `require` is provided for the CommonJS code they bundle.
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    entryPoints: {
      everything: 'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
      memory: 'node_modules/@modelcontextprotocol/server-memory/dist/index.js',
      'rugpull-server': 'examples/servers/rugpull-server.mjs',
    },
    outdir: 'examples/servers/bundled',
    outExtension: { '.js': '.mjs' },
    banner: { js: "import { createRequire as __toolpinCreateRequire } from 'node:module'; const require = __toolpinCreateRequire(import.meta.url);" },
  },
  {
    bundle: false,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    logLevel: 'warning',
    define,
    entryPoints: [...tsFilesUnder('server/src'), ...tsFilesUnder('client/src'), ...tsFilesUnder('test'), ...tsFilesUnder('bench')],
    outdir: 'out',
    outbase: '.',
  },
];

if (watch) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
  console.log('esbuild: watching for changes');
} else {
  rmSync('out', { recursive: true, force: true });
  await Promise.all(builds.map((options) => esbuild.build(options)));
  chmodSync('dist/cli.js', 0o755);
}
