import type { Kysely } from 'kysely';
import { createRowPages, dropRowPages, pageRowsOf, type PagedTable } from '../row-pages.ts';

/**
 * `row_pages` (src/db/row-pages.ts): the rows of players, videos, users and tags per organization and
 * run of 4,096 ids, so that a deep page of their unfiltered lists starts at its run (as migration
 * 0033 does for the event lists). The run's size is `PAGE_RUN_BITS` (src/db/paging.ts).
 */
const TABLES: readonly PagedTable[] = ['players', 'videos', 'users', 'tags'];

export async function up(db: Kysely<any>): Promise<void> {
  await createRowPages(db);
  for (const table of TABLES) await pageRowsOf(db, table);
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropRowPages(db, TABLES);
}
