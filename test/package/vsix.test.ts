/**
 * The packaged extension, read from dist/toolpin.vsix (a zip) as VS Code installs it: the
 * Extensions view renders extension/readme.md from the installed folder, with no network, so
 * every image the README shows and the icon must be files inside the package, and the README's
 * links must still be the relative ones of the repository (`vsce package
 * --no-rewrite-relative-links`: nothing points at a repository host).
 *
 * Run after `npm run package` (test/run-all.sh runs it as the step after packaging); it fails,
 * never skips, when the package is missing.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { before, test } from 'node:test';
import JSZip from 'jszip';

const root = path.resolve(__dirname, '..', '..', '..');
const vsixPath = path.join(root, 'dist', 'toolpin.vsix');
/** The ceiling on the package: today's is about 1.1 MB, most of it the three bundles and the screenshots. */
const MAX_BYTES = 1.5 * 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let zip: JSZip;
let manifest: { main: string; icon?: string; repository?: { url?: string }; categories?: string[]; keywords?: string[]; contributes?: Record<string, unknown> };

before(async () => {
  assert.ok(existsSync(vsixPath), `${path.relative(root, vsixPath)} is missing: run "npm run package" first`);
  zip = await JSZip.loadAsync(readFileSync(vsixPath));
  manifest = JSON.parse(await file('extension/package.json').async('string')) as typeof manifest;
});

function file(name: string): JSZip.JSZipObject {
  const entry = zip.file(name);
  assert.ok(entry, `${name} is not in the package`);
  return entry;
}

/** Where a link relative to the README (which sits in extension/) lands inside the package, or undefined if it leaves it. */
function inPackage(link: string): string | undefined {
  const target = path.posix.normalize(path.posix.join('extension', decodeURIComponent(link.replace(/#.*$/s, ''))));
  return target.startsWith('extension/') ? target : undefined;
}

/** The image targets of Markdown `![alt](target "title")` and HTML `<img src="target">`. */
function imageLinks(markdown: string): string[] {
  const markdownImages = [...markdown.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].flatMap((match) => match[1] ?? []);
  const htmlImages = [...markdown.matchAll(/<img\b[^>]*\bsrc=["']([^"']+)["']/gi)].flatMap((match) => match[1] ?? []);
  return [...markdownImages, ...htmlImages];
}

function pngSize(data: Buffer): { width: number; height: number } {
  assert.ok(data.subarray(0, 8).equals(PNG_SIGNATURE), 'not a PNG file');
  assert.equal(data.toString('ascii', 12, 16), 'IHDR');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

test('the package is newer than what it is made of (not left over from an earlier build)', () => {
  const built = statSync(vsixPath).mtimeMs;
  for (const source of ['package.json', 'README.md', '.vscodeignore']) {
    assert.ok(statSync(path.join(root, source)).mtimeMs <= built, `${source} changed after dist/toolpin.vsix was built: run "npm run package"`);
  }
});

test('the package is at most 1.5 MB', () => {
  const size = statSync(vsixPath).size;
  assert.ok(size <= MAX_BYTES, `dist/toolpin.vsix is ${size} bytes, more than ${MAX_BYTES}`);
});

test('every image of the packaged README is a PNG inside the package, linked relatively', async () => {
  const readmeName = Object.keys(zip.files).find((name) => /^extension\/readme\.md$/i.test(name));
  assert.ok(readmeName, 'the package has no README');
  const packaged = await file(readmeName).async('string');
  // The README is packaged as written: vsce rewrote no link to a repository host.
  assert.equal(packaged, readFileSync(path.join(root, 'README.md'), 'utf8'));
  const images = imageLinks(packaged);
  assert.ok(images.length >= 4, `expected the README's screenshots, found ${images.length} image links`);
  for (const link of images) {
    assert.doesNotMatch(link, /^[a-z][a-z0-9+.-]*:/i, `${link}: an image behind a URL cannot be shown offline`);
    const target = inPackage(link);
    assert.ok(target, `${link} points outside the extension's folder`);
    const data = await file(target).async('nodebuffer');
    pngSize(data);
  }
});

test('the README\'s links into docs/ resolve inside the package', async () => {
  const packaged = await file(Object.keys(zip.files).find((name) => /^extension\/readme\.md$/i.test(name))!).async('string');
  const links = [...packaged.matchAll(/(?<!!)\[[^\]]*\]\(\s*(docs\/[^)\s]+)\s*\)/g)].flatMap((match) => match[1] ?? []);
  assert.ok(links.length > 0, 'the README links no page under docs/');
  for (const link of links) file(inPackage(link)!);
});

test('the icon is a 128x128 PNG in the package, and the gallery metadata is set', async () => {
  assert.equal(manifest.icon, 'media/icon.png');
  const icon = await file(`extension/${manifest.icon}`).async('nodebuffer');
  assert.deepEqual(pngSize(icon), { width: 128, height: 128 });
  const vsixManifest = await file('extension.vsixmanifest').async('string');
  assert.match(vsixManifest, /<Icon>extension\/media\/icon\.png<\/Icon>/);
  assert.match(manifest.repository?.url ?? '', /^https:\/\//);
  assert.ok(manifest.categories?.includes('Linters'), `categories: ${String(manifest.categories)}`);
  assert.ok((manifest.keywords ?? []).includes('mcp'));
});

test('every file package.json points at is in the package', () => {
  const contributes = manifest.contributes as {
    languages: Array<{ configuration?: string }>;
    grammars: Array<{ path: string }>;
    jsonValidation: Array<{ url: string }>;
    walkthroughs: Array<{ steps: Array<{ media: { markdown?: string; image?: string } }> }>;
  };
  const named = [
    manifest.main,
    ...contributes.languages.map((language) => language.configuration).filter((value): value is string => value !== undefined),
    ...contributes.grammars.map((grammar) => grammar.path),
    ...contributes.jsonValidation.map((validation) => validation.url),
    ...contributes.walkthroughs.flatMap((walkthrough) => walkthrough.steps.flatMap((step) => [step.media.markdown, step.media.image])).filter((value): value is string => value !== undefined),
  ];
  assert.ok(named.length > 5);
  for (const relative of named) file(path.posix.join('extension', path.posix.normalize(relative)));
});

test('every file a packaged bundle requires beside itself is in the package (dist/commands.js and its dist/lib/ files)', async () => {
  // dist/cli.js loads dist/commands.js, which reads the libraries only some runs need from
  // dist/lib/ (esbuild.mjs, DEFERRED_LIBRARIES). A file left out of the package would be missed
  // only by the first run that needs it, so every relative require of the packaged bundles, and of
  // the files they require in turn, must name a file in the package.
  const required = new Set<string>();
  const pending = ['extension/dist/cli.js'];
  while (pending.length > 0) {
    const bundle = pending.pop()!;
    const text = await file(bundle).async('string');
    for (const match of text.matchAll(/\brequire\(\s*["'](\.\.?\/[^"']+)["']\s*\)/g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(bundle), match[1]!));
      if (required.has(target)) continue;
      required.add(target);
      file(target);
      pending.push(target);
    }
  }
  const libs = [...required].filter((name) => name.startsWith('extension/dist/lib/')).sort();
  assert.ok(required.has('extension/dist/commands.js'), `dist/cli.js requires: ${[...required].join(', ')}`);
  assert.deepEqual(libs, ['extension/dist/lib/ajv.js', 'extension/dist/lib/babel-parser.js', 'extension/dist/lib/pg.js', 'extension/dist/lib/re2js.js']);
});
