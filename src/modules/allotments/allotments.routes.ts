import type { App, Deps } from '../../http/context.ts';
import { AllotmentsParams, AllotmentsQuery, AllotmentsResponse, EmbedParams, EmbedResult, EmbedState } from './allotments.schemas.ts';

export default async function allotmentsRoutes(app: App, { services }: Deps) {
  const service = services.allotments;
  const organizations = services.organizations;

  app.get(
    '/v1/organizations/:organization_id/allotments',
    {
      schema: {
        tags: ['allotments'],
        summary: "Allotment usage of the organization (the token's or one of its descendants)",
        description: 'types selects govideo_users, teams and/or embeds (default govideo_users and teams); an unknown type is a 422.',
        params: AllotmentsParams,
        querystring: AllotmentsQuery,
        response: { 200: AllotmentsResponse },
      },
    },
    async (req) => organizations.allotments(req.auth.organizationId, req.params.organization_id, req.query.types),
  );

  // Not in the spec's index: how a client (the web dashboard) learns the state the two below set.
  app.get(
    '/v1/players/uuid=:uuid/embed',
    {
      schema: {
        tags: ['players'],
        summary: 'Whether embed code access and embedded playback of a player are enabled',
        params: EmbedParams,
        response: { 200: EmbedState },
      },
    },
    async (req) => service.embedOf(req.auth.organizationId, req.params.uuid),
  );

  // The spec writes the enable method as CREATE: it is POST here.
  app.post(
    '/v1/players/uuid=:uuid/embed',
    {
      schema: {
        tags: ['players'],
        summary: 'Enable embed code access and embedded playback of a player (embeds allotment +1)',
        params: EmbedParams,
        response: { 201: EmbedResult },
      },
    },
    async (req, reply) => reply.code(201).send(await service.setEmbed(req.auth.organizationId, req.params.uuid, true)),
  );

  app.delete(
    '/v1/players/uuid=:uuid/embed',
    {
      schema: {
        tags: ['players'],
        summary: 'Disable embed code access and embedded playback of a player (embeds allotment -1)',
        params: EmbedParams,
        response: { 200: EmbedResult },
      },
    },
    async (req) => service.setEmbed(req.auth.organizationId, req.params.uuid, false),
  );
}
