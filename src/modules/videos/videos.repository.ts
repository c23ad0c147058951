import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, VideosTable } from '../../db/schema.ts';
import { startsWithCi } from '../../db/dialect.ts';
import { pageIdsOf } from '../../db/paging.ts';
import { countedRows } from '../../db/row-counts.ts';
import { runsOf } from '../../db/row-pages.ts';

export type VideoRow = Selectable<VideosTable>;
/** What a list of videos may be narrowed to: a name prefix, a status. */
export interface VideoFilter {
  query?: string;
  status?: string;
}

export class VideosRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new VideosRepository(db);
  }
  /** The organization a video's files belong to, by the video's uuid (whatever the organization). */
  async organizationOfUuid(uuid: string): Promise<number | undefined> {
    return (await this.db.selectFrom('videos').select('organization_id').where('uuid', '=', uuid).executeTakeFirst())?.organization_id;
  }

  findByUuid(uuid: string): Promise<VideoRow | undefined> {
    return this.db.selectFrom('videos').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  }

  insert(row: Insertable<VideosTable>): Promise<VideoRow> {
    return this.db.insertInto('videos').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<VideoRow | undefined> {
    return this.db.selectFrom('videos').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** The organization's videos among `ids` (any order; other organizations' ids are left out). */
  findMany(organizationId: number, ids: number[]): Promise<VideoRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('videos').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  private filtered(organizationId: number, filter: VideoFilter) {
    let q = this.db.selectFrom('videos').where('organization_id', '=', organizationId);
    // `processing` also names the videos queued for it (status null), as the dashboard shows them.
    if (filter.status === 'processing') q = q.where((eb) => eb.or([eb('status', '=', 'processing'), eb('status', 'is', null)]));
    else if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.query) q = q.where((eb) => startsWithCi(this.db, eb.ref('name'), filter.query!));
    return q;
  }

  /**
   * One page in id order, as a deferred join (the page's ids from an index alone, then those rows);
   * with `total` known, a page in the later half is walked to from the end, and an unfiltered deep
   * page from its run of ids in `row_pages` (src/db/paging.ts).
   */
  async list(organizationId: number, opts: { limit: number; offset: number } & VideoFilter, total?: number): Promise<VideoRow[]> {
    const ids = await pageIdsOf(
      this.filtered(organizationId, opts),
      opts,
      total,
      !opts.query && !opts.status ? () => runsOf(this.db, 'videos', organizationId) : undefined,
    );
    return ids ? this.db.selectFrom('videos').selectAll().where('id', 'in', ids).orderBy('id').execute() : [];
  }

  /** Unfiltered, from the maintained `row_counts` (migration 0024). */
  async count(organizationId: number, filter: VideoFilter = {}): Promise<number> {
    if (!filter.query && !filter.status) return countedRows(this.db, 'videos', organizationId);
    const row = await this.filtered(organizationId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  update(organizationId: number, id: number, changes: Updateable<VideosTable>): Promise<VideoRow | undefined> {
    return this.db.updateTable('videos').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Changes a video that is in status `from` (any organization: called by jobs); undefined when it is not. */
  moveStatus(id: number, from: string, changes: Updateable<VideosTable>): Promise<VideoRow | undefined> {
    return this.db.updateTable('videos').set(changes).where('id', '=', id).where('status', '=', from).returningAll().executeTakeFirst();
  }

  delete(organizationId: number, id: number): Promise<VideoRow | undefined> {
    return this.db.deleteFrom('videos').where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }
}
