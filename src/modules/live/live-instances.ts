import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { newUuid } from '../../lib/tokens.ts';
import type { ChaptersRepository } from '../chapters/chapters.repository.ts';
import type { PlayersRepository } from '../players/players.repository.ts';
import type { VideosRepository } from '../videos/videos.repository.ts';
import type { LiveInstanceRow, LiveRepository, LiveStreamRow } from './live.repository.ts';

/** What an instance is made of: its row, and the video and facade player it owns. */
export interface LiveRepositories {
  live: LiveRepository;
  videos: VideosRepository;
  players: PlayersRepository;
  chapters: ChaptersRepository;
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
  repos: LiveRepositories,
  stream: LiveStreamRow,
  attrs: InstanceAttributes,
  now: number,
  live?: { startTime: number; session: string; heartbeat: number; feed: { role: 'primary' | 'backup'; session: string } },
): Promise<LiveInstanceRow> {
  const organizationId = stream.organization_id;
  const video = await repos.videos.with(trx).insert({
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
  const player = await repos.players.with(trx).insert({
    organization_id: organizationId,
    uuid: newUuid(),
    name: attrs.name,
    player_type: 'video_facade',
    release_date: now,
    created_at: now,
    updated_at: now,
  });
  await repos.chapters
    .with(trx)
    .insert({ organization_id: organizationId, player_id: player.id, video_id: video.id, position: 0, created_at: now, updated_at: now });
  return repos.live.with(trx).insertInstance({
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
