import type {
  Kysely,
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { MaybePromise } from '../lib/maybe-promise.ts';
import type { ChangeClock, Generations, RowRead } from './change-clock.ts';

const DEFAULT_CAPACITY = 10_000;

/** The tables a load read, each with its count of changes when the query that read it was sent. */
export class TablesRead {
  readonly seen = new Map<string, number>();
  /** A query whose tables could not be told (raw SQL): only a database that did not change at all keeps its answer. */
  unknown = false;

  /** `row`: the load reads one existing row of that table, by id, and changes of its other rows do not matter. */
  constructor(
    private readonly generations: Generations,
    private readonly row?: RowRead,
  ) {}

  add(table: string): void {
    if (!this.seen.has(table)) this.seen.set(table, this.countOf(table));
  }

  /** Whether no table read has changed since it was read. */
  unchanged(): boolean {
    for (const [table, count] of this.seen) if (this.countOf(table) !== count) return false;
    return true;
  }

  private countOf(table: string): number {
    return this.row?.table === table ? this.generations.ofTableRow(table, this.row.id) : this.generations.ofTable(table);
  }
}

/**
 * Whose rows a cached value was read from: one organization, several (a token's, its user's and its
 * creator's, each told by its row), or null: any organization's write to its tables drops it.
 */
export type Owners = number | readonly number[] | null;

interface Entry {
  value: unknown;
  organization: Owners;
  row: RowRead | undefined;
  /** What `stampOf` gave when it was read: it stands while no write it depends on was made. */
  stamp: number;
}

interface Space {
  rows: Map<string | number, Entry>;
  /** Every table a load of this namespace has read (null: unknown, any change drops the rows). */
  tables: Set<string> | null;
  hits: number;
  misses: number;
}

/**
 * Rows read by key, kept while no table they were read from has changed: each row stands while the
 * count of changes of the tables its namespace reads stands still (src/db/change-clock.ts,
 * `Generations`), so a cached read never answers what a fresh query would not, and a write costs only
 * the cached reads of what it wrote. A namespace whose rows each belong to one organization (an
 * `organizationOf` given) keeps them through writes that changed only another organization's rows.
 * Hot reads (the token of every request, a record fetched by id) then cost a map lookup instead of a
 * query. Each namespace learns the tables it reads from its own loads' queries (`cachedRead`).
 *
 * Cached values are shared between callers and frozen throughout, so that one caller cannot alter another's.
 * Misses are not remembered: an unknown token or id always goes to the database. Each kind of read
 * has its own namespace, so keys are the bare id or hash, not a string built per request.
 */
export class ReadCache {
  private readonly spaces = new Map<string, Space>();
  private size = 0;

  constructor(
    readonly clock: ChangeClock,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  read<T extends object>(
    namespace: string,
    key: string | number,
    load: (read: TablesRead) => Promise<T | undefined>,
    organizationOf?: (row: T) => Owners,
    row?: RowRead,
  ): MaybePromise<T | undefined> {
    const total = this.clock.now();
    if (total === null) return load(new TablesRead(this.clock.generations));
    const space = this.space(namespace);
    const kept = this.standing(space, key);
    return kept !== undefined ? (kept as T) : this.fill(space, key, total, load, organizationOf, row);
  }

  /** The value kept under `key` while it stands (a hit); undefined is a miss, and a value that no longer stands is dropped. */
  private standing(space: Space, key: string | number): unknown {
    const hit = space.rows.get(key);
    if (hit !== undefined) {
      if (hit.stamp === this.stampOf(space, hit.organization, hit.row)) {
        space.hits++;
        return hit.value;
      }
      space.rows.delete(key);
      this.size--;
    }
    space.misses++;
    return undefined;
  }

  private stampOf(space: Space, organization: Owners, row: RowRead | undefined): number {
    const { generations } = this.clock;
    if (organization === null) return generations.of(space.tables);
    return row && typeof organization === 'number'
      ? generations.ofRow(space.tables, organization, row)
      : generations.ofOrganization(space.tables, organization);
  }

  /**
   * `read` for several keys of one namespace: the cached ones answered from memory, the missing ones
   * loaded together by one call of `load` (which answers those it found) and kept like `read`'s.
   */
  readMany<K extends string | number, T extends object>(
    namespace: string,
    keys: readonly K[],
    load: (read: TablesRead, missing: K[]) => Promise<Map<K, T>>,
    organizationOf?: (row: T) => Owners,
  ): MaybePromise<Map<K, T>> {
    const total = this.clock.now();
    if (total === null) return load(new TablesRead(this.clock.generations), [...keys]);
    const space = this.space(namespace);
    const found = new Map<K, T>();
    const missing: K[] = [];
    for (const key of keys) {
      const kept = this.standing(space, key);
      if (kept !== undefined) found.set(key, kept as T);
      else missing.push(key);
    }
    if (missing.length === 0) return found;
    return this.fillMany(space, missing, total, load, organizationOf).then((loaded) => {
      for (const [key, value] of loaded) found.set(key, value);
      return found;
    });
  }

  private space(namespace: string): Space {
    let space = this.spaces.get(namespace);
    if (!space) this.spaces.set(namespace, (space = { rows: new Map(), tables: new Set(), hits: 0, misses: 0 }));
    return space;
  }

  private async fill<T extends object>(
    space: Space,
    key: string | number,
    total: number,
    load: (read: TablesRead) => Promise<T | undefined>,
    organizationOf: ((row: T) => Owners) | undefined,
    row: RowRead | undefined,
  ) {
    const read = new TablesRead(this.clock.generations, row);
    const value = await load(read);
    if (value !== undefined && this.settled(space, read, total)) this.keep(space, key, value, organizationOf, row);
    return value;
  }

  private async fillMany<K extends string | number, T extends object>(
    space: Space,
    keys: K[],
    total: number,
    load: (read: TablesRead, missing: K[]) => Promise<Map<K, T>>,
    organizationOf: ((row: T) => Owners) | undefined,
  ) {
    const read = new TablesRead(this.clock.generations);
    const values = await load(read, keys);
    if (values.size > 0 && this.settled(space, read, total)) for (const [key, value] of values) this.keep(space, key, value, organizationOf, undefined);
    return values;
  }

  /** Whether what a load read may be kept: no change landed while its queries ran. Teaches the namespace the tables read. */
  private settled(space: Space, read: TablesRead, total: number): boolean {
    const now = this.clock.now();
    if (now === null) return false;
    // A load that sent no query through the instance it was given read tables it did not tell: unknown.
    if (read.seen.size === 0) read.unknown = true;
    // A change that landed while the query ran (whoever's rows it changed) makes this value unsafe to keep.
    const keep = read.unknown ? now === total : read.unchanged();
    if (read.unknown && space.tables !== null) {
      // The rows kept so far were stamped with their tables' counts; from now on they would be compared
      // with the clock's total, which one change can move by less than it moved their sum.
      this.size -= space.rows.size;
      space.rows.clear();
      space.tables = null;
    } else if (space.tables) for (const table of read.seen.keys()) space.tables.add(table);
    return keep;
  }

  private keep<T extends object>(space: Space, key: string | number, value: T, organizationOf: ((row: T) => Owners) | undefined, row?: RowRead): void {
    // Full: start over rather than track recency on every hit.
    if (this.size >= this.capacity) {
      for (const other of this.spaces.values()) other.rows.clear();
      this.size = 0;
    }
    const organization = organizationOf ? ownersOf(organizationOf(value)) : null;
    if (!space.rows.has(key)) this.size++;
    space.rows.set(key, { value: deepFreeze(value), organization, row, stamp: this.stampOf(space, organization, row) });
  }

  get entries(): number {
    return this.size;
  }

  /** A namespace's hits and misses so far, and the tables its loads read (for tests and diagnostics). */
  stats(namespace: string): { hits: number; misses: number; tables: string[] | null } {
    const space = this.spaces.get(namespace);
    return { hits: space?.hits ?? 0, misses: space?.misses ?? 0, tables: space?.tables ? [...space.tables].sort() : space ? null : [] };
  }
}

/** `value` and every object and array within it frozen (a cached value is shared by every reader). Bytes cannot be frozen and are left. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
  return value;
}

/** Owners without repeats, one organization as a number (the common case costs no array walk). */
function ownersOf(owners: Owners): Owners {
  if (owners === null || typeof owners === 'number') return owners;
  const distinct = [...new Set(owners)];
  if (distinct.length === 0) return null;
  return distinct.length === 1 ? distinct[0] : Object.freeze(distinct);
}

/** Notes the tables of every query a load sends (a Kysely plugin on the load's own instance). */
class RecordTables implements KyselyPlugin {
  constructor(private readonly read: TablesRead) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (!collect(args.node, this.read)) this.read.unknown = true;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** Adds every table the node names; false when it holds raw SQL, whose tables cannot be told. */
function collect(node: unknown, read: TablesRead): boolean {
  if (node === null || typeof node !== 'object') return true;
  if (Array.isArray(node)) return node.every((n) => collect(n, read));
  const kind = (node as OperationNode).kind;
  if (kind === 'RawNode') return false;
  // A column's table qualifier (perhaps an alias): the FROM or JOIN that it names is walked anyway.
  if (kind === 'ReferenceNode') return true;
  if (kind === 'TableNode') {
    read.add((node as { table: { identifier: { name: string } } }).table.identifier.name);
    return true;
  }
  for (const value of Object.values(node)) if (!collect(value, read)) return false;
  return true;
}

// Keyed by the Kysely instance a repository holds; a transaction is another instance and so reads
// inside one always go to the database.
const caches = new WeakMap<Kysely<any>, ReadCache>();

export function attachReadCache(db: Kysely<any>, cache: ReadCache): void {
  caches.set(db, cache);
}

export function readCacheOf(db: Kysely<any>): ReadCache | undefined {
  return caches.get(db);
}

/**
 * A read through `db`'s cache when it has one (outside transactions, on a dialect that can detect
 * changes); a hit answers the row itself rather than a promise. `await` the result either way.
 * `load` must send its queries through the instance it is given, whose tables the cache follows.
 * `organizationOf`: the organization (or organizations) whose rows a loaded value was read from, when
 * every row of every table it read is one of theirs, and no row of another organization could change
 * the answer (the query requires the organization, or finds rows by a unique key); null when that
 * cannot be told of this value. Writes that changed only other organizations' rows of those tables
 * then leave it cached.
 * `row`: the load reads exactly one existing row of that table, found by its id (and the value is one
 * organization's): then writes that only added rows to that table, or changed its other rows, leave
 * it cached too (src/db/change-clock.ts, `ofRow`).
 */
export function cachedRead<D extends Kysely<any>, T extends object>(
  db: D,
  namespace: string,
  key: string | number,
  load: (db: D) => Promise<T | undefined>,
  organizationOf?: (row: T) => Owners,
  row?: RowRead,
): MaybePromise<T | undefined> {
  const cache = caches.get(db);
  return cache ? cache.read(namespace, key, (read) => load(db.withPlugin(new RecordTables(read)) as D), organizationOf, row) : load(db);
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

/**
 * `cachedRead` for several keys of one namespace: each key's value is kept as `cachedRead` would keep
 * it, and the keys not in the cache are loaded by one call of `load`, which answers those it found.
 */
export function cachedReadMany<D extends Kysely<any>, K extends string | number, T extends object>(
  db: D,
  namespace: string,
  keys: readonly K[],
  load: (db: D, keys: K[]) => Promise<Map<K, T>>,
  organizationOf?: (row: T) => Owners,
): MaybePromise<Map<K, T>> {
  const cache = caches.get(db);
  return cache
    ? cache.readMany(namespace, keys, (read, missing) => load(db.withPlugin(new RecordTables(read)) as D, missing), organizationOf)
    : load(db, [...keys]);
}
