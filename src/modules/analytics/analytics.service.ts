import { createHash } from 'node:crypto';
import { GroupCommit } from '../../lib/group-commit.ts';
import { invalidField } from '../../lib/errors.ts';
import type { PlayersService } from '../players/players.service.ts';
import type { AnalyticsRepository, NewAnalyticsEvent } from './analytics.repository.ts';
import type { PeriodQuery, PlayerAnalytics } from './analytics.schemas.ts';
import type { ClientFacts } from './client-facts.ts';

const DAY_MS = 86_400_000;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 3660;

/** What the player script reports (AnalyticsBeacon, src/modules/watch/watch.schemas.ts, validates it). */
export interface ViewerReport {
  type: 'load' | 'view' | 'identified_view' | 'attention_span' | 'cta_impression' | 'cta_click';
  player_load_id: string;
  visitor_uuid: string;
  chapter: number;
  percent_watched?: number;
  email?: string;
  buckets?: number[];
  embed_url?: string;
  event_id?: number;
  watched?: number[][];
  played_seconds?: number;
}

/** A viewer's report about a real chapter of a player, with what is known of its sender. */
export interface CollectedReport {
  organizationId: number;
  playerId: number;
  videoId: number | null;
  beacon: ViewerReport;
  client: ClientFacts;
}

/** The report's identity: the same report sent again (a replay, a retried beacon) is kept once. */
function dedupKey(playerId: number, b: ViewerReport): string {
  const at = `${playerId}:${b.player_load_id}`;
  switch (b.type) {
    case 'load':
      return `${at}:load`;
    case 'view':
      return `${at}:${b.chapter}:view:${b.percent_watched}`;
    case 'identified_view':
      return `${at}:identified:${b.email!.toLowerCase()}`;
    case 'cta_impression':
    case 'cta_click':
      return `${at}:${b.type}:${b.event_id}`;
    case 'attention_span': {
      const digest = createHash('sha256')
        .update(JSON.stringify([b.buckets, b.watched ?? null, b.played_seconds ?? null]))
        .digest('base64url');
      return `${at}:${b.chapter}:attention:${digest.slice(0, 22)}`;
    }
  }
}

/** Sorted, merged stretches of [from, to] seconds. */
export function mergeStretches(stretches: Array<[number, number]>): Array<[number, number]> {
  const sorted = stretches.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const merged: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  return merged;
}

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The whole UTC days of a period, `to` included: [fromMs, toMs). */
export function periodOf(query: PeriodQuery, nowMs = Date.now()): { fromMs: number; toMs: number; from: string; to: string } {
  const day = (value: string, field: string) => {
    const ms = Date.parse(`${value}T00:00:00Z`);
    if (Number.isNaN(ms) || isoDay(ms) !== value) throw invalidField(field, 'must be a date (YYYY-MM-DD)');
    return ms;
  };
  const toDay = query.to !== undefined ? day(query.to, 'to') : Math.floor(nowMs / DAY_MS) * DAY_MS;
  const fromDay = query.from !== undefined ? day(query.from, 'from') : toDay - (DEFAULT_DAYS - 1) * DAY_MS;
  if (fromDay > toDay) throw invalidField('from', 'must not be after to');
  if (toDay - fromDay >= MAX_DAYS * DAY_MS) throw invalidField('from', `must be less than ${MAX_DAYS} days before to`);
  return { fromMs: fromDay, toMs: toDay + DAY_MS, from: isoDay(fromDay), to: isoDay(toDay) };
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 10_000) / 10_000 : 0);

/**
 * Stored analytics (docs/analytics.md): every report is written before it is acknowledged, in
 * group commits, and the reporting answers are computed from what is stored.
 */
export class AnalyticsService {
  private readonly writer = new GroupCommit<NewAnalyticsEvent, boolean>(async (rows) => {
    const inserted = await this.repo.insertMany(rows);
    // A key twice in one batch: the first one is the new report.
    const seen = new Set<string>();
    return rows.map((r) => {
      const isNew = inserted.has(r.dedup_key) && !seen.has(r.dedup_key);
      seen.add(r.dedup_key);
      return isNew;
    });
  });

  constructor(
    private readonly repo: AnalyticsRepository,
    private readonly players: PlayersService,
  ) {}

  /** Keeps the report; answers whether it was new (false: sent before, or sent by a bot, and not kept). */
  async collect(report: CollectedReport): Promise<boolean> {
    const { beacon: b, client } = report;
    if (client.bot) return false;
    const watched = b.watched ? mergeStretches(b.watched.map(([x, y]) => [x, y] as [number, number])) : null;
    return this.writer.add({
      organization_id: report.organizationId,
      player_id: report.playerId,
      video_id: report.videoId,
      chapter: b.chapter,
      type: b.type,
      percent: b.type === 'view' ? (b.percent_watched ?? null) : null,
      event_id: b.type === 'cta_click' || b.type === 'cta_impression' ? (b.event_id ?? null) : null,
      watched_seconds: b.type === 'attention_span' ? (b.played_seconds ?? (watched ? watched.reduce((s, [x, y]) => s + y - x, 0) : 0)) : null,
      watched: b.type === 'attention_span' && watched ? JSON.stringify(watched) : null,
      buckets: b.type === 'attention_span' && b.buckets ? JSON.stringify(b.buckets) : null,
      email: b.type === 'identified_view' ? b.email!.toLowerCase() : null,
      visitor_id: client.optedOut ? null : b.visitor_uuid,
      session_id: b.player_load_id,
      origin: originOf(b.embed_url),
      device: client.device,
      browser: client.browser,
      country: null,
      dedup_key: dedupKey(report.playerId, b),
      created_at: Date.now(),
    });
  }

  async playerSummary(organizationId: number, player: { id: number } | { uuid: string }, query: PeriodQuery): Promise<PlayerAnalytics> {
    const period = periodOf(query);
    const found = 'id' in player ? await this.players.get(organizationId, player.id) : await this.players.getByUuid(organizationId, player.uuid);
    const t = await this.repo.playerTotals(organizationId, found.id, period.fromMs, period.toMs);
    return {
      player_id: found.id,
      from: period.from,
      to: period.to,
      loads: t.loads,
      plays: t.plays,
      views: t.views,
      unique_viewers: t.unique_viewers,
      play_rate: ratio(t.plays, t.loads),
      completion_rate: ratio(t.completions, t.views),
      average_view_seconds: t.views > 0 ? Math.round((t.watch_seconds / t.views) * 10) / 10 : 0,
      total_watch_seconds: Math.round(t.watch_seconds * 10) / 10,
      identified_viewers: t.identified_viewers,
      cta_clicks: t.cta_clicks,
    };
  }
}
