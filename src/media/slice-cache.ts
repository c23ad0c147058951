import { LRUCache } from 'lru-cache';
import type { ByteRange } from './file-store.ts';

/** Reads the inclusive byte range of a stored object from its store. */
export type SliceReader = (key: string, range: ByteRange) => Promise<Buffer>;

interface SliceContext {
  key: string;
  range: ByteRange;
}

/**
 * Aligned slices of immutable objects, kept in memory up to a byte budget (least recently used
 * first out), as a caching proxy's slice module does in front of an object store: a player's range
 * requests walk a file in small steps, and viewers of one video ask for the same segments, so one
 * ranged GET of a slice serves many reads. Concurrent misses of one slice share its one GET.
 */
export class SliceCache {
  private readonly slices: LRUCache<string, Buffer, SliceContext>;

  constructor(
    readonly sliceBytes: number,
    maxBytes: number,
    read: SliceReader,
  ) {
    this.slices = new LRUCache<string, Buffer, SliceContext>({
      maxSize: maxBytes,
      sizeCalculation: (slice) => Math.max(1, slice.length),
      fetchMethod: (_id, _stale, { context }) => read(context.key, context.range),
    });
  }

  /** Whether a read of `range` goes through slices: one spanning a few slices at most (a whole-file read streams). */
  covers(range: ByteRange): boolean {
    return range.end - range.start < 2 * this.sliceBytes;
  }

  /** The bytes of `range` of the object `key` of `size` bytes. */
  async read(key: string, size: number, range: ByteRange): Promise<Buffer> {
    const first = Math.floor(range.start / this.sliceBytes);
    const last = Math.floor(range.end / this.sliceBytes);
    const parts: Buffer[] = [];
    for (let index = first; index <= last; index++) {
      const start = index * this.sliceBytes;
      const slice = await this.slices.fetch(`${key}\n${index}`, {
        context: { key, range: { start, end: Math.min(start + this.sliceBytes, size) - 1 } },
      });
      if (!slice) throw new Error(`slice ${index} of ${key} could not be read`);
      const from = index === first ? range.start - start : 0;
      const to = index === last ? range.end - start + 1 : slice.length;
      parts.push(slice.subarray(from, to));
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** Drops the slices of `prefix` and of every key under `prefix/`. */
  forget(prefix: string): void {
    for (const id of this.slices.keys()) {
      const key = id.slice(0, id.lastIndexOf('\n'));
      if (key === prefix || key.startsWith(`${prefix}/`)) this.slices.delete(id);
    }
  }

  get bytes(): number {
    return this.slices.calculatedSize;
  }
}
