import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { Summary } from '../../http/paging.ts';
import { IdParams } from '../../http/schemas.ts';
import { UrlSigner } from '../../media/signed-urls.ts';
import { CreateVideoBody, UpdateVideoBody, Video, VideoFiles, VideoFilesQuery, VideoListQuery } from './videos.schemas.ts';
import { VideosService } from './videos.service.ts';

const tags = ['videos'];

export default async function videosRoutes(app: App, { database, config }: Deps) {
  if (!config.signingSecret) throw new Error('config.signingSecret must be resolved before the app is built');
  const videos = new VideosService(database.db, new UrlSigner(config.signingSecret, config.publicUrl));

  app.post('/v1/videos', {
    config: { wrap: 'video' },
    schema: { tags, summary: 'Create a video (and its facade player)', body: CreateVideoBody, response: { 201: Video } },
  }, async (req, reply) => reply.code(201).send(await videos.create(req.auth.organizationId, req.body)));

  app.get('/v1/videos', {
    config: { list: 'videos' },
    schema: {
      tags,
      summary: 'List videos: a bare array without per_page, {videos, summary} with it',
      querystring: VideoListQuery,
      response: { 200: Type.Union([Type.Array(Video), Type.Object({ videos: Type.Array(Video), summary: Summary })]) },
    },
  }, async (req) => videos.list(req.auth.organizationId, req.query, config.listDefaultCap));

  app.get('/v1/videos/:id', {
    schema: { tags, summary: 'Get a video', params: IdParams, response: { 200: Video } },
  }, async (req) => videos.get(req.auth.organizationId, req.params.id));

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/videos/:id',
      config: { wrap: 'video' },
      schema: { tags, summary: 'Update a video', params: IdParams, body: UpdateVideoBody, response: { 200: Video } },
      handler: async (req) => videos.update(req.auth.organizationId, req.params.id, req.body),
    });
  }

  app.delete('/v1/videos/:id', {
    schema: { tags, summary: 'Delete a video (its chapters go with it)', params: IdParams, response: { 200: Video } },
  }, async (req) => videos.delete(req.auth.organizationId, req.params.id));

  app.get('/v1/videos/:id/files', {
    schema: {
      tags,
      summary: 'Signed URLs of the video files (null until processed); custom_identifier selects an alternative set',
      params: IdParams,
      querystring: VideoFilesQuery,
      response: { 200: VideoFiles },
    },
  }, async (req) => videos.files(req.auth.organizationId, req.params.id, req.query.custom_identifier));
}
