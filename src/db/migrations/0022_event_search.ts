import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.ts';

/**
 * Text search over events by trigram indexes (docs/performance.md, "Search"; the matching rule is in
 * src/db/text-search.ts): a case-insensitive substring of the name, the description or the html.
 *
 * - SQLite: an FTS5 table with the trigram tokenizer over those three columns, its content read from
 *   `events` (external content, so the text is not stored twice) and kept by triggers.
 * - PostgreSQL: pg_trgm GIN indexes on `lower(column)`, which serve `lower(column) LIKE '%…%'`
 *   directly. pg_trgm ships with PostgreSQL (contrib); the extension is created where it is missing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    const ops = await trigramOps(db);
    for (const column of COLUMNS) {
      await sql.raw(`CREATE INDEX events_${column}_trgm_idx ON events USING gin (lower(${column}) ${ops})`).execute(db);
    }
    return;
  }
  await sql`CREATE VIRTUAL TABLE events_search USING fts5(name, description, html, content='events', content_rowid='id', tokenize='trigram')`.execute(db);
  await sql`INSERT INTO events_search(events_search) VALUES ('rebuild')`.execute(db);
  const old = `INSERT INTO events_search(events_search, rowid, name, description, html) VALUES ('delete', OLD.id, OLD.name, OLD.description, OLD.html);`;
  const fresh = `INSERT INTO events_search(rowid, name, description, html) VALUES (NEW.id, NEW.name, NEW.description, NEW.html);`;
  await sql.raw(`CREATE TRIGGER events_search_insert AFTER INSERT ON events BEGIN ${fresh} END`).execute(db);
  await sql.raw(`CREATE TRIGGER events_search_delete AFTER DELETE ON events BEGIN ${old} END`).execute(db);
  await sql.raw(`CREATE TRIGGER events_search_update AFTER UPDATE OF name, description, html ON events BEGIN ${old} ${fresh} END`).execute(db);
}

const COLUMNS = ['name', 'description', 'html'] as const;

/**
 * pg_trgm's GIN operator class, qualified by the schema the extension lives in: it is created in
 * `public` when missing, so that databases whose schemas come and go (one per test run) share it.
 */
async function trigramOps(db: Kysely<any>): Promise<string> {
  const find = () => sql<{ schema: string }>`SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
  let found = (await find()).rows[0];
  if (!found) {
    // Two processes migrating at once: the second waits for the first's extension.
    await sql`SELECT pg_advisory_xact_lock(hashtext('reelbase pg_trgm'))`.execute(db);
    found = (await find()).rows[0];
    if (!found) {
      await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db);
      found = { schema: 'public' };
    }
  }
  return `${found.schema}.gin_trgm_ops`;
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    for (const column of COLUMNS) await sql.raw(`DROP INDEX events_${column}_trgm_idx`).execute(db);
    return;
  }
  for (const t of ['events_search_insert', 'events_search_delete', 'events_search_update']) await sql.raw(`DROP TRIGGER ${t}`).execute(db);
  await sql`DROP TABLE events_search`.execute(db);
}
