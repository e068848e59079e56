/**
 * Reference FNV-1a 64, written the obvious way with BigInt, for tests and the hashing benchmark.
 *
 * This is deliberately slow and plain so that it can be checked by eye against the definition
 * (docs/formats.md §2): start from the offset basis; for each byte, XOR the byte into the hash, then
 * multiply by the prime, modulo 2^64. The product code (server/src/core/pins/fnv1a64.ts) must agree with
 * it on every input; it must never be imported by product code.
 */

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/** FNV-1a 64 of `bytes`, as 16 lowercase hex digits. */
export function fnv1a64ReferenceHex(bytes: Uint8Array): string {
  let hash = OFFSET_BASIS;
  for (const byte of bytes) {
    hash ^= BigInt(byte);
    hash = (hash * PRIME) & MASK_64;
  }
  return hash.toString(16).padStart(16, '0');
}
