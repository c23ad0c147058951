import type { Kysely } from 'kysely';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { ChangeClock } from './change-clock.ts';

const DEFAULT_CAPACITY = 10_000;

/**
 * Rows read by key, kept while the database's change clock stands still: any change anywhere drops
 * them all, so a cached read never answers what a fresh query would not. Hot reads (the token of
 * every request, a record fetched by id) then cost a map lookup instead of a query.
 *
 * Cached rows are shared between callers and frozen, so that one caller cannot alter another's.
 * Misses are not remembered: an unknown token or id always goes to the database. Each kind of read
 * has its own namespace, so keys are the bare id or hash, not a string built per request.
 */
export class ReadCache {
  // Everything held was read at `generation`: the maps are emptied whenever the clock moves.
  private spaces = new Map<string, Map<string | number, unknown>>();
  private size = 0;
  private generation: number | null = null;

  constructor(
    private readonly clock: ChangeClock,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  read<T extends object>(namespace: string, key: string | number, load: () => Promise<T | undefined>): MaybePromise<T | undefined> {
    const generation = this.clock.now();
    if (generation === null) return load();
    if (generation !== this.generation) {
      this.spaces.clear();
      this.size = 0;
      this.generation = generation;
    }
    let space = this.spaces.get(namespace);
    if (!space) this.spaces.set(namespace, (space = new Map()));
    const hit = space.get(key);
    if (hit !== undefined) return hit as T;
    return this.fill(space, key, generation, load);
  }

  private async fill<T extends object>(space: Map<string | number, unknown>, key: string | number, generation: number, load: () => Promise<T | undefined>) {
    const value = await load();
    // A change that landed while the query ran makes this value unsafe to keep (the clock only moves forward).
    if (value !== undefined && this.clock.now() === generation) {
      // Full: start over rather than track recency on every hit.
      if (this.size >= this.capacity) {
        for (const other of this.spaces.values()) other.clear();
        this.size = 0;
      }
      if (!space.has(key)) this.size++;
      space.set(key, Object.freeze(value));
    }
    return value;
  }

  get entries(): number {
    return this.size;
  }
}

// Keyed by the Kysely instance a repository holds; a transaction is another instance and so reads
// inside one always go to the database.
const caches = new WeakMap<Kysely<any>, ReadCache>();

export function attachReadCache(db: Kysely<any>, cache: ReadCache): void {
  caches.set(db, cache);
}

/**
 * A read through `db`'s cache when it has one (outside transactions, on a dialect that can detect
 * changes); a hit answers the row itself rather than a promise. `await` the result either way.
 */
export function cachedRead<T extends object>(
  db: Kysely<any>,
  namespace: string,
  key: string | number,
  load: () => Promise<T | undefined>,
): MaybePromise<T | undefined> {
  const cache = caches.get(db);
  return cache ? cache.read(namespace, key, load) : load();
}

const derived = new WeakMap<object, Map<unknown, unknown>>();

/**
 * `f(row)` made once per cached row and shared by every reader of that row, frozen like it: a hot
 * record's API view is then not rebuilt for each request. Rows that are not the cache's (not frozen)
 * get a fresh `f(row)` every time.
 */
export function viewOf<R extends object, T>(row: R, f: (row: R) => T): T {
  if (!Object.isFrozen(row)) return f(row);
  let views = derived.get(row);
  if (!views) derived.set(row, (views = new Map()));
  let view = views.get(f) as T | undefined;
  if (view === undefined) {
    view = f(row);
    if (view !== null && typeof view === 'object') Object.freeze(view);
    views.set(f, view);
  }
  return view;
}
