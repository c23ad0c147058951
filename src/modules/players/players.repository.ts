import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, PlayersTable } from '../../db/schema.ts';
import { startsWithCi } from '../../db/dialect.ts';
import { pageIdsOf } from '../../db/paging.ts';
import { countedRows } from '../../db/row-counts.ts';
import { runsOf } from '../../db/row-pages.ts';

export type PlayerRow = Selectable<PlayersTable>;

export class PlayersRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new PlayersRepository(db);
  }

  insert(row: Insertable<PlayersTable>): Promise<PlayerRow> {
    return this.db.insertInto('players').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<PlayerRow | undefined> {
    return this.db.selectFrom('players').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** The organization's players among `ids` (any order; unknown and foreign ids are left out). */
  findMany(organizationId: number, ids: number[]): Promise<PlayerRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('players').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  findByUuid(organizationId: number, uuid: string): Promise<PlayerRow | undefined> {
    return this.db.selectFrom('players').selectAll().where('organization_id', '=', organizationId).where('uuid', '=', uuid).executeTakeFirst();
  }

  private filtered(organizationId: number, query?: string) {
    let q = this.db.selectFrom('players').where('organization_id', '=', organizationId);
    if (query) q = q.where((eb) => startsWithCi(this.db, eb.ref('name'), query));
    return q;
  }

  /**
   * One page in id order, as a deferred join (the page's ids from an index alone, then those rows);
   * with `total` known, a page in the later half is walked to from the end, and an unfiltered deep
   * page from its run of ids in `row_pages` (src/db/paging.ts).
   */
  async list(organizationId: number, opts: { limit: number; offset: number; query?: string }, total?: number): Promise<PlayerRow[]> {
    const ids = await pageIdsOf(
      this.filtered(organizationId, opts.query),
      opts,
      total,
      !opts.query ? () => runsOf(this.db, 'players', organizationId) : undefined,
    );
    return ids ? this.db.selectFrom('players').selectAll().where('id', 'in', ids).orderBy('id').execute() : [];
  }

  /** Unfiltered, from the maintained `row_counts` (migration 0024). */
  async count(organizationId: number, query?: string): Promise<number> {
    if (!query) return countedRows(this.db, 'players', organizationId);
    const row = await this.filtered(organizationId, query)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  update(organizationId: number, id: number, changes: Updateable<PlayersTable>): Promise<PlayerRow | undefined> {
    return this.db.updateTable('players').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(organizationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('players').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }
}
