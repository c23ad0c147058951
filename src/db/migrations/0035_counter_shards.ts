import { sql, type Kysely } from 'kysely';
import { COUNTER_SHARD, ROW_COUNTED, SHARDED_COUNTERS } from '../counter-shards.ts';
import { isPostgres } from '../dialect.ts';
import { countingFunctions, rowCountsChange } from '../row-counts.ts';
import { rowPagesChange } from '../row-pages.ts';
import { postgresFunctions as countFunctions } from './0021_event_counts.ts';
import { postgresFunctions as pageFunctions } from './0033_event_pages.ts';

/**
 * PostgreSQL: the lists' counters in shards (`event_counts`, migration 0021; `event_pages`, 0033;
 * `row_counts` of players, videos, users and tags, 0024 and 0028; `row_pages`, 0034). Every row
 * written added to the same few rows of its organization (an event: its count, its chapter's and
 * player's runs), and PostgreSQL holds a row's lock until the writing transaction has
 * committed: an organization's writes took turns, each waiting for the one before it to reach the
 * disk, and on a busy machine for its backend to be scheduled again (docs/performance.md, "Session
 * 31"). Each connection now adds to its own shard's row (`pg_backend_pid() % 8`); the readers sum
 * the rows of a key, as they did already. A shard's row may go below zero (a row counted by one
 * connection, deleted by another); a row at zero is deleted by the connection that brought it there,
 * and the housekeeping sweep folds a key's shards into one row (src/db/counter-shards.ts).
 *
 * SQLite writes one transaction at a time, so it has nothing to gain: its counters get the column
 * (always 0), not the shards.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // SQLite has the column too, always 0, so that both dialects have one schema (src/db/schema.ts).
  if (!isPostgres(db)) {
    for (const { table } of SHARDED_COUNTERS) await sql.raw(`ALTER TABLE ${table} ADD COLUMN shard integer NOT NULL DEFAULT 0`).execute(db);
    return;
  }
  for (const { table, key } of SHARDED_COUNTERS) {
    await sql.raw(`ALTER TABLE ${table} ADD COLUMN shard integer NOT NULL DEFAULT 0`).execute(db);
    await sql.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pk`).execute(db);
    await sql.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pk PRIMARY KEY (${key.join(', ')}, shard)`).execute(db);
  }
  await shardedFunctions(db, COUNTER_SHARD);
}

/** The counters' trigger functions, adding to the writing connection's shard or (without `shard`) as their migrations made them. */
async function shardedFunctions(db: Kysely<any>, shard?: string) {
  await countFunctions(db, shard);
  await pageFunctions(db, shard);
  for (const table of ROW_COUNTED) {
    await countingFunctions(db, table, 'row_counts', rowCountsChange(table, shard));
    await countingFunctions(db, table, 'row_pages', rowPagesChange(table, shard));
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) {
    for (const { table } of SHARDED_COUNTERS) await sql.raw(`ALTER TABLE ${table} DROP COLUMN shard`).execute(db);
    return;
  }
  // The shards of a key summed into one row.
  for (const { table, key } of SHARDED_COUNTERS) {
    const columns = key.join(', ');
    await sql.raw(`CREATE TEMPORARY TABLE ${table}_merged AS SELECT ${columns}, SUM(n) AS n FROM ${table} GROUP BY ${columns}`).execute(db);
    await sql.raw(`DELETE FROM ${table}`).execute(db);
    await sql.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pk`).execute(db);
    await sql.raw(`ALTER TABLE ${table} DROP COLUMN shard`).execute(db);
    await sql.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pk PRIMARY KEY (${columns})`).execute(db);
    await sql.raw(`INSERT INTO ${table} (${columns}, n) SELECT ${columns}, n FROM ${table}_merged WHERE n <> 0`).execute(db);
    await sql.raw(`DROP TABLE ${table}_merged`).execute(db);
  }
  await shardedFunctions(db);
}
