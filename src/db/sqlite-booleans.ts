import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

// better-sqlite3 refuses to bind JS booleans; PostgreSQL takes them as they are. Mapping them to 1/0
// here keeps repositories free of dialect checks (rows come back as 0/1 and mappers use Boolean()).
function bindable(params: ReadonlyArray<unknown>): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Wraps better-sqlite3 for Kysely: booleans bound as 1/0, and prepared statements cached by their SQL
 * text (preparing costs more than running a typical indexed query). Streams get a statement of their
 * own, since a statement being iterated cannot run anything else.
 */
export function wrapSqliteForBooleans(db: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepared = (sql: string) => {
    let stmt = cache.get(sql);
    if (stmt) return stmt;
    stmt = db.prepare(sql);
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(sql, stmt);
    return stmt;
  };
  return {
    close: () => {
      cache.clear();
      db.close();
    },
    prepare(sql: string) {
      const stmt = prepared(sql);
      return {
        reader: stmt.reader,
        all: (params: ReadonlyArray<unknown>) => stmt.all(...bindable(params)),
        run: (params: ReadonlyArray<unknown>) => stmt.run(...bindable(params)),
        iterate: (params: ReadonlyArray<unknown>) => db.prepare(sql).iterate(...bindable(params)),
      };
    },
  } as SqliteDatabase;
}
