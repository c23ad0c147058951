import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { App, Deps } from '../../http/context.ts';
import { answerArrayOrEnvelope } from '../../http/paging.ts';
import { ErrorBody } from '../../http/schemas.ts';
import {
  Caption,
  CaptionList,
  CaptionListQuery,
  CaptionParams,
  ContentQuery,
  ContentStatus,
  CreateCaptionBody,
  type ContentFormat,
  FileParams,
  FileQuery,
  UpdateCaptionBody,
  VideoCaptionsParams,
} from './captions.schemas.ts';
import type { CaptionFile } from './captions.service.ts';

const tags = ['captions'];

/** Response schema of the file operations, one entry per media type (OpenAPI only; text is sent as is). */
const FileResponse = {
  description: 'The caption file',
  content: {
    'text/vtt': { schema: Type.String() },
    'application/x-subrip': { schema: Type.String() },
    'text/plain': { schema: Type.String() },
  },
};

/** The format asked for by Accept when `format` is not given: text/vtt, application/x-subrip or text/plain. */
function formatFromAccept(accept: string | undefined): ContentFormat | undefined {
  const types = (accept ?? '')
    .toLowerCase()
    .split(',')
    .map((t) => t.split(';')[0].trim());
  for (const type of types) {
    if (type === 'text/vtt') return 'vtt';
    if (type === 'application/x-subrip' || type === 'text/srt') return 'srt';
    if (type === 'text/plain') return 'txt';
  }
  return undefined;
}

function sendFile(reply: FastifyReply, file: CaptionFile, download: boolean | undefined) {
  reply.type(file.type);
  if (download) reply.header('content-disposition', `attachment; filename="${file.filename}"`);
  return reply.send(file.body);
}

export default async function captionsRoutes(app: App, { config, services }: Deps) {
  const service = services.captions;

  app.get(
    '/v1/videos/:video_id/captions',
    {
      config: { list: 'captions' },
      schema: {
        tags,
        summary: "List a video's captions: a bare array without per_page, {captions, summary} with it",
        description:
          'Filter by `language` (`en` also matches `en-US`) and `status`; sort with `sort_by` (created_at, updated_at, language) and `direction` (asc, desc). Default order: id ascending.',
        params: VideoCaptionsParams,
        querystring: CaptionListQuery,
        response: { 200: CaptionList },
      },
    },
    async (req) => {
      // Like GET /v1/videos: a bare array without per_page, the envelope with it.
      return answerArrayOrEnvelope('captions', req.query, config.listDefaultCap, (page) =>
        service.list(req.auth.organizationId, req.params.video_id, req.query, page),
      );
    },
  );

  app.post(
    '/v1/videos/:video_id/captions',
    {
      config: { wrap: 'caption' },
      schema: {
        tags,
        summary: 'Add a caption: SRT or WebVTT text in `content`, or fetched from `srt_url` / `vtt_url` (SRT wins when both)',
        params: VideoCaptionsParams,
        body: CreateCaptionBody,
        response: { 201: Caption },
      },
    },
    async (req, reply) => reply.code(201).send(await service.create(req.auth.organizationId, req.params.video_id, req.body)),
  );

  app.get(
    '/v1/captions/:id',
    {
      schema: { tags, summary: 'Get a caption', params: CaptionParams, response: { 200: Caption } },
    },
    async (req) => service.get(req.auth.organizationId, req.params.id),
  );

  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/captions/:id',
      config: { wrap: 'caption' },
      schema: {
        tags,
        summary: 'Update a caption: language, is_default, notes, or a new file (content, srt_url, vtt_url), which is processed again',
        params: CaptionParams,
        body: UpdateCaptionBody,
        response: { 200: Caption },
      },
      handler: async (req) => service.update(req.auth.organizationId, req.params.id, req.body),
    });
  }

  app.delete(
    '/v1/captions/:id',
    {
      schema: { tags, summary: 'Delete a caption; answers the deleted caption', params: CaptionParams, response: { 200: Caption } },
    },
    async (req) => service.delete(req.auth.organizationId, req.params.id),
  );

  app.get(
    '/v1/captions/:id/content/status',
    {
      schema: {
        tags,
        summary: 'Processing status of the caption file (with the parse error, naming the line)',
        params: CaptionParams,
        response: { 200: ContentStatus },
      },
    },
    async (req) => service.contentStatus(req.auth.organizationId, req.params.id),
  );

  app.get(
    '/v1/captions/:id/content',
    {
      // A file, not JSON: any Accept is served (text/vtt, application/x-subrip, text/plain pick the format).
      config: { media: true },
      schema: {
        tags,
        summary: 'The caption file: WebVTT (text/vtt) by default; format=srt or txt (or Accept) converts; download=true serves an attachment',
        params: CaptionParams,
        querystring: ContentQuery,
        response: { 200: FileResponse, 409: ErrorBody },
      },
    },
    async (req, reply) => {
      const format = req.query.format ?? formatFromAccept(req.headers.accept) ?? 'vtt';
      return sendFile(reply, await service.content(req.auth.organizationId, req.params.id, format), req.query.download);
    },
  );

  app.patch(
    '/v1/captions/:id/draft',
    {
      schema: { tags, summary: 'Set a caption to draft (from complete or published)', params: CaptionParams, response: { 200: Caption, 400: ErrorBody } },
    },
    async (req) => service.setDraft(req.auth.organizationId, req.params.id),
  );

  app.patch(
    '/v1/captions/:id/publish',
    {
      schema: { tags, summary: 'Publish a caption (from draft or complete, else 400)', params: CaptionParams, response: { 200: Caption, 400: ErrorBody } },
    },
    async (req) => service.publish(req.auth.organizationId, req.params.id),
  );

  // The target of the signed srt_url / vtt_url / txt_url (and *_download_url): no token, the signature
  // authorises the read until it expires.
  app.get(
    '/v1/captions/:id/files/:file',
    {
      config: { public: true, media: true },
      schema: {
        tags,
        summary: "A caption file behind a signed, expiring URL (as given in a caption's *_url fields)",
        params: FileParams,
        querystring: FileQuery,
        response: { 200: FileResponse, 403: ErrorBody, 409: ErrorBody },
      },
    },
    async (req, reply) => {
      const file = await service.signedFile(req.params.id, req.params.file, req.query.expires, req.query.signature, req.ip);
      reply.header('cache-control', 'private, max-age=300');
      return sendFile(reply, file, req.query.download);
    },
  );
}
