import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, UsersTable } from '../../db/schema.ts';
import { startsWithCi } from '../../db/dialect.ts';
import { pageIdsOf } from '../../db/paging.ts';
import { countedRows } from '../../db/row-counts.ts';
import { runsOf } from '../../db/row-pages.ts';

export type UserRow = Selectable<UsersTable>;

export interface UserFilter {
  role?: string;
  query?: string;
}

export class UsersRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new UsersRepository(db);
  }

  insert(row: Insertable<UsersTable>): Promise<UserRow> {
    return this.db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** `email` as stored: lower-case. */
  findByEmail(organizationId: number, email: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('organization_id', '=', organizationId).where('email', '=', email).executeTakeFirst();
  }

  private filtered(organizationId: number, filter: UserFilter) {
    let q = this.db.selectFrom('users').where('organization_id', '=', organizationId);
    if (filter.role) q = q.where('role', '=', filter.role);
    const query = filter.query;
    if (query)
      q = q.where((eb) =>
        eb.or([
          startsWithCi(this.db, eb.ref('first_name'), query),
          startsWithCi(this.db, eb.ref('last_name'), query),
          startsWithCi(this.db, eb.ref('email'), query),
        ]),
      );
    return q;
  }

  /**
   * One page in id order, as a deferred join (the page's ids from an index alone, then those rows);
   * with `total` known, a page in the later half is walked to from the end, and an unfiltered deep
   * page from its run of ids in `row_pages` (src/db/paging.ts).
   */
  async list(organizationId: number, filter: UserFilter, opts: { limit: number; offset: number }, total?: number): Promise<UserRow[]> {
    const ids = await pageIdsOf(
      this.filtered(organizationId, filter),
      opts,
      total,
      !filter.role && !filter.query ? () => runsOf(this.db, 'users', organizationId) : undefined,
    );
    return ids ? this.db.selectFrom('users').selectAll().where('id', 'in', ids).orderBy('id').execute() : [];
  }

  /** Unfiltered, from the maintained `row_counts` (migration 0028). */
  async count(organizationId: number, filter: UserFilter): Promise<number> {
    if (!filter.role && !filter.query) return countedRows(this.db, 'users', organizationId);
    const row = await this.filtered(organizationId, filter)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  update(organizationId: number, id: number, values: Updateable<UsersTable>): Promise<UserRow | undefined> {
    return this.db.updateTable('users').set(values).where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Removes the user with their team memberships (API tokens: TokensRepository.deleteForUser). */
  async delete(organizationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('team_members').where('user_id', '=', id).execute();
    await this.db.deleteFrom('users').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }
}
