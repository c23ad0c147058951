import { createHash } from 'node:crypto';

/**
 * A count of distinct values that can be merged across days (docs/analytics.md, "Rollups"): the exact
 * set of the values' 48-bit hashes while it is small, a HyperLogLog of 2^14 registers (standard error
 * 0.81 %) once it holds more than SPARSE_MAX. A union of small sets stays exact, so the counts of a
 * small organization are exact; merging never counts a value twice, which summing daily counts would.
 *
 * Stored as bytes: 0x00 then the sorted hashes (6 bytes each), or 0x01 then the registers.
 */
export class DistinctSketch {
  private hashes: Set<number> | null = new Set();
  private registers: Uint8Array | null = null;

  /** A value's hash: 48 bits, a safe integer. */
  static hash(value: string): number {
    return createHash('sha1').update(value).digest().readUIntBE(0, 6);
  }

  static from(bytes: Uint8Array | null | undefined): DistinctSketch {
    return new DistinctSketch().mergeBytes(bytes);
  }

  /** Merges a stored sketch (toBuffer's bytes) into this one, without building it first. */
  mergeBytes(bytes: Uint8Array | null | undefined): this {
    if (!bytes || bytes.length === 0) return this;
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (buf[0] === DENSE) {
      if (buf.length !== 1 + REGISTERS) throw new Error('distinct sketch: registers of the wrong size');
      if (this.hashes) this.densify();
      const mine = this.registers!;
      for (let i = 0; i < REGISTERS; i++) if (buf[1 + i] > mine[i]) mine[i] = buf[1 + i];
      return this;
    }
    if (buf[0] !== SPARSE || (buf.length - 1) % HASH_BYTES !== 0) throw new Error('distinct sketch: unknown encoding');
    for (let at = 1; at < buf.length; at += HASH_BYTES) this.addHash(buf.readUIntBE(at, HASH_BYTES));
    return this;
  }

  add(value: string): this {
    return this.addHash(DistinctSketch.hash(value));
  }

  addHash(hash: number): this {
    if (this.hashes) {
      this.hashes.add(hash);
      if (this.hashes.size > SPARSE_MAX) this.densify();
    } else {
      const index = Math.floor(hash / RANK_SPACE);
      // The rank: 1 + the leading zeros of the low RANK_BITS bits (RANK_BITS + 1 when they are all zero).
      const low = hash % RANK_SPACE;
      const r = low === 0 ? RANK_BITS + 1 : RANK_BITS - Math.floor(Math.log2(low));
      if (r > this.registers![index]) this.registers![index] = r;
    }
    return this;
  }

  merge(other: DistinctSketch): this {
    if (other.hashes) {
      for (const h of other.hashes) this.addHash(h);
      return this;
    }
    if (this.hashes) this.densify();
    const mine = this.registers!;
    const theirs = other.registers!;
    for (let i = 0; i < REGISTERS; i++) if (theirs[i] > mine[i]) mine[i] = theirs[i];
    return this;
  }

  /** Whether the count is exact (the set is still small). */
  get exact(): boolean {
    return this.hashes !== null;
  }

  count(): number {
    if (this.hashes) return this.hashes.size;
    // Ertl's improved estimator ("New cardinality estimation algorithms for HyperLogLog sketches",
    // 2017): no bias at any cardinality and no empirical tables, unlike the original's corrections.
    const histogram = new Array<number>(RANK_BITS + 2).fill(0);
    for (const r of this.registers!) histogram[r]++;
    let z = REGISTERS * tau(1 - histogram[RANK_BITS + 1] / REGISTERS);
    for (let k = RANK_BITS; k >= 1; k--) z = 0.5 * (z + histogram[k]);
    z += REGISTERS * sigma(histogram[0] / REGISTERS);
    return Math.round((REGISTERS * REGISTERS) / (2 * Math.LN2 * z));
  }

  toBuffer(): Buffer {
    if (!this.hashes) return Buffer.concat([Buffer.from([DENSE]), this.registers!]);
    const sorted = [...this.hashes].sort((a, b) => a - b);
    const buf = Buffer.alloc(1 + sorted.length * HASH_BYTES);
    buf[0] = SPARSE;
    sorted.forEach((h, i) => buf.writeUIntBE(h, 1 + i * HASH_BYTES, HASH_BYTES));
    return buf;
  }

  private densify(): void {
    const hashes = this.hashes!;
    this.hashes = null;
    this.registers = new Uint8Array(REGISTERS);
    for (const h of hashes) this.addHash(h);
  }
}

const SPARSE = 0;
const DENSE = 1;
const HASH_BYTES = 6;
const INDEX_BITS = 14;
const REGISTERS = 2 ** INDEX_BITS;
const RANK_BITS = 48 - INDEX_BITS;
const RANK_SPACE = 2 ** RANK_BITS;
/** About as many bytes as the registers. */
const SPARSE_MAX = Math.floor(REGISTERS / HASH_BYTES);

function sigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  for (let previous = -1; z !== previous;) {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  }
  return z;
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  for (let previous = -1; z !== previous;) {
    x = Math.sqrt(x);
    previous = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
  }
  return z / 3;
}
