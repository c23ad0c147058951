import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import { CreateUserBody, RoleUserParams, RoleUsersParams, UpdateUserBody, User, UserList, UserListQuery, UserParams } from './users.schemas.ts';

const tags = ['users'];

export default async function usersRoutes(app: App, { config, services }: Deps) {
  const service = services.users;

  app.get(
    '/v1/users',
    {
      config: { list: 'users' },
      schema: {
        tags,
        summary: 'List users: a bare array without per_page, {users, summary} with it',
        querystring: UserListQuery,
        response: { 200: UserList },
      },
    },
    async (req) => answerArrayOrEnvelope('users', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, req.query, page)),
  );

  app.get(
    '/v1/users/:id',
    {
      schema: { tags, summary: 'Get a user', params: UserParams, response: { 200: User } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  app.get(
    '/v1/roles/:role_id/users',
    {
      config: { list: 'users' },
      schema: {
        tags,
        summary: 'Users having the role: a bare array without per_page, {users, summary} with it',
        params: RoleUsersParams,
        querystring: UserListQuery,
        response: { 200: UserList },
      },
    },
    async (req) =>
      answerArrayOrEnvelope('users', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, req.query, page, req.params.role_id)),
  );

  app.get(
    '/v1/roles/:role_id/users/:id',
    {
      schema: { tags, summary: 'Get a user having the role', params: RoleUserParams, response: { 200: User } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id, req.params.role_id),
  );

  app.post(
    '/v1/users',
    {
      config: { permission: 'users:manage', wrap: 'user' },
      schema: { tags, summary: 'Invite a user (email, first_name, last_name, role_id)', body: CreateUserBody, response: { 201: User } },
    },
    async (req, reply) => reply.code(201).send(await service.create(req.auth.role, req.auth.organizationId, req.body)),
  );

  app.patch(
    '/v1/users',
    {
      config: { permission: 'users:manage', wrap: 'user' },
      schema: { tags, summary: 'Update the user named by id or email: first_name, last_name, role_id', body: UpdateUserBody, response: { 200: User } },
    },
    async (req) => service.update(req.auth.role, req.auth.organizationId, req.body),
  );

  app.delete(
    '/v1/users/:id',
    {
      config: { permission: 'users:manage' },
      schema: {
        tags,
        summary: 'Remove a user (team memberships and API tokens go too); answers the removed user',
        params: UserParams,
        response: { 200: User },
      },
    },
    async (req) => service.delete(req.auth.role, req.auth.organizationId, req.params.id),
  );
}
