import type { Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

/** The durable job queue: transcodes, webhook deliveries, GDPR requests, recordings. */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('jobs'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', notNullDefault('{}'))
    .addColumn('status', 'text', notNullDefault('queued'))
    .addColumn('attempts', 'integer', notNullDefault(0))
    .addColumn('max_attempts', 'integer', notNullDefault(10))
    // Milliseconds: backoff starts well under a second.
    .addColumn('run_at', bigint, (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', bigint)
    .addColumn('last_error', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_due_idx').on('jobs').columns(['status', 'run_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('jobs').execute();
}
