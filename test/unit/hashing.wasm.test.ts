import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { fnv1a64Backend, fnv1a64Hex, fnv1a64HexJs, fnv1a64HexOfBytes, fnv1a64HexOfBytesJs } from '../../server/src/core/pins/fnv1a64';
import { fnvModuleBytes, loadWasmFnv } from '../../server/src/core/pins/fnv1a64.wasm';
import { fnv1a64ReferenceHex } from '../support/fnv1a64Reference';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The three implementations of one string: WebAssembly, the JavaScript fallback, the BigInt reference. */
function allThree(text: string): [string, string, string] {
  return [fnv1a64Hex(text), fnv1a64HexJs(text), fnv1a64ReferenceHex(utf8(text))];
}

function assertAgree(text: string): void {
  const [wasm, js, reference] = allThree(text);
  assert.equal(wasm, reference, `wasm vs reference for a string of ${text.length} units`);
  assert.equal(js, reference, `JavaScript vs reference for a string of ${text.length} units`);
}

// Bytes 16..65535 of the module's memory take the encoded text: 65,520 bytes per window.
const WINDOW = 65_520;

describe('FNV-1a 64 in WebAssembly', () => {
  test('Node runs the WebAssembly version', () => assert.equal(fnv1a64Backend(), 'wasm'));

  test('WebAssembly, the JavaScript fallback and the BigInt reference agree on random strings (all planes)', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), assertAgree), { numRuns: 3000 });
  });

  test('they agree on strings with lone surrogates (encoded as U+FFFD, as TextEncoder does)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 100 }), assertAgree), { numRuns: 3000 });
    // The lone surrogates themselves, spelled out: high at the end, low at the start, reversed pair.
    for (const text of ['\ud800', 'a\udbff', '\udc00b', '\udfff\ud800', 'x\ud83d\ude00\ud83d']) assertAgree(text);
    assert.equal(fnv1a64Hex('\ud800'), fnv1a64Hex('\ufffd'));
  });

  test('they agree on strings longer than one window of the module memory', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 22_000, maxLength: 70_000 }), assertAgree),
      { numRuns: 20 },
    );
  });

  test('a surrogate pair or a lone surrogate at the window boundary is hashed whole', () => {
    const cases = [
      'a'.repeat(WINDOW - 1) + '😀tail', // 4 bytes do not fit in the 1 left: next window
      'a'.repeat(WINDOW - 2) + '😀',
      'a'.repeat(WINDOW - 4) + '😀😀',
      'a'.repeat(WINDOW - 2) + '\ud800z', // U+FFFD's 3 bytes do not fit in the 2 left
      'a'.repeat(WINDOW - 1) + '\udc00',
      'é'.repeat(WINDOW), // two windows of 2-byte characters, exactly
      '€'.repeat(3 * WINDOW + 7),
    ];
    for (const text of cases) assertAgree(text);
  });

  test('bytes: WebAssembly, the JavaScript fallback and the reference agree, across windows too', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        const reference = fnv1a64ReferenceHex(bytes);
        assert.equal(fnv1a64HexOfBytes(bytes), reference);
        assert.equal(fnv1a64HexOfBytesJs(bytes), reference);
      }),
      { numRuns: 2000 },
    );
    const long = Uint8Array.from({ length: 2 * WINDOW + 13 }, (_, index) => (index * 31 + 7) & 255);
    assert.equal(fnv1a64HexOfBytes(long), fnv1a64ReferenceHex(long));
  });

  test('the hash of a string is the hash of its UTF-8 bytes', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (text) => assert.equal(fnv1a64Hex(text), fnv1a64HexOfBytes(utf8(text)))), { numRuns: 500 });
  });

  test('the module is a valid WebAssembly binary', () => {
    const api: unknown = Reflect.get(globalThis, 'WebAssembly');
    assert.ok(typeof api === 'object' && api !== null && 'validate' in api && typeof api.validate === 'function');
    assert.equal(api.validate(fnvModuleBytes()), true);
    assert.ok(loadWasmFnv(api), 'loads with the runtime WebAssembly');
  });

  test('without a usable WebAssembly the loader gives up quietly, so the JavaScript fallback runs', () => {
    assert.equal(loadWasmFnv(undefined), undefined);
    assert.equal(loadWasmFnv({}), undefined);
    const refusing = {
      Module: class {
        constructor() {
          throw new Error('compilation refused');
        }
      },
      Instance: class {},
    };
    assert.equal(loadWasmFnv(refusing), undefined);
    // A runtime whose instance exports something else is refused too.
    const wrongExports = { Module: class {}, Instance: class { exports = { update: () => undefined } } };
    assert.equal(loadWasmFnv(wrongExports), undefined);
  });

  test('a module that computes something else fails the self-check and is not used', () => {
    // A real runtime, but a memory whose state is never written: every hash would be the basis.
    const api: unknown = Reflect.get(globalThis, 'WebAssembly');
    assert.ok(typeof api === 'object' && api !== null && 'Module' in api && 'Instance' in api && typeof api.Instance === 'function');
    const RealInstance = api.Instance;
    const lazy = {
      Module: api.Module,
      Instance: class {
        exports: unknown;
        constructor(module: unknown, imports: unknown) {
          const real: unknown = Reflect.construct(RealInstance, [module, imports]);
          assert.ok(typeof real === 'object' && real !== null && 'exports' in real && typeof real.exports === 'object' && real.exports !== null && 'memory' in real.exports);
          this.exports = { memory: real.exports.memory, update: () => undefined };
        }
      },
    };
    assert.equal(loadWasmFnv(lazy), undefined);
  });
});
