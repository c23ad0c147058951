import type { Insertable, Kysely, Selectable } from 'kysely';
import type { ChaptersTable, DB } from '../../db/schema.ts';

export type ChapterRow = Selectable<ChaptersTable>;

export class ChaptersRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new ChaptersRepository(db);
  }

  insert(row: Insertable<ChaptersTable>): Promise<ChapterRow> {
    return this.db.insertInto('chapters').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<ChapterRow | undefined> {
    return this.db.selectFrom('chapters').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** The chapters of the organization's players among `playerIds`, in play order by player. */
  forPlayers(organizationId: number, playerIds: number[]): Promise<ChapterRow[]> {
    if (playerIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('chapters')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('player_id', 'in', playerIds)
      .orderBy('player_id')
      .orderBy('position')
      .orderBy('id')
      .execute();
  }

  playerIdsOfVideo(videoId: number): Promise<number[]> {
    return this.db
      .selectFrom('chapters')
      .select('player_id')
      .distinct()
      .where('video_id', '=', videoId)
      .execute()
      .then((rows) => rows.map((r) => r.player_id));
  }

  // Writes name the organization, so that other organizations' cached reads of chapters stand (src/db/write-scope.ts).
  async update(organizationId: number, id: number, changes: { position?: number; video_id?: number; updated_at: number }): Promise<void> {
    await this.db.updateTable('chapters').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  async delete(organizationId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('chapters').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  /** Rewrites positions 0..n-1 in the given order (only rows whose position changes are touched). */
  async renumber(ordered: ChapterRow[], now: number): Promise<void> {
    for (const [index, chapter] of ordered.entries()) {
      if (chapter.position !== index) await this.update(chapter.organization_id, chapter.id, { position: index, updated_at: now });
    }
  }
}
