/**
 * FNV-1a 64 in WebAssembly: one i64 multiply per byte, which JavaScript cannot do without BigInt.
 *
 * The module is assembled here from its instructions by a tiny encoder (no toolchain, no binary
 * file in the repository); its text form is:
 *
 * ```wat
 * (module
 *   (memory (export "memory") 1)              ;; one 64 KiB page, never grown
 *   (func (export "update") (param $len i32)  ;; hashes bytes [16, 16 + len) into the state at 0
 *     (local $h i64) (local $p i32) (local $end i32) (local $end8 i32)
 *     (local.set $h (i64.load (i32.const 0)))
 *     (local.set $p (i32.const 16))
 *     (local.set $end (i32.add (local.get $len) (i32.const 16)))
 *     (local.set $end8 (i32.sub (local.get $end) (i32.const 8)))
 *     (block (br_if 0 (i32.gt_u (local.get $p) (local.get $end8)))
 *       (loop                                   ;; eight bytes per turn
 *         (local.set $h (i64.mul (i64.xor (local.get $h) (i64.load8_u offset=0 (local.get $p))) (i64.const 0x100000001b3)))
 *         …                                     ;; the same for offsets 1 to 7
 *         (br_if 0 (i32.le_u (local.tee $p (i32.add (local.get $p) (i32.const 8))) (local.get $end8)))))
 *     (block (br_if 0 (i32.ge_u (local.get $p) (local.get $end)))
 *       (loop                                   ;; the last 0 to 7 bytes
 *         (local.set $h (i64.mul (i64.xor (local.get $h) (i64.load8_u (local.get $p))) (i64.const 0x100000001b3)))
 *         (br_if 0 (i32.lt_u (local.tee $p (i32.add (local.get $p) (i32.const 1))) (local.get $end)))))
 *     (i64.store (i32.const 0) (local.get $h))))
 * ```
 *
 * The JavaScript side ({@link loadWasmFnv}) keeps the 64-bit state in memory bytes 0–7 (little
 * endian, as WebAssembly always is) and encodes strings with `TextEncoder.encodeInto` straight
 * into bytes 16–65535, in windows when a string is longer: memory stays one page whatever is
 * hashed. `encodeInto` never splits a surrogate pair across windows and writes a lone surrogate as
 * U+FFFD (EF BF BD), exactly as `TextEncoder.encode` and the pure-JavaScript version do.
 *
 * Compiling WebAssembly is not I/O: the core stays pure. Where WebAssembly is missing or refuses
 * the module, {@link loadWasmFnv} returns undefined and the caller uses plain JavaScript.
 */

/** Where the bytes to hash start in the module's memory; bytes 0–7 hold the hash state. */
const DATA_START = 16;
/** One WebAssembly page. */
const PAGE_BYTES = 65536;
/** Bytes that fit after the state: at least 4, so that every window makes progress. */
const WINDOW_BYTES = PAGE_BYTES - DATA_START;

// The offset basis 0xcbf29ce484222325 as two 32-bit halves.
const BASIS_LOW = 0x84222325;
const BASIS_HIGH = 0xcbf29ce4;

// ---------------------------------------------------------------------------------------------
// The encoder: just what this one module needs.

function unsignedLeb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

