import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import {
  CreateTagBody,
  DeleteTagsBody,
  DeleteTagsQuery,
  PlayerParams,
  SetTagsBody,
  Tag,
  TagArray,
  TagList,
  TagListQuery,
  TagNames,
  TagNamesQuery,
  TagParams,
  VideoParams,
} from './tags.schemas.ts';

const tags = ['tags'];

export default async function tagsRoutes(app: App, { config, services }: Deps) {
  const service = services.tags;

  app.post(
    '/v1/tags',
    {
      config: { wrap: 'tag' },
      schema: { tags, summary: 'Create a tag, optionally on videos and players', body: CreateTagBody, response: { 201: Tag } },
    },
    async (req, reply) => reply.code(201).send(await service.create(req.auth.organizationId, req.body)),
  );

  app.get(
    '/v1/tags',
    {
      config: { list: 'tags' },
      schema: {
        tags,
        summary: 'List tags: a bare array without per_page, {tags, summary} with it',
        querystring: TagListQuery,
        response: { 200: TagList },
      },
    },
    async (req) => answerArrayOrEnvelope('tags', req.query, config.listDefaultCap, (page) => service.list(req.auth.organizationId, req.query, page)),
  );

  app.get(
    '/v1/tags/names',
    {
      schema: { tags, summary: 'Distinct tag names, sorted', querystring: TagNamesQuery, response: { 200: TagNames } },
    },
    async (req) => service.names(req.auth.organizationId, req.query.query),
  );

  app.get(
    '/v1/tags/:id',
    {
      schema: { tags, summary: 'Get a tag', params: TagParams, response: { 200: Tag } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  app.delete(
    '/v1/tags',
    {
      config: { wrap: 'tag' },
      schema: {
        tags,
        summary: 'Delete tags by name/names and/or id/ids (query or body); answers the deleted tags',
        querystring: DeleteTagsQuery,
        body: DeleteTagsBody,
        response: { 200: TagArray },
      },
      // The body is optional here: a DELETE without one validates as an empty object.
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
    },
    async (req) => {
      const body = req.body;
      const q = req.query;
      return service.delete(req.auth.organizationId, {
        name: body.name ?? q.name,
        id: body.id ?? q.id,
        names: [...(q.names ?? []), ...(body.names ?? [])],
        ids: [...(q.ids ?? []), ...(body.ids ?? [])],
      });
    },
  );

  for (const owner of ['player', 'video'] as const) {
    const base = owner === 'player' ? '/v1/players/:player_id/tags' : '/v1/videos/:video_id/tags';
    const params = owner === 'player' ? PlayerParams : VideoParams;
    const idOf = (p: Record<string, number>) => (owner === 'player' ? p.player_id : p.video_id);
    const deprecated = owner === 'video';

    app.get(
      base,
      {
        config: { list: 'tags', deprecated },
        schema: { tags, summary: `The ${owner}'s tags${deprecated ? ' (deprecated)' : ''}`, deprecated, params, response: { 200: TagArray } },
      },
      async (req) => service.tagsOf(owner, req.auth.organizationId, idOf(req.params as Record<string, number>)),
    );

    app.patch(
      base,
      {
        config: { wrap: owner, deprecated },
        schema: {
          tags,
          summary: `Replace the ${owner}'s tags by names, creating missing tags${deprecated ? ' (deprecated)' : ''}`,
          deprecated,
          params,
          body: SetTagsBody,
          response: { 200: TagArray },
        },
      },
      async (req) => service.setTags(owner, req.auth.organizationId, idOf(req.params as Record<string, number>), req.body.tags),
    );
  }
}
