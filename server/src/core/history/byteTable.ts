/**
 * A bounded hash table keyed by bytes: what the history model uses to find the value it already
 * holds for a field of a line (a blueprint name, a step id, the (server, tool, schemaHash) of a
 * dispatch) from the field's bytes in the read buffer, without making a string of them.
 *
 * A key is up to three byte ranges (its parts; a key of one part passes empty ranges for the
 * others), compared part by part, so that ("ab", "c") and ("a", "bc") are different keys. The
 * table copies the key's bytes into a pool of its own (the caller's buffer is reused), uses open
 * addressing with linear probing over a power-of-two array at most half full, and compares the
 * bytes on every hash match, so a collision costs a probe, never a wrong answer.
 *
 * Bounded: at most `maxEntries` keys and `maxPoolBytes` bytes of keys. A full table adds nothing
 * (`add` returns -1) and the caller goes the way it goes without the table; it never grows
 * beyond its bounds, and it keeps what it holds until it is dropped. Pure, no I/O.
 */

/** 30 bits. */
const SMALL = 0x3fff_ffff;

/** The FNV-1a 32 offset basis (within 30 bits, see {@link hashBytes}): the hash of no bytes. */
const HASH_SEED = 0x811c9dc5 & SMALL;

/**
 * Continues the hash `hash` over `bytes[start, end)`, then over a part separator: FNV-1a 32 with
 * each step kept to 30 bits. Why 30: V8 keeps integers of 31 bits (signed) unboxed; before the
 * optimizing compiler runs (the first few thousand lines of a process), every wider intermediate
 * value was a heap number, dozens per line, which the collector then had to clear.
 */
function hashBytes(bytes: Uint8Array, start: number, end: number, hash: number): number {
  for (let index = start; index < end; index++) hash = Math.imul(hash ^ (bytes[index] ?? 0), 16_777_619) & SMALL;
  // A byte value no byte has, so that the parts' boundaries count in the hash.
  return Math.imul(hash ^ 0x100, 16_777_619) & SMALL;
}

const INITIAL_SLOTS = 16;

export class ByteTable<V> {
  /** Per slot: the entry's index + 1, or 0 when the slot is empty. */
  private slots = new Int32Array(INITIAL_SLOTS);
  /** Per entry: its hash, where its bytes start in the pool, and the lengths of its three parts. */
  private hashes = new Int32Array(INITIAL_SLOTS / 2);
  private starts = new Int32Array(INITIAL_SLOTS / 2);
  private lengths = new Int32Array((INITIAL_SLOTS / 2) * 3);
  private pool = new Uint8Array(256);
  private poolUsed = 0;
  private readonly values: V[] = [];

  constructor(
    /** How many keys the table holds at most. */
    readonly maxEntries: number,
    /** How many bytes of keys the table holds at most. */
    readonly maxPoolBytes: number,
  ) {}

  get size(): number {
    return this.values.length;
  }

  /** The value of the entry {@link find} returned. */
  value(entry: number): V {
    const value = this.values[entry];
    if (value === undefined) throw new RangeError(`no entry ${entry} in a table of ${this.values.length}`);
    return value;
  }

  /** The entry of the key `bytes[a0, a1)`, `bytes[b0, b1)`, `bytes[c0, c1)`, or -1 when the table does not hold it. */
  find(bytes: Uint8Array, a0: number, a1: number, b0: number, b1: number, c0: number, c1: number): number {
    const hash = hashOfKey(bytes, a0, a1, b0, b1, c0, c1);
    const slots = this.slots;
    const mask = slots.length - 1;
    for (let slot = mix(hash) & mask; ; slot = (slot + 1) & mask) {
      const entry = (slots[slot] ?? 0) - 1;
      if (entry < 0) return -1;
      if (this.hashes[entry] === hash && this.holds(entry, bytes, a0, a1, b0, b1, c0, c1)) return entry;
    }
  }

  /**
   * Adds a key the table does not hold (see {@link find}) with its value; returns its entry, or -1
   * when the table is full (by keys or by bytes) and nothing was added.
   */
  add(bytes: Uint8Array, a0: number, a1: number, b0: number, b1: number, c0: number, c1: number, value: V): number {
    const hash = hashOfKey(bytes, a0, a1, b0, b1, c0, c1);
    const entry = this.values.length;
    const length = a1 - a0 + (b1 - b0) + (c1 - c0);
    if (entry >= this.maxEntries || this.poolUsed + length > this.maxPoolBytes) return -1;
    if ((entry + 1) * 2 > this.slots.length) this.grow();
    if (this.poolUsed + length > this.pool.length) {
      const pool = new Uint8Array(Math.min(this.maxPoolBytes, Math.max(this.pool.length * 2, this.poolUsed + length)));
      pool.set(this.pool.subarray(0, this.poolUsed));
      this.pool = pool;
    }
    const pool = this.pool;
    let at = this.poolUsed;
    this.starts[entry] = at;
    for (let index = a0; index < a1; index++) pool[at++] = bytes[index] ?? 0;
    for (let index = b0; index < b1; index++) pool[at++] = bytes[index] ?? 0;
    for (let index = c0; index < c1; index++) pool[at++] = bytes[index] ?? 0;
    this.poolUsed = at;
    this.hashes[entry] = hash;
    this.lengths[entry * 3] = a1 - a0;
    this.lengths[entry * 3 + 1] = b1 - b0;
    this.lengths[entry * 3 + 2] = c1 - c0;
    this.values.push(value);
    this.place(entry);
    return entry;
  }

  private holds(entry: number, bytes: Uint8Array, a0: number, a1: number, b0: number, b1: number, c0: number, c1: number): boolean {
    const lengths = this.lengths;
    if (lengths[entry * 3] !== a1 - a0 || lengths[entry * 3 + 1] !== b1 - b0 || lengths[entry * 3 + 2] !== c1 - c0) return false;
    const pool = this.pool;
    let at = this.starts[entry] ?? 0;
    for (let index = a0; index < a1; index++) if (pool[at++] !== bytes[index]) return false;
    for (let index = b0; index < b1; index++) if (pool[at++] !== bytes[index]) return false;
    for (let index = c0; index < c1; index++) if (pool[at++] !== bytes[index]) return false;
    return true;
  }

  private place(entry: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    let slot = mix(this.hashes[entry] ?? 0) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = entry + 1;
  }

  /** Doubles the slots (and the per-entry arrays) and places every entry again. */
  private grow(): void {
    const capacity = this.slots.length * 2;
    this.slots = new Int32Array(capacity);
    const hashes = new Int32Array(capacity / 2);
    hashes.set(this.hashes);
    this.hashes = hashes;
    const starts = new Int32Array(capacity / 2);
    starts.set(this.starts);
    this.starts = starts;
    const lengths = new Int32Array((capacity / 2) * 3);
    lengths.set(this.lengths);
    this.lengths = lengths;
    for (let entry = 0; entry < this.values.length; entry++) this.place(entry);
  }
}

/** The hash of a key of three parts (FNV-1a 32 over each part and a separator after it). */
function hashOfKey(bytes: Uint8Array, a0: number, a1: number, b0: number, b1: number, c0: number, c1: number): number {
  return hashBytes(bytes, c0, c1, hashBytes(bytes, b0, b1, hashBytes(bytes, a0, a1, HASH_SEED)));
}

/** FNV's low bits are weak; folding the high half in spreads keys over a small table. */
function mix(hash: number): number {
  return hash ^ (hash >>> 15);
}
