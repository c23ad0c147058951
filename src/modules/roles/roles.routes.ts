import type { App, Deps } from '../../http/context.ts';
import { RoleList, RoleObject, RoleParams } from './roles.schemas.ts';

const tags = ['roles'];

export default async function rolesRoutes(app: App, { services }: Deps) {
  const service = services.roles;

  app.get(
    '/v1/roles',
    {
      config: { list: 'roles' },
      schema: { tags, summary: 'The roles (owner 1, admin 2, editor 3, viewer 4) with their permissions', response: { 200: RoleList } },
    },
    async () => service.list(),
  );

  app.get(
    '/v1/roles/current',
    {
      schema: { tags, summary: "The role the token acts with (a user's token: the user's current role)", response: { 200: RoleObject } },
    },
    async (req) => service.toWire(req.auth.role),
  );

  app.get(
    '/v1/roles/:id',
    {
      schema: { tags, summary: 'Get a role', params: RoleParams, response: { 200: RoleObject } },
    },
    async (req) => service.get(req.params.id),
  );
}
