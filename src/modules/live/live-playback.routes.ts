import fs from 'node:fs';
import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { PART_NAME, SEGMENT_NAME } from '../../live/paths.ts';

const PlaylistParams = Type.Object({ player_uuid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-fA-F-]+$' }) });
const SegmentParams = Type.Object({
  player_uuid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-fA-F-]+$' }),
  part: Type.String({ pattern: PART_NAME.source }),
  segment: Type.String({ pattern: SEGMENT_NAME.source }),
});

/**
 * Public HLS playback of a live instance, by its player's UUID (no token: like the watch page):
 * GET /live/<player_uuid>/index.m3u8 and its segments (LivePlaybackService).
 */
export default async function livePlaybackRoutes(app: App, { services }: Deps) {
  const playback = services.livePlayback;
  const common = { public: true, media: true } as const;

  app.get(
    '/live/:player_uuid/index.m3u8',
    {
      config: common,
      schema: { hide: true, params: PlaylistParams },
    },
    async (req, reply) => {
      const { text, onAir } = await playback.playlist(req.params.player_uuid);
      return reply
        .header('access-control-allow-origin', '*')
        .header('cache-control', onAir ? 'no-cache' : 'public, max-age=60')
        .type('application/vnd.apple.mpegurl')
        .send(text);
    },
  );

  app.get(
    '/live/:player_uuid/:part/:segment',
    {
      config: common,
      schema: { hide: true, params: SegmentParams },
    },
    async (req, reply) => {
      const { file, size } = await playback.segment(req.params.player_uuid, req.params.part, req.params.segment);
      return reply
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'public, max-age=86400, immutable')
        .header('content-length', size)
        .type('video/mp2t')
        .send(fs.createReadStream(file));
    },
  );
}
