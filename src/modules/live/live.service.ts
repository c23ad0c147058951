import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import type { AuthContext } from '../tokens/auth-context.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { enqueue } from '../../jobs/queue.ts';
import { liveSignals } from '../../live/signals.ts';
import { nowSeconds } from '../../lib/time.ts';
import { newUuid } from '../../lib/tokens.ts';
import { ChaptersRepository } from '../chapters/chapters.repository.ts';
import { OrganizationsRepository } from '../organizations/organizations.repository.ts';
import { PlayersRepository } from '../players/players.repository.ts';
import { can } from '../roles/permissions.ts';
import { VideosRepository } from '../videos/videos.repository.ts';
import { LiveRepository, type LiveInstanceRow, type LiveListOrder, type LiveStreamRow } from './live.repository.ts';
import type { CreateLiveBody, LiveListItem, LiveListQuery, LiveState, StreamTagsInput, UpdateLiveBody } from './live.schemas.ts';

/** Job types of live streams (handlers in src/jobs/handlers/live-*.ts). */
export const LIVE_RECORD_JOB = 'live.record';
export const LIVE_NOTIFY_JOB = 'live.notify';
export const LIVE_CLEANUP_JOB = 'live.cleanup';

export const DEFAULT_SEGMENT_LENGTH = 4;

const STATE_STATUSES: Record<LiveState, string[]> = {
  upcoming: ['unaired'],
  ongoing: ['live'],
  finished: ['processing', 'ready'],
};

/** A new ingest credential: 192 random bits, URL-safe. */
export const newStreamKey = () => `live_${randomBytes(24).toString('base64url')}`;

/** Tags as stored and answered: an array per tag (a plain tag is `[name]`). */
export function normalizeTags(input: StreamTagsInput, field: string): string[][] {
  return input.map((tag, i) => {
    const parts = (Array.isArray(tag) ? tag : [tag]).map((p) => p.trim());
    if (parts.some((p) => p === '')) throw invalidField(`${field}.${i}`, 'must not be blank');
    return parts;
  });
}

export function parseTags(text: string): string[][] {
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value.filter(Array.isArray).map((t: unknown[]) => t.map(String)) : [];
  } catch {
    return [];
  }
}

/** What `query` searches: the name and every tag part, lower case, one per line. */
export const searchText = (name: string, tags: string[][]) => [name, ...tags.flat()].join('\n').toLowerCase();

/** An ISO 8601 date-time (already validated by the schema) as Unix seconds; null clears it. */
function toSeconds(iso: string | null | undefined, field: string): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso);
  // The format admits what Date cannot represent (a leap second, year 0…): refused the same way.
  if (!Number.isFinite(ms)) throw invalidField(field, 'is not a date-time that can be stored');
  return Math.floor(ms / 1000);
}

export interface InstanceAttributes {
  name: string;
  description: string;
  tags: string[][];
  air_date: number | null;
  segment_length: number;
  dvr_enabled: boolean;
  disable_notifications: boolean;
  email: string | null;
}

/**
 * A new instance of `stream` with its own video and (facade) player, made with the players and
 * videos repositories inside the caller's transaction.
 */
export async function insertInstance(
  trx: Kysely<DB>,
  stream: LiveStreamRow,
  attrs: InstanceAttributes,
  now: number,
  live?: { startTime: number; session: string; heartbeat: number; feed: { role: 'primary' | 'backup'; session: string } },
): Promise<LiveInstanceRow> {
  const organizationId = stream.organization_id;
  const video = await new VideosRepository(trx).insert({
    organization_id: organizationId,
    uuid: newUuid(),
    name: attrs.name,
    upload_url: null,
    description: attrs.description,
    status: null,
    error_message: null,
    origin: 'live',
    created_at: now,
    updated_at: now,
  });
  const player = await new PlayersRepository(trx).insert({
    organization_id: organizationId,
    uuid: newUuid(),
    name: attrs.name,
    player_type: 'video_facade',
    release_date: now,
    created_at: now,
    updated_at: now,
  });
  await new ChaptersRepository(trx).insert({ organization_id: organizationId, player_id: player.id, video_id: video.id, position: 0, created_at: now, updated_at: now });
  return new LiveRepository(trx).insertInstance({
    organization_id: organizationId,
    stream_id: stream.id,
    player_id: player.id,
    video_id: video.id,
    player_uuid: player.uuid,
    name: attrs.name,
    description: attrs.description,
    tags: JSON.stringify(attrs.tags),
    search_text: searchText(attrs.name, attrs.tags),
    segment_length: attrs.segment_length,
    dvr_enabled: attrs.dvr_enabled,
    disable_notifications: attrs.disable_notifications,
    email: attrs.email,
    air_date: attrs.air_date,
    status: live ? 'live' : 'unaired',
    start_time: live ? live.startTime : null,
    ingest_session: live?.session ?? null,
    ingest_heartbeat_at: live?.heartbeat ?? null,
    primary_session: live?.feed.role === 'primary' ? live.feed.session : null,
    backup_session: live?.feed.role === 'backup' ? live.feed.session : null,
    created_at: now,
    updated_at: now,
  });
}

