import { sql, type Kysely } from 'kysely';
import { counterShardOf } from './counter-shards.ts';
import { isPostgres } from './dialect.ts';
import { cachedRead } from './read-cache.ts';
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
  await countingTriggers(db, table, 'row_counts', {
    perStatement: rowCountsChange(table, await counterShardOf(db, 'row_counts')),
    inserted: `INSERT INTO row_counts (table_name, organization_id, n) VALUES ('${table}', NEW.organization_id, 1)
        ON CONFLICT (table_name, organization_id) DO UPDATE SET n = n + 1;`,
    deleted: `UPDATE row_counts SET n = n - 1 WHERE table_name = '${table}' AND organization_id = OLD.organization_id;`,
  });
}

/**
 * PostgreSQL's change of `row_counts` by a statement's rows (`sign` '-': taken away). `shard`: the SQL
 * of the writing connection's shard (migration 0035); without it, as migration 0024 made it.
 */
export const rowCountsChange = (table: string, shard?: string) => (rows: string, sign: '' | '-') => {
  const target = shard ? 'table_name, organization_id, shard' : 'table_name, organization_id';
  return `INSERT INTO row_counts (${target}, n)
        SELECT '${table}', organization_id, ${shard ? `${shard}, ` : ''}${sign}COUNT(*) FROM ${rows} GROUP BY organization_id
        ON CONFLICT (${target}) DO UPDATE SET n = row_counts.n + EXCLUDED.n;`;
};

/**
 * The triggers that keep a table of counts (`counts`) of `table`'s rows, after its inserts and
 * deletes in the writing transaction: statement-level over transition tables on PostgreSQL
 * (`perStatement(rows, sign)`, one grouped change per statement), row triggers on SQLite
 * (`inserted` over NEW, `deleted` over OLD).
 */
export async function countingTriggers(
  db: Kysely<any>,
  table: string,
  counts: string,
  body: { perStatement: (rows: string, sign: '' | '-') => string; inserted: string; deleted: string },
): Promise<void> {
  if (isPostgres(db)) {
    await countingFunctions(db, table, counts, body.perStatement);
    for (const [op, rows] of [
      ['insert', 'new_rows'],
      ['delete', 'old_rows'],
    ] as const) {
      await sql
        .raw(
          `CREATE TRIGGER ${counts}_${op} AFTER ${op.toUpperCase()} ON ${table} REFERENCING ${op === 'insert' ? 'NEW' : 'OLD'} TABLE AS ${rows} FOR EACH STATEMENT EXECUTE FUNCTION reelbase_${counts}_${table}_${op}()`,
        )
        .execute(db);
    }
    return;
  }
  await sql.raw(`CREATE TRIGGER ${table}_${counts}_insert AFTER INSERT ON ${table} BEGIN\n        ${body.inserted} END`).execute(db);
  await sql.raw(`CREATE TRIGGER ${table}_${counts}_delete AFTER DELETE ON ${table} BEGIN\n        ${body.deleted} END`).execute(db);
}

/** PostgreSQL: (re)writes the functions of `countingTriggers`' statement-level triggers. */
export async function countingFunctions(db: Kysely<any>, table: string, counts: string, perStatement: (rows: string, sign: '' | '-') => string): Promise<void> {
  for (const [op, rows, sign] of [
    ['insert', 'new_rows', ''],
    ['delete', 'old_rows', '-'],
  ] as const) {
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION reelbase_${counts}_${table}_${op}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${perStatement(rows, sign)} RETURN NULL; END $$`,
      )
      .execute(db);
  }
}

/** Drops what `countingTriggers` made. */
export async function dropCountingTriggers(db: Kysely<any>, table: string, counts: string): Promise<void> {
  for (const op of ['insert', 'delete']) {
    if (isPostgres(db)) {
      await sql.raw(`DROP TRIGGER ${counts}_${op} ON ${table}`).execute(db);
      await sql.raw(`DROP FUNCTION reelbase_${counts}_${table}_${op}()`).execute(db);
    } else await sql.raw(`DROP TRIGGER ${table}_${counts}_${op}`).execute(db);
  }
}

/** Stops counting `table`'s rows, and forgets its counts. */
export async function stopCountingRowsOf(db: Kysely<any>, table: string): Promise<void> {
  await dropCountingTriggers(db, table, 'row_counts');
  await sql`DELETE FROM row_counts WHERE table_name = ${table}`.execute(db);
}

export async function dropRowCounts(db: Kysely<any>, tables: readonly string[]): Promise<void> {
  for (const table of tables) await stopCountingRowsOf(db, table);
  await db.schema.dropTable('row_counts').execute();
}

/** The organization's rows of a counted table (0 when it never had one). */
export async function countedRows(db: Kysely<DB>, table: 'players' | 'videos' | 'users' | 'tags', organizationId: number): Promise<number> {
  // Asked by every page of those lists: cached (src/db/read-cache.ts). The counts move by triggers, whose
  // writes count for every organization, so any insert or delete of a counted table drops them.
  const counted = await cachedRead(
    db,
    'row-count',
    `${table}:${organizationId}`,
    async (read) => ({
      n: Number(
        // Summed: PostgreSQL keeps a count in shards (migration 0035).
        (
          await read
            .selectFrom('row_counts')
            .select((eb) => eb.fn.sum<number>('n').as('n'))
            .where('table_name', '=', table)
            .where('organization_id', '=', organizationId)
            .executeTakeFirst()
        )?.n ?? 0,
      ),
    }),
    () => organizationId,
  );
  return counted!.n;
}
