import { sql, type Kysely } from 'kysely';
import { prefixIndexColumn } from '../dialect.ts';
import { countRowsOf, stopCountingRowsOf } from '../row-counts.ts';
import { createTextSearch, dropTextSearch, type SearchedTable } from '../text-search.ts';

/**
 * Users and tags at a million (docs/performance.md, "Lists at size"), as migration 0024 did for
 * players and videos:
 * - the unfiltered lists' exact count from `row_counts`, kept by triggers (src/db/row-counts.ts);
 * - lists in id order within the organization, any page: an index on (organization, id), and on
 *   (organization, role, id) for a role's users;
 * - users' `query` (a case-insensitive prefix of the first name, last name or address): an index on
 *   (organization, lower(column)) for each, whose ranges the OR of the three combines;
 * - tags' `query` (a case-insensitive substring of the name, the rule of src/db/text-search.ts): a
 *   trigram index; tag names by prefix (`/v1/tags/names`): an index on (organization, lower(name)).
 */
const TAGS: SearchedTable = { table: 'tags', fts: 'tags_search', columns: ['name'] };
const USER_COLUMNS = ['first_name', 'last_name', 'email'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('users_org_idx').on('users').columns(['organization_id', 'id']).execute();
  await db.schema.createIndex('users_org_role_idx').on('users').columns(['organization_id', 'role', 'id']).execute();
  for (const column of USER_COLUMNS) {
    await sql.raw(`CREATE INDEX users_org_${column}_prefix_idx ON users (organization_id, ${prefixIndexColumn(db, column)})`).execute(db);
  }
  await db.schema.createIndex('tags_org_idx').on('tags').columns(['organization_id', 'id']).execute();
  await sql.raw(`CREATE INDEX tags_org_name_prefix_idx ON tags (organization_id, ${prefixIndexColumn(db, 'name')})`).execute(db);
  await createTextSearch(db, TAGS);
  await countRowsOf(db, 'users');
  await countRowsOf(db, 'tags');
}

export async function down(db: Kysely<any>): Promise<void> {
  await stopCountingRowsOf(db, 'users');
  await stopCountingRowsOf(db, 'tags');
  await dropTextSearch(db, TAGS);
  for (const index of [
    'users_org_idx',
    'users_org_role_idx',
    'tags_org_idx',
    'tags_org_name_prefix_idx',
    ...USER_COLUMNS.map((c) => `users_org_${c}_prefix_idx`),
  ]) {
    await db.schema.dropIndex(index).execute();
  }
}
