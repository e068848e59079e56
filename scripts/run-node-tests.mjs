// Runs every *.test.js file under the given folders with Node's built-in test runner.
// Node 20's `--test` does not expand globs, so the files are listed here. A folder with no test
// file is an error: a suite that silently runs nothing must fail loudly.
import { readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function testFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...testFiles(path));
    else if (entry.endsWith('.test.js')) found.push(path);
  }
  return found.sort();
}

const folders = process.argv.slice(2);
const files = [];
for (const folder of folders) {
  if (!existsSync(folder)) {
    console.error(`run-node-tests: ${folder} does not exist; run "npm run build" first.`);
    process.exit(1);
  }
  files.push(...testFiles(folder));
}
if (files.length === 0) {
  console.error(`run-node-tests: no *.test.js files under ${folders.join(', ')}`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
