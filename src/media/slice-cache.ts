import { LRUCache } from 'lru-cache';
import type { ByteRange } from './file-store.ts';

/** Reads the inclusive byte range of a stored object from its store. */
export type SliceReader = (key: string, range: ByteRange) => Promise<Buffer>;

/**
 * Aligned slices of immutable objects, kept in memory up to a byte budget (least recently used
 * first out), as a caching proxy's slice module does in front of an object store: a player's range
 * requests walk a file in small steps, and viewers of one video ask for the same segments, so one
 * ranged GET of a slice serves many reads. Concurrent misses of one slice share its one GET, and a
 * slice enters the cache only once read (so that an eviction never fails a reader).
 */
export class SliceCache {
  /** Finished slices only: an eviction never aborts a read in flight. */
  private readonly slices: LRUCache<string, Buffer>;
  /** Reads in flight, shared by the readers of the same slice; `keep` false once forgotten meanwhile. */
  private readonly pending = new Map<string, { bytes: Promise<Buffer>; keep: boolean }>();

  constructor(
    readonly sliceBytes: number,
    maxBytes: number,
    private readonly readSlice: SliceReader,
  ) {
    this.slices = new LRUCache<string, Buffer>({ maxSize: maxBytes, sizeCalculation: (slice) => Math.max(1, slice.length) });
  }

  /** Whether a read of `range` goes through slices: at most 2 MiB (a whole-file read streams). */
  covers(range: ByteRange): boolean {
    return range.end - range.start < 2 * this.sliceBytes;
  }

  private slice(key: string, index: number, size: number): Promise<Buffer> | Buffer {
    const id = `${key}\n${index}`;
    const hit = this.slices.get(id);
    if (hit) return hit;
    const inFlight = this.pending.get(id);
    if (inFlight) return inFlight.bytes;
    const start = index * this.sliceBytes;
    const entry = { bytes: this.readSlice(key, { start, end: Math.min(start + this.sliceBytes, size) - 1 }), keep: true };
    this.pending.set(id, entry);
    entry.bytes.then(
      (bytes) => {
        this.pending.delete(id);
        if (entry.keep) this.slices.set(id, bytes);
      },
      () => this.pending.delete(id),
    );
    return entry.bytes;
  }

  /** The bytes of `range` of the object `key` of `size` bytes. */
  async read(key: string, size: number, range: ByteRange): Promise<Buffer> {
    const first = Math.floor(range.start / this.sliceBytes);
    const last = Math.floor(range.end / this.sliceBytes);
    const parts: Buffer[] = [];
    for (let index = first; index <= last; index++) {
      const slice = await this.slice(key, index, size);
      const start = index * this.sliceBytes;
      const from = index === first ? range.start - start : 0;
      const to = index === last ? range.end - start + 1 : slice.length;
      parts.push(slice.subarray(from, to));
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** Drops the slices of `prefix` and of every key under `prefix/`, those being read included. */
  forget(prefix: string): void {
    const under = (id: string) => {
      const key = id.slice(0, id.lastIndexOf('\n'));
      return key === prefix || key.startsWith(`${prefix}/`);
    };
    for (const id of [...this.slices.keys()]) if (under(id)) this.slices.delete(id);
    for (const [id, entry] of this.pending) if (under(id)) entry.keep = false;
  }

  get bytes(): number {
    return this.slices.calculatedSize;
  }
}
