import type { Kysely, Updateable } from 'kysely';
import type { DB, TeamsTable } from '../../db/schema.ts';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/dialect.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { AllotmentsService } from '../allotments/allotments.service.ts';
import { type TeamsRepository, type MemberRow, type TeamRow } from './teams.repository.ts';
import { TeamIncludes, type CreateTeamBody, type Team, type TeamListQuery, type UpdateTeamBody } from './teams.schemas.ts';

/** A member removed by a concurrent request between the check and the insert. */
const userGone = () => invalidField('user_ids', 'contains ids that are not users of this organization');

const nameTaken = (name: string) =>
  new AppError('conflict', `A team named "${name}" already exists in this organization`, [{ field: 'name', message: 'has already been taken' }]);

function cleanName(raw: string): string {
  const name = raw.trim();
  if (!name) throw invalidField('name', 'must not be blank');
  return name;
}

export class TeamsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: TeamsRepository,
    private readonly allotments: AllotmentsService,
  ) {}

  private toWire(row: TeamRow, members?: MemberRow[]): Team {
    const team: Team = {
      id: row.id,
      name: row.name,
      is_admin: Boolean(row.is_admin),
      account_id: row.organization_id,
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    };
    if (members) {
      team.members = members.map((m) => ({ id: m.id, first_name: m.first_name, last_name: m.last_name, email: m.email }));
      team.member_count = members.length;
    }
    return team;
  }

  /** Teams with their members (one query for all of them). */
  private async withMembers(rows: TeamRow[], repo = this.repo): Promise<Team[]> {
    const members = await repo.members(rows.map((r) => r.id));
    const byTeam = new Map<number, MemberRow[]>();
    for (const m of members) byTeam.set(m.team_id, [...(byTeam.get(m.team_id) ?? []), m]);
    return rows.map((r) => this.toWire(r, byTeam.get(r.id) ?? []));
  }

  async list(organizationId: number, query: TeamListQuery, page: Page): Promise<Listing<Team>> {
    const includes = [...new Set((query.includes ?? []).map((i) => i.trim()).filter(Boolean))];
    const unknown = includes.filter((i) => !(TeamIncludes as readonly string[]).includes(i));
    if (unknown.length > 0) {
      throw invalidField('includes', `contains unknown value ${unknown.map((i) => JSON.stringify(i)).join(', ')}; allowed: ${TeamIncludes.join(', ')}`);
    }
    const withMembers = query.enable_query_team_members === true || includes.includes('members');
    const filter = { admin: query.admin, query: query.query, searchMembers: withMembers };
    const [rows, total] = await Promise.all([
      this.repo.list(organizationId, filter, { limit: page.limit, offset: page.offset }),
      this.repo.count(organizationId, filter),
    ]);
    const teams = withMembers ? await this.withMembers(rows) : rows.map((r) => this.toWire(r));
    return { items: teams, total };
  }

  async get(organizationId: number, id: number): Promise<Team> {
    const row = await this.repo.find(organizationId, id);
    if (!row) throw notFound('team', id);
    return (await this.withMembers([row]))[0];
  }

  /** user_ids must all be users of the organization (another organization's look missing). */
  private async checkUsers(repo: TeamsRepository, organizationId: number, userIds: number[]): Promise<void> {
    const found = await repo.existingUserIds(organizationId, userIds);
    const missing = userIds.filter((id) => !found.has(id));
    if (missing.length > 0) throw invalidField('user_ids', `contains ids that are not users of this organization: ${missing.slice(0, 20).join(', ')}`);
  }

  async create(organizationId: number, body: CreateTeamBody): Promise<Team> {
    const name = cleanName(body.name);
    if (body.is_admin === true) throw invalidField('is_admin', 'must be false: the organization already has its admin team');
    const userIds = [...new Set(body.user_ids ?? [])];
    try {
      return await this.db.transaction().execute(async (trx) => {
        const repo = this.repo.with(trx);
        await this.checkUsers(repo, organizationId, userIds);
        await this.allotments.reserve(trx, organizationId, 'teams');
        if (await repo.findByName(organizationId, name)) throw nameTaken(name);
        const now = nowSeconds();
        const row = await repo.insert({ organization_id: organizationId, name, is_admin: false, created_at: now, updated_at: now });
        await repo.replaceMembers(row.id, userIds);
        return (await this.withMembers([row], repo))[0];
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(name);
      if (isForeignKeyViolation(err)) throw userGone();
      throw err;
    }
  }

  async update(organizationId: number, id: number, body: UpdateTeamBody): Promise<Team> {
    const name = body.name === undefined ? undefined : cleanName(body.name);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const repo = this.repo.with(trx);
        let row = await repo.find(organizationId, id);
        if (!row) throw notFound('team', id);
        if (body.is_admin !== undefined && body.is_admin !== Boolean(row.is_admin)) {
          throw invalidField(
            'is_admin',
            row.is_admin ? 'cannot be changed: every organization keeps its admin team' : 'cannot be changed: the organization already has its admin team',
          );
        }
        const values: Updateable<TeamsTable> = {};
        if (name !== undefined && name !== row.name) {
          if (await repo.findByName(organizationId, name, id)) throw nameTaken(name);
          values.name = name;
        }
        if (body.user_ids !== undefined) {
          const userIds = [...new Set(body.user_ids)];
          await this.checkUsers(repo, organizationId, userIds);
          await repo.replaceMembers(id, userIds);
        }
        if (Object.keys(values).length > 0 || body.user_ids !== undefined) {
          row = (await repo.update(organizationId, id, { ...values, updated_at: nowSeconds() })) ?? row;
        }
        return (await this.withMembers([row], repo))[0];
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(name ?? '');
      if (isForeignKeyViolation(err)) throw userGone();
      throw err;
    }
  }

  /** Deletes a team (its memberships go with it) and answers it as it was; the admin team stays. */
  async delete(organizationId: number, id: number): Promise<Team> {
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const row = await repo.find(organizationId, id);
      if (!row) throw notFound('team', id);
      if (row.is_admin) throw new AppError('forbidden', 'The admin team cannot be deleted');
      const [team] = await this.withMembers([row], repo);
      await repo.delete(organizationId, id);
      return team;
    });
  }
}
