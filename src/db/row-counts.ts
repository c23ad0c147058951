import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.ts';
import type { DB } from './schema.ts';

/**
 * `row_counts`: how many rows of a table each organization has, kept by triggers in the writing
 * transaction (every path: the API, cascades, an organization's removal), so that an unfiltered
 * list's exact `summary.count` reads one row instead of counting a million (docs/performance.md,
 * "Lists at size"). The same technique as `event_counts` (migration 0021): row triggers on SQLite,
 * statement-level triggers over transition tables on PostgreSQL.
 */
export async function createRowCounts(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('row_counts')
    .addColumn('table_name', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('row_counts_pk', ['table_name', 'organization_id'])
    .execute();
}

/** Counts `table`'s rows per organization from now on (and the rows it has). */
export async function countRowsOf(db: Kysely<any>, table: string): Promise<void> {
  await sql
    .raw(`INSERT INTO row_counts (table_name, organization_id, n) SELECT '${table}', organization_id, COUNT(*) FROM ${table} GROUP BY organization_id`)
    .execute(db);
  if (isPostgres(db)) {
    const change = (rows: string, sign: string) => `INSERT INTO row_counts (table_name, organization_id, n)
        SELECT '${table}', organization_id, ${sign}COUNT(*) FROM ${rows} GROUP BY organization_id
        ON CONFLICT (table_name, organization_id) DO UPDATE SET n = row_counts.n + EXCLUDED.n;`;
    for (const [op, rows, sign] of [
      ['insert', 'new_rows', ''],
      ['delete', 'old_rows', '-'],
    ] as const) {
      await sql
        .raw(`CREATE FUNCTION reelbase_row_counts_${table}_${op}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${change(rows, sign)} RETURN NULL; END $$`)
        .execute(db);
      await sql
        .raw(
          `CREATE TRIGGER row_counts_${op} AFTER ${op.toUpperCase()} ON ${table} REFERENCING ${op === 'insert' ? 'NEW' : 'OLD'} TABLE AS ${rows} FOR EACH STATEMENT EXECUTE FUNCTION reelbase_row_counts_${table}_${op}()`,
        )
        .execute(db);
    }
    return;
  }
  await sql
    .raw(
      `CREATE TRIGGER ${table}_row_counts_insert AFTER INSERT ON ${table} BEGIN
        INSERT INTO row_counts (table_name, organization_id, n) VALUES ('${table}', NEW.organization_id, 1)
        ON CONFLICT (table_name, organization_id) DO UPDATE SET n = n + 1; END`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER ${table}_row_counts_delete AFTER DELETE ON ${table} BEGIN
        UPDATE row_counts SET n = n - 1 WHERE table_name = '${table}' AND organization_id = OLD.organization_id; END`,
    )
    .execute(db);
}

/** Stops counting `table`'s rows, and forgets its counts. */
export async function stopCountingRowsOf(db: Kysely<any>, table: string): Promise<void> {
  for (const op of ['insert', 'delete']) {
    if (isPostgres(db)) {
      await sql.raw(`DROP TRIGGER row_counts_${op} ON ${table}`).execute(db);
      await sql.raw(`DROP FUNCTION reelbase_row_counts_${table}_${op}()`).execute(db);
    } else await sql.raw(`DROP TRIGGER ${table}_row_counts_${op}`).execute(db);
  }
  await sql`DELETE FROM row_counts WHERE table_name = ${table}`.execute(db);
}

export async function dropRowCounts(db: Kysely<any>, tables: readonly string[]): Promise<void> {
  for (const table of tables) await stopCountingRowsOf(db, table);
  await db.schema.dropTable('row_counts').execute();
}

/** The organization's rows of a counted table (0 when it never had one). */
export async function countedRows(db: Kysely<DB>, table: 'players' | 'videos' | 'users' | 'tags', organizationId: number): Promise<number> {
  const row = await db.selectFrom('row_counts').select('n').where('table_name', '=', table).where('organization_id', '=', organizationId).executeTakeFirst();
  return Number(row?.n ?? 0);
}
