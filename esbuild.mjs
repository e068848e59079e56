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
//   dist/lib/*.js   the libraries only some runs need (DEFERRED_LIBRARIES below), each a bundle of
//                   its own that dist/commands.js reads on first use, so that starting a command or
//                   the language server does not read and compile them.
//   dist/pins.mjs, dist/pins.cjs, dist/pins.d.ts  `toolpin/pins` (package.json `exports`), the pin
//                   library runtimes import: ES module and CommonJS builds of server/src/pins/index.ts
//                   for any platform (no Node module, no dependency), and its declarations (types/pins.d.ts).
//   examples/servers/bundled/  the example workspace's MCP servers (below).
// Transpiled, not bundled (what is tested): every .ts file under server/src, client/src, test and
// bench is emitted one-to-one under out/, so tests import the same modules the bundles are made of.
import * as esbuild from 'esbuild';
import { existsSync, readdirSync, statSync, chmodSync, copyFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * The libraries that only some runs need, by the file each becomes under dist/lib/, and the
 * package specifiers that file serves. server/src/core/deferredLibraries.ts requires Babel, Ajv
 * and re2js at their first use; the MCP SDK's client imports Ajv and ajv-formats for its output
 * validator, which runs only once a session is opened. Bundled into dist/commands.js they would be
 * read and pre-parsed (about 1.1 MB of source) whenever any command or the language server starts,
 * used or not, so each file is a bundle of its own instead. Ajv's two dialects and ajv-formats
 * share one file, so that Ajv's core is there once; each specifier is evaluated only when it is
 * first asked for (a getter), as it was inside the one bundle.
 */
const DEFERRED_LIBRARIES = {
  'babel-parser.js': ['@babel/parser'],
  'ajv.js': ['ajv', 'ajv/dist/2020', 'ajv-formats'],
  're2js.js': ['re2js'],
  // The team store's driver (server/src/store/historyStore.ts): only `--store` and the
  // toolpin.history.store setting need it.
  'pg.js': ['pg', 'pg-copy-streams'],
};

/** The entry of a dist/lib/ bundle: an object whose property per specifier requires it when read. */
function deferredLibraryEntry(specifiers) {
  const properties = specifiers.map((specifier) => `  ${JSON.stringify(specifier)}: { enumerable: true, get: () => require(${JSON.stringify(specifier)}) },`);
  return `module.exports = Object.defineProperties({}, {\n${properties.join('\n')}\n});\n`;
}

const deferredLibraryBuilds = Object.entries(DEFERRED_LIBRARIES).map(([file, specifiers]) => ({
  ...shared,
  stdin: { contents: deferredLibraryEntry(specifiers), resolveDir: resolve('.'), sourcefile: `lib/${file}`, loader: 'js' },
  outfile: `dist/lib/${file}`,
}));

/**
 * Keeps the deferred libraries out of a bundle in dist/: every import or require of one of their
 * specifiers becomes a small module, `module.exports = require('./lib/<file>')[specifier]`, with the
 * lib file left external. Node resolves that require against the bundle's own file, so it works
 * wherever dist/ is installed, and it runs where the original require ran, so the library is read
 * at its first use and not before. The specifier must resolve to the very file the lib bundle was
 * built from (resolved from the project's root); a package with a copy of its own elsewhere in
 * node_modules would be served another version, so the build fails instead.
 */
const deferredLibrariesBeside = {
  name: 'deferred-libraries-beside',
  setup(build) {
    const fileOf = new Map(Object.entries(DEFERRED_LIBRARIES).flatMap(([file, specifiers]) => specifiers.map((specifier) => [specifier, file])));
    // esbuild filters are regular expressions; the specifiers are plain names, checked exactly below.
    build.onResolve({ filter: /^(@babel\/parser|ajv|ajv-formats|re2js|pg|pg-copy-streams)(\/|$)/ }, async (args) => {
      if (!fileOf.has(args.path) || args.pluginData?.deferredLibraryCheck) return undefined;
      const options = { kind: args.kind, pluginData: { deferredLibraryCheck: true } };
      const [here, atRoot] = await Promise.all([
        build.resolve(args.path, { ...options, resolveDir: args.resolveDir }),
        build.resolve(args.path, { ...options, resolveDir: resolve('.') }),
      ]);
      if (here.errors.length > 0 || atRoot.errors.length > 0 || here.path !== atRoot.path) {
        return { errors: [{ text: `${args.path} imported by ${args.importer} resolves to ${here.path}, not to ${atRoot.path} that dist/lib/${fileOf.get(args.path)} bundles` }] };
      }
      return { path: args.path, namespace: 'deferred-library' };
    });
    build.onLoad({ filter: /.*/, namespace: 'deferred-library' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(`./lib/${fileOf.get(args.path)}`)})[${JSON.stringify(args.path)}];\n`,
      loader: 'js',
    }));
    build.onResolve({ filter: /^\.\/lib\//, namespace: 'deferred-library' }, (args) => ({ path: args.path, external: true }));
  },
};

/**
 * `toolpin/pins` (docs/pins-library.md): `platform: 'neutral'` resolves no Node module and adds no
 * Node shim, so a Node import anywhere in the entry's graph fails the build rather than shipping.
 * Not minified: the file is small and a reader of a dispatch guard should be able to read it.
 */
const pinsLibrary = {
  bundle: true,
  platform: 'neutral',
  target: 'es2020',
  entryPoints: ['server/src/pins/index.ts'],
  legalComments: 'none',
  logLevel: 'warning',
};

const builds = [
  { ...pinsLibrary, format: 'esm', outfile: 'dist/pins.mjs' },
  { ...pinsLibrary, format: 'cjs', outfile: 'dist/pins.cjs' },
  { ...shared, entryPoints: ['client/src/extension.ts'], outfile: 'dist/client.js', external: ['vscode'] },
  {
    ...shared,
    entryPoints: ['server/src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
    plugins: [commandsBesideCli, deferredLibrariesBeside],
  },
  { ...shared, entryPoints: ['server/src/cli/commands.ts'], outfile: 'dist/commands.js', plugins: [deferredLibrariesBeside] },
  ...deferredLibraryBuilds,
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
  // A lib bundle that is no longer built must not linger (and ship: .vscodeignore ships dist/lib/*.js).
  rmSync('dist/lib', { recursive: true, force: true });
  rmSync('dist/server.js.map', { force: true });
  await Promise.all(builds.map((options) => esbuild.build(options)));
  for (const bundle of shippedBundles()) keepOneByteSource(bundle);
  copyFileSync('types/pins.d.ts', 'dist/pins.d.ts');
  chmodSync('dist/cli.js', 0o755);
}

/** The JavaScript files that ship in dist/ (the bundles and dist/lib/). */
function shippedBundles() {
  const found = readdirSync('dist').filter((name) => name.endsWith('.js')).map((name) => join('dist', name));
  if (existsSync('dist/lib')) found.push(...readdirSync('dist/lib').filter((name) => name.endsWith('.js')).map((name) => join('dist/lib', name)));
  return found;
}

/**
 * Escapes every character above U+00FF in a built bundle. esbuild writes ASCII code (its default
 * charset escapes strings and identifiers) but keeps comments as they are, and one dash or
 * ellipsis in a comment (ours or a dependency's) makes V8 hold the whole source as a two-byte
 * string: dist/commands.js took 4.5 MB of every process's heap instead of 2.25 (issue 13). In a
 * comment the escape is inert text; test/cli/bundles.test.ts holds the bundles to one byte per
 * character.
 */
function keepOneByteSource(file) {
  const text = readFileSync(file, 'utf8');
  // eslint-disable-next-line no-control-regex -- the range is the point: every character above Latin-1.
  const escaped = text.replace(/[^\u0000-\u00ff]/gu, (char) => {
    const code = char.codePointAt(0);
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  if (escaped !== text) writeFileSync(file, escaped);
}
