import { sql, type Kysely } from 'kysely';
import { CHANGE_CHANNEL, ORGANIZATION_CHANNEL, TABLE_CHANNEL } from './pg-change-notices.ts';
import { UNCACHED_TABLES } from './uncached-tables.ts';

const FUNCTION = 'reelbase_notify_change';
// Tables with an organization_id column: the same notifications, and one per organization whose rows
// changed. A function of its own, so that a process of an earlier release, which replaces the first
// function's body with its own at its start, leaves this one alone.
const ORGANIZATION_FUNCTION = 'reelbase_notify_organization_change';
const ROW_TRIGGER = 'reelbase_changes_rows';
/** How many rows' ids a transaction's notifications tell (`row <id>`); its other rows are told by organization. */
const ROWS_TOLD = 8;
const TRUNCATE_TRIGGER = 'reelbase_changes_truncate';

/**
 * PostgreSQL: makes every table of the current schema notify CHANGE_CHANNEL (payload: the schema) and
 * TABLE_CHANNEL (payload: the schema, a space and the table; see `listenForChanges`), and a table with
 * an organization_id column ORGANIZATION_CHANNEL too (the schema, the table and the organization whose
 * rows changed, or nothing for a TRUNCATE or a row without one), when a transaction that changed its
 * rows commits, for the change clock of every process using the
 * database (src/db/change-clock.ts). Run after the migrations, on every start, so that a table a later
 * migration adds is covered without that migration having to remember it; tables already covered
 * by the right function are left alone (those of the other are covered again). Row-level triggers, since a statement-level one would also fire for statements that
 * changed nothing (a job poll finding no work); PostgreSQL sends one notification per transaction
 * however many rows changed, since identical notifications are folded. Answers the tables notified
 * per organization.
 */
export async function installChangeTriggers(db: Kysely<any>): Promise<Set<string>> {
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
    // Per row, the organization and what the row was to it: `insert` (a row added, no row that existed
    // changed), or `row <id>` for an update or delete, for the first ROWS_TOLD rows of a transaction
    // (distinct payloads are not folded: a statement over a million rows must not send a million).
    await sql`
      create or replace function ${sql.ref(ORGANIZATION_FUNCTION)}() returns trigger language plpgsql as $$
      declare
        tbl text := tg_table_schema || ' ' || tg_table_name || ' ';
        rec jsonb;
        told int;
      begin
        perform pg_notify(${sql.lit(CHANGE_CHANNEL)}, tg_table_schema);
        perform pg_notify(${sql.lit(TABLE_CHANNEL)}, tg_table_schema || ' ' || tg_table_name);
        if tg_level = 'STATEMENT' then
          perform pg_notify(${sql.lit(ORGANIZATION_CHANNEL)}, tbl);
        elsif tg_op = 'INSERT' then
          -- Read through to_jsonb: a migration that drops the column must not make the table's writes fail.
          perform pg_notify(${sql.lit(ORGANIZATION_CHANNEL)}, tbl || coalesce(to_jsonb(new) ->> 'organization_id', '') || ' insert');
        else
          told := coalesce(nullif(current_setting('reelbase.rows_told', true), ''), '0')::int + 1;
          if told <= ${sql.lit(ROWS_TOLD + 1)} then perform set_config('reelbase.rows_told', told::text, true); end if;
          foreach rec in array case when tg_op = 'UPDATE' then array[to_jsonb(old), to_jsonb(new)] else array[to_jsonb(old)] end loop
            perform pg_notify(${sql.lit(ORGANIZATION_CHANNEL)}, tbl || coalesce(rec ->> 'organization_id', '')
              || case when told <= ${sql.lit(ROWS_TOLD)} and rec ->> 'id' ~ '^[0-9]{1,15}$' then ' row ' || (rec ->> 'id') else '' end);
          end loop;
        end if;
        return null;
      end
      $$`.execute(trx);
    // Tables no cached read reads: their writes notify no one (and a trigger a release installed goes).
    for (const table of UNCACHED_TABLES) {
      await sql`drop trigger if exists ${sql.ref(ROW_TRIGGER)} on ${sql.table(table)}`.execute(trx);
      await sql`drop trigger if exists ${sql.ref(TRUNCATE_TRIGGER)} on ${sql.table(table)}`.execute(trx);
    }
    for (const { name: table, organizations } of await uncovered(trx)) {
      // A table covered by an earlier release, before it said whose rows changed, is covered again.
      await sql`drop trigger if exists ${sql.ref(ROW_TRIGGER)} on ${sql.table(table)}`.execute(trx);
      await sql`drop trigger if exists ${sql.ref(TRUNCATE_TRIGGER)} on ${sql.table(table)}`.execute(trx);
      const fn = sql.ref(organizations ? ORGANIZATION_FUNCTION : FUNCTION);
      await sql`create trigger ${sql.ref(ROW_TRIGGER)} after insert or update or delete on ${sql.table(table)}
        for each row execute function ${fn}()`.execute(trx);
      await sql`create trigger ${sql.ref(TRUNCATE_TRIGGER)} after truncate on ${sql.table(table)}
        for each statement execute function ${fn}()`.execute(trx);
    }
  });
  return organizationTables(db);
}

/**
 * Tables of the current schema without the change triggers, or with those of the other function
 * (`organizations`: the table has an organization_id column; Kysely's own migration tables aside).
 */
async function uncovered(db: Kysely<any>): Promise<Array<{ name: string; organizations: boolean }>> {
  const { rows } = await sql<{ name: string; organizations: boolean }>`
    select c.relname as name, exists (
      select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and a.attnum > 0 and not a.attisdropped
    ) as organizations
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and c.relname not like 'kysely\\_%'
      and c.relname not in (${sql.join([...UNCACHED_TABLES])})
    order by 1`.execute(db);
  const have = await triggerFunctions(db);
  return rows.filter((r) => have.get(r.name) !== (r.organizations ? ORGANIZATION_FUNCTION : FUNCTION));
}

/** Each table's change trigger's function, by table. */
async function triggerFunctions(db: Kysely<any>): Promise<Map<string, string>> {
  const { rows } = await sql<{ name: string; fn: string }>`
    select c.relname as name, p.proname as fn from pg_trigger t
    join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace join pg_proc p on p.oid = t.tgfoid
    where n.nspname = current_schema() and t.tgname = ${ROW_TRIGGER}`.execute(db);
  return new Map(rows.map((r) => [r.name, r.fn]));
}

/** Tables of the current schema without the change triggers they should have. */
export async function uncoveredTables(db: Kysely<any>): Promise<string[]> {
  return (await uncovered(db)).map((t) => t.name);
}

/** Tables whose changes are also notified per organization (ORGANIZATION_CHANNEL). */
export async function organizationTables(db: Kysely<any>): Promise<Set<string>> {
  const have = await triggerFunctions(db);
  return new Set([...have].filter(([, fn]) => fn === ORGANIZATION_FUNCTION).map(([name]) => name));
}
