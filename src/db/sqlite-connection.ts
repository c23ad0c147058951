import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { writesOnlyUncached } from './uncached-tables.ts';

// better-sqlite3 refuses to bind JS booleans; PostgreSQL takes them as they are. Mapping them to 1/0
// here keeps repositories free of dialect checks (rows come back as 0/1 and mappers use Boolean()).
function bindable(params: ReadonlyArray<unknown>): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (typeof p === 'boolean') (out ??= params.slice())[i] = p ? 1 : 0;
  }
  return out ?? (params as unknown[]);
}

const STATEMENT_CACHE_SIZE = 500;

type Row = Record<string, unknown>;

/**
 * A function making a row object of the statement's columns from its values, or null where an object
 * literal would not give what better-sqlite3 gives (a column named `__proto__`). better-sqlite3 builds
 * each row object a property at a time through V8's API: a list's page of 50 CTAs of ~25 columns spent
 * ~14 µs a row there; its values as an array and an object literal of a fixed shape take ~6 µs
 * (docs/performance.md). Duplicate names keep the last value, in the first one's place, as there.
 */
function rowMaker(stmt: BetterSqlite3.Statement): ((values: unknown[]) => Row) | null {
  const names = stmt.columns().map((c) => c.name);
  if (names.includes('__proto__')) return null;
  const fields = names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ');
  // Names are the statement's own columns, quoted as JSON string literals.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('v', `return { ${fields} };`) as (values: unknown[]) => Row;
}

/** What Kysely's SQLite driver calls on a prepared statement. */
class Prepared {
  readonly reader: boolean;
  private readonly writes: boolean;
  private readonly make: ((values: unknown[]) => Row) | null;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly sql: string,
    private readonly stmt: BetterSqlite3.Statement,
    private readonly onChange: (statement: string) => void,
  ) {
    this.reader = stmt.reader;
    this.writes = !stmt.readonly && !writesOnlyUncached(sql);
    this.make = stmt.reader ? rowMaker(stmt) : null;
    if (this.make) stmt.raw(true);
  }

  all(params: ReadonlyArray<unknown>) {
    const rows = this.fetch(params);
    // INSERT/UPDATE/DELETE … RETURNING: one row per changed row.
    if (this.writes && rows.length > 0) this.onChange(this.sql);
    return rows;
  }

  private fetch(params: ReadonlyArray<unknown>): unknown[] {
    if (!this.make) return this.stmt.all(...bindable(params));
    const values = this.stmt.all(...bindable(params)) as unknown[][];
    const rows = new Array<Row>(values.length);
    for (let i = 0; i < values.length; i++) rows[i] = this.make(values[i]);
    return rows;
  }

  run(params: ReadonlyArray<unknown>) {
    const result = this.stmt.run(...bindable(params));
    if (this.writes && result.changes > 0) this.onChange(this.sql);
    return result;
  }

  iterate(params: ReadonlyArray<unknown>) {
    // A statement being iterated cannot run anything else: streams get one of their own.
    return this.db.prepare(this.sql).iterate(...bindable(params));
  }
}

/**
 * Wraps better-sqlite3 for Kysely: booleans bound as 1/0; prepared statements cached by their SQL
 * text (preparing costs more than running a typical indexed query); and `onChange` called with every
 * statement that changed rows, for the change clock (src/db/change-clock.ts).
 */
export function wrapSqlite(db: BetterSqlite3.Database, onChange: (statement: string) => void): SqliteDatabase {
  const cache = new Map<string, Prepared>();
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(sql: string) {
      let prepared = cache.get(sql);
      if (prepared) return prepared;
      // Kysely begins a transaction with a bare BEGIN, which takes the write lock only at the first
      // write: should another process (API_PROCESSES, the CLI, a worker) commit after the transaction
      // read, that write fails at once with SQLITE_BUSY_SNAPSHOT, which no busy timeout waits out (a
      // 500 under the mixed bench with two processes). Taken first, the lock is waited for instead.
      prepared = new Prepared(db, sql, db.prepare(sql === 'begin' ? 'begin immediate' : sql), onChange);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(sql, prepared);
      return prepared;
    },
  };
}
