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
  /** The table and the primary key its FTS5 table's rowid is. */
  table: string;
  /** The FTS5 table (SQLite) over `columns`, trigram tokenizer. */
  fts: string;
  columns: readonly string[];
}

export const TRIGRAM_MIN = 3;

export function matchesText(db: Kysely<any>, eb: ExpressionBuilder<any, any>, search: SearchedTable, text: string): Expression<SqlBool> {
  if (isPostgres(db) || [...text].length < TRIGRAM_MIN) {
    return eb.or(search.columns.map((c) => containsCi(eb.ref(`${search.table}.${c}`), text)));
  }
  // An FTS5 phrase: the text as one string of characters, `"` doubled; the trigram tokenizer folds case.
  const phrase = `"${text.replace(/"/g, '""')}"`;
  return sql<SqlBool>`${sql.ref(`${search.table}.id`)} IN (SELECT rowid FROM ${sql.table(search.fts)} WHERE ${sql.table(search.fts)} MATCH ${phrase})`;
}