function signedLeb(value: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = Number(value & 0x7fn);
    value >>= 7n;
    const done = (value === 0n && (byte & 0x40) === 0) || (value === -1n && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

function vector(items: readonly number[][]): number[] {
  return [...unsignedLeb(items.length), ...items.flat()];
}

function section(id: number, content: readonly number[]): number[] {
  return [id, ...unsignedLeb(content.length), ...content];
}

function name(text: string): number[] {
  const bytes = [...text].map((character) => character.charCodeAt(0));
  return [...unsignedLeb(bytes.length), ...bytes];
}

// Opcodes and immediates used below.
const I32 = 0x7f;
const I64 = 0x7e;
const BLOCK = 0x02;
const LOOP = 0x03;
const EMPTY_TYPE = 0x40;
const END = 0x0b;
const BR_IF = 0x0d;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I64_LOAD = 0x29;
const I64_LOAD8_U = 0x31;
const I64_STORE = 0x37;
const I32_CONST = 0x41;
const I64_CONST = 0x42;
const I32_LT_U = 0x49;
const I32_GT_U = 0x4b;
const I32_LE_U = 0x4d;
const I32_GE_U = 0x4f;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I64_MUL = 0x7e;
const I64_XOR = 0x85;

// Locals: 0 = $len (the parameter), 1 = $h, 2 = $p, 3 = $end, 4 = $end8.
const LEN = 0;
const H = 1;
const P = 2;
const END_AT = 3;
const END8 = 4;

const PRIME = signedLeb(0x100000001b3n);

/** h = (h ^ mem[p + offset]) * prime */
function mixByte(offset: number): number[] {
  return [LOCAL_GET, H, LOCAL_GET, P, I64_LOAD8_U, 0, ...unsignedLeb(offset), I64_XOR, I64_CONST, ...PRIME, I64_MUL, LOCAL_SET, H];
}

function updateBody(): number[] {
  const code = [
    ...[I32_CONST, 0, I64_LOAD, 3, 0, LOCAL_SET, H],
    ...[I32_CONST, ...signedLeb(BigInt(DATA_START)), LOCAL_SET, P],
    ...[LOCAL_GET, LEN, I32_CONST, ...signedLeb(BigInt(DATA_START)), I32_ADD, LOCAL_SET, END_AT],
    ...[LOCAL_GET, END_AT, I32_CONST, 8, I32_SUB, LOCAL_SET, END8],
    BLOCK, EMPTY_TYPE,
    ...[LOCAL_GET, P, LOCAL_GET, END8, I32_GT_U, BR_IF, 0],
    LOOP, EMPTY_TYPE,
    ...[0, 1, 2, 3, 4, 5, 6, 7].flatMap(mixByte),
    ...[LOCAL_GET, P, I32_CONST, 8, I32_ADD, LOCAL_TEE, P, LOCAL_GET, END8, I32_LE_U, BR_IF, 0],
    END,
    END,
    BLOCK, EMPTY_TYPE,
    ...[LOCAL_GET, P, LOCAL_GET, END_AT, I32_GE_U, BR_IF, 0],
    LOOP, EMPTY_TYPE,
    ...mixByte(0),
    ...[LOCAL_GET, P, I32_CONST, 1, I32_ADD, LOCAL_TEE, P, LOCAL_GET, END_AT, I32_LT_U, BR_IF, 0],
    END,
    END,
    ...[I32_CONST, 0, LOCAL_GET, H, I64_STORE, 3, 0],
    END,
  ];
  // Locals after the parameter: one i64 ($h), three i32 ($p, $end, $end8).
  const locals = vector([[1, I64], [3, I32]]);
  const body = [...locals, ...code];
  return [...unsignedLeb(body.length), ...body];
}

/** The module's bytes (see the text form in the module comment). */
export function fnvModuleBytes(): Uint8Array {
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, vector([[0x60, ...vector([[I32]]), ...vector([])]])), // type 0: (i32) -> ()
    ...section(3, vector([[0]])), // function 0 has type 0
    ...section(5, vector([[0x00, 1]])), // memory 0: at least 1 page, no maximum
    ...section(7, vector([[...name('memory'), 0x02, 0], [...name('update'), 0x00, 0]])),
    ...section(10, vector([updateBody()])),
  ];
  return Uint8Array.from(bytes);
}

// ---------------------------------------------------------------------------------------------
// Loading, with structural checks instead of assumed types (the core's TypeScript library has no
// WebAssembly declarations, and a runtime may lack WebAssembly altogether).

interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: unknown };
}

