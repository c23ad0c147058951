import type { Kysely } from 'kysely';
import { notNullDefault } from '../dialect.ts';

/** How often a player's access code has opened its watch page (docs/watch.md: `max_access_code_uses`). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('access_managers').addColumn('access_code_uses', 'integer', notNullDefault(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('access_managers').dropColumn('access_code_uses').execute();
}
