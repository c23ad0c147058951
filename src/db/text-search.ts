import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { containsCi, isPostgres } from './dialect.ts';

/**
 * The one matching rule of text search, on both dialects: a row matches when one of the columns
 * contains the text as a substring, compared case-insensitively (`lower`, `%` and `_` literal).
 * What serves it is a trigram index: SQLite's FTS5 trigram tokenizer (an FTS5 table of the columns,
 * kept by triggers), PostgreSQL's pg_trgm GIN index on each `lower(column)`. A trigram index needs
 * three characters, so shorter text is matched by reading the rows, by the same rule.
 */
export interface SearchedTable {
  /** The table (or its alias in the query), whose `id` its FTS5 table's rowid is. */
  table: string;
  /** The FTS5 table (SQLite) over `columns`, trigram tokenizer. */
  fts: string;
  columns: readonly string[];
}

export const TRIGRAM_MIN = 3;

/**
 * Creates what serves `matchesText` over `search` (in a migration): on SQLite the FTS5 trigram table
 * with `table` as its external content (the text is not stored twice) and the triggers that keep it;
 * on PostgreSQL a pg_trgm GIN index on each `lower(column)`. `search.table` is the table's own name here.
 */
export async function createTextSearch(db: Kysely<any>, search: SearchedTable): Promise<void> {
  const { table, fts, columns } = search;
  if (isPostgres(db)) {
    const ops = await trigramOps(db);
    for (const column of columns) await sql.raw(`CREATE INDEX ${table}_${column}_trgm_idx ON ${table} USING gin (lower(${column}) ${ops})`).execute(db);
    return;
  }
  const list = columns.join(', ');
  await sql.raw(`CREATE VIRTUAL TABLE ${fts} USING fts5(${list}, content='${table}', content_rowid='id', tokenize='trigram')`).execute(db);
  await sql.raw(`INSERT INTO ${fts}(${fts}) VALUES ('rebuild')`).execute(db);
  const values = (row: 'OLD' | 'NEW') => columns.map((c) => `${row}.${c}`).join(', ');
  const old = `INSERT INTO ${fts}(${fts}, rowid, ${list}) VALUES ('delete', OLD.id, ${values('OLD')});`;
  const fresh = `INSERT INTO ${fts}(rowid, ${list}) VALUES (NEW.id, ${values('NEW')});`;
  await sql.raw(`CREATE TRIGGER ${fts}_insert AFTER INSERT ON ${table} BEGIN ${fresh} END`).execute(db);
  await sql.raw(`CREATE TRIGGER ${fts}_delete AFTER DELETE ON ${table} BEGIN ${old} END`).execute(db);
  await sql.raw(`CREATE TRIGGER ${fts}_update AFTER UPDATE OF ${list} ON ${table} BEGIN ${old} ${fresh} END`).execute(db);
}

export async function dropTextSearch(db: Kysely<any>, search: SearchedTable): Promise<void> {
  const { table, fts, columns } = search;
  if (isPostgres(db)) {
    for (const column of columns) await sql.raw(`DROP INDEX ${table}_${column}_trgm_idx`).execute(db);
    return;
  }
  for (const t of ['insert', 'delete', 'update']) await sql.raw(`DROP TRIGGER ${fts}_${t}`).execute(db);
  await sql.raw(`DROP TABLE ${fts}`).execute(db);
}

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

export function matchesText(db: Kysely<any>, eb: ExpressionBuilder<any, any>, search: SearchedTable, text: string): Expression<SqlBool> {
  if (isPostgres(db) || [...text].length < TRIGRAM_MIN) {
    return eb.or(search.columns.map((c) => containsCi(eb.ref(`${search.table}.${c}`), text)));
  }
  // An FTS5 phrase: the text as one string of characters, `"` doubled; the trigram tokenizer folds case.
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return sql<SqlBool>`${sql.ref(`${search.table}.id`)} IN (SELECT rowid FROM ${sql.table(search.fts)} WHERE ${sql.table(search.fts)} MATCH ${phrase})`;
}
