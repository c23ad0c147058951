import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import { UuidParams } from '../../lib/schemas.ts';
import { CreatePlayerBody, Player, PlayerList, PlayerListQuery, PlayerParams, UpdatePlayerBody } from './players.schemas.ts';

const tags = ['players'];

export default async function playersRoutes(app: App, { config, services }: Deps) {
  const players = services.players;

  app.post(
    '/v1/players',
    {
      config: { wrap: 'player' },
      schema: { tags, summary: 'Create a player with chapters and their videos', body: CreatePlayerBody, response: { 201: Player } },
    },
    async (req, reply) => reply.code(201).send(await players.create(req.auth.organizationId, req.body)),
  );

  app.get(
    '/v1/players',
    {
      config: { list: 'players' },
      schema: {
        tags,
        summary: 'List players: a bare array without per_page, {players, summary} with it',
        querystring: PlayerListQuery,
        response: { 200: PlayerList },
      },
    },
    async (req) => {
      // Without per_page the reference answers a bare array; with it, the envelope.
      return answerArrayOrEnvelope('players', req.query, config.listDefaultCap, (page) => players.list(req.auth.organizationId, req.query, page));
    },
  );

  app.get(
    '/v1/players/uuid=:uuid',
    {
      schema: { tags, summary: 'Get a player by UUID', params: UuidParams, response: { 200: Player } },
    },
    async (req) => players.getByUuid(req.auth.organizationId, req.params.uuid),
  );

  app.get(
    '/v1/players/:id',
    {
      schema: { tags, summary: 'Get a player', params: PlayerParams, response: { 200: Player } },
    },
    async (req) => players.get(req.auth.organizationId, req.params.id),
  );

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/players/:id',
      config: { wrap: 'player' },
      schema: {
        tags,
        summary: 'Update a player (and its chapters, Rails nested-attributes style)',
        params: PlayerParams,
        body: UpdatePlayerBody,
        response: { 200: Player },
      },
      handler: async (req) => players.update(req.auth.organizationId, req.params.id, req.body),
    });
  }

  app.delete(
    '/v1/players/:id',
    {
      schema: { tags, summary: 'Delete a player (its videos stay)', params: PlayerParams, response: { 200: Player } },
    },
    async (req) => players.delete(req.auth.organizationId, req.params.id),
  );

  app.delete(
    '/v1/players/uuid=:uuid',
    {
      schema: { tags, summary: 'Delete a player by UUID', params: UuidParams, response: { 200: Player } },
    },
    async (req) => players.deleteByUuid(req.auth.organizationId, req.params.uuid),
  );
}
