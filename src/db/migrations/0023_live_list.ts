import { sql, type Kysely } from 'kysely';
import { createTextSearch, dropTextSearch, type SearchedTable } from '../text-search.ts';

/**
 * The live list at 100,000 broadcasts (docs/performance.md, "Lists at size"):
 * - `query` by a trigram index over `search_text` (the name and tags, lower case), as events';
 * - a state filter ordered by air date from one index: (organization, status, air date as answered, id),
 *   whose leading pair also counts a state from the index alone.
 */
const LIVE: SearchedTable = { table: 'live_stream_instances', fts: 'live_instances_search', columns: ['search_text'] };

export async function up(db: Kysely<any>): Promise<void> {
  await createTextSearch(db, LIVE);
  await sql`CREATE INDEX live_instances_org_status_air_idx ON live_stream_instances (organization_id, status, (COALESCE(air_date, 0)), id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('live_instances_org_status_air_idx').execute();
  await dropTextSearch(db, LIVE);
}
