import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/**
 * Locks of tus uploads shared by every API process (docs/uploads.md, "Several nodes"): one row per
 * upload being written, held by one request (`owner`) until `expires_at` (epoch ms, renewed while
 * held). A request that wants the upload sets `release_requested`, which the holder sees and answers
 * by ending its request.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('upload_locks')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('release_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('upload_locks').execute();
}
