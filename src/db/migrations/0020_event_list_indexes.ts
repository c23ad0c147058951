import type { Kysely } from 'kysely';

/**
 * Lists and counts of CTAs by chapter or player at size (docs/performance.md, "Lists at size"):
 * every such query is scoped by organization and chapter, and the index it had
 * (`chapter_id, id`) made it read each row to check the organization. Leading with both, these are
 * covering: a count or a deep page's offset walks the index alone (a 200,000-row count 24 → 5 ms,
 * its last page 25 → 8 ms on SQLite). `events_chapter_idx` stays for the chapters' cascades.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_org_chapter_idx').on('events').columns(['organization_id', 'chapter_id', 'id']).execute();
  await db.schema.createIndex('events_org_chapter_state_idx').on('events').columns(['organization_id', 'chapter_id', 'state']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_org_chapter_state_idx').execute();
  await db.schema.dropIndex('events_org_chapter_idx').execute();
}
