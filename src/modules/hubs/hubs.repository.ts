import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, HubCategoriesTable, HubsTable } from '../../db/schema.ts';

export type HubRow = Selectable<HubsTable>;
export type HubWithCountRow = HubRow & { category_count: number | string };
export type CategoryRow = Selectable<HubCategoriesTable>;

/** Only queries. Every read and write of a record is scoped by organization, except the server-wide slug lookups. */
export class HubsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new HubsRepository(db);
  }

  private withCounts() {
    return this.db
      .selectFrom('hubs')
      .selectAll('hubs')
      .select((eb) =>
        eb
          .selectFrom('hub_categories')
          .whereRef('hub_categories.hub_id', '=', 'hubs.id')
          .select((e) => e.fn.countAll<number>().as('n'))
          .as('category_count'),
      );
  }

  async find(organizationId: number, id: number): Promise<HubWithCountRow | undefined> {
    const row = await this.withCounts().where('hubs.organization_id', '=', organizationId).where('hubs.id', '=', id).executeTakeFirst();
    return row as HubWithCountRow | undefined;
  }

  async list(organizationId: number, opts: { limit: number; offset: number }): Promise<HubWithCountRow[]> {
    const rows = await this.withCounts().where('hubs.organization_id', '=', organizationId).orderBy('hubs.id').limit(opts.limit).offset(opts.offset).execute();
    return rows as HubWithCountRow[];
  }

  async count(organizationId: number): Promise<number> {
    const row = await this.db
      .selectFrom('hubs')
      .where('organization_id', '=', organizationId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A public hub by its slug, whatever its organization (the public pages' entry). */
  findPublicBySlug(slug: string): Promise<HubRow | undefined> {
    return this.db.selectFrom('hubs').selectAll().where('slug', '=', slug).where('public', '=', true).executeTakeFirst();
  }

  /** Hub slugs of the whole server equal to `base` or starting with `base-` (slugs are unique across the server). */
  async hubSlugsLike(base: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('hubs')
      .select('slug')
      .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base}-%`)]))
      .execute();
    return rows.map((r) => r.slug);
  }

  async hubSlugTaken(slug: string, exceptId?: number): Promise<boolean> {
    let q = this.db.selectFrom('hubs').select('id').where('slug', '=', slug);
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  insertHub(row: Insertable<HubsTable>): Promise<HubRow> {
    return this.db.insertInto('hubs').values(row).returningAll().executeTakeFirstOrThrow();
  }

  async updateHub(organizationId: number, id: number, patch: Updateable<HubsTable>): Promise<void> {
    await this.db.updateTable('hubs').set(patch).where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  async deleteHub(organizationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('hubs').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  // ---- categories --------------------------------------------------------------------------------

  /** The hub's categories in position order (ties by id). */
  categories(organizationId: number, hubId: number, opts?: { limit: number; offset: number }): Promise<CategoryRow[]> {
    let q = this.db
      .selectFrom('hub_categories')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('hub_id', '=', hubId)
      .orderBy('position')
      .orderBy('id');
    if (opts) q = q.limit(opts.limit).offset(opts.offset);
    return q.execute();
  }

  /** The hub's categories in position order, whatever the organization (for the public pages). */
  categoriesOfHub(hubId: number): Promise<CategoryRow[]> {
    return this.db.selectFrom('hub_categories').selectAll().where('hub_id', '=', hubId).orderBy('position').orderBy('id').execute();
  }

  async countCategories(organizationId: number, hubId: number): Promise<number> {
    const row = await this.db
      .selectFrom('hub_categories')
      .where('organization_id', '=', organizationId)
      .where('hub_id', '=', hubId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  findCategory(organizationId: number, hubId: number, id: number): Promise<CategoryRow | undefined> {
    return this.db
      .selectFrom('hub_categories')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('hub_id', '=', hubId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  insertCategory(row: Insertable<HubCategoriesTable>): Promise<CategoryRow> {
    return this.db.insertInto('hub_categories').values(row).returningAll().executeTakeFirstOrThrow();
  }

  async updateCategory(organizationId: number, id: number, patch: Updateable<HubCategoriesTable>): Promise<void> {
    await this.db.updateTable('hub_categories').set(patch).where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  async deleteCategory(organizationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('hub_categories').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  /** category id → its player ids in position order. */
  async playerIdsOf(categoryIds: number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (categoryIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('hub_category_players')
      .select(['category_id', 'player_id'])
      .where('category_id', 'in', categoryIds)
      .orderBy('category_id')
      .orderBy('position')
      .execute();
    for (const r of rows) out.set(r.category_id, [...(out.get(r.category_id) ?? []), r.player_id]);
    return out;
  }

  async setPlayers(categoryId: number, playerIds: number[]): Promise<void> {
    await this.db.deleteFrom('hub_category_players').where('category_id', '=', categoryId).execute();
    if (playerIds.length === 0) return;
    await this.db
      .insertInto('hub_category_players')
      .values(playerIds.map((player_id, position) => ({ category_id: categoryId, player_id, position })))
      .execute();
  }

  /** Which of these ids are the organization's players. */
  async existingPlayerIds(organizationId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('players').select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }
}