function isWasmApi(value: unknown): value is WasmApi {
  return typeof value === 'object' && value !== null && 'Module' in value && typeof value.Module === 'function' && 'Instance' in value && typeof value.Instance === 'function';
}

interface FnvExports {
  readonly memory: { readonly buffer: ArrayBuffer };
  readonly update: (length: number) => void;
}

function isFnvExports(value: unknown): value is FnvExports {
  if (typeof value !== 'object' || value === null || !('update' in value) || typeof value.update !== 'function' || !('memory' in value)) return false;
  const memory = value.memory;
  return typeof memory === 'object' && memory !== null && 'buffer' in memory && memory.buffer instanceof ArrayBuffer && memory.buffer.byteLength >= PAGE_BYTES;
}

/** The WebAssembly FNV-1a 64: of a string's UTF-8 bytes, and of bytes, as 16 lowercase hex digits. */
export interface WasmFnv {
  readonly hexOfString: (text: string) => string;
  readonly hexOfBytes: (bytes: Uint8Array) => string;
}

const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** An unsigned 32-bit `word` as 8 lowercase hex digits (every index is a byte, so every lookup hits). */
function wordHex(word: number): string {
  return (BYTE_HEX[word >>> 24] ?? '') + (BYTE_HEX[(word >>> 16) & 255] ?? '') + (BYTE_HEX[(word >>> 8) & 255] ?? '') + (BYTE_HEX[word & 255] ?? '');
}

/**
 * Compiles and instantiates the module with `api` (the runtime's `WebAssembly` object). Returns
 * undefined, never throws, when `api` is not a usable WebAssembly or the module misbehaves: a
 * self-check against the standard vectors runs before the functions are handed out.
 */
export function loadWasmFnv(api: unknown): WasmFnv | undefined {
  if (!isWasmApi(api)) return undefined;
  let exports: unknown;
  try {
    exports = new api.Instance(new api.Module(fnvModuleBytes()), {}).exports;
  } catch {
    return undefined;
  }
  if (!isFnvExports(exports)) return undefined;
  const update = exports.update;
  // The memory is never grown, so these views stay valid for the module's life.
  const state = new Uint32Array(exports.memory.buffer, 0, 2);
  const window = new Uint8Array(exports.memory.buffer, DATA_START, WINDOW_BYTES);
  const encoder = new TextEncoder();
  // Bytes 0-3 are the low half of the state: little endian on every platform WebAssembly runs on.
  // Uint32Array uses the platform's order; the self-check below refuses a big-endian platform.

  const digest = (): string => wordHex(state[1] ?? 0) + wordHex(state[0] ?? 0);

  const hexOfString = (text: string): string => {
    state[0] = BASIS_LOW;
    state[1] = BASIS_HIGH;
    // A UTF-16 unit is at most 3 UTF-8 bytes (a pair of them is 4), so short strings fit at once.
    if (text.length * 3 <= WINDOW_BYTES) {
      update(encoder.encodeInto(text, window).written);
      return digest();
    }
    let rest = text;
    for (;;) {
      const { read, written } = encoder.encodeInto(rest, window);
      update(written);
      if (read >= rest.length) return digest();
      rest = rest.slice(read);
    }
  };

  const hexOfBytes = (bytes: Uint8Array): string => {
    state[0] = BASIS_LOW;
    state[1] = BASIS_HIGH;
    for (let from = 0; from < bytes.length; from += WINDOW_BYTES) {
      const part = bytes.subarray(from, from + WINDOW_BYTES);
      window.set(part);
      update(part.length);
    }
    return digest();
  };

  // Standard vectors (docs/formats.md §2): a module or platform that disagrees is not used.
  try {
    const ok = hexOfString('') === 'cbf29ce484222325' && hexOfString('a') === 'af63dc4c8601ec8c' && hexOfString('foobar') === '85944171f73967e8' && hexOfString('é') === '0ac21707b7181e01';
    return ok ? { hexOfString, hexOfBytes } : undefined;
  } catch {
    return undefined;
  }
}
