import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/**
 * Which job delivers which webhook's message (docs/webhooks.md, "Deliveries"), so that a webhook's
 * recent deliveries, with their status and attempts, are one index range joined with the jobs. A row
 * goes with its job (the housekeeping sweep deletes finished jobs) and with its webhook.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('job_id', 'integer', (c) => c.notNull().primaryKey().references('jobs.id').onDelete('cascade'))
    .addColumn('webhook_id', 'integer', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'job_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
}
