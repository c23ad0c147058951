import type { App, Deps } from '../../http/context.ts';
import { answerEnvelope } from '../../http/paging.ts';
import { CreateTeamBody, Team, TeamList, TeamListQuery, TeamParams, UpdateTeamBody } from './teams.schemas.ts';

const tags = ['teams'];

export default async function teamsRoutes(app: App, { config, services }: Deps) {
  const service = services.teams;

  app.get(
    '/v1/teams',
    {
      config: { list: 'teams' },
      schema: {
        tags,
        summary: 'List teams: always {teams, summary}',
        querystring: TeamListQuery,
        response: { 200: TeamList },
      },
    },
    async (req) => {
      // Always the {teams, summary} envelope, as the spec shows.
      return answerEnvelope('teams', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, req.query, page));
    },
  );

  app.get(
    '/v1/teams/:id',
    {
      schema: { tags, summary: 'Get a team with its members', params: TeamParams, response: { 200: Team } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  app.post(
    '/v1/teams',
    {
      config: { permission: 'teams:manage', wrap: 'team' },
      schema: { tags, summary: 'Create a team (name unique in the organization; user_ids its members)', body: CreateTeamBody, response: { 201: Team } },
    },
    async (req, reply) => reply.code(201).send(await service.create(req.auth.organizationId, req.body)),
  );

  app.patch(
    '/v1/teams/:id',
    {
      config: { permission: 'teams:manage', wrap: 'team' },
      schema: { tags, summary: 'Rename a team and/or replace its members (user_ids)', params: TeamParams, body: UpdateTeamBody, response: { 200: Team } },
    },
    async (req) => service.update(req.auth.organizationId, req.params.id, req.body),
  );

  app.delete(
    '/v1/teams/:id',
    {
      config: { permission: 'teams:manage' },
      schema: { tags, summary: 'Delete a team (not the admin team); answers the deleted team', params: TeamParams, response: { 200: Team } },
    },
    async (req) => service.delete(req.auth.organizationId, req.params.id),
  );
}
