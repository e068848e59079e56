/**
 * FNV-1a 64-bit over the UTF-8 bytes of a string.
 *
 * {@link fnv1a64Hex} and {@link fnv1a64HexOfBytes} run in WebAssembly (core/pins/fnv1a64.wasm.ts:
 * one i64 multiply per byte), compiled on first use. Where WebAssembly is unavailable they fall
 * back to the pure-JavaScript versions below, {@link fnv1a64HexJs} and {@link fnv1a64HexOfBytesJs},
 * which give the same result for every input (a property test holds the three, with a BigInt
 * reference, together).
 *
 * offset basis 0xcbf29ce484222325, prime 0x100000001b3 = 2^40 + 0x1b3; for each byte,
 * hash ^= byte, then hash *= prime (mod 2^64).
 *
 * In JavaScript, the 64-bit hash is kept as four 16-bit words h0 (lowest) … h3, so every intermediate product
 * fits in a small integer and V8 never leaves integer arithmetic. Multiplying by the prime is
 * hash·0x1b3 + (hash << 40); the shift by 40 bits adds h0 << 8 to word 2 and h1 << 8 to word 3
 * (the rest overflows past 64 bits). Carries then ripple upwards word by word.
 *
 * The BigInt reference implementation lives only in the tests and the benchmark.
 */

import { loadWasmFnv, type WasmFnv } from './fnv1a64.wasm';

const HEX = '0123456789abcdef';

/** The WebAssembly version; undefined until first use, null where it cannot be loaded. */
let wasm: WasmFnv | null | undefined;

function wasmFnv(): WasmFnv | null {
  if (wasm === undefined) wasm = loadWasmFnv(Reflect.get(globalThis, 'WebAssembly')) ?? null;
  return wasm;
}

/** Which implementation {@link fnv1a64Hex} and {@link fnv1a64HexOfBytes} use here (for tests and benchmarks). */
export function fnv1a64Backend(): 'wasm' | 'js' {
  return wasmFnv() ? 'wasm' : 'js';
}

/** FNV-1a 64 of the given bytes, as 16 lowercase hex digits. */
export function fnv1a64HexOfBytes(bytes: Uint8Array): string {
  const fast = wasm ?? wasmFnv();
  return fast ? fast.hexOfBytes(bytes) : fnv1a64HexOfBytesJs(bytes);
}

/**
 * FNV-1a 64 of the UTF-8 encoding of `text`, as 16 lowercase hex digits. Lone surrogates are
 * encoded as U+FFFD, as TextEncoder does (canonical JSON never contains them).
 */
export function fnv1a64Hex(text: string): string {
  const fast = wasm ?? wasmFnv();
  return fast ? fast.hexOfString(text) : fnv1a64HexJs(text);
}

function word16ToHex(word: number): string {
  return HEX.charAt((word >>> 12) & 15) + HEX.charAt((word >>> 8) & 15) + HEX.charAt((word >>> 4) & 15) + HEX.charAt(word & 15);
}

/** FNV-1a 64 of the given bytes in plain JavaScript (the fallback), as 16 lowercase hex digits. */
export function fnv1a64HexOfBytesJs(bytes: Uint8Array): string {
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let index = 0; index < bytes.length; index++) {
    h0 ^= bytes[index] ?? 0;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
    h3 = (h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16)) & 0xffff;
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
  }
  return word16ToHex(h3) + word16ToHex(h2) + word16ToHex(h1) + word16ToHex(h0);
}

/**
 * FNV-1a 64 of the UTF-8 encoding of `text` in plain JavaScript (the fallback), as 16 lowercase
 * hex digits. The string is encoded on the fly, code point by code point, so no intermediate buffer is allocated. Lone surrogates
 * are encoded as U+FFFD, as TextEncoder does (canonical JSON never contains them).
 */
export function fnv1a64HexJs(text: string): string {
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  const length = text.length;
  let index = 0;
  // Up to four UTF-8 bytes of the current code point, packed lowest byte first, and their count.
  let pending = 0;
  let pendingCount = 0;
  while (index < length) {
    if (pendingCount === 0) {
      let code = text.charCodeAt(index++);
      if (code < 0x80) {
        // ASCII, nearly all of a JSON Schema: mix the byte directly (the same step as below).
        h0 ^= code;
        const t0 = h0 * 0x1b3;
        const t1 = h1 * 0x1b3 + (t0 >>> 16);
        const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
        h3 = (h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16)) & 0xffff;
        h0 = t0 & 0xffff;
        h1 = t1 & 0xffff;
        h2 = t2 & 0xffff;
        continue;
      } else if (code < 0x800) {
        pending = (0xc0 | (code >> 6)) | ((0x80 | (code & 0x3f)) << 8);
        pendingCount = 2;
      } else {
        if (code >= 0xd800 && code <= 0xdbff && index < length) {
          const next = text.charCodeAt(index);
          if (next >= 0xdc00 && next <= 0xdfff) {
            index++;
            code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
            // Four bytes do not fit a 31-bit small integer when packed, so use >>> 0 to keep it unsigned.
            pending =
              ((0xf0 | (code >> 18)) | ((0x80 | ((code >> 12) & 0x3f)) << 8) | ((0x80 | ((code >> 6) & 0x3f)) << 16) | ((0x80 | (code & 0x3f)) << 24)) >>> 0;
            pendingCount = 4;
          }
        }
        if (pendingCount === 0) {
          if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
          pending = (0xe0 | (code >> 12)) | ((0x80 | ((code >> 6) & 0x3f)) << 8) | ((0x80 | (code & 0x3f)) << 16);
          pendingCount = 3;
        }
      }
    }
    while (pendingCount > 0) {
      h0 ^= pending & 0xff;
      pending >>>= 8;
      pendingCount--;
      const t0 = h0 * 0x1b3;
      const t1 = h1 * 0x1b3 + (t0 >>> 16);
      const t2 = h2 * 0x1b3 + (h0 << 8) + (t1 >>> 16);
      h3 = (h3 * 0x1b3 + (h1 << 8) + (t2 >>> 16)) & 0xffff;
      h0 = t0 & 0xffff;
      h1 = t1 & 0xffff;
      h2 = t2 & 0xffff;
    }
  }
  return word16ToHex(h3) + word16ToHex(h2) + word16ToHex(h1) + word16ToHex(h0);
}
