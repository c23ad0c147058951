import fs from 'node:fs';
import path from 'node:path';
import { notFound } from '../../lib/errors.ts';
import { composePlaylist } from '../../live/hls-playlist.ts';
import { liveDir, readParts } from '../../live/paths.ts';
import type { LiveRepository } from './live.repository.ts';

/**
 * What a viewer of a live instance is served over HLS: the playlist (with DVR the whole broadcast,
 * without it a short window at the live edge; ended once the broadcast is over) and its segments,
 * the publisher's media remuxed, never transcoded.
 */
export class LivePlaybackService {
  constructor(
    private readonly dataDir: string,
    private readonly live: LiveRepository,
  ) {}

  /** The playlist of the player's broadcast, and whether it is still on air. */
  async playlist(playerUuid: string): Promise<{ text: string; onAir: boolean }> {
    const instance = await this.live.findByPlayerUuid(playerUuid.toLowerCase());
    if (!instance || instance.status === 'unaired') throw notFound('live broadcast');
    const parts = await readParts(liveDir(this.dataDir, instance.player_uuid));
    if (!parts.some((p) => p.segments.length > 0)) throw notFound('live broadcast');
    const onAir = instance.status === 'live';
    return { text: composePlaylist(parts, { dvr: Boolean(instance.dvr_enabled), ended: !onAir, segmentLength: instance.segment_length }), onAir };
  }

  /** A segment file of the player's broadcast (names already checked against the packager's). */
  async segment(playerUuid: string, part: string, segment: string): Promise<{ file: string; size: number }> {
    const instance = await this.live.findByPlayerUuid(playerUuid.toLowerCase());
    if (!instance) throw notFound('segment');
    const file = path.join(liveDir(this.dataDir, instance.player_uuid), part, segment);
    const stat = await fs.promises.stat(file).catch(() => null);
    if (!stat?.isFile()) throw notFound('segment');
    return { file, size: stat.size };
  }
}
