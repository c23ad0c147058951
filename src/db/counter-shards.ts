import { sql, type Kysely } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * PostgreSQL keeps the lists' counters in shards (migration 0035): each connection adds to the row of
 * its own shard, so that an organization's writes do not queue on one row's lock until each commits.
 * Readers sum a key's rows.
 */
export const COUNTER_SHARDS = 8;
/** The shard of the writing connection, as SQL. */
export const COUNTER_SHARD = `(pg_backend_pid() % ${COUNTER_SHARDS})`;

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
 * The shard SQL for a trigger function written now to keep `table`: `COUNTER_SHARD` once migration
 * 0035 has given the table its shards (a later migration counting another table must add to them, or
 * its upserts would name no unique key), nothing before it or on SQLite.
 */
export async function counterShardOf(db: Kysely<any>, table: string): Promise<string | undefined> {
  if (!isPostgres(db)) return undefined;
  const { rows } = await sql<{ found: number }>`
    SELECT 1 AS found FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ${table} AND column_name = 'shard'`.execute(db);
  return rows.length > 0 ? COUNTER_SHARD : undefined;
}

/**
 * Folds the rows of up to `limit` keys per table that have several into one (their lowest shard's),
 * and drops keys whose rows sum to nothing (`row_counts`' triggers leave a row at zero): a key has at most one row per shard, but a chapter whose
 * events are gone, counted by some connections and taken away by another, would otherwise keep
 * them. Beside the triggers: rows a writer holds are left for a later sweep (the fold never waits on
 * a writer, nor a writer on the fold for longer than one statement), the rows folded are deleted as
 * committed, and their sum goes in as the triggers' own upsert does. Answers the rows removed.
 * Nothing to do on SQLite, which has no shards.
 */
export async function foldCounterShards(db: Kysely<any>, limit: number): Promise<number> {
  if (!isPostgres(db)) return 0;
  let removed = 0;
  for (const { table, key } of SHARDED_COUNTERS) {
    const columns = sql.raw(key.join(', '));
    const of = (alias: string) => sql.raw(key.map((k) => `${alias}.${k}`).join(', '));
    const same = (a: string, b: string) => sql.raw(key.map((k) => `${a}.${k} = ${b}.${k}`).join(' AND '));
    // Only rows no writer holds (SKIP LOCKED): waiting on a writer while holding other keys' rows
    // would make writers wait on the fold, and deadlock with those that write several keys.
    const { rows } = await sql<{ removed: string }>`
      WITH keys AS (
        SELECT ${columns} FROM ${sql.table(table)} GROUP BY ${columns} HAVING COUNT(*) > 1 OR SUM(n) = 0 LIMIT ${limit}
      ), locked AS (
        SELECT ${of('c')}, c.shard FROM ${sql.table(table)} c JOIN keys k ON ${same('c', 'k')} FOR UPDATE OF c SKIP LOCKED
      ), gone AS (
        DELETE FROM ${sql.table(table)} c USING locked l WHERE ${same('c', 'l')} AND c.shard = l.shard RETURNING ${of('c')}, c.shard, c.n
      ), put AS (
        INSERT INTO ${sql.table(table)} (${columns}, shard, n)
        SELECT ${columns}, MIN(shard), SUM(n) FROM gone GROUP BY ${columns} HAVING SUM(n) <> 0
        ON CONFLICT (${columns}, shard) DO UPDATE SET n = ${sql.table(table)}.n + EXCLUDED.n
        RETURNING 1
      )
      SELECT (SELECT COUNT(*) FROM gone) - (SELECT COUNT(*) FROM put) AS removed`.execute(db);
    removed += Number(rows[0]?.removed ?? 0);
  }
  return removed;
}
