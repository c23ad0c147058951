import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { CaptionsTable, DB } from '../../db/schema.ts';

export type CaptionRow = Selectable<CaptionsTable>;

export interface CaptionFilter {
  languages?: string[];
  statuses?: string[];
}

export class CaptionsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new CaptionsRepository(db);
  }

  insert(row: Insertable<CaptionsTable>): Promise<CaptionRow> {
    return this.db.insertInto('captions').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<CaptionRow | undefined> {
    return this.db.selectFrom('captions').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** Unscoped: for jobs and for signed URLs, whose signature already proves the right to read. */
  findById(id: number): Promise<CaptionRow | undefined> {
    return this.db.selectFrom('captions').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * The video's captions matching the filter, in id order. A language filter matches the tag itself
   * and its more specific tags (`en` matches `en-US`); tags are canonical ASCII, so `like` is exact.
   */
  forVideo(organizationId: number, videoId: number, filter: CaptionFilter, limit: number): Promise<CaptionRow[]> {
    let q = this.db.selectFrom('captions').selectAll().where('organization_id', '=', organizationId).where('video_id', '=', videoId);
    const languages = filter.languages;
    if (languages && languages.length > 0) {
      q = q.where((eb) => eb.or(languages.flatMap((l) => [eb('language', '=', l), eb('language', 'like', `${l}-%`)])));
    }
    if (filter.statuses && filter.statuses.length > 0) q = q.where('status', 'in', filter.statuses);
    return q.orderBy('id').limit(limit).execute();
  }

  update(organizationId: number, id: number, changes: Updateable<CaptionsTable>): Promise<CaptionRow | undefined> {
    return this.db.updateTable('captions').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Applies a job's result only if the caption still waits for that revision of its source. */
  updateIfRevision(id: number, revision: number, changes: Updateable<CaptionsTable>): Promise<CaptionRow | undefined> {
    return this.db
      .updateTable('captions')
      .set(changes)
      .where('id', '=', id)
      .where('revision', '=', revision)
      .where('status', '=', 'in_progress')
      .returningAll()
      .executeTakeFirst();
  }

  /** Updates only if status and revision are still those read (compare-and-set). */
  updateIfState(organizationId: number, id: number, status: string, revision: number, changes: Updateable<CaptionsTable>): Promise<CaptionRow | undefined> {
    return this.db
      .updateTable('captions')
      .set(changes)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .where('status', '=', status)
      .where('revision', '=', revision)
      .returningAll()
      .executeTakeFirst();
  }

  /** Captions whose WebVTT is still a column (written before caption files moved to the media store). */
  withLegacyContent(limit: number): Promise<CaptionRow[]> {
    return this.db.selectFrom('captions').selectAll().where('content', 'is not', null).where('file_key', 'is', null).orderBy('id').limit(limit).execute();
  }

  /** Points a legacy caption at its file in the store, unless it changed since it was read. */
  async moveContent(id: number, revision: number, fileKey: string): Promise<boolean> {
    const moved = await this.db
      .updateTable('captions')
      .set({ file_key: fileKey, content: null })
      .where('id', '=', id)
      .where('revision', '=', revision)
      .where('content', 'is not', null)
      .where('file_key', 'is', null)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) > 0;
  }

  /** Clears the default flag of the video's other captions. */
  async clearDefault(videoId: number, exceptId: number | null, now: number): Promise<void> {
    let q = this.db.updateTable('captions').set({ is_default: false, updated_at: now }).where('video_id', '=', videoId).where('is_default', '=', true);
    if (exceptId !== null) q = q.where('id', '!=', exceptId);
    await q.execute();
  }

  delete(organizationId: number, id: number): Promise<CaptionRow | undefined> {
    return this.db.deleteFrom('captions').where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }
}
