// One build script for everything that ships and everything that is tested.
//
// Bundles (what ships):
//   dist/client.js  the VS Code extension; `vscode` stays external because the host provides it.
//   dist/cli.js     the `toolpin` command line, runnable by plain `node`: argument parsing, `hash`
//                   and the help, small so that `toolpin hash` starts fast.
//   dist/commands.js  everything else the CLI runs, loaded by dist/cli.js when a command needs it
//                   (server/src/cli/main.ts), including the language server: the client starts
//                   `dist/cli.js lsp --node-ipc`, other editors `toolpin lsp --stdio`. One copy of the
//                   server ships, not two. The two files only work side by side.
//   examples/servers/bundled/  the example workspace's MCP servers (below).
// Transpiled, not bundled (what is tested): every .ts file under server/src, client/src, test and
// bench is emitted one-to-one under out/, so tests import the same modules the bundles are made of.
import * as esbuild from 'esbuild';
import { existsSync, readdirSync, statSync, chmodSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

/**
 * Leaves server/src/cli/main.ts's `require('./commands')` to run time, pointed at dist/commands.js
 * beside dist/cli.js, instead of bundling the commands into dist/cli.js.
 */
const commandsBesideCli = {
  name: 'commands-beside-cli',
  setup(build) {
    build.onResolve({ filter: /^\.\/commands$/ }, (args) =>
      args.importer === resolve('server/src/cli/main.ts') ? { path: './commands.js', external: true } : undefined,
    );
  },
};

const builds = [
  { ...shared, entryPoints: ['client/src/extension.ts'], outfile: 'dist/client.js', external: ['vscode'] },
  {
    ...shared,
    entryPoints: ['server/src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
    plugins: [commandsBesideCli],
  },
  { ...shared, entryPoints: ['server/src/cli/commands.ts'], outfile: 'dist/commands.js' },
  {
    // The example workspace's MCP servers, bundled into the example, so the folder runs wherever
    // it is copied and from the installed extension (examples/README.md). ES modules, like their
    // sources; `require` is provided for the CommonJS code they bundle. The three servers share
    // the MCP SDK and zod, so `splitting` puts the code they share in shared-*.mjs chunks beside
    // them rather than three times in the package; each entry keeps its name and the chunks sit
    // in the same folder, so a server still finds files next to its own script.
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
    splitting: true,
    chunkNames: 'shared-[hash]',
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
  // Chunk names change with their content: stale chunks of an earlier build must not linger (and
  // ship). A server's memory file (memory.jsonl) is data, not build output, and stays.
  for (const entry of existsSync('examples/servers/bundled') ? readdirSync('examples/servers/bundled') : []) {
    if (entry.endsWith('.mjs')) rmSync(join('examples/servers/bundled', entry));
  }
  // dist/server.js was the second copy of the language server before dist/cli.js served both.
  rmSync('dist/server.js', { force: true });
  rmSync('dist/server.js.map', { force: true });
  await Promise.all(builds.map((options) => esbuild.build(options)));
  chmodSync('dist/cli.js', 0o755);
}
