import { sql, type Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/**
 * A running Idempotency-Key is held only until `locked_until` (Unix seconds): a key whose first
 * request died between claiming it and storing the answer can be claimed again once that passes,
 * instead of answering 409 for the whole 24 h window. Keys running when this is applied get a lease of
 * a minute from their creation.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('locked_until', bigint).execute();
  await db
    .updateTable('idempotency_keys')
    .set({ locked_until: sql`created_at + 60` })
    .where('state', '=', 'running')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('locked_until').execute();
}
