import type { Kysely } from 'kysely';

/**
 * Caption files live in the media store like every other piece of media (docs/media.md, "Captions"):
 * `file_key` names the WebVTT object. `content` is kept only for captions written before, read as a
 * fallback until a worker moves them to the store (CaptionsService.storeLegacyFiles).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('captions').addColumn('file_key', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('captions').dropColumn('file_key').execute();
}
