/**
 * The plain-JavaScript SHA-256 behind every tool pin (server/src/core/pins/sha256.ts), against two
 * independent implementations: Node's `node:crypto` and `@noble/hashes`. Lengths around the
 * 64-byte block and its 56-byte padding boundary, multi-byte UTF-8, the large-input path, and a
 * property test over arbitrary strings.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';

import { sha256Hex, sha256HexOfBytes } from '../../server/src/core/pins/sha256';

function nodeSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

test('the FIPS 180-4 examples', () => {
  assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
});

test('every length around the block and padding boundaries, in ASCII and in multi-byte UTF-8', () => {
  for (let length = 0; length <= 200; length++) {
    for (const unit of ['a', '\u00e9', '\u20ac', '\u{1f600}']) {
      const text = unit.repeat(length);
      assert.equal(sha256Hex(text), nodeSha256(text), `${length} × U+${unit.codePointAt(0)!.toString(16)}`);
    }
  }
});

test('texts past the reusable buffer, and bytes, take the allocating path with the same result', () => {
  for (const length of [5437, 5438, 16384, 100_000]) {
    const text = 'x\u00e9\u{1f600}'.repeat(length);
    assert.equal(sha256Hex(text), nodeSha256(text), `length ${length}`);
    const bytes = new TextEncoder().encode(text);
    assert.equal(sha256HexOfBytes(bytes), createHash('sha256').update(bytes).digest('hex'));
  }
});

test('equal to @noble/hashes on arbitrary strings (property)', async () => {
  const { sha256 } = await import('@noble/hashes/sha2.js');
  const { bytesToHex } = await import('@noble/hashes/utils.js');
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), (text) => {
      assert.equal(sha256Hex(text), bytesToHex(sha256(new TextEncoder().encode(text))));
    }),
    { numRuns: 500 },
  );
});
