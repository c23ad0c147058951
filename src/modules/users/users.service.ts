import type { Kysely, Updateable } from 'kysely';
import type { DB, UsersTable } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/dialect.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { AllotmentsService } from '../allotments/allotments.service.ts';
import { isRole, outranksOrEquals, RoleIds, roleById, type Role } from '../roles/permissions.ts';
import type { SessionsService } from '../sessions/sessions.service.ts';
import type { TokensRepository } from '../tokens/tokens.repository.ts';
import { type UsersRepository, type UserRow } from './users.repository.ts';
import type { CreateUserBody, UpdateUserBody, User, UserListQuery } from './users.schemas.ts';

/** Role given to an invited user when role_id is not sent: the least powerful. */
export const DEFAULT_ROLE: Role = 'viewer';

const emailTaken = (email: string) =>
  new AppError('conflict', `A user with email ${email} already exists in this organization`, [{ field: 'email', message: 'has already been taken' }]);

export function toUser(row: UserRow): User {
  const role = isRole(row.role) ? row.role : DEFAULT_ROLE;
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    role_id: RoleIds[role],
    role,
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
  };
}

/** A role may hand out, change or remove only roles at most as powerful as itself (admins: not owners). */
function assertMayManage(actor: Role, role: Role) {
  if (!outranksOrEquals(actor, role)) throw new AppError('forbidden', `The ${actor} role may not manage ${role} users`);
}

function roleOf(roleId: number, field = 'role_id'): Role {
  const role = roleById(roleId);
  if (!role) throw invalidField(field, 'must name a role (1 owner, 2 admin, 3 editor, 4 viewer)');
  return role;
}

export class UsersService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: UsersRepository,
    private readonly tokens: TokensRepository,
    private readonly allotments: AllotmentsService,
    private readonly sessions: SessionsService,
  ) {}

  /** Users by id: a bare array without per_page, {users, summary} with it. `roleId` narrows to one role. */
  async list(organizationId: number, query: UserListQuery, page: Page, roleId?: number): Promise<Listing<User>> {
    let role: Role | undefined;
    if (roleId !== undefined) {
      role = roleById(roleId);
      if (!role) throw notFound('role', roleId);
    }
    const filter = { role, query: query.query };
    // The count first: with it, a page in the later half is read from the end.
    const total = page.paged ? await this.repo.count(organizationId, filter) : null;
    const rows = await this.repo.list(organizationId, filter, { limit: page.limit, offset: page.offset }, total ?? undefined);
    const users = rows.map(toUser);
    return { items: users, total: total ?? users.length };
  }

  /** One user; with `roleId`, only when the user has that role. */
  async get(organizationId: number, id: number, roleId?: number): Promise<User> {
    if (roleId !== undefined && !roleById(roleId)) throw notFound('role', roleId);
    const row = await this.repo.find(organizationId, id);
    if (!row || (roleId !== undefined && RoleIds[toUser(row).role as Role] !== roleId)) throw notFound('user', id);
    return toUser(row);
  }

  /**
   * Invites a user: email unique in the organization (stored lower-case); counts against govideo_users.
   * The invitation is mailed unless `mail` is false (the CLI prints its link instead).
   */
  async create(actor: Role, organizationId: number, body: CreateUserBody, { mail = true }: { mail?: boolean } = {}): Promise<User> {
    const email = body.email.trim().toLowerCase();
    const role = body.role_id === undefined ? DEFAULT_ROLE : roleOf(body.role_id);
    assertMayManage(actor, role);
    try {
      return await this.db.transaction().execute(async (trx) => {
        const repo = this.repo.with(trx);
        if (await repo.findByEmail(organizationId, email)) throw emailTaken(email);
        await this.allotments.reserve(trx, organizationId, 'govideo_users');
        const now = nowSeconds();
        const row = await repo.insert({
          organization_id: organizationId,
          email,
          first_name: (body.first_name ?? '').trim(),
          last_name: (body.last_name ?? '').trim(),
          role,
          status: 'invited',
          created_at: now,
          updated_at: now,
        });
        // The invitation is mailed by a job, once the user exists (docs/sign-in.md).
        if (mail) await this.sessions.queueInvitation(trx, row.id);
        return toUser(row);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw emailTaken(email);
      throw err;
    }
  }

  /**
   * The CLI's invitation (`reelbase user invite`): the user is created as an owner would (no mail)
   * unless the address was invited before and has not chosen a password yet; answers a new link
   * (earlier ones stop working).
   */
  async inviteWithLink(organizationId: number, email: string, role: Role): Promise<{ userId: number; url: string }> {
    const address = email.trim().toLowerCase();
    // The API's schema checks addresses of POST /v1/users; the CLI comes here without it.
    if (address.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) throw invalidField('email', 'must be an email address');
    const existing = await this.repo.findByEmail(organizationId, address);
    if (existing && (await this.sessions.hasPassword(existing.id))) {
      throw new AppError('conflict', `${address} has already chosen a password; they can reset it from the sign-in page`);
    }
    if (existing && existing.role !== role) {
      throw new AppError(
        'conflict',
        `${address} was invited as ${existing.role}; change their role first (PATCH /v1/users) or invite them as ${existing.role}`,
      );
    }
    const userId = existing?.id ?? (await this.create('owner', organizationId, { email: address, role_id: RoleIds[role] }, { mail: false })).id;
    return { userId, url: await this.sessions.invitationUrl(userId) };
  }

  /** Updates first_name, last_name and role_id of the user named by `id` or `email`. */
  async update(actor: Role, organizationId: number, body: UpdateUserBody): Promise<User> {
    if (body.id === undefined && body.email === undefined) {
      throw new AppError('validation_failed', 'id or email is required to identify the user', [
        { field: 'id', message: 'or email is required to identify the user' },
      ]);
    }
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const email = body.email?.trim().toLowerCase();
      let row: UserRow | undefined;
      if (body.id !== undefined) {
        row = await repo.find(organizationId, body.id);
        if (!row) throw notFound('user', body.id);
        if (email !== undefined && row.email !== email) throw invalidField('email', 'does not match the user with this id (email cannot be changed)');
      } else {
        row = await repo.findByEmail(organizationId, email!);
        if (!row) throw new AppError('not_found', '404: No user exists with that email');
      }
      const current = toUser(row);
      assertMayManage(actor, current.role as Role);
      const values: Updateable<UsersTable> = {};
      if (body.first_name !== undefined) values.first_name = body.first_name.trim();
      if (body.last_name !== undefined) values.last_name = body.last_name.trim();
      if (body.role_id !== undefined) {
        const role = roleOf(body.role_id);
        assertMayManage(actor, role);
        values.role = role;
        // Signed-in sessions end with a role change (API tokens follow the new role).
        if (role !== current.role) await this.sessions.endSessionsOf(trx, row.id);
      }
      if (Object.keys(values).length === 0) return current;
      const updated = await repo.update(organizationId, row.id, { ...values, updated_at: nowSeconds() });
      return toUser(updated ?? row);
    });
  }

  /** Removes a user, their team memberships, their API tokens and sessions (which stop working at once). */
  async delete(actor: Role, organizationId: number, id: number): Promise<User> {
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const row = await repo.find(organizationId, id);
      if (!row) throw notFound('user', id);
      const user = toUser(row);
      assertMayManage(actor, user.role as Role);
      await this.tokens.with(trx).deleteForUser(id);
      await this.sessions.endSessionsOf(trx, id);
      await repo.delete(organizationId, id);
      return user;
    });
  }
}
