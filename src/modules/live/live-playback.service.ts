import type { Readable } from 'node:stream';
import { notFound } from '../../lib/errors.ts';
import { EndedParts, readParts } from '../../live/hls-index.ts';
import { composePlaylist, type PartPlaylist } from '../../live/hls-playlist.ts';
import { segmentKey } from '../../live/paths.ts';
import type { FileStore } from '../../media/file-store.ts';
import type { LiveRepository } from './live.repository.ts';

/**
 * What a viewer of a live instance is served over HLS: the playlist (with DVR the whole broadcast,
 * without it a short window at the live edge; ended once the broadcast is over) and its segments,
 * the publisher's media remuxed, never transcoded. Both come from the file store, where the ingest
 * publishes them (src/live/hls-publisher.ts), so every process sharing the store and the database
 * serves every broadcast, wherever it is received.
 */
export class LivePlaybackService {
  /** Parts that ended never change: read once. */
  private readonly ended = new EndedParts();
  /** Viewers asking at the same moment share one read of the store. */
  private readonly reading = new Map<string, Promise<PartPlaylist[]>>();

  constructor(
    private readonly store: FileStore,
    private readonly live: LiveRepository,
  ) {}

  private parts(playerUuid: string): Promise<PartPlaylist[]> {
    let pending = this.reading.get(playerUuid);
    if (!pending) {
      pending = readParts(this.store, playerUuid, this.ended).finally(() => this.reading.delete(playerUuid));
      this.reading.set(playerUuid, pending);
    }
    return pending;
  }

  /** The playlist of the player's broadcast, and whether it is still on air. */
  async playlist(playerUuid: string): Promise<{ text: string; onAir: boolean }> {
    const instance = await this.live.findByPlayerUuid(playerUuid.toLowerCase());
    if (!instance || instance.status === 'unaired') throw notFound('live broadcast');
    const parts = await this.parts(instance.player_uuid);
    if (!parts.some((p) => p.segments.length > 0)) throw notFound('live broadcast');
    const onAir = instance.status === 'live';
    return { text: composePlaylist(parts, { dvr: Boolean(instance.dvr_enabled), ended: !onAir, segmentLength: instance.segment_length }), onAir };
  }

  /** The video of the player's live instance (the chapter it plays in), null when it has none. */
  async videoIdOf(playerUuid: string): Promise<number | null> {
    return (await this.live.findByPlayerUuid(playerUuid.toLowerCase()))?.video_id ?? null;
  }

  /** A segment of the player's broadcast (names already checked against the packager's): its size and bytes. */
  async segment(playerUuid: string, part: string, segment: string): Promise<{ size: number; stream: Readable }> {
    const instance = await this.live.findByPlayerUuid(playerUuid.toLowerCase());
    if (!instance) throw notFound('segment');
    const key = segmentKey(instance.player_uuid, part, segment);
    // Asked together: one round trip to an object store.
    // The stream's open can fail (a missing local file) before stat answers: a listener from the start,
    // so that the failure is ours to read below rather than an unhandled 'error' event.
    const opening = this.store.createReadStream(key).then((stream) => stream.once('error', () => {}));
    const [stat, opened] = await Promise.allSettled([this.store.stat(key), opening]);
    if (stat.status === 'fulfilled' && stat.value && opened.status === 'fulfilled') return { size: stat.value.size, stream: opened.value };
    if (opened.status === 'fulfilled') opened.value.on('error', () => {}).destroy();
    if (stat.status === 'rejected') throw stat.reason;
    if (opened.status === 'rejected' && stat.value && (opened.reason as NodeJS.ErrnoException | null)?.code !== 'ENOENT') throw opened.reason;
    throw notFound('segment');
  }
}
