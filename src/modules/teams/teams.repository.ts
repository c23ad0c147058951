import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DB, TeamsTable } from '../../db/schema.ts';
import { startsWithCi } from '../../db/dialect.ts';

export type TeamRow = Selectable<TeamsTable>;

export interface TeamFilter {
  admin?: boolean;
  query?: string;
  /** Also match teams having a member whose first_name, last_name or email starts with query. */
  searchMembers?: boolean;
}

export interface MemberRow {
  team_id: number;
  id: number;
  first_name: string;
  last_name: string;
  email: string;
}

export class TeamsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new TeamsRepository(db);
  }

  insert(row: Insertable<TeamsTable>): Promise<TeamRow> {
    return this.db.insertInto('teams').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(organizationId: number, id: number): Promise<TeamRow | undefined> {
    return this.db.selectFrom('teams').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** A team of the organization with this name regardless of case (other than `exceptId`). */
  findByName(organizationId: number, name: string, exceptId?: number): Promise<TeamRow | undefined> {
    let q = this.db
      .selectFrom('teams')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()));
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return q.executeTakeFirst();
  }

  private filtered(organizationId: number, filter: TeamFilter) {
    let q = this.db.selectFrom('teams').where('teams.organization_id', '=', organizationId);
    if (filter.admin !== undefined) q = q.where('teams.is_admin', '=', filter.admin);
    const query = filter.query;
    if (query) {
      q = q.where((eb) => {
        const byName = startsWithCi(this.db, eb.ref('teams.name'), query);
        if (!filter.searchMembers) return byName;
        const byMember = eb.exists(
          eb
            .selectFrom('team_members as tm')
            .innerJoin('users as u', 'u.id', 'tm.user_id')
            .whereRef('tm.team_id', '=', 'teams.id')
            .where((m) =>
              m.or([
                startsWithCi(this.db, m.ref('u.first_name'), query),
                startsWithCi(this.db, m.ref('u.last_name'), query),
                startsWithCi(this.db, m.ref('u.email'), query),
              ]),
            )
            .select(sql<number>`1`.as('one')),
        );
        return eb.or([byName, byMember]);
      });
    }
    return q;
  }

  list(organizationId: number, filter: TeamFilter, opts: { limit: number; offset: number }): Promise<TeamRow[]> {
    return this.filtered(organizationId, filter).selectAll('teams').orderBy('teams.id').limit(opts.limit).offset(opts.offset).execute();
  }

  async count(organizationId: number, filter: TeamFilter): Promise<number> {
    const row = await this.filtered(organizationId, filter)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  update(organizationId: number, id: number, values: Updateable<TeamsTable>): Promise<TeamRow | undefined> {
    return this.db.updateTable('teams').set(values).where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(organizationId: number, id: number): Promise<void> {
    await this.db.deleteFrom('team_members').where('team_id', '=', id).execute();
    await this.db.deleteFrom('teams').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  /** Members of the teams, by team then user id. */
  async members(teamIds: number[]): Promise<MemberRow[]> {
    if (teamIds.length === 0) return [];
    return this.db
      .selectFrom('team_members as tm')
      .innerJoin('users as u', 'u.id', 'tm.user_id')
      .select(['tm.team_id', 'u.id', 'u.first_name', 'u.last_name', 'u.email'])
      .where('tm.team_id', 'in', teamIds)
      .orderBy('tm.team_id')
      .orderBy('u.id')
      .execute();
  }

  async replaceMembers(teamId: number, userIds: number[]): Promise<void> {
    await this.db.deleteFrom('team_members').where('team_id', '=', teamId).execute();
    if (userIds.length > 0)
      await this.db
        .insertInto('team_members')
        .values(userIds.map((user_id) => ({ team_id: teamId, user_id })))
        .execute();
  }

  /** Which of `ids` are users of the organization. */
  async existingUserIds(organizationId: number, ids: number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('users').select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
    return new Set(rows.map((r) => r.id));
  }
}
