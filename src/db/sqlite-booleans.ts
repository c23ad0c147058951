import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

// better-sqlite3 refuses to bind JS booleans; PostgreSQL takes them as they are. Mapping them to 1/0
// here keeps repositories free of dialect checks (rows come back as 0/1 and mappers use Boolean()).
function bindable(params: ReadonlyArray<unknown>): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

export function wrapSqliteForBooleans(db: BetterSqlite3.Database): SqliteDatabase {
  return {
    close: () => db.close(),
    prepare(sql: string) {
      const stmt = db.prepare(sql);
      return {
        reader: stmt.reader,
        all: (params: ReadonlyArray<unknown>) => stmt.all(...bindable(params)),
        run: (params: ReadonlyArray<unknown>) => stmt.run(...bindable(params)),
        iterate: (params: ReadonlyArray<unknown>) => stmt.iterate(...bindable(params)),
      };
    },
  } as SqliteDatabase;
}
