import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.ts';
import { PAGE_RUN_BITS } from '../paging.ts';

/**
 * `event_pages`: how many events of a list fall in each run of 4,096 ids (`id >> 12`), kept by
 * triggers in the writing transaction like `event_counts` (migration 0021). A deep page of a list is
 * then found by summing a few hundred of these rows up to its offset and walking at most one run of
 * the index from there, instead of walking every entry before it (docs/performance.md, "Lists at
 * size"). The lists counted:
 * - scope 'org', key 0: every event of the organization (`/v1/events`);
 * - scope 'chapter', key the chapter (0: the organization's defaults);
 * - scope 'player', key the player (events on any of its chapters).
 *
 * The run's size is `PAGE_RUN_BITS` (src/db/paging.ts, 12 bits), which the repository reads too:
 * changing it needs a migration that rebuilds this table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('event_pages')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'integer', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_pages_pk', ['organization_id', 'scope', 'scope_id', 'bucket'])
    // SQLite: the rows kept in the key's order, so that a list's runs are one contiguous read.
    .$call((table) => (isPostgres(db) ? table : table.modifyEnd(sql`WITHOUT ROWID`)))
    .execute();
  await sql.raw(`INSERT INTO event_pages (organization_id, scope, scope_id, bucket, n) ${grouped('events')}`).execute(db);
  if (isPostgres(db)) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

const BITS = PAGE_RUN_BITS;
const COLUMNS = 'organization_id, scope, scope_id, bucket';

/** The (scope, scope_id, bucket) an event row counts in: one row per list, over `row` (NEW/OLD, or `from`'s rows). */
const placesOf = (row: string, from = '') => `SELECT ${row}.organization_id AS o, 'org' AS s, 0 AS k, ${row}.id >> ${BITS} AS b ${from}
  UNION ALL SELECT ${row}.organization_id, 'chapter', COALESCE(${row}.chapter_id, 0), ${row}.id >> ${BITS} ${from}
  UNION ALL SELECT ${row}.organization_id, 'player', ${row}.player_id, ${row}.id >> ${BITS} ${from} WHERE ${row}.player_id IS NOT NULL`;

/** Counts per (organization, scope, scope_id, bucket) of a table (or subquery) of event rows. */
const grouped = (rows: string) => `SELECT o, s, k, b, COUNT(*) AS n FROM (${placesOf('r', `FROM ${rows} r`)}) p GROUP BY o, s, k, b`;

/** Whether an update moved the event between lists. */
const moved = `OLD.organization_id <> NEW.organization_id OR COALESCE(OLD.chapter_id, 0) <> COALESCE(NEW.chapter_id, 0)
  OR COALESCE(OLD.player_id, 0) <> COALESCE(NEW.player_id, 0)`;

async function sqliteTriggers(db: Kysely<any>) {
  const add = `INSERT INTO event_pages (${COLUMNS}, n) SELECT o, s, k, b, 1 FROM (${placesOf('NEW')}) WHERE true
    ON CONFLICT (${COLUMNS}) DO UPDATE SET n = event_pages.n + 1;`;
  const same = `organization_id = OLD.organization_id AND bucket = OLD.id >> ${BITS}
    AND ((scope = 'org' AND scope_id = 0) OR (scope = 'chapter' AND scope_id = COALESCE(OLD.chapter_id, 0)) OR (scope = 'player' AND scope_id = OLD.player_id))`;
  const take = `UPDATE event_pages SET n = n - 1 WHERE ${same}; DELETE FROM event_pages WHERE ${same} AND n = 0;`;
  await sql.raw(`CREATE TRIGGER event_pages_insert AFTER INSERT ON events BEGIN ${add} END`).execute(db);
  await sql.raw(`CREATE TRIGGER event_pages_delete AFTER DELETE ON events BEGIN ${take} END`).execute(db);
  await sql
    .raw(`CREATE TRIGGER event_pages_update AFTER UPDATE OF organization_id, chapter_id, player_id ON events WHEN ${moved} BEGIN ${take} ${add} END`)
    .execute(db);
}

/** PostgreSQL: statement-level triggers over transition tables, one grouped change per statement (as 0021's). */
async function postgresTriggers(db: Kysely<any>) {
  await postgresFunctions(db);
  const trigger = (op: string, tables: string) =>
    sql
      .raw(
        `CREATE TRIGGER event_pages_${op} AFTER ${op.toUpperCase()} ON events REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION reelbase_event_pages_${op}()`,
      )
      .execute(db);
  await trigger('insert', 'NEW TABLE AS new_rows');
  await trigger('delete', 'OLD TABLE AS old_rows');
  await trigger('update', 'OLD TABLE AS old_rows NEW TABLE AS new_rows');
}

/**
 * The trigger functions of `postgresTriggers`. `shard`: the SQL of the shard a transaction adds to
 * (migration 0035), each change an upsert of that shard's row; without it, as this migration made them.
 */
export async function postgresFunctions(db: Kysely<any>, shard?: string) {
  const target = shard ? `${COLUMNS}, shard` : COLUMNS;
  const addAll = (rows: string, sign: '' | '-' = '') =>
    shard
      ? `INSERT INTO event_pages (${target}, n) SELECT o, s, k, b, ${shard}, ${sign}n FROM (${grouped(rows)}) g
      ON CONFLICT (${target}) DO UPDATE SET n = event_pages.n + EXCLUDED.n;`
      : `INSERT INTO event_pages (${COLUMNS}, n) ${grouped(rows)}
      ON CONFLICT (${COLUMNS}) DO UPDATE SET n = event_pages.n + EXCLUDED.n;`;
  const sameKey = 'c.organization_id = t.o AND c.scope = t.s AND c.scope_id = t.k AND c.bucket = t.b';
  const takeAll = (rows: string) =>
    shard
      ? `${addAll(rows, '-')}
      DELETE FROM event_pages c USING (${grouped(rows)}) t WHERE ${sameKey} AND c.shard = ${shard} AND c.n = 0;`
      : `UPDATE event_pages c SET n = c.n - t.n FROM (${grouped(rows)}) t WHERE ${sameKey};
      DELETE FROM event_pages c USING (${grouped(rows)}) t WHERE ${sameKey} AND c.n = 0;`;
  const changed = moved.replace(/OLD\./g, 'o.').replace(/NEW\./g, 'n.');
  const movedRows = (side: 'o' | 'n') => `(SELECT ${side}.* FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${changed})`;
  const fn = (name: string, body: string) =>
    sql.raw(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
  await fn('reelbase_event_pages_insert', addAll('new_rows'));
  await fn('reelbase_event_pages_delete', takeAll('old_rows'));
  await fn('reelbase_event_pages_update', `${takeAll(movedRows('o'))} ${addAll(movedRows('n'))}`);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const op of ['insert', 'delete', 'update']) {
    if (isPostgres(db)) {
      await sql.raw(`DROP TRIGGER event_pages_${op} ON events`).execute(db);
      await sql.raw(`DROP FUNCTION reelbase_event_pages_${op}()`).execute(db);
    } else await sql.raw(`DROP TRIGGER event_pages_${op}`).execute(db);
  }
  await db.schema.dropTable('event_pages').execute();
}