function hasFeature(features: string | null, name: string): boolean {
  try {
    const parsed = JSON.parse(features ?? '{}');
    return parsed !== null && typeof parsed === 'object' && parsed[name] === true;
  } catch {
    return false;
  }
}

/** The rules of the live stream API (docs/live.md). */
export class LiveService {
  private readonly repo: LiveRepository;
  private readonly organizations: OrganizationsRepository;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly config: Config,
  ) {
    this.repo = new LiveRepository(db);
    this.organizations = new OrganizationsRepository(db);
  }

  private rtmpUrl(app: string): string {
    const host = this.config.live.ingestHost.includes(':') ? `[${this.config.live.ingestHost}]` : this.config.live.ingestHost;
    return `rtmp://${host}:${this.config.live.rtmpPort || 1935}/${app}`;
  }

  /** Only the token's organization or its descendants; any other is answered as missing. */
  private async organization(auth: AuthContext, organizationId: number): Promise<void> {
    if (!(await this.organizations.isVisible(auth.organizationId, organizationId))) throw notFound('organization', organizationId);
  }

  private async instance(auth: AuthContext, organizationId: number, id: number): Promise<LiveInstanceRow> {
    await this.organization(auth, organizationId);
    const row = await this.repo.find(organizationId, id);
    if (!row) throw notFound('live stream instance', id);
    return row;
  }

  async create(auth: AuthContext, organizationId: number, body: CreateLiveBody): Promise<{ stream_instance_id: number }> {
    await this.organization(auth, organizationId);
    const v = body.video_options;
    const name = v.video_name.trim();
    if (!name) throw invalidField('video_options.video_name', 'must not be blank');
    const tags = normalizeTags(v.stream_tags, 'video_options.stream_tags');
    const redundant = v.has_redundant_streams === true;
    if (redundant && !hasFeature(await this.repo.organizationFeatures(organizationId), 'redundant_streams')) {
      throw invalidField('video_options.has_redundant_streams', 'requires the redundant_streams feature, which is not enabled for this organization');
    }
    const email = auth.userId === null ? null : await this.repo.userEmail(auth.organizationId, auth.userId);
    return this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const stream = await this.repo.with(trx).insertStream({
        organization_id: organizationId,
        recurring: body.stream_options?.recurring === true,
        stream_key: newStreamKey(),
        backup_key: redundant ? newStreamKey() : null,
        has_redundant_streams: redundant,
        created_at: now,
        updated_at: now,
      });
      const instance = await insertInstance(trx, stream, {
        name,
        description: v.description,
        tags,
        air_date: toSeconds(v.air_date, 'video_options.air_date'),
        segment_length: v.segment_length ?? DEFAULT_SEGMENT_LENGTH,
        dvr_enabled: v.dvr_enabled === true,
        disable_notifications: v.disable_notifications === true,
        email,
      }, now);
      return { stream_instance_id: instance.id };
    });
  }

  async list(auth: AuthContext, organizationId: number, query: LiveListQuery, page: Page): Promise<Listing<LiveListItem>> {
    await this.organization(auth, organizationId);
    const filter = {
      statuses: query.states?.length ? [...new Set(query.states.flatMap((s) => STATE_STATUSES[s]))] : undefined,
      query: query.query || undefined,
    };
    // Rule 1 of the spec: order_by (and direction) only with per_page or page; direction only with order_by.
    const paging = query.per_page !== undefined || query.page !== undefined;
    const order: LiveListOrder = paging && query.order_by ? { column: query.order_by, direction: query.direction ?? 'asc' } : { column: 'id', direction: 'asc' };
    const [rows, total] = await Promise.all([this.repo.list(organizationId, filter, order, page), this.repo.count(organizationId, filter)]);
    const items: LiveListItem[] = rows.map((r) => ({
      id: r.id,
      player_id: r.player_id,
      player_uuid: r.player_uuid,
      name: r.name,
      status: r.status,
      recurring: Boolean(r.recurring),
      air_date: r.air_date ?? 0,
      start_time: r.start_time ?? 0,
      vod_created_at: r.vod_created_at ?? 0,
      created_at: r.created_at,
      updated_at: r.updated_at,
    }));
    return { items, total };
  }

  async get(auth: AuthContext, organizationId: number, id: number) {
    const row = await this.instance(auth, organizationId, id);
    const stream = (await this.repo.findStream(row.stream_id))!;
    // Keys are shown to roles that may manage live streams, and only while they work.
    const showKeys = can(auth.role, 'live:manage') && stream.deleted_at === null;
    const redundant = Boolean(stream.has_redundant_streams);
    return {
      stream_details: { stream_id: stream.id, recurring: Boolean(stream.recurring), created_at: stream.created_at, updated_at: stream.updated_at },
      instance_details: {
        stream_instance_id: row.id,
        dvr_enabled: Boolean(row.dvr_enabled),
        ingest_url: this.rtmpUrl('live'),
        stream_key: showKeys ? stream.stream_key : null,
        email: row.email,
        segment_length: row.segment_length,
        has_redundant_streams: redundant,
        backup_url: redundant ? this.rtmpUrl('backup') : null,
        backup_key: redundant && showKeys ? stream.backup_key : null,
        air_date: row.air_date ?? 0,
        start_time: row.start_time ?? 0,
        end_time: row.end_time ?? 0,
        vod_created_at: row.vod_created_at ?? 0,
        created_at: row.created_at,
        updated_at: row.updated_at,
        name: row.name,
        description: row.description,
        tags: parseTags(row.tags),
        video_id: row.video_id,
        status: row.status,
        player_uuid: row.player_uuid,
      },
    };
  }

  async update(auth: AuthContext, organizationId: number, id: number, body: UpdateLiveBody): Promise<{ success: true }> {
    const current = await this.instance(auth, organizationId, id);
    const changes: Record<string, unknown> = {};
    let name = current.name;
    let tags = parseTags(current.tags);
    if (body.name !== undefined) {
      name = body.name.trim();
      if (!name) throw invalidField('name', 'must not be blank');
      changes.name = name;
    }
    if (body.description !== undefined) changes.description = body.description;
    if (body.dvr_enabled !== undefined) changes.dvr_enabled = body.dvr_enabled;
    if (body.air_date !== undefined) changes.air_date = toSeconds(body.air_date, 'air_date');
    if (body.stream_tags !== undefined) {
      tags = normalizeTags(body.stream_tags, 'stream_tags');
      changes.tags = JSON.stringify(tags);
    }
    if (Object.keys(changes).length === 0) return { success: true };
    await this.db.transaction().execute(async (trx) => {
      const now = nowSeconds();
      const row = await this.repo.with(trx).update(organizationId, id, { ...changes, search_text: searchText(name, tags), updated_at: now });
      if (!row) throw notFound('live stream instance', id);
      // The instance's video and player carry its name (and the video its description).
      if (body.name !== undefined || body.description !== undefined) {
        if (row.video_id !== null) {
          await new VideosRepository(trx).update(organizationId, row.video_id, {
            ...(body.name !== undefined ? { name } : {}),
            ...(body.description !== undefined ? { description: body.description } : {}),
            updated_at: now,
          });
        }
        if (row.player_id !== null && body.name !== undefined) await new PlayersRepository(trx).update(organizationId, row.player_id, { name, updated_at: now });
      }
    });
    return { success: true };
  }

  /**
   * Deletes the instance. When it is its stream's current instance the stream goes too: the keys
   * stop working at once and a publisher is cut. A finished recording (a ready video) stays in the
   * library with its player; otherwise the instance's player and video are removed with it.
   */
  async delete(auth: AuthContext, organizationId: number, id: number): Promise<{ success: true }> {
    await this.instance(auth, organizationId, id);
    await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const row = await repo.find(organizationId, id);
      if (!row) throw notFound('live stream instance', id);
      const now = nowSeconds();
      const latest = await repo.latestOfStream(row.stream_id);
      if (latest?.id === row.id) await repo.softDeleteStream(row.stream_id, now);
      await repo.delete(row.id);
      const videos = new VideosRepository(trx);
      const video = row.video_id === null ? undefined : await videos.find(organizationId, row.video_id);
      if (video?.status !== 'ready') {
        if (row.player_id !== null) await new PlayersRepository(trx).delete(organizationId, row.player_id);
        if (video) await videos.delete(organizationId, video.id);
      }
      // The HLS output goes once the packager has surely stopped.
      await enqueue(trx, LIVE_CLEANUP_JOB, { player_uuid: row.player_uuid }, { delayMs: 5000 });
    });
    liveSignals.revoked();
    return { success: true };
  }

  async health(auth: AuthContext, organizationId: number, id: number) {
    const row = await this.instance(auth, organizationId, id);
    // A sample older than three intervals means the ingest stopped reporting: nothing is arriving.
    const fresh = row.status === 'live' && row.health_at !== null && Date.now() - row.health_at <= this.config.live.healthIntervalSeconds * 3000 + 2000;
    const parse = (text: string | null) => {
      if (!fresh || !text) return null;
      try {
        return JSON.parse(text);
      } catch {
        return null;
      }
    };
    return { primary: parse(row.health_primary), backup: parse(row.health_backup) };
  }
}
