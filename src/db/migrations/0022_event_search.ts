import type { Kysely } from 'kysely';
import { createTextSearch, dropTextSearch, type SearchedTable } from '../text-search.ts';

/**
 * Text search over events by trigram indexes (docs/performance.md, "Search"; the matching rule is in
 * src/db/text-search.ts): a case-insensitive substring of the name, the description or the html.
 * SQLite: an FTS5 trigram table over those columns kept by triggers; PostgreSQL: pg_trgm GIN indexes
 * on `lower(column)`, which serve `lower(column) LIKE '%…%'` as it is.
 */
const EVENTS: SearchedTable = { table: 'events', fts: 'events_search', columns: ['name', 'description', 'html'] };

export async function up(db: Kysely<any>): Promise<void> {
  await createTextSearch(db, EVENTS);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTextSearch(db, EVENTS);
}
