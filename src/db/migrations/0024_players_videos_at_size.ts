import { sql, type Kysely } from 'kysely';
import { prefixIndexColumn } from '../dialect.ts';
import { countRowsOf, createRowCounts, dropRowCounts } from '../row-counts.ts';

/**
 * Players and videos at a million (docs/performance.md, "Lists at size"):
 * - `query` (a case-insensitive prefix of the name): an index on (organization, lower(name)) serves
 *   the prefix as a range (`startsWithCi`, src/db/dialect.ts);
 * - the unfiltered lists' exact count: `row_counts`, kept by triggers (src/db/row-counts.ts).
 */
const TABLES = ['players', 'videos'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await createRowCounts(db);
  for (const table of TABLES) {
    await sql.raw(`CREATE INDEX ${table}_org_name_prefix_idx ON ${table} (organization_id, ${prefixIndexColumn(db, 'name')})`).execute(db);
    await countRowsOf(db, table);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropRowCounts(db, TABLES);
  for (const table of TABLES) await db.schema.dropIndex(`${table}_org_name_prefix_idx`).execute();
}
