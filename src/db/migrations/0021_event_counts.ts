import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.ts';

/**
 * Lists at a million rows (docs/performance.md, "Lists at size"):
 *
 * - `event_counts`: the number of events per organization, chapter (0 for the organization's
 *   defaults), type and state, kept by triggers in the writing transaction, so that every write path
 *   (the API, a chapter's or player's cascade, an organization's removal) keeps it exact. An exact
 *   `summary.count` or `cta_meta` then sums a handful of rows instead of counting up to a million
 *   index entries (about 30 ms on SQLite at 800,000).
 * - `events.player_id`: the player of the event's chapter (a chapter never changes player), so that
 *   a player's list is one index range in id order instead of a sort of all its chapters' events.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('player_id', 'integer').execute();
  await sql`UPDATE events SET player_id = (SELECT chapters.player_id FROM chapters WHERE chapters.id = events.chapter_id) WHERE chapter_id IS NOT NULL`.execute(
    db,
  );
  await db.schema.createIndex('events_org_player_idx').on('events').columns(['organization_id', 'player_id', 'id']).execute();
  // The defaults in id order: PostgreSQL does not take `chapter_id IS NULL` as fixing the leading
  // column of (organization, chapter, id), so a partial index is what lets it merge them into a player's.
  await db.schema.createIndex('events_org_defaults_idx').on('events').columns(['organization_id', 'id']).where(sql.ref('chapter_id'), 'is', null).execute();

  await db.schema
    .createTable('event_counts')
    .addColumn('organization_id', 'integer', (c) => c.notNull())
    .addColumn('chapter_id', 'integer', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_counts_pk', ['organization_id', 'chapter_id', 'event_type', 'state'])
    .execute();
  await sql`INSERT INTO event_counts (organization_id, chapter_id, event_type, state, n)
    SELECT organization_id, COALESCE(chapter_id, 0), event_type, state, COUNT(*) FROM events
    GROUP BY organization_id, COALESCE(chapter_id, 0), event_type, state`.execute(db);
  if (isPostgres(db)) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

const KEY = ['organization_id', 'chapter_id', 'event_type', 'state'] as const;

/** `event_counts`' key of a row of events (`NEW` or `OLD`), as SQL. */
const keyOf = (row: 'NEW' | 'OLD') => `${row}.organization_id, COALESCE(${row}.chapter_id, 0), ${row}.event_type, ${row}.state`;
const matches = (row: 'NEW' | 'OLD') =>
  `organization_id = ${row}.organization_id AND chapter_id = COALESCE(${row}.chapter_id, 0) AND event_type = ${row}.event_type AND state = ${row}.state`;
const add = (row: 'NEW') =>
  `INSERT INTO event_counts (${KEY.join(', ')}, n) VALUES (${keyOf(row)}, 1) ON CONFLICT (${KEY.join(', ')}) DO UPDATE SET n = event_counts.n + 1;`;
const take = (row: 'OLD') => `UPDATE event_counts SET n = n - 1 WHERE ${matches(row)}; DELETE FROM event_counts WHERE ${matches(row)} AND n = 0;`;
const moved = `OLD.organization_id <> NEW.organization_id OR COALESCE(OLD.chapter_id, 0) <> COALESCE(NEW.chapter_id, 0)
  OR OLD.event_type <> NEW.event_type OR OLD.state <> NEW.state`;

async function sqliteTriggers(db: Kysely<any>) {
  // SQLite runs a foreign key's cascade through these triggers too.
  await sql.raw(`CREATE TRIGGER event_counts_insert AFTER INSERT ON events BEGIN ${add('NEW')} END`).execute(db);
  await sql.raw(`CREATE TRIGGER event_counts_delete AFTER DELETE ON events BEGIN ${take('OLD')} END`).execute(db);
  await sql
    .raw(`CREATE TRIGGER event_counts_update AFTER UPDATE OF ${KEY.join(', ')} ON events WHEN ${moved} BEGIN ${take('OLD')} ${add('NEW')} END`)
    .execute(db);
}

