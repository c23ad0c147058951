import type { Kysely } from 'kysely';
import type { ChangeClock } from './change-clock.ts';

const DEFAULT_CAPACITY = 10_000;

/**
 * Rows read by key, kept while the database's change clock stands still: any change anywhere drops
 * them all, so a cached read never answers what a fresh query would not. Hot reads (the token of
 * every request, a record fetched by id) then cost a map lookup instead of a query.
 *
 * Cached rows are shared between callers and frozen, so that one caller cannot alter another's.
 * Misses are not remembered: an unknown token or id always goes to the database.
 */
export class ReadCache {
  private entries = new Map<string, { generation: number; value: unknown }>();
  private generation: number | null = null;

  constructor(
    private readonly clock: ChangeClock,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  async read<T extends object>(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const generation = this.clock.now();
    if (generation === null) return load();
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
    }
    const hit = this.entries.get(key);
    if (hit && hit.generation === generation) return hit.value as T;
    const value = await load();
    // A change that landed while the query ran makes this value unsafe to keep.
    if (value !== undefined && this.clock.now() === generation) {
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, { generation, value: Object.freeze(value) });
    }
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}

// Keyed by the Kysely instance a repository holds; a transaction is another instance and so reads
// inside one always go to the database.
const caches = new WeakMap<Kysely<any>, ReadCache>();

export function attachReadCache(db: Kysely<any>, cache: ReadCache): void {
  caches.set(db, cache);
}

/** A read through `db`'s cache when it has one (outside transactions, on a dialect that can detect changes). */
export function cachedRead<T extends object>(db: Kysely<any>, key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
  const cache = caches.get(db);
  return cache ? cache.read(key, load) : load();
}
