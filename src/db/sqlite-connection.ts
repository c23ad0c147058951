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

/** What Kysely's SQLite driver calls on a prepared statement. */
class Prepared {
  readonly reader: boolean;
  private readonly writes: boolean;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly sql: string,
    private readonly stmt: BetterSqlite3.Statement,
    private readonly onChange: (statement: string) => void,
  ) {
    this.reader = stmt.reader;
    this.writes = !stmt.readonly && !writesOnlyUncached(sql);
  }

  all(params: ReadonlyArray<unknown>) {
    const rows = this.stmt.all(...bindable(params));
    // INSERT/UPDATE/DELETE … RETURNING: one row per changed row.
    if (this.writes && rows.length > 0) this.onChange(this.sql);
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
