import { sql, PostgresAdapter, type Kysely, type ColumnDefinitionBuilder, type CreateTableBuilder, type Expression, type RawBuilder } from 'kysely';

/** Dialect differences live here and nowhere else. */
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-incrementing integer primary key named `id`. */
export function withId<T extends string>(db: Kysely<any>, table: CreateTableBuilder<T, any>): CreateTableBuilder<T, any> {
  return isPostgres(db) ? table.addColumn('id', 'serial', (c) => c.primaryKey()) : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** A double-precision float: SQLite's REAL is eight bytes; PostgreSQL's is four. */
export function double(db: Kysely<any>): 'double precision' | 'real' {
  return isPostgres(db) ? 'double precision' : 'real';
}

/** Bytes: BLOB on SQLite, bytea on PostgreSQL (both drivers answer a Buffer). */
export function bytes(db: Kysely<any>): 'bytea' | 'blob' {
  return isPostgres(db) ? 'bytea' : 'blob';
}

/** In an upsert's update: the later of the row's `column` and the one that would have been inserted. */
export function laterOf(table: string, column: string): RawBuilder<number> {
  const kept = sql.ref(`${table}.${column}`);
  const offered = sql.ref(`excluded.${column}`);
  return sql<number>`case when ${offered} > ${kept} then ${offered} else ${kept} end`;
}

/** Second-precision timestamps and other large integers. */
export const bigint = 'bigint' as const;

export function notNullDefault(value: unknown) {
  return (c: ColumnDefinitionBuilder) => c.notNull().defaultTo(value);
}

/**
 * Case-insensitive prefix match that behaves the same on both dialects. Besides the `LIKE`, the
 * prefix is a range of `lower(column)` in code point order ([prefix, prefix with its last character
 * raised by one)), which an index on `lower(column)` serves: SQLite compares text by code point, and
 * on PostgreSQL the range and its index use the "C" collation (`prefixIndexColumn`).
 */
export function startsWithCi(db: Kysely<any>, column: Expression<unknown>, prefix: string): RawBuilder<boolean> {
  const lowered = prefix.toLowerCase();
  const escaped = lowered.replace(/[\\%_]/g, (m) => `\\${m}`);
  const like = sql<boolean>`lower(${column}) like ${`${escaped}%`} escape '\\'`;
  const chars = [...lowered];
  const last = chars.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return like;
  // The next code point, past the surrogates (no character of their own).
  const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
  const above = chars.join('') + String.fromCodePoint(next);
  const key = isPostgres(db) ? sql`lower(${column}) collate "C"` : sql`lower(${column})`;
  return sql<boolean>`(${key} >= ${lowered} and ${key} < ${above} and ${like})`;
}

/** The index column `startsWithCi` ranges over, as SQL for a CREATE INDEX. */
export function prefixIndexColumn(db: Kysely<any>, column: string): string {
  return isPostgres(db) ? `(lower(${column}) COLLATE "C")` : `(lower(${column}))`;
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

/**
 * The largest id of `table` below which every row is committed. SQLite has one writer: ids become
 * visible in order. PostgreSQL hands out ids before commits, so a smaller id can become visible after
 * a larger one; a SHARE lock waits for the inserts in flight (and holds new ones for its instant).
 */
export async function settledMaxId(db: Kysely<any>, table: string): Promise<number> {
  const maxId = (q: Kysely<any>) => sql<{ id: number | string | null }>`select max(id) as id from ${sql.table(table)}`.execute(q);
  if (!isPostgres(db)) return Number((await maxId(db)).rows[0]?.id ?? 0);
  return db.transaction().execute(async (trx) => {
    // Inserts queue behind the lock while it waits for the writes in flight: a long one (a retention
    // batch, a GDPR erasure) fails this call instead, and the caller tries again later.
    await sql`set local lock_timeout = '2s'`.execute(trx);
    await sql`lock table ${sql.table(table)} in share mode`.execute(trx);
    return Number((await maxId(trx)).rows[0]?.id ?? 0);
  });
}
