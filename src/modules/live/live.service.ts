import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import type { AuthContext } from '../tokens/auth-context.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { enqueue } from '../job-kinds.ts';
import { liveSignals } from '../../live/signals.ts';
import { nowSeconds } from '../../lib/time.ts';
import { assertOwnOrganization } from '../organizations/own-organization.ts';
import type { PlayersService } from '../players/players.service.ts';
import { can } from '../roles/permissions.ts';
import { insertInstance, parseTags, searchText, type LiveRepositories } from './live-instances.ts';
import type { LiveInstanceRow, LiveListOrder, LiveRepository } from './live.repository.ts';
import type { CreateLiveBody, LiveListItem, LiveListQuery, LiveState, StreamTagsInput, UpdateLiveBody } from './live.schemas.ts';

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

/** An ISO 8601 date-time (already validated by the schema) as Unix seconds; null clears it. */
function toSeconds(iso: string | null | undefined, field: string): number | null {
  if (!iso) return null;
  const ms = Date.parse(iso);
  // The format admits what Date cannot represent (a leap second, year 0…): refused the same way.
  if (!Number.isFinite(ms)) throw invalidField(field, 'is not a date-time that can be stored');
  return Math.floor(ms / 1000);
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
  constructor(
    private readonly db: Kysely<DB>,
    private readonly config: Config,
    private readonly repo: LiveRepository,
    private readonly repos: LiveRepositories,
    private readonly players: PlayersService,
  ) {}

  private rtmpUrl(app: string): string {
    const host = this.config.live.ingestHost.includes(':') ? `[${this.config.live.ingestHost}]` : this.config.live.ingestHost;
    return `rtmp://${host}:${this.config.live.rtmpPort || 1935}/${app}`;
  }

  /** Only the token's organization or its descendants; any other is answered as missing. */
  /** Live streams are content: the path must name the token's own organization (docs/accounts.md, one rule for every area). */
  private async organization(auth: AuthContext, organizationId: number): Promise<void> {
    assertOwnOrganization(organizationId, auth.organizationId);
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
      const instance = await insertInstance(
        trx,
        this.repos,
        stream,
        {
          name,
          description: v.description,
          tags,
          air_date: toSeconds(v.air_date, 'video_options.air_date'),
          segment_length: v.segment_length ?? DEFAULT_SEGMENT_LENGTH,
          dvr_enabled: v.dvr_enabled === true,
          disable_notifications: v.disable_notifications === true,
          email,
        },
        now,
      );
      // The instance's facade player is made here: announced like every new player.
      if (instance.player_id !== null)
        await this.players.announce(trx, organizationId, 'create', await this.players.get(organizationId, instance.player_id, trx));
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
    const order: LiveListOrder =
      paging && query.order_by ? { column: query.order_by, direction: query.direction ?? 'asc' } : { column: 'id', direction: 'asc' };
    // The count first: it lets a page in the later half be read from the end.
    const total = await this.repo.count(organizationId, filter);
    const rows = await this.repo.list(organizationId, filter, order, page, total);
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
          await this.repos.videos.with(trx).update(organizationId, row.video_id, {
            ...(body.name !== undefined ? { name } : {}),
            ...(body.description !== undefined ? { description: body.description } : {}),
            updated_at: now,
          });
        }
        if (row.player_id !== null && body.name !== undefined)
          await this.repos.players.with(trx).update(organizationId, row.player_id, { name, updated_at: now });
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
      const videos = this.repos.videos.with(trx);
      const video = row.video_id === null ? undefined : await videos.find(organizationId, row.video_id);
      if (video?.status !== 'ready') {
        if (row.player_id !== null) await this.repos.players.with(trx).delete(organizationId, row.player_id);
        if (video) await videos.delete(organizationId, video.id);
      }
      // The HLS output goes once the packager has surely stopped: an ingest in another process hears
      // of the deletion at its next heartbeat, and publishes nothing more from then on.
      const delayMs = Math.max(5000, this.config.live.healthIntervalSeconds * 2000 + 2000);
      await enqueue(trx, 'live.cleanup', { player_uuid: row.player_uuid }, { delayMs });
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
