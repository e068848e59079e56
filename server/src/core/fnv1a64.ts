/**
 * FNV-1a 64-bit over the UTF-8 bytes of a string, computed in two 32-bit halves with `Math.imul`
 * so that no BigInt is allocated per byte.
 *
 * offset basis 0xcbf29ce484222325, prime 0x100000001b3 = 2^40 + 0x1b3; for each byte,
 * hash ^= byte, then hash *= prime (mod 2^64). Multiplying by the prime splits into
 * hash * 0x1b3 + (hash << 40); with hash = hi·2^32 + lo, the low word is lo·0x1b3 (mod 2^32) and
 * the high word is hi·0x1b3 + carry(lo·0x1b3) + (lo << 8), all mod 2^32.
 *
 * The reference implementation with BigInt lives only in the tests and the benchmark.
 */

const OFFSET_HI = 0xcbf29ce4;
const OFFSET_LO = 0x84222325;
const PRIME_LOW = 0x1b3;

function toHex32(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}

/** FNV-1a 64 of the given bytes, as 16 lowercase hex digits. */
export function fnv1a64HexOfBytes(bytes: Uint8Array): string {
  let hi = OFFSET_HI;
  let lo = OFFSET_LO;
  for (let index = 0; index < bytes.length; index++) {
    lo ^= bytes[index]!;
    // lo * 0x1b3 can exceed 2^53 only if lo ≥ 2^44, impossible for a 32-bit lo: the product is exact.
    const lowProduct = (lo >>> 0) * PRIME_LOW;
    const carry = Math.floor(lowProduct / 0x100000000);
    hi = (Math.imul(hi, PRIME_LOW) + carry + (lo << 8)) >>> 0;
    lo = lowProduct >>> 0;
  }
  return toHex32(hi) + toHex32(lo);
}

/**
 * FNV-1a 64 of the UTF-8 encoding of `text`, as 16 lowercase hex digits. The string is walked
 * code point by code point and encoded on the fly, so no intermediate buffer is allocated.
 * Lone surrogates are encoded as U+FFFD, as TextEncoder does (canonical JSON never contains them).
 */
export function fnv1a64Hex(text: string): string {
  let hi = OFFSET_HI;
  let lo = OFFSET_LO;
  const step = (byte: number): void => {
    lo ^= byte;
    const lowProduct = (lo >>> 0) * PRIME_LOW;
    const carry = Math.floor(lowProduct / 0x100000000);
    hi = (Math.imul(hi, PRIME_LOW) + carry + (lo << 8)) >>> 0;
    lo = lowProduct >>> 0;
  };
  for (let index = 0; index < text.length; index++) {
    let code = text.charCodeAt(index);
    if (code < 0x80) {
      // Inline the ASCII case: it is nearly all of a JSON Schema.
      lo ^= code;
      const lowProduct = (lo >>> 0) * PRIME_LOW;
      const carry = Math.floor(lowProduct / 0x100000000);
      hi = (Math.imul(hi, PRIME_LOW) + carry + (lo << 8)) >>> 0;
      lo = lowProduct >>> 0;
      continue;
    }
    if (code < 0x800) {
      step(0xc0 | (code >> 6));
      step(0x80 | (code & 0x3f));
      continue;
    }
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
        index++;
        step(0xf0 | (code >> 18));
        step(0x80 | ((code >> 12) & 0x3f));
        step(0x80 | ((code >> 6) & 0x3f));
        step(0x80 | (code & 0x3f));
        continue;
      }
    }
    if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
    step(0xe0 | (code >> 12));
    step(0x80 | ((code >> 6) & 0x3f));
    step(0x80 | (code & 0x3f));
  }
  return toHex32(hi) + toHex32(lo);
}
