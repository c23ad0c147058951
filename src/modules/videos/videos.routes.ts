import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import { Summary } from '../../lib/schemas.ts';
import {
  CreateVideoBody,
  DeleteFileSetQuery,
  RegisterFileSetBody,
  UpdateVideoBody,
  Video,
  VideoFiles,
  VideoFileSet,
  VideoFilesQuery,
  VideoListQuery,
  VideoParams,
} from './videos.schemas.ts';

const tags = ['videos'];

export default async function videosRoutes(app: App, { config, services }: Deps) {
  const videos = services.videos;
  const videoMedia = services.videoMedia;

  app.post(
    '/v1/videos',
    {
      config: { wrap: 'video' },
      schema: { tags, summary: 'Create a video (and its facade player)', body: CreateVideoBody, response: { 201: Video } },
    },
    async (req, reply) => reply.code(201).send(await services.playerVideos.create(req.auth.organizationId, req.body)),
  );

  app.get(
    '/v1/videos',
    {
      config: { list: 'videos' },
      schema: {
        tags,
        summary: 'List videos: a bare array without per_page, {videos, summary} with it',
        querystring: VideoListQuery,
        response: { 200: Type.Union([Type.Array(Video), Type.Object({ videos: Type.Array(Video), summary: Summary })]) },
      },
    },
    async (req) => {
      // Without per_page the reference answers a bare array; with it, the envelope.
      return answerArrayOrEnvelope('videos', req.query, config.listDefaultCap, (page) => videos.list(req.auth.organizationId, req.query, page));
    },
  );

  app.get(
    '/v1/videos/:id',
    {
      schema: { tags, summary: 'Get a video', params: VideoParams, response: { 200: Video } },
    },
    async (req) => videos.get(req.auth.organizationId, req.params.id),
  );

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/videos/:id',
      config: { wrap: 'video' },
      schema: { tags, summary: 'Update a video', params: VideoParams, body: UpdateVideoBody, response: { 200: Video } },
      handler: async (req) => videos.update(req.auth.organizationId, req.params.id, req.body),
    });
  }

  app.delete(
    '/v1/videos/:id',
    {
      schema: { tags, summary: 'Delete a video (its chapters go with it)', params: VideoParams, response: { 200: Video } },
    },
    async (req) => services.playerVideos.delete(req.auth.organizationId, req.params.id),
  );

  app.get(
    '/v1/videos/:id/files',
    {
      schema: {
        tags,
        summary: 'Signed URLs of the video files (null until processed); custom_identifier selects an alternative set',
        params: VideoParams,
        querystring: VideoFilesQuery,
        response: { 200: VideoFiles },
      },
    },
    async (req) => videoMedia.files(req.auth.organizationId, req.params.id, req.query.custom_identifier),
  );

  app.post(
    '/v1/videos/:id/files',
    {
      config: { wrap: 'file_set' },
      schema: {
        tags,
        summary: 'Register an alternative file set (custom_identifier) whose sd/hd renditions are fetched from URLs',
        params: VideoParams,
        body: RegisterFileSetBody,
        response: { 202: VideoFileSet },
      },
    },
    async (req, reply) => reply.code(202).send(await videoMedia.registerSet(req.auth.organizationId, req.params.id, req.body)),
  );

  app.get(
    '/v1/videos/:id/file_sets',
    {
      config: { list: '' },
      schema: { tags, summary: 'The custom file sets of a video, with their status', params: VideoParams, response: { 200: Type.Array(VideoFileSet) } },
    },
    async (req) => videoMedia.listSets(req.auth.organizationId, req.params.id),
  );

  app.delete(
    '/v1/videos/:id/files',
    {
      schema: {
        tags,
        summary: 'Remove a custom file set and its files',
        params: VideoParams,
        querystring: DeleteFileSetQuery,
        response: { 200: VideoFileSet },
      },
    },
    async (req) => videoMedia.deleteSet(req.auth.organizationId, req.params.id, req.query.custom_identifier),
  );
}
