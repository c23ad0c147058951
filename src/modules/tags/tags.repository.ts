import type { Kysely, Selectable } from 'kysely';
import type { DB, TagsTable } from '../../db/schema.ts';
import { startsWithCi } from '../../db/dialect.ts';
import { pageIdsOf } from '../../db/paging.ts';
import { countedRows } from '../../db/row-counts.ts';
import { runsOf } from '../../db/row-pages.ts';
import { matchesText, type SearchedTable } from '../../db/text-search.ts';

export type TagRow = Selectable<TagsTable>;

/** A tag matches `query` when its name contains it, case-insensitively (src/db/text-search.ts; migration 0028). */
const TAG_SEARCH: SearchedTable = { table: 'tags', fts: 'tags_search', columns: ['name'] };
export type Owner = 'player' | 'video';

/** Only queries. Every read and write is scoped by organization. */
export class TagsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new TagsRepository(db);
  }

  /** Inserts a tag unless the organization has one of that name; undefined when it had. */
  insertIfAbsent(row: { organization_id: number; name: string; created_at: number; updated_at: number }) {
    return this.db
      .insertInto('tags')
      .values(row)
      .onConflict((oc) => oc.columns(['organization_id', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  find(organizationId: number, id: number): Promise<TagRow | undefined> {
    return this.db.selectFrom('tags').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  findByIds(organizationId: number, ids: number[]): Promise<TagRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('tags').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).orderBy('id').execute();
  }

  findByNames(organizationId: number, names: string[]): Promise<TagRow[]> {
    if (names.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('tags').selectAll().where('organization_id', '=', organizationId).where('name', 'in', names).orderBy('id').execute();
  }

  private filtered(organizationId: number, query?: string) {
    let q = this.db.selectFrom('tags').where('organization_id', '=', organizationId);
    if (query) q = q.where((eb) => matchesText(this.db, eb, TAG_SEARCH, query));
    return q;
  }

  /**
   * One page in id order, as a deferred join (the page's ids from an index alone, then those rows);
   * with `total` known, a page in the later half is walked to from the end, and an unfiltered deep
   * page from its run of ids in `row_pages` (src/db/paging.ts).
   */
  async list(organizationId: number, opts: { limit: number; offset: number; query?: string }, total?: number): Promise<TagRow[]> {
    const ids = await pageIdsOf(
      this.filtered(organizationId, opts.query),
      opts,
      total,
      !opts.query ? () => runsOf(this.db, 'tags', organizationId) : undefined,
    );
    return ids ? this.db.selectFrom('tags').selectAll().where('id', 'in', ids).orderBy('id').execute() : [];
  }

  /** Unfiltered, from the maintained `row_counts` (migration 0028). */
  async count(organizationId: number, query?: string): Promise<number> {
    if (!query) return countedRows(this.db, 'tags', organizationId);
    const row = await this.filtered(organizationId, query)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async names(organizationId: number, prefix?: string): Promise<string[]> {
    let q = this.db.selectFrom('tags').select('name').distinct().where('organization_id', '=', organizationId);
    if (prefix) q = q.where((eb) => startsWithCi(this.db, eb.ref('name'), prefix));
    return (await q.execute()).map((r) => r.name);
  }

  async deleteByIds(organizationId: number, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('tags').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  /** tag id → ids of the videos carrying it. */
  async videoIdsOf(tagIds: number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (tagIds.length === 0) return out;
    const rows = await this.db.selectFrom('video_tags').select(['tag_id', 'video_id']).where('tag_id', 'in', tagIds).orderBy('video_id').execute();
    for (const r of rows) out.set(r.tag_id, [...(out.get(r.tag_id) ?? []), r.video_id]);
    return out;
  }

  /** tag id → ids of the players carrying it. */
  async playerIdsOf(tagIds: number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (tagIds.length === 0) return out;
    const rows = await this.db.selectFrom('player_tags').select(['tag_id', 'player_id']).where('tag_id', 'in', tagIds).orderBy('player_id').execute();
    for (const r of rows) out.set(r.tag_id, [...(out.get(r.tag_id) ?? []), r.player_id]);
    return out;
  }

  /** Which of these ids are the organization's players (or videos). */
  async existingOwnerIds(owner: Owner, organizationId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const table = owner === 'player' ? 'players' : 'videos';
    const rows = await this.db.selectFrom(table).select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }

  /** The tags of one player (or video), by id. */
  tagsOf(owner: Owner, ownerId: number): Promise<TagRow[]> {
    if (owner === 'player') {
      return this.db
        .selectFrom('tags')
        .innerJoin('player_tags', 'player_tags.tag_id', 'tags.id')
        .where('player_tags.player_id', '=', ownerId)
        .selectAll('tags')
        .orderBy('tags.id')
        .execute();
    }
    return this.db
      .selectFrom('tags')
      .innerJoin('video_tags', 'video_tags.tag_id', 'tags.id')
      .where('video_tags.video_id', '=', ownerId)
      .selectAll('tags')
      .orderBy('tags.id')
      .execute();
  }

  async link(owner: Owner, pairs: Array<{ ownerId: number; tagId: number }>): Promise<void> {
    if (pairs.length === 0) return;
    if (owner === 'player') {
      await this.db
        .insertInto('player_tags')
        .values(pairs.map((p) => ({ player_id: p.ownerId, tag_id: p.tagId })))
        .onConflict((oc) => oc.columns(['player_id', 'tag_id']).doNothing())
        .execute();
    } else {
      await this.db
        .insertInto('video_tags')
        .values(pairs.map((p) => ({ video_id: p.ownerId, tag_id: p.tagId })))
        .onConflict((oc) => oc.columns(['video_id', 'tag_id']).doNothing())
        .execute();
    }
  }

  /** Removes every tag of one player (or video) except `keepTagIds`. */
  async unlinkAllExcept(owner: Owner, ownerId: number, keepTagIds: number[]): Promise<void> {
    if (owner === 'player') {
      let q = this.db.deleteFrom('player_tags').where('player_id', '=', ownerId);
      if (keepTagIds.length > 0) q = q.where('tag_id', 'not in', keepTagIds);
      await q.execute();
    } else {
      let q = this.db.deleteFrom('video_tags').where('video_id', '=', ownerId);
      if (keepTagIds.length > 0) q = q.where('tag_id', 'not in', keepTagIds);
      await q.execute();
    }
  }
}
