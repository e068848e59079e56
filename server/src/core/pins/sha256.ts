/**
 * SHA-256 (FIPS 180-4) in plain JavaScript, for the tool pin.
 *
 * The pin library (`toolpin/pins`, server/src/pins/index.ts) runs in Node, Deno, Bun, a worker and
 * a browser bundle, so it imports no Node module and no dependency; the CLI, the language server
 * and the extension use the same code, so there is one SHA-256 behind every tool pin. Web Crypto's
 * `subtle.digest` is asynchronous and would make every pin a promise, so the digest is computed
 * here. The only global it needs is `TextEncoder`, which every one of those runtimes has.
 * test/unit/sha256.test.ts holds it equal to `node:crypto` and to `@noble/hashes`.
 */

/** The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** The message schedule, reused by every block (the digest is synchronous, so never shared). */
const W = new Int32Array(64);
const HEX = '0123456789abcdef';

/** The part of the global `TextEncoder` used here (declared so that no DOM or Node types are needed). */
interface Utf8Encoder {
  encode(text: string): Uint8Array;
  encodeInto(text: string, into: Uint8Array): { written: number };
}
declare const TextEncoder: new () => Utf8Encoder;

let encoder: Utf8Encoder | undefined;
/**
 * The buffer short texts are encoded into, reused so that a pin allocates nothing but its result.
 * Texts longer than it can hold in the worst case (3 bytes per UTF-16 unit) get a buffer of their own.
 */
const SCRATCH_BYTES = 16384;
let scratch: Uint8Array | undefined;

/** SHA-256 of the UTF-8 encoding of `text`, as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  encoder ??= new TextEncoder();
  const worst = text.length * 3;
  if (worst + 72 > SCRATCH_BYTES) return sha256HexOfBytes(encoder.encode(text));
  scratch ??= new Uint8Array(SCRATCH_BYTES);
  const { written } = encoder.encodeInto(text, scratch);
  return digestPadded(scratch, written);
}

/** SHA-256 of `bytes`, as 64 lowercase hex digits. */
export function sha256HexOfBytes(bytes: Uint8Array): string {
  const room = new Uint8Array(bytes.length + 72);
  room.set(bytes);
  return digestPadded(room, bytes.length);
}

/**
 * Pads the `length` message bytes at the start of `padded` in place (it must have 72 bytes of room
 * after them) and digests them.
 */
function digestPadded(padded: Uint8Array, length: number): string {
  // The message, a 0x80 byte, zeros, and the bit length in 8 bytes, padded to whole 64-byte blocks.
  const end = (((length + 8) >>> 6) + 1) << 6;
  padded.fill(0, length, end);
  padded[length] = 0x80;
  const bitLength = length * 8;
  // The high 32 bits of the length (messages over 512 MB), then the low 32 bits, big-endian.
  const high = Math.floor(bitLength / 0x100000000);
  padded[end - 8] = high >>> 24;
  padded[end - 7] = high >>> 16;
  padded[end - 6] = high >>> 8;
  padded[end - 5] = high;
  padded[end - 4] = bitLength >>> 24;
  padded[end - 3] = bitLength >>> 16;
  padded[end - 2] = bitLength >>> 8;
  padded[end - 1] = bitLength;

  let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
  for (let offset = 0; offset < end; offset += 64) {
    for (let t = 0; t < 16; t++) {
      const at = offset + t * 4;
      W[t] = ((padded[at] ?? 0) << 24) | ((padded[at + 1] ?? 0) << 16) | ((padded[at + 2] ?? 0) << 8) | (padded[at + 3] ?? 0);
    }
    for (let t = 16; t < 64; t++) {
      const w15 = W[t - 15] ?? 0;
      const w2 = W[t - 2] ?? 0;
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      W[t] = ((W[t - 16] ?? 0) + s0 + (W[t - 7] ?? 0) + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
    for (let t = 0; t < 64; t++) {
      const sigma1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const choose = (e & f) ^ (~e & g);
      const t1 = (h + sigma1 + choose + (K[t] ?? 0) + (W[t] ?? 0)) | 0;
      const sigma0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const majority = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (sigma0 + majority) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
  }
  return word32ToHex(h0) + word32ToHex(h1) + word32ToHex(h2) + word32ToHex(h3) + word32ToHex(h4) + word32ToHex(h5) + word32ToHex(h6) + word32ToHex(h7);
}

function word32ToHex(word: number): string {
  let out = '';
  for (let shift = 28; shift >= 0; shift -= 4) out += HEX.charAt((word >>> shift) & 15);
  return out;
}
