import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB, ThumbnailsTable, VideoFilesTable, VideoFileSetsTable } from '../../db/schema.ts';
import type { VideoRow } from './videos.repository.ts';

export type VideoFileRow = Selectable<VideoFilesTable>;
export type ThumbnailRow = Selectable<ThumbnailsTable>;
export type VideoFileSetRow = Selectable<VideoFileSetsTable>;

/** Queries of the media pipeline: processing state, renditions, thumbnails, custom file sets. */
export class VideoMediaRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new VideoMediaRepository(db);
  }

  /** The video of any organization (jobs carry ids, not tokens). */
  findVideo(id: number): Promise<VideoRow | undefined> {
    return this.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Moves a video of this source version from null (queued) to processing; also answers a video
   * already processing (a retry). Ready or failed versions, other versions and deleted videos: undefined.
   */
  startProcessing(id: number, version: number, now: number): Promise<VideoRow | undefined> {
    return this.db
      .updateTable('videos')
      .set({ status: 'processing', error_message: null, updated_at: now })
      .where('id', '=', id)
      .where('media_version', '=', version)
      .where((eb) => eb.or([eb('status', 'is', null), eb('status', '=', 'processing')]))
      .returningAll()
      .executeTakeFirst();
  }

  /** Sets the outcome of processing this version; undefined when the version is no longer current. */
  finishProcessing(
    id: number,
    version: number,
    changes: { status: 'ready' | 'error'; error_message: string | null; seconds?: number; width?: number; height?: number },
    now: number,
  ): Promise<VideoRow | undefined> {
    return this.db
      .updateTable('videos')
      .set({ ...changes, updated_at: now })
      .where('id', '=', id)
      .where('media_version', '=', version)
      .where('status', '=', 'processing')
      .returningAll()
      .executeTakeFirst();
  }

  files(videoId: number, customIdentifier: string | null): Promise<VideoFileRow[]> {
    let q = this.db.selectFrom('video_files').selectAll().where('video_id', '=', videoId);
    q = customIdentifier === null ? q.where('custom_identifier', 'is', null) : q.where('custom_identifier', '=', customIdentifier);
    return q.orderBy('id').execute();
  }

  /** Replaces a video's file set (renditions without identifier, or one custom set); answers the old rows. */
  async replaceFiles(
    videoId: number,
    customIdentifier: string | null,
    rows: Array<Omit<Insertable<VideoFilesTable>, 'video_id' | 'custom_identifier'>>,
  ): Promise<VideoFileRow[]> {
    const old = await this.files(videoId, customIdentifier);
    if (old.length > 0)
      await this.db
        .deleteFrom('video_files')
        .where(
          'id',
          'in',
          old.map((r) => r.id),
        )
        .execute();
    if (rows.length > 0) {
      await this.db
        .insertInto('video_files')
        .values(rows.map((r) => ({ ...r, video_id: videoId, custom_identifier: customIdentifier })))
        .execute();
    }
    return old;
  }

  /** Ready videos (of one organization, or all) whose files have no HLS ladder yet. */
  withoutLadder(organizationId?: number): Promise<Array<{ id: number }>> {
    let q = this.db
      .selectFrom('videos')
      .select('videos.id')
      .where('videos.status', '=', 'ready')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('video_files')
              .select('video_files.id')
              .whereRef('video_files.video_id', '=', 'videos.id')
              .where('video_files.custom_identifier', 'is', null)
              .where('video_files.quality', '=', 'hls'),
          ),
        ),
      );
    if (organizationId !== undefined) q = q.where('videos.organization_id', '=', organizationId);
    return q.orderBy('videos.id').execute();
  }

  /** Adds a run's ladder row when the video's files are still that run's (its hd file is `hdKey`); false otherwise. */
  async addLadder(videoId: number, hdKey: string, row: Omit<Insertable<VideoFilesTable>, 'video_id' | 'custom_identifier'>): Promise<boolean> {
    const files = await this.files(videoId, null);
    if (!files.some((f) => f.quality === 'hd' && f.path === hdKey) || files.some((f) => f.quality === 'hls')) return false;
    await this.db
      .insertInto('video_files')
      .values({ ...row, video_id: videoId, custom_identifier: null })
      .execute();
    return true;
  }

  thumbnails(videoId: number): Promise<ThumbnailRow[]> {
    return this.db.selectFrom('thumbnails').selectAll().where('video_id', '=', videoId).orderBy('id').execute();
  }

  /**
   * Replaces the generated thumbnails; the first new one is selected unless a custom thumbnail is.
   * Answers the old generated rows.
   */
  async replaceGeneratedThumbnails(videoId: number, rows: Array<Insertable<ThumbnailsTable>>): Promise<ThumbnailRow[]> {
    const all = await this.thumbnails(videoId);
    const old = all.filter((t) => t.kind === 'generated');
    const customSelected = all.some((t) => t.kind === 'custom' && Boolean(t.selected));
    if (old.length > 0)
      await this.db
        .deleteFrom('thumbnails')
        .where(
          'id',
          'in',
          old.map((t) => t.id),
        )
        .execute();
    if (rows.length > 0) {
      await this.db
        .insertInto('thumbnails')
        .values(rows.map((r, i) => ({ ...r, selected: !customSelected && i === 0 })))
        .execute();
    }
    return old;
  }

  findSet(videoId: number, customIdentifier: string): Promise<VideoFileSetRow | undefined> {
    return this.db
      .selectFrom('video_file_sets')
      .selectAll()
      .where('video_id', '=', videoId)
      .where('custom_identifier', '=', customIdentifier)
      .executeTakeFirst();
  }

  sets(videoId: number): Promise<VideoFileSetRow[]> {
    return this.db.selectFrom('video_file_sets').selectAll().where('video_id', '=', videoId).orderBy('id').execute();
  }

  /** Creates the set, or restarts it with a new version (new URLs); answers the row. */
  async upsertSet(
    organizationId: number,
    videoId: number,
    customIdentifier: string,
    urls: { sd_url: string | null; hd_url: string | null },
    now: number,
  ): Promise<VideoFileSetRow> {
    const existing = await this.findSet(videoId, customIdentifier);
    if (existing) {
      return this.db
        .updateTable('video_file_sets')
        .set((eb) => ({ ...urls, status: 'processing', error_message: null, version: eb('version', '+', 1), updated_at: now }))
        .where('id', '=', existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    return this.db
      .insertInto('video_file_sets')
      .values({
        organization_id: organizationId,
        video_id: videoId,
        custom_identifier: customIdentifier,
        ...urls,
        status: 'processing',
        version: 0,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The outcome of fetching this set version; undefined when the set changed or is gone. */
  finishSet(
    id: number,
    version: number,
    changes: { status: 'ready' | 'error'; error_message: string | null },
    now: number,
  ): Promise<VideoFileSetRow | undefined> {
    return this.db
      .updateTable('video_file_sets')
      .set({ ...changes, updated_at: now })
      .where('id', '=', id)
      .where('version', '=', version)
      .where('status', '=', 'processing')
      .returningAll()
      .executeTakeFirst();
  }

  findSetById(id: number): Promise<VideoFileSetRow | undefined> {
    return this.db.selectFrom('video_file_sets').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async deleteSet(id: number): Promise<void> {
    await this.db.deleteFrom('video_file_sets').where('id', '=', id).execute();
  }
}
