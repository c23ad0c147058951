import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import { nowSeconds } from '../../lib/time.ts';
import { enqueue } from '../job-kinds.ts';
import type { PlayersService } from '../players/players.service.ts';
import { insertInstance, parseTags, type LiveRepositories } from './live-instances.ts';
import type { FeedRole, LiveInstanceRow, LiveRepository } from './live.repository.ts';

export type PublishCheck = { ok: true; streamId: number } | { ok: false; reason: string };

export interface LiveBroadcastInfo {
  instance: LiveInstanceRow;
  /** The broadcast started now (unaired → live, or a new instance of a recurring stream). */
  started: boolean;
}

/**
 * How long a holder's heartbeat counts: a holder beats every health interval, so three missed beats
 * and it no longer holds its feeds; a broadcast nobody beat for the reconnect window on top of that is over.
 */
export function liveTiming(live: Config['live']): { heldMs: number; staleAfterMs: number } {
  const heldMs = 3 * live.healthIntervalSeconds * 1000 + 2000;
  return { heldMs, staleAfterMs: live.reconnectWindowSeconds * 1000 + heldMs };
}

/**
 * The rules of a broadcast's life, used by the RTMP ingest and the recording job:
 * unaired → live (media arrives) → processing (the publisher is gone for longer than the reconnect
 * window) → ready (the recording is a video). Every transition is a conditional update, so that
 * ingest processes sharing a database never both apply one.
 */
