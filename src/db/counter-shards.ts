import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * PostgreSQL keeps the lists' counters in shards (migration 0035): each connection adds to the row of
 * its own shard, so that an organization's writes do not queue on one row's lock until each commits.
 * Readers sum a key's rows.
 */
export const COUNTER_SHARDS = 8;
/** The shard of the writing connection, as SQL. */
export const COUNTER_SHARD = `(pg_backend_pid() % ${COUNTER_SHARDS})::smallint`;

/** The sharded counters, by their key. */
export const SHARDED_COUNTERS = [
  { table: 'event_counts', key: ['organization_id', 'chapter_id', 'event_type', 'state'] },
  { table: 'event_pages', key: ['organization_id', 'scope', 'scope_id', 'bucket'] },
  { table: 'row_counts', key: ['table_name', 'organization_id'] },
  { table: 'row_pages', key: ['table_name', 'organization_id', 'bucket'] },
] as const;

/** The tables whose rows `row_counts` and `row_pages` count. */
export const ROW_COUNTED = ['players', 'videos', 'users', 'tags'] as const;

/**
 * Folds the rows of up to `limit` keys per table that have several into one (their lowest shard's),
 * and drops keys whose rows sum to nothing (`row_counts`' triggers leave a row at zero): a key has at most one row per shard, but a chapter whose
 * events are gone, counted by some connections and taken away by another, would otherwise keep
 * them. Safe beside the triggers: a row changed meanwhile is deleted as it is once that change
 * commits (PostgreSQL re-reads a row it waited for), and the sum goes in as the triggers' own
 * upsert does. Answers the rows removed. Nothing to do on SQLite, which has no shards.
 */
export async function foldCounterShards(db: Kysely<any>, limit: number): Promise<number> {
  if (!isPostgres(db)) return 0;
  let removed = 0;
  for (const { table, key } of SHARDED_COUNTERS) {
    const columns = sql.raw(key.join(', '));
    const of = (alias: string) => sql.raw(key.map((k) => `${alias}.${k}`).join(', '));
    const same = (a: string, b: string) => sql.raw(key.map((k) => `${a}.${k} = ${b}.${k}`).join(' AND '));
    const { rows } = await sql<{ removed: string }>`
      WITH keys AS (
        SELECT ${columns}, MIN(shard) AS kept FROM ${sql.table(table)} GROUP BY ${columns} HAVING COUNT(*) > 1 OR SUM(n) = 0 LIMIT ${limit}
      ), gone AS (
        DELETE FROM ${sql.table(table)} c USING keys k WHERE ${same('c', 'k')} RETURNING ${of('c')}, c.n
      ), put AS (
        INSERT INTO ${sql.table(table)} (${columns}, shard, n)
        SELECT ${of('g')}, k.kept, SUM(g.n) FROM gone g JOIN keys k ON ${same('g', 'k')} GROUP BY ${of('g')}, k.kept HAVING SUM(g.n) <> 0
        ON CONFLICT (${columns}, shard) DO UPDATE SET n = ${sql.table(table)}.n + EXCLUDED.n
        RETURNING 1
      )
      SELECT (SELECT COUNT(*) FROM gone) - (SELECT COUNT(*) FROM put) AS removed`.execute(db);
    removed += Number(rows[0]?.removed ?? 0);
  }
  return removed;
}
