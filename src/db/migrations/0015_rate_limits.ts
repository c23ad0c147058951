import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/**
 * Counters of the public limits (viewers' reports, access-code attempts), shared by every process of
 * a deployment: one row per key and window (`reset_at` in epoch milliseconds). Rows whose window has
 * passed are swept by housekeeping.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.primaryKey().notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('reset_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_limits_reset_idx').on('rate_limits').column('reset_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limits').execute();
}