export class LiveStateService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly timing: {
      /** A holder that beat within this long (ms) still receives its feeds (a few heartbeat intervals). */
      heldMs: number;
      /** After this long without a heartbeat (ms) the broadcast is ended by whoever notices (reconnect window and more). */
      staleAfterMs: number;
    },
    private readonly repo: LiveRepository,
    private readonly repos: LiveRepositories,
    private readonly players: PlayersService,
  ) {}

  /** The holding ingest is alive: a publisher that reconnects elsewhere after it died is let in at once. */
  private fresh(row: LiveInstanceRow, now: number): boolean {
    return row.ingest_heartbeat_at !== null && now - row.ingest_heartbeat_at < this.timing.heldMs;
  }

  /** May this key publish on this feed now? (Checked when the publisher says `publish`.) */
  async checkPublish(role: FeedRole, key: string, ingestSession: string): Promise<PublishCheck> {
    if (!key) return { ok: false, reason: 'A stream key is required' };
    const stream = await this.repo.findStreamByKey(role, key);
    if (!stream || (role === 'backup' && !stream.has_redundant_streams)) return { ok: false, reason: 'Unknown stream key' };
    const latest = await this.repo.latestOfStream(stream.id);
    if (!latest) return { ok: false, reason: 'Unknown stream key' };
    const now = Date.now();
    switch (latest.status) {
      case 'unaired':
        return { ok: true, streamId: stream.id };
      case 'live': {
        const held = role === 'primary' ? latest.primary_session : latest.backup_session;
        if (held !== null && this.fresh(latest, now)) return { ok: false, reason: 'This stream is already being published' };
        // Another ingest still holding the broadcast with a feed connected keeps it.
        const otherFeed = role === 'primary' ? latest.backup_session : latest.primary_session;
        if (latest.ingest_session !== ingestSession && otherFeed !== null && this.fresh(latest, now)) {
          return { ok: false, reason: 'This stream is being received by another ingest server' };
        }
        return { ok: true, streamId: stream.id };
      }
      default:
        return stream.recurring ? { ok: true, streamId: stream.id } : { ok: false, reason: 'This broadcast has ended' };
    }
  }

  /**
   * Media arrived on a feed: the stream's current instance goes (or stays) live and this ingest
   * session holds it. A recurring stream whose last broadcast ended starts a new instance.
   * null when the stream was deleted or may not broadcast any more.
   */
  async startOrContinue(streamId: number, role: FeedRole, feedSession: string, ingestSession: string): Promise<LiveBroadcastInfo | null> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await this.db.transaction().execute(async (trx): Promise<LiveBroadcastInfo | null | 'retry'> => {
        const repo = this.repo.with(trx);
        const stream = await repo.findStream(streamId);
        if (!stream || stream.deleted_at !== null) return null;
        const latest = await repo.latestOfStream(streamId);
        if (!latest) return null;
        const nowMs = Date.now();
        const now = Math.floor(nowMs / 1000);
        const feed = role === 'primary' ? { primary_session: feedSession } : { backup_session: feedSession };
        if (latest.status === 'unaired') {
          const row = await repo.goLive(latest.id, {
            status: 'live',
            start_time: now,
            ingest_session: ingestSession,
            ingest_heartbeat_at: nowMs,
            ...feed,
            updated_at: now,
          });
          if (!row) return 'retry';
          if (!row.disable_notifications) await enqueue(trx, 'live.notify', { instance_id: row.id });
          return { instance: row, started: true };
        }
        if (latest.status === 'live') {
          const row = await repo.continueLive(latest.id, { ingest_session: ingestSession, ingest_heartbeat_at: nowMs, ...feed });
          return row ? { instance: row, started: false } : 'retry';
        }
        if (!stream.recurring) return null;
        const row = await insertInstance(
          trx,
          this.repos,
          stream,
          {
            name: latest.name,
            description: latest.description,
            tags: parseTags(latest.tags),
            air_date: null,
            segment_length: latest.segment_length,
            dvr_enabled: Boolean(latest.dvr_enabled),
            disable_notifications: Boolean(latest.disable_notifications),
            email: latest.email,
          },
          now,
          { startTime: now, session: ingestSession, heartbeat: nowMs, feed: { role, session: feedSession } },
        );
        if (!row.disable_notifications) await enqueue(trx, 'live.notify', { instance_id: row.id });
        // A recurring stream's new instance has a new facade player: announced like every new player.
        if (row.player_id !== null)
          await this.players.announce(trx, row.organization_id, 'create', await this.players.get(row.organization_id, row.player_id, trx));
        return { instance: row, started: true };
      });
      if (result !== 'retry') return result;
    }
    return null;
  }

  /** The holder's periodic report; false when the broadcast was deleted, revoked or taken over. */
  heartbeat(instanceId: number, ingestSession: string, health: { primary: object | null; backup: object | null }): Promise<boolean> {
    const nowMs = Date.now();
    return this.repo.heartbeat(instanceId, ingestSession, {
      ingest_heartbeat_at: nowMs,
      health_primary: health.primary ? JSON.stringify(health.primary) : null,
      health_backup: health.backup ? JSON.stringify(health.backup) : null,
      health_at: nowMs,
    });
  }

  releaseFeed(instanceId: number, role: FeedRole, feedSession: string): Promise<void> {
    return this.repo.releaseFeed(instanceId, role, feedSession);
  }

  /** Which of these streams still exist (not deleted). */
  async activeStreams(ids: number[]): Promise<Set<number>> {
    const rows = await this.repo.findStreams(ids);
    return new Set(rows.filter((r) => r.deleted_at === null).map((r) => r.id));
  }

  /** Whether the broadcast of this player is on air (live), received by some ingest. */
  async onAir(playerUuid: string): Promise<boolean> {
    return (await this.repo.findByPlayerUuid(playerUuid.toLowerCase()))?.status === 'live';
  }

  /** The broadcast is over (the reconnect window passed): live → processing, and the recording is queued. */
  async end(instanceId: number, ingestSession: string, endTime: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.repo.with(trx).endLive(instanceId, ingestSession, this.endChanges(endTime));
      if (!row) return false;
      await this.afterEnd(trx, row);
      return true;
    });
  }

  /** Broadcasts whose ingest died (no heartbeat for the window and some): ended the same way. */
  async endStale(): Promise<number> {
    const before = Date.now() - this.timing.staleAfterMs;
    let ended = 0;
    for (const candidate of await this.repo.staleLive(before)) {
      const endTime = candidate.ingest_heartbeat_at !== null ? Math.floor(candidate.ingest_heartbeat_at / 1000) : nowSeconds();
      const done = await this.db.transaction().execute(async (trx) => {
        const row = await this.repo.with(trx).endStale(candidate.id, before, this.endChanges(endTime));
        if (row) await this.afterEnd(trx, row);
        return row !== undefined;
      });
      if (done) ended++;
    }
    return ended;
  }

  private endChanges(endTime: number) {
    return {
      status: 'processing',
      end_time: endTime,
      ingest_session: null,
      primary_session: null,
      backup_session: null,
      health_primary: null,
      health_backup: null,
      updated_at: nowSeconds(),
    };
  }

  private async afterEnd(trx: Kysely<DB>, row: LiveInstanceRow) {
    if (row.video_id !== null) await this.repos.videos.with(trx).update(row.organization_id, row.video_id, { status: 'processing', updated_at: nowSeconds() });
    await enqueue(trx, 'live.record', { instance_id: row.id });
  }
}
