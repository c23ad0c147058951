import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, ThumbnailsTable } from '../../db/schema.ts';

export type ThumbnailRow = Selectable<ThumbnailsTable>;

/** Queries of the thumbnail operations over the media pipeline's `thumbnails` table. */
export class ThumbnailsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new ThumbnailsRepository(db);
  }

  find(organizationId: number, id: number): Promise<ThumbnailRow | undefined> {
    return this.db.selectFrom('thumbnails').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** Unscoped, for jobs (which carry ids, not tokens). */
  findById(id: number): Promise<ThumbnailRow | undefined> {
    return this.db.selectFrom('thumbnails').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findMany(organizationId: number, ids: number[]): Promise<ThumbnailRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('thumbnails').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  forVideo(organizationId: number, videoId: number, limit: number, offset: number): Promise<ThumbnailRow[]> {
    return this.db
      .selectFrom('thumbnails')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('video_id', '=', videoId)
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute();
  }

  async countForVideo(organizationId: number, videoId: number): Promise<number> {
    const row = await this.db
      .selectFrom('thumbnails')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('video_id', '=', videoId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The selected thumbnail of each of the videos (at most one per video). */
  selectedFor(organizationId: number, videoIds: number[]): Promise<ThumbnailRow[]> {
    if (videoIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('thumbnails')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('video_id', 'in', videoIds)
      .where('selected', '=', true)
      .execute();
  }

  /** The video's custom thumbnail set from `url`, if any. */
  findCustomByUrl(organizationId: number, videoId: number, url: string): Promise<ThumbnailRow | undefined> {
    return this.db
      .selectFrom('thumbnails')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('video_id', '=', videoId)
      .where('kind', '=', 'custom')
      .where('url', '=', url)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
  }

  insert(row: Insertable<ThumbnailsTable>): Promise<ThumbnailRow> {
    return this.db.insertInto('thumbnails').values(row).returningAll().executeTakeFirstOrThrow();
  }

  /** Makes `id` the video's one selected thumbnail (the others are cleared first: one selected per video). */
  async select(videoId: number, id: number, now: number): Promise<ThumbnailRow> {
    await this.db
      .updateTable('thumbnails')
      .set({ selected: false })
      .where('video_id', '=', videoId)
      .where('selected', '=', true)
      .where('id', '!=', id)
      .execute();
    return this.db.updateTable('thumbnails').set({ selected: true, updated_at: now }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  /**
   * A custom thumbnail whose image cannot be had (refused address, not found, not an image): no longer
   * selected, if it still waits for that URL's copy; the video's latest stored thumbnail is selected
   * instead. Answers whether it was refused.
   */
  async refuseCustom(id: number, url: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('thumbnails')
        .set({ selected: false, updated_at: now })
        .where('id', '=', id)
        .where('kind', '=', 'custom')
        .where('url', '=', url)
        .where('path', 'is', null)
        .where('selected', '=', true)
        .returning(['video_id'])
        .executeTakeFirst();
      if (!row) return false;
      const fallback = await trx
        .selectFrom('thumbnails')
        .select('id')
        .where('video_id', '=', row.video_id)
        .where('path', 'is not', null)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (fallback) await trx.updateTable('thumbnails').set({ selected: true, updated_at: now }).where('id', '=', fallback.id).execute();
      return true;
    });
  }

  /** Records where a custom thumbnail's image was stored, if it still waits for that URL's copy. */
  async setStored(id: number, url: string, key: string, size: { width: number | null; height: number | null }, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('thumbnails')
      .set({ path: key, width: size.width, height: size.height, updated_at: now })
      .where('id', '=', id)
      .where('kind', '=', 'custom')
      .where('url', '=', url)
      .where('path', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