/**
 * PostgreSQL: statement-level triggers over transition tables, one grouped change per statement.
 * Row-level ones would update the same counter row once per event, and PostgreSQL keeps every
 * version of a row a transaction wrote: a statement writing a million events (a bulk insert, a
 * player's cascade) would walk ever longer chains, quadratic in the rows.
 */
async function postgresTriggers(db: Kysely<any>) {
  await postgresFunctions(db);
  await sql
    .raw(
      `CREATE TRIGGER event_counts_insert AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reelbase_event_counts_insert()`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER event_counts_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reelbase_event_counts_delete()`,
    )
    .execute(db);
  await sql
    .raw(
      `CREATE TRIGGER event_counts_update AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reelbase_event_counts_update()`,
    )
    .execute(db);
}

/**
 * The trigger functions of `postgresTriggers`. `shard`: the SQL of the shard a transaction adds to
 * (migration 0035): each change is then an upsert of that shard's row, a decrement too, since the
 * shard may not have the row yet. Without it, the functions as this migration made them.
 */
export async function postgresFunctions(db: Kysely<any>, shard?: string) {
  const key = KEY.map((k) => (k === 'chapter_id' ? 'COALESCE(chapter_id, 0)' : k)).join(', ');
  const target = shard ? `${KEY.join(', ')}, shard` : KEY.join(', ');
  const addAll = (rows: string, sign: '' | '-' = '') => `INSERT INTO event_counts (${target}, n)
      SELECT ${key}, ${shard ? `${shard}, ` : ''}${sign}COUNT(*) FROM ${rows} GROUP BY ${key}
      ON CONFLICT (${target}) DO UPDATE SET n = event_counts.n + EXCLUDED.n;`;
  const grouped = (rows: string) =>
    `(SELECT organization_id AS o, COALESCE(chapter_id, 0) AS ch, event_type AS et, state AS st, COUNT(*) AS n FROM ${rows} GROUP BY 1, 2, 3, 4) t`;
  const sameKey = 'c.organization_id = t.o AND c.chapter_id = t.ch AND c.event_type = t.et AND c.state = t.st';
  const takeAll = (rows: string) =>
    shard
      ? `${addAll(rows, '-')}
      DELETE FROM event_counts c USING ${grouped(rows)} WHERE ${sameKey} AND c.shard = ${shard} AND c.n = 0;`
      : `UPDATE event_counts c SET n = c.n - t.n FROM ${grouped(rows)} WHERE ${sameKey};
      DELETE FROM event_counts c USING ${grouped(rows)} WHERE ${sameKey} AND c.n = 0;`;
  // An update counts only the events whose key changed (most updates change none).
  const changed = moved.replace(/OLD\./g, 'o.').replace(/NEW\./g, 'n.');
  const movedRows = (side: 'o' | 'n') => `(SELECT ${side}.* FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${changed})`;
  const fn = (name: string, body: string) =>
    sql.raw(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`).execute(db);
  await fn('reelbase_event_counts_insert', addAll('new_rows'));
  await fn('reelbase_event_counts_delete', takeAll('old_rows'));
  await fn('reelbase_event_counts_update', `${takeAll(`${movedRows('o')} AS moved_old`)} ${addAll(`${movedRows('n')} AS moved_new`)}`);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const op of ['insert', 'delete', 'update']) {
      await sql.raw(`DROP TRIGGER event_counts_${op} ON events`).execute(db);
      await sql.raw(`DROP FUNCTION reelbase_event_counts_${op}()`).execute(db);
    }
  } else {
    for (const t of ['event_counts_insert', 'event_counts_delete', 'event_counts_update']) await sql.raw(`DROP TRIGGER ${t}`).execute(db);
  }
  await db.schema.dropTable('event_counts').execute();
  await db.schema.dropIndex('events_org_defaults_idx').execute();
  await db.schema.dropIndex('events_org_player_idx').execute();
  await db.schema.alterTable('events').dropColumn('player_id').execute();
}
