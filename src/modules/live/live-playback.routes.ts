import fs from 'node:fs';
import path from 'node:path';
import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { notFound } from '../../lib/errors.ts';
import { composePlaylist } from '../../live/hls-playlist.ts';
import { liveDir, PART_NAME, readParts, SEGMENT_NAME } from '../../live/paths.ts';
import { LiveRepository } from './live.repository.ts';

const PlaylistParams = Type.Object({ player_uuid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-fA-F-]+$' }) });
const SegmentParams = Type.Object({
  player_uuid: Type.String({ minLength: 1, maxLength: 64, pattern: '^[0-9a-fA-F-]+$' }),
  part: Type.String({ pattern: PART_NAME.source }),
  segment: Type.String({ pattern: SEGMENT_NAME.source }),
});

/**
 * Public HLS playback of a live instance, by its player's UUID (no token: like the watch page):
 * GET /live/<player_uuid>/index.m3u8 and its segments. With DVR the playlist holds the whole
 * broadcast, without it a short window at the live edge; it ends (#EXT-X-ENDLIST) once the
 * broadcast is over. Segments are the publisher's media remuxed, never transcoded.
 */
export default async function livePlaybackRoutes(app: App, { database, config }: Deps) {
  const repo = new LiveRepository(database.db);
  const common = { public: true, media: true } as const;

  app.get('/live/:player_uuid/index.m3u8', {
    config: common,
    schema: { hide: true, params: PlaylistParams },
  }, async (req, reply) => {
    const instance = await repo.findByPlayerUuid(req.params.player_uuid.toLowerCase());
    if (!instance || instance.status === 'unaired') throw notFound('live broadcast');
    const parts = await readParts(liveDir(config.dataDir, instance.player_uuid));
    if (!parts.some((p) => p.segments.length > 0)) throw notFound('live broadcast');
    const text = composePlaylist(parts, { dvr: Boolean(instance.dvr_enabled), ended: instance.status !== 'live', segmentLength: instance.segment_length });
    return reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', instance.status === 'live' ? 'no-cache' : 'public, max-age=60')
      .type('application/vnd.apple.mpegurl')
      .send(text);
  });

  app.get('/live/:player_uuid/:part/:segment', {
    config: common,
    schema: { hide: true, params: SegmentParams },
  }, async (req, reply) => {
    const instance = await repo.findByPlayerUuid(req.params.player_uuid.toLowerCase());
    if (!instance) throw notFound('segment');
    const file = path.join(liveDir(config.dataDir, instance.player_uuid), req.params.part, req.params.segment);
    const stat = await fs.promises.stat(file).catch(() => null);
    if (!stat?.isFile()) throw notFound('segment');
    return reply
      .header('access-control-allow-origin', '*')
      .header('cache-control', 'public, max-age=86400, immutable')
      .header('content-length', stat.size)
      .type('video/mp2t')
      .send(fs.createReadStream(file));
  });
}
