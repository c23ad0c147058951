import { sql, PostgresAdapter, type Kysely, type ColumnDefinitionBuilder, type CreateTableBuilder, type Expression, type RawBuilder } from 'kysely';

/** Dialect differences live here and nowhere else. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-incrementing integer primary key named `id`. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return isPostgres(db) ? table.addColumn('id', 'serial', (c) => c.primaryKey()) : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
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

/**
 * Serialises the writers of one organization's allotment-limited resources (users, teams, embeds):
 * on PostgreSQL the organization row is locked until the transaction ends (FOR NO KEY UPDATE, so that
 * inserts referencing the organization elsewhere are not blocked); SQLite transactions are already
 * serialised, so nothing is needed there. Call it first inside the transaction.
 */
export async function lockOrganization(trx: Kysely<any>, organizationId: number): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select id from organizations where id = ${organizationId} for no key update`.execute(trx);
}

/** A unique-constraint violation (SQLite SQLITE_CONSTRAINT_UNIQUE / PostgreSQL 23505), matched by shape. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown } | null;
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A foreign-key violation (SQLite SQLITE_CONSTRAINT_FOREIGNKEY / PostgreSQL 23503), matched by shape. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: unknown } | null;
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
