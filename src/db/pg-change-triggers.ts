import { sql, type Kysely } from 'kysely';
import { CHANGE_CHANNEL, TABLE_CHANNEL } from './pg-connection.ts';
import { UNCACHED_TABLES } from './uncached-tables.ts';

const FUNCTION = 'reelbase_notify_change';
const ROW_TRIGGER = 'reelbase_changes_rows';
const TRUNCATE_TRIGGER = 'reelbase_changes_truncate';

/**
 * PostgreSQL: makes every table of the current schema notify CHANGE_CHANNEL (payload: the schema) and
 * TABLE_CHANNEL (payload: the schema, a space and the table; see `listenForChanges`) when
 * a transaction that changed its rows commits, for the change clock of every process using the
 * database (src/db/change-clock.ts). Run after the migrations, on every start, so that a table a later
 * migration adds is covered without that migration having to remember it; tables already covered are
 * left alone. Row-level triggers, since a statement-level one would also fire for statements that
 * changed nothing (a job poll finding no work); PostgreSQL sends one notification per transaction
 * however many rows changed, since identical notifications are folded.
 */
export async function installChangeTriggers(db: Kysely<any>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Processes starting together would otherwise race on the function and the triggers (of this schema).
    await sql`select pg_advisory_xact_lock(hashtextextended(${FUNCTION} || ' ' || current_schema(), 0))`.execute(trx);
    await sql`
      create or replace function ${sql.ref(FUNCTION)}() returns trigger language plpgsql as $$
      begin
        perform pg_notify(${sql.lit(CHANGE_CHANNEL)}, tg_table_schema);
        perform pg_notify(${sql.lit(TABLE_CHANNEL)}, tg_table_schema || ' ' || tg_table_name);
        return null;
      end
      $$`.execute(trx);
    // Tables no cached read reads: their writes notify no one (and a trigger a release installed goes).
    for (const table of UNCACHED_TABLES) {
      await sql`drop trigger if exists ${sql.ref(ROW_TRIGGER)} on ${sql.table(table)}`.execute(trx);
      await sql`drop trigger if exists ${sql.ref(TRUNCATE_TRIGGER)} on ${sql.table(table)}`.execute(trx);
    }
    const missing = await uncoveredTables(trx);
    for (const table of missing) {
      await sql`create trigger ${sql.ref(ROW_TRIGGER)} after insert or update or delete on ${sql.table(table)}
        for each row execute function ${sql.ref(FUNCTION)}()`.execute(trx);
      await sql`create trigger ${sql.ref(TRUNCATE_TRIGGER)} after truncate on ${sql.table(table)}
        for each statement execute function ${sql.ref(FUNCTION)}()`.execute(trx);
    }
  });
}

/** Tables of the current schema without the change triggers (Kysely's own migration tables aside). */
export async function uncoveredTables(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and c.relname not like 'kysely\\_%'
      and not exists (select 1 from pg_trigger t where t.tgrelid = c.oid and t.tgname = ${ROW_TRIGGER})
      and c.relname not in (${sql.join([...UNCACHED_TABLES])})
    order by 1`.execute(db);
  return rows.map((r) => r.name);
}
