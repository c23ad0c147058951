import { sql, type Kysely } from 'kysely';
import { counterShardOf } from './counter-shards.ts';
import { isPostgres } from './dialect.ts';
import { PAGE_RUN_BITS } from './paging.ts';
import { countingTriggers, dropCountingTriggers } from './row-counts.ts';
import type { DB } from './schema.ts';

/** The tables whose unfiltered lists are paged from `row_pages`. */
export type PagedTable = 'players' | 'videos' | 'users' | 'tags';

/**
 * `row_pages`: how many rows of a table each organization has in each run of 4,096 ids, kept by
 * triggers in the writing transaction as `row_counts` is (src/db/row-counts.ts), so that a deep page
 * of an unfiltered list starts at its run instead of walking every index entry before it
 * (docs/performance.md, "Lists at size"; `event_pages` does the same for the event lists).
 */
export async function createRowPages(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('row_pages')
    .addColumn('table_name', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('row_pages_pk', ['table_name', 'organization_id', 'bucket'])
    // SQLite: the rows kept in the key's order, so that a list's runs are one contiguous read.
    .$call((table) => (isPostgres(db) ? table : table.modifyEnd(sql`WITHOUT ROWID`)))
    .execute();
}

/** Counts `table`'s rows per organization and run of ids from now on (and the rows it has). */
export async function pageRowsOf(db: Kysely<any>, table: PagedTable): Promise<void> {
  const BITS = PAGE_RUN_BITS;
  const KEY = 'table_name, organization_id, bucket';
  await sql
    .raw(`INSERT INTO row_pages (${KEY}, n) SELECT '${table}', organization_id, id >> ${BITS}, COUNT(*) FROM ${table} GROUP BY organization_id, id >> ${BITS}`)
    .execute(db);
  await countingTriggers(db, table, 'row_pages', {
    perStatement: rowPagesChange(table, await counterShardOf(db, 'row_pages')),
    inserted: `INSERT INTO row_pages (${KEY}, n) VALUES ('${table}', NEW.organization_id, NEW.id >> ${BITS}, 1)
        ON CONFLICT (${KEY}) DO UPDATE SET n = row_pages.n + 1;`,
    deleted: `UPDATE row_pages SET n = n - 1 WHERE table_name = '${table}' AND organization_id = OLD.organization_id AND bucket = OLD.id >> ${BITS};`,
  });
}

/**
 * PostgreSQL's change of `row_pages` by a statement's rows (`sign` '-': taken away). `shard`: the SQL
 * of the writing connection's shard (migration 0035); without it, as migration 0034 made it.
 */
export const rowPagesChange = (table: PagedTable, shard?: string) => (rows: string, sign: '' | '-') => {
  const BITS = PAGE_RUN_BITS;
  const target = shard ? 'table_name, organization_id, bucket, shard' : 'table_name, organization_id, bucket';
  return `INSERT INTO row_pages (${target}, n)
        SELECT '${table}', organization_id, id >> ${BITS}, ${shard ? `${shard}, ` : ''}${sign}COUNT(*) FROM ${rows} GROUP BY organization_id, id >> ${BITS}
        ON CONFLICT (${target}) DO UPDATE SET n = row_pages.n + EXCLUDED.n;`;
};

export async function dropRowPages(db: Kysely<any>, tables: readonly PagedTable[]): Promise<void> {
  for (const table of tables) await dropCountingTriggers(db, table, 'row_pages');
  await db.schema.dropTable('row_pages').execute();
}

/** The organization's rows of a paged table per run of ids, in run order. */
export async function runsOf(db: Kysely<DB>, table: PagedTable, organizationId: number): Promise<Array<{ bucket: number; n: number }>> {
  // Summed per run: PostgreSQL keeps a run's count in shards (migration 0035).
  const rows = await db
    .selectFrom('row_pages')
    .select((eb) => ['bucket', eb.fn.sum<number>('n').as('n')])
    .where('table_name', '=', table)
    .where('organization_id', '=', organizationId)
    .groupBy('bucket')
    .orderBy('bucket')
    .execute();
  return rows.map((r) => ({ bucket: Number(r.bucket), n: Number(r.n) }));
}
