import { sql, PostgresAdapter, type Kysely, type ColumnDefinitionBuilder, type CreateTableBuilder, type Expression, type RawBuilder } from 'kysely';

/** Dialect differences live here and nowhere else. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-incrementing integer primary key named `id`. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return isPostgres(db)
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Second-precision timestamps and other large integers. */
export const bigint = 'bigint' as const;

export function notNullDefault(value: unknown) {
  return (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(value);
}

/** Case-insensitive prefix match that behaves the same on both dialects. */
export function startsWithCi(column: Expression<unknown>, prefix: string): RawBuilder<boolean> {
  const escaped = prefix.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`);
  return sql<boolean>`lower(${column}) like ${`${escaped}%`} escape '\\'`;
}

/** Case-insensitive substring match that behaves the same on both dialects. */
export function containsCi(column: Expression<unknown>, needle: string): RawBuilder<boolean> {
  const escaped = needle.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`);
  return sql<boolean>`lower(${column}) like ${`%${escaped}%`} escape '\\'`;
}

/**
 * Row locking for a claim: `FOR UPDATE SKIP LOCKED` on PostgreSQL, so concurrent workers pass over
 * each other's rows; nothing on SQLite, where a write statement already runs alone.
 */
export function skipLocked<QB extends { forUpdate(): QB; skipLocked(): QB }>(db: Kysely<any>, qb: QB): QB {
  return isPostgres(db) ? qb.forUpdate().skipLocked() : qb;
}
