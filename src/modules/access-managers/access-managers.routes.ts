import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import { AccessManager, AccessManagerList, AccessManagerListQuery, AccessManagerParams, UpdateAccessManagerBody } from './access-managers.schemas.ts';

const tags = ['access managers'];

export default async function accessManagersRoutes(app: App, { config, services }: Deps) {
  const service = services.accessManagers;

  // Readable by every role (a player's access_code is too); changing them is an admin's job.
  app.get(
    '/v1/access_managers',
    {
      config: { list: 'access_managers' },
      schema: {
        tags,
        summary: "List the players' access managers (one per player): a bare array without per_page, {access_managers, summary} with it",
        querystring: AccessManagerListQuery,
        response: { 200: AccessManagerList },
      },
    },
    async (req) => answerArrayOrEnvelope('access_managers', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, req.query, page)),
  );

  app.get(
    '/v1/access_managers/:id',
    {
      schema: { tags, summary: 'Get an access manager', params: AccessManagerParams, response: { 200: AccessManager } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/access_managers/:id',
      config: { wrap: 'access_manager', permission: 'security:manage' },
      schema: { tags, summary: 'Change an access manager', params: AccessManagerParams, body: UpdateAccessManagerBody, response: { 200: AccessManager } },
      handler: async (req) => service.update(req.auth.organizationId, req.params.id, req.body),
    });
  }
}
