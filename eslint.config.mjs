// Lint rules that hold the architecture, not only the style:
// - server/src/core is pure: no editor, no LSP, no MCP SDK, no file system, network or processes.
//   core/pins and server/src/pins (the `toolpin/pins` library) import no Node module at all, not
//   even node:crypto: the library runs in browsers and workers (core/pins/sha256.ts is plain JS).
// - Only server/src/mcp may import the MCP SDK.
// - The client imports nothing from the server but the typed protocol file.
// - server/src/engine is the one orchestrator: it sees listings through its ListingSource
//   interface and never imports the MCP layer, the CLI or the LSP features that sit above it.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const IO_MODULES = ['fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'net', 'node:net', 'http', 'node:http', 'https', 'node:https',
  'child_process', 'node:child_process', 'dgram', 'node:dgram', 'tls', 'node:tls', 'worker_threads', 'node:worker_threads', 'os', 'node:os',
  'process', 'node:process', 'readline', 'node:readline'];

const mcpSdk = { group: ['@modelcontextprotocol/*'], message: 'Only server/src/mcp talks to MCP servers; pass listings into the core instead.' };

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test/fixtures/**', 'test-results/**', 'examples/servers/bundled/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // Flat config: later blocks win, so the general rule comes before the stricter core rules.
  {
    files: ['server/src/**/*.ts', 'client/src/**/*.ts'],
    ignores: ['server/src/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [mcpSdk] }],
    },
  },
  {
    files: ['server/src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          mcpSdk,
          { group: ['../mcp/*', '../cli/*', '../features/*', '../server', '../main'], message: 'The engine is below the MCP layer, the CLI and the server: take what you need as an interface (engine/listingSource.ts).' },
          { group: ['vscode', 'vscode-*'], message: 'The engine knows nothing of editors or LSP; the features adapt it.' },
        ],
      }],
    },
  },
  {
    files: ['server/src/core/**/*.ts', 'server/src/pins/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [...IO_MODULES, 'node:crypto', 'crypto'].map((name) => ({ name, message: 'The core is pure: no I/O. Inject what you need.' })),
        patterns: [
          { group: ['vscode', 'vscode-*'], message: 'The core knows nothing of editors or LSP; convert in server/src/util/toLsp.ts.' },
          mcpSdk,
        ],
      }],
      'no-restricted-globals': ['error', 'process', 'require', 'fetch', 'setTimeout', 'setInterval'],
    },
  },
  {
    // Deferred loading of the libraries only some documents need (the file says why).
    files: ['server/src/core/deferredLibraries.ts'],
    rules: { 'no-restricted-globals': ['error', 'process', 'fetch', 'setTimeout', 'setInterval'], '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['server/src/core/pins/sha256.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: IO_MODULES, patterns: [{ group: ['vscode', 'vscode-*'] }, mcpSdk] }],
    },
  },
  {
    files: ['client/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          mcpSdk,
          { group: ['**/server/src/**', '!**/server/src/protocol'], message: 'The client talks to the server over LSP; import only server/src/protocol.' },
        ],
      }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.mjs', 'esbuild.mjs', 'test/**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
