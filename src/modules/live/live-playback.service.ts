import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, notFound } from '../../lib/errors.ts';
import { EndedParts, readParts } from '../../live/hls-index.ts';
import { composePlaylist, type PartPlaylist } from '../../live/hls-playlist.ts';
import { segmentKey } from '../../live/paths.ts';
import type { FileStore } from '../../media/file-store.ts';
import type { LiveRepository } from './live.repository.ts';

/** How often a waiting playlist request looks for the next segment (and how long one read serves all). */
const POLL_MS = 100;

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
  /**
   * One read of the store per broadcast serves every viewer asking within POLL_MS, those waiting
   * for the next segment included: a broadcast costs the store at most a read per POLL_MS per
   * process, however many watch it.
   */
  private readonly recent = new Map<string, Promise<PartPlaylist[]>>();

  constructor(
    private readonly store: FileStore,
    private readonly live: LiveRepository,
  ) {}

  private parts(playerUuid: string): Promise<PartPlaylist[]> {
    let pending = this.recent.get(playerUuid);
    if (!pending) {
      pending = readParts(this.store, playerUuid, this.ended);
      this.recent.set(playerUuid, pending);
      const forget = () => setTimeout(() => this.recent.get(playerUuid) === pending && this.recent.delete(playerUuid), POLL_MS).unref();
      pending.then(forget, () => this.recent.delete(playerUuid));
    }
    return pending;
  }

  /**
   * The playlist of the player's broadcast, and whether it is still on air. With `nextSegment` (the
   * media sequence number of a segment not yet listed, LL-HLS's `_HLS_msn`), a blocking reload: the
   * answer waits until that segment is listed, so a player learns of each segment as it is published
   * rather than up to a poll interval later, and joins at the same distance from the edge every time
   * (docs/watch.md, "Live latency").
   */
  async playlist(playerUuid: string, nextSegment?: number): Promise<{ text: string; onAir: boolean }> {
    const instance = await this.live.findByPlayerUuid(playerUuid.toLowerCase());
    if (!instance || instance.status === 'unaired') throw notFound('live broadcast');
    const onAir = instance.status === 'live';
    // LL-HLS: held at most three target durations, then 503 (the player asks again).
    const deadline = Date.now() + 3 * instance.segment_length * 1000;
    let parts = await this.parts(instance.player_uuid);
    while (onAir && nextSegment !== undefined && !parts.at(-1)?.ended) {
      const listed = parts.reduce((n, p) => n + p.segments.length, 0);
      if (nextSegment < listed) break;
      if (nextSegment > listed + 1)
        throw new AppError('bad_request', `_HLS_msn ${nextSegment} is more than two segments past the last one listed (${listed - 1})`);
      if (Date.now() >= deadline) throw new AppError('not_yet_available', `Segment ${nextSegment} of the broadcast is not published yet`);
      await sleep(POLL_MS);
      parts = await this.parts(instance.player_uuid);
    }
    if (!parts.some((p) => p.segments.length > 0)) throw notFound('live broadcast');
    return {
      text: composePlaylist(parts, { dvr: Boolean(instance.dvr_enabled), ended: !onAir, segmentLength: instance.segment_length, blockingReload: onAir }),
      onAir,
    };
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
