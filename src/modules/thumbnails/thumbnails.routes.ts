import type { FastifyRequest } from 'fastify';
import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import {
  PlayerIdParams,
  PlayerSelectedThumbnails,
  PlayerUuidOnlyParams,
  PlayerUuidOrIdParams,
  PlayerUuidParams,
  SelectVideoThumbnailBody,
  SetPlayerThumbnailsBody,
  Thumbnail,
  ThumbnailList,
  ThumbnailListQuery,
  ThumbnailParams,
  VideoParams,
} from './thumbnails.schemas.ts';
import { playerRefOf, type PlayerRef } from './thumbnails.service.ts';

const tags = ['thumbnails'];

/**
 * The player thumbnail list may come bare (`[{…}]`) or as `{"thumbnails": […]}` /
 * `{"selected_thumbnails": […]}`; all become `{thumbnails: […]}` before validation.
 */
async function normalisePlayerThumbnailsBody(req: FastifyRequest) {
  const body = req.body;
  if (Array.isArray(body)) {
    req.body = { thumbnails: body };
  } else if (body && typeof body === 'object' && 'selected_thumbnails' in body && !('thumbnails' in body)) {
    const { selected_thumbnails, ...rest } = body as Record<string, unknown>;
    req.body = { ...rest, thumbnails: selected_thumbnails };
  }
}

export default async function thumbnailsRoutes(app: App, { config, services }: Deps) {
  const service = services.thumbnails;

  app.get(
    '/v1/videos/:video_id/thumbnails',
    {
      config: { list: 'thumbnails' },
      schema: {
        tags,
        summary: "The video's thumbnails, generated and custom: a bare array without per_page, {thumbnails, summary} with it",
        params: VideoParams,
        querystring: ThumbnailListQuery,
        response: { 200: ThumbnailList },
      },
    },
    async (req) => {
      return answerArrayOrEnvelope('thumbnails', req.query, config.listDefaultCap, (page) =>
        service.listForVideo(req.auth.organizationId, req.params.video_id, page),
      );
    },
  );

  app.get(
    '/v1/videos/:video_id/selected_thumbnail',
    {
      schema: { tags, summary: "The video's selected thumbnail (404 until the video has one)", params: VideoParams, response: { 200: Thumbnail } },
    },
    async (req) => service.selectedForVideo(req.auth.organizationId, req.params.video_id),
  );

  app.patch(
    '/v1/videos/:video_id/selected_thumbnail',
    {
      config: { deprecated: true, wrap: 'thumbnail' },
      schema: {
        tags,
        deprecated: true,
        summary: "Select the video's thumbnail: thumbnail_id (one of its thumbnails), or a custom one by thumbnail_url (or thumbnails: [{url}]) (deprecated)",
        params: VideoParams,
        body: SelectVideoThumbnailBody,
        response: { 200: Thumbnail },
      },
    },
    async (req) => service.selectForVideo(req.auth.organizationId, req.params.video_id, req.body),
  );

  app.get(
    '/v1/thumbnails/:id',
    {
      config: { deprecated: true },
      schema: { tags, deprecated: true, summary: 'Get a thumbnail (deprecated)', params: ThumbnailParams, response: { 200: Thumbnail } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  // A player's selected thumbnails: read on v1, set on v1.1 (the v1 PATCH paths are deprecated).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry's params schema decides the shape `ref` reads.
  const getRoutes: Array<{ url: string; params: typeof PlayerIdParams | typeof PlayerUuidParams; ref: (p: any) => PlayerRef }> = [
    { url: '/v1/players/uuid=:uuid/selected_thumbnails', params: PlayerUuidParams, ref: (p) => ({ uuid: p.uuid }) },
    { url: '/v1/players/:player_id/selected_thumbnails', params: PlayerIdParams, ref: (p) => ({ id: p.player_id }) },
  ];
  for (const route of getRoutes) {
    app.get(
      route.url,
      {
        config: { list: '' },
        schema: {
          tags,
          summary: "The player's selected thumbnails (those of its chapters' videos, in chapter order)",
          params: route.params,
          response: { 200: PlayerSelectedThumbnails },
        },
      },
      async (req) => service.playerSelected(req.auth.organizationId, route.ref(req.params)),
    );
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above: the params schema decides the shape `ref` reads.
  const patchRoutes: Array<{ url: string; params: any; ref: (p: any) => PlayerRef; deprecated: boolean }> = [
    { url: '/v1.1/players/uuid=:player_uuid/selected_thumbnails', params: PlayerUuidOnlyParams, ref: (p) => ({ uuid: p.player_uuid }), deprecated: false },
    { url: '/v1.1/players/:player_uuid/selected_thumbnails', params: PlayerUuidOrIdParams, ref: (p) => playerRefOf(p.player_uuid), deprecated: false },
    { url: '/v1/players/uuid=:uuid/selected_thumbnails', params: PlayerUuidParams, ref: (p) => ({ uuid: p.uuid }), deprecated: true },
    { url: '/v1/players/:player_id/selected_thumbnails', params: PlayerIdParams, ref: (p) => ({ id: p.player_id }), deprecated: true },
  ];
  for (const route of patchRoutes) {
    app.patch(
      route.url,
      {
        config: { deprecated: route.deprecated },
        preValidation: normalisePlayerThumbnailsBody,
        schema: {
          tags,
          deprecated: route.deprecated || undefined,
          summary: `Set the player's thumbnails from [{thumbnail_id} | {thumbnail_url}]${route.deprecated ? ' (deprecated: use /v1.1)' : ''}`,
          params: route.params,
          body: SetPlayerThumbnailsBody,
          response: { 200: PlayerSelectedThumbnails },
        },
      },
      async (req) => service.setPlayerSelected(req.auth.organizationId, route.ref(req.params), (req.body as { thumbnails: never[] }).thumbnails),
    );
  }
}
