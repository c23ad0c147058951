import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { sendFile } from '../../http/file-response.ts';
import { AppError } from '../../lib/errors.ts';
import { PART_NAME, SEGMENT_NAME } from '../../live/paths.ts';

const Uuid = Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-fA-F-]+$' });
const Grant = Type.String({ minLength: 1, maxLength: 80 });
const GrantParams = Type.Object({ uuid: Uuid, grant: Grant });
const FileParams = Type.Object({ uuid: Uuid, grant: Grant, '*': Type.String({ minLength: 1, maxLength: 512 }) });
const CaptionParams = Type.Object({ uuid: Uuid, grant: Grant, file: Type.String({ pattern: '^[0-9]{1,10}\\.(vtt|m3u8)$' }) });
/** LL-HLS delivery directives of a blocking playlist reload (segments only: no partial segments are made). */
const LiveDirectives = Type.Object({
  _HLS_msn: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
  _HLS_part: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647 })),
});
const SegmentParams = Type.Object({
  uuid: Uuid,
  grant: Grant,
  part: Type.String({ pattern: PART_NAME.source }),
  segment: Type.String({ pattern: SEGMENT_NAME.source }),
});

/**
 * The media of a player's pages, for viewers who passed them (docs/watch.md): every URL carries the
 * viewer's playback grant as a path segment, `/play/<player uuid>/<grant>/…`, so that a playlist's
 * relative segment URLs carry it too. No token, no cookie.
 */
export default async function playbackRoutes(app: App, { services }: Deps) {
  const playback = services.playback;
  const common = { public: true, media: true } as const;

  app.route({
    method: ['GET', 'HEAD'],
    url: '/play/:uuid/:grant/files/*',
    exposeHeadRoute: false,
    config: common,
    schema: { hide: true, params: FileParams },
    handler: async (req, reply) => {
      const { uuid, grant, '*': key } = req.params;
      if (!key.endsWith('.m3u8')) return sendFile(req, reply, await playback.file(uuid, grant, req.ip, key));
      const text = await playback.playlist(uuid, grant, req.ip, key);
      // Short: captions published meanwhile join the master at the next load, a gate removed lifts its cut.
      return reply
        .header('cache-control', 'private, max-age=60')
        .type('application/vnd.apple.mpegurl')
        .send(req.method === 'HEAD' ? undefined : text);
    },
  });

  app.get('/play/:uuid/:grant/captions/:file', { config: common, schema: { hide: true, params: CaptionParams } }, async (req, reply) => {
    const id = Number.parseInt(req.params.file, 10);
    if (req.params.file.endsWith('.m3u8')) {
      const text = await playback.captionPlaylist(req.params.uuid, req.params.grant, req.ip, id);
      return reply.type('application/vnd.apple.mpegurl').header('cache-control', 'private, max-age=300').send(text);
    }
    const caption = await playback.caption(req.params.uuid, req.params.grant, req.ip, id);
    return reply.type(caption.type).header('cache-control', 'private, max-age=300').send(caption.body);
  });

  app.get(
    '/play/:uuid/:grant/live/index.m3u8',
    { config: common, schema: { hide: true, params: GrantParams, querystring: LiveDirectives } },
    async (req, reply) => {
      const { text, onAir } = await playback.livePlaylist(req.params.uuid, req.params.grant, req.ip, req.query._HLS_msn);
      return reply
        .header('cache-control', onAir ? 'private, no-cache' : 'private, max-age=60')
        .type('application/vnd.apple.mpegurl')
        .send(text);
    },
  );

  app.get('/play/:uuid/:grant/live/:part/:segment', { config: common, schema: { hide: true, params: SegmentParams } }, async (req, reply) => {
    const { size, stream } = await playback.liveSegment(req.params.uuid, req.params.grant, req.ip, req.params.part, req.params.segment);
    return reply.header('cache-control', 'private, max-age=86400, immutable').header('content-length', size).type('video/mp2t').send(stream);
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: '/posters/:uuid',
    exposeHeadRoute: false,
    config: common,
    schema: { hide: true, params: Type.Object({ uuid: Uuid }) },
    handler: async (req, reply) => sendFile(req, reply, await playback.poster(req.params.uuid, req.ip)),
  });

  // The public HLS address of earlier versions: live output is now only for viewers of the page.
  app.get('/live/*', { config: common, schema: { hide: true } }, async () => {
    throw new AppError('forbidden', "Live playback is for viewers of the player's page: open /watch/<player uuid> (docs/live.md)");
  });
}
