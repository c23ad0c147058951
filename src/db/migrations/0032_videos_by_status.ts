import type { Kysely } from 'kysely';

/** The organization's videos by status (`GET /v1/videos?status=`), in id order: one index range per page. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('videos_org_status_idx').on('videos').columns(['organization_id', 'status', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('videos_org_status_idx').execute();
}
