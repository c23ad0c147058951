import { createHash } from 'node:crypto';
import { GroupCommit, VIEWER_WINDOW_MS } from '../../lib/group-commit.ts';
import { invalidField } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import type { CtasService } from '../ctas/ctas.service.ts';
import type { PlayersService } from '../players/players.service.ts';
import type { VideosService } from '../videos/videos.service.ts';
import type { AnalyticsRepository, NewAnalyticsEvent } from './analytics.repository.ts';
import type {
  BreakdownQuery,
  CtaAnalytics,
  IdentifiedViewer,
  Interval,
  OrganizationAnalytics,
  PeriodQuery,
  PlayerAnalytics,
  PlayerBreakdown,
  PlayerSeries,
  Retention,
  ViewersQuery,
} from './analytics.schemas.ts';
import type { ClientFacts } from './client-facts.ts';
import { DistinctSketch } from './distinct-sketch.ts';
import type { AdditiveFigures, ReportRange, RollupRepository } from './rollup.repository.ts';
import type { Countries } from './countries.ts';
import { bucketKeyOf, bucketsOf, DAY_MS, ratio, tenths } from './intervals.ts';
import { addEdges, curveOf, edgesOfText, mergeStretches, retentionDeltas, type Edges } from './retention-curve.ts';

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
  seq?: number;
}

/** A viewer's report about a real chapter of a player, with what is known of its sender. */
export interface CollectedReport {
  organizationId: number;
  playerId: number;
  videoId: number | null;
  beacon: ViewerReport;
  client: ClientFacts;
  /** The sender's address: only its country is kept. */
  ip: string;
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
        .update(JSON.stringify([b.seq ?? null, b.buckets, b.watched ?? null, b.played_seconds ?? null]))
        .digest('base64url');
      return `${at}:${b.chapter}:attention:${digest.slice(0, 22)}`;
    }
  }
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

/**
 * Stored analytics (docs/analytics.md): every report is written before it is acknowledged, in
 * group commits, and the reporting answers are computed from what is stored.
 */
export class AnalyticsService {
  private readonly writer = new GroupCommit<NewAnalyticsEvent, boolean>(
    async (rows) => {
      const inserted = await this.repo.insertMany(rows);
      // A key twice in one batch: the first one is the new report.
      const seen = new Set<string>();
      return rows.map((r) => {
        const isNew = inserted.has(r.dedup_key) && !seen.has(r.dedup_key);
        seen.add(r.dedup_key);
        return isNew;
      });
    },
    500,
    VIEWER_WINDOW_MS,
  );

  constructor(
    private readonly repo: AnalyticsRepository,
    private readonly rollups: RollupRepository,
    private readonly players: PlayersService,
    private readonly videos: VideosService,
    private readonly ctas: CtasService,
    private readonly countries: Countries,
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
      country: this.countries.of(report.ip),
      dedup_key: dedupKey(report.playerId, b),
      created_at: Date.now(),
    });
  }

  private async player(organizationId: number, ref: PlayerRef): Promise<{ id: number }> {
    return 'id' in ref ? this.players.get(organizationId, ref.id) : this.players.getByUuid(organizationId, ref.uuid);
  }

  async playerSummary(organizationId: number, ref: PlayerRef, query: PeriodQuery): Promise<PlayerAnalytics> {
    const period = periodOf(query);
    const player = await this.player(organizationId, ref);
    const all = await this.playerFigures(organizationId, player.id, period, 'day', () => 'period');
    return { player_id: player.id, from: period.from, to: period.to, ...figures(totalsOfDay(all.get('period') ?? emptyDay())) };
  }

  /** A player's views by country, device class or browser family. */
  async playerBreakdown(organizationId: number, ref: PlayerRef, query: BreakdownQuery): Promise<PlayerBreakdown> {
    const period = periodOf(query);
    const player = await this.player(organizationId, ref);
    // Its rolled-up days (docs/analytics.md, "A player's breakdown"), with its reports not yet rolled up added.
    const { progress, newest, since, days } = await this.rollups.breakdownDays(organizationId, player.id, query.by, period.fromMs, period.toMs);
    const values = new Map<string, { views: number; viewers: DistinctSketch }>();
    const at = (value: string) => {
      if (!values.has(value)) values.set(value, { views: 0, viewers: new DistinctSketch() });
      return values.get(value)!;
    };
    for (const d of days) {
      const v = at(d.value);
      v.views += d.views;
      v.viewers.mergeBytes(d.viewers);
    }
    for (const range of unrolledRanges({ organizationId, playerId: player.id, fromMs: period.fromMs, toMs: period.toMs }, progress, newest, since)) {
      for (const start of await this.rollups.viewStartsBy(range, query.by)) {
        const v = at(start.value ?? UNKNOWN);
        v.views += start.views;
        v.viewers.add(start.viewer);
      }
    }
    const rows = [...values]
      .map(([value, v]) => ({ value: value === UNKNOWN ? null : value, views: v.views, unique_viewers: v.viewers.count() }))
      // Most views first; then the unknown last, then by value.
      .sort(
        (a, b) =>
          b.views - a.views ||
          Number(a.value === null) - Number(b.value === null) ||
          ((a.value ?? '') < (b.value ?? '') ? -1 : (a.value ?? '') > (b.value ?? '') ? 1 : 0),
      );
    return { player_id: player.id, from: period.from, to: period.to, by: query.by, rows };
  }

  /** One row per interval of the period, those without reports included (zeros). */
  async playerSeries(organizationId: number, ref: PlayerRef, query: PeriodQuery & { interval?: Interval }): Promise<PlayerSeries> {
    const interval = query.interval ?? 'day';
    const period = periodOf(query);
    if (interval === 'hour' && period.toMs - period.fromMs > MAX_HOUR_DAYS * DAY_MS) {
      throw invalidField('interval', `hour covers at most ${MAX_HOUR_DAYS} days; ask for day, week or month`);
    }
    const player = await this.player(organizationId, ref);
    // Hours from the player's hours; days, weeks and months from its days, as its figures.
    const unit = interval === 'hour' ? 'hour' : 'day';
    const found = new Map<string, PlayerTotals>();
    for (const [key, bucket] of await this.playerFigures(organizationId, player.id, period, unit, (start) => bucketKeyOf(interval, start))) {
      found.set(key, totalsOfDay(bucket));
    }
    const none = totalsOfDay(emptyDay());
    const rows = bucketsOf(interval, period.fromMs, period.toMs).map(({ key, start }) => {
      const t = found.get(key) ?? none;
      return {
        start,
        loads: t.loads,
        plays: t.plays,
        views: t.views,
        unique_viewers: t.unique_viewers,
        total_watch_seconds: tenths(t.watch_seconds),
        identified_viewers: t.identified_viewers,
        cta_clicks: t.cta_clicks,
      };
    });
    return { player_id: player.id, from: period.from, to: period.to, interval, rows };
  }

  /**
   * A player's figures and distinct viewers and addresses over [fromMs, toMs), summed per `bucketOf`
   * its days or hours (`unit`; docs/analytics.md, "A player's figures"): its rolled-up days or hours,
   * with the reports not yet rolled up added (so they are fresh at once), and, for days before the
   * rollups kept them (`player_days_since`, migration 0036; `player_hours_since`, 0040), its reports.
   * Each stored sketch is merged once, into its bucket.
   */
  private async playerFigures(
    organizationId: number,
    playerId: number,
    { fromMs, toMs }: { fromMs: number; toMs: number },
    unit: 'day' | 'hour',
    bucketOf: (start: number) => string,
  ): Promise<Map<string, PlayerDay>> {
    const read = unit === 'day' ? this.rollups.playerDays : this.rollups.playerHours;
    const { progress, newest, since, rows } = await read.call(this.rollups, organizationId, playerId, fromMs, toMs);
    const ranges = unrolledRanges({ organizationId, playerId, fromMs, toMs }, progress, newest, since);
    const out = new Map<string, PlayerDay>();
    const at = (start: number) => {
      const key = bucketOf(start);
      if (!out.has(key)) out.set(key, emptyDay());
      return out.get(key)!;
    };
    for (const r of rows) {
      const bucket = at(r.start);
      addFigures(bucket, r);
      bucket.viewers.mergeBytes(r.viewers);
      bucket.emails.mergeBytes(r.emails);
    }
    for (const range of ranges) {
      for (const f of await this.rollups.figuresOf(range)) addFigures(at(f[unit]), f);
      for (const v of await this.rollups.distinctOf(range)) at(v[unit])[v.kind].add(v.value);
    }
    return out;
  }

  async ctaSummary(organizationId: number, ctaId: number, query: PeriodQuery): Promise<CtaAnalytics> {
    const period = periodOf(query);
    await this.ctas.get(organizationId, ctaId);
    // Its rolled-up days, and its reports not yet rolled up (fresh at once), as a player's figures.
    const { progress, newest, days } = await this.rollups.ctaDays(organizationId, ctaId, period.fromMs, period.toMs);
    const tail = await this.rollups.ctaFiguresOf({ afterId: progress, toId: newest, organizationId, eventId: ctaId, fromMs: period.fromMs, toMs: period.toMs });
    let impressions = 0;
    let clicks = 0;
    for (const day of [...days, ...tail]) {
      impressions += day.impressions;
      clicks += day.clicks;
    }
    return { cta_id: ctaId, from: period.from, to: period.to, impressions, clicks, click_through_rate: ratio(clicks, impressions) };
  }

  /**
   * The audience retention curve of a video: for each second (each of 200 points of a video longer
   * than 10 minutes), the share of its views whose played stretches cover it; and the three points
   * where the most viewers left. Read as a player's figures (docs/analytics.md, "A video's retention"):
   * its rolled-up days, with the reports not yet rolled up added (fresh at once), and the days before
   * `retention_days_since` (migration 0041) from their reports.
   */
  async retention(organizationId: number, videoId: number, query: PeriodQuery): Promise<Retention> {
    const period = periodOf(query);
    const video = await this.videos.get(organizationId, videoId);
    const { fromMs, toMs } = period;
    const { progress, newest, since, days } = await this.rollups.retentionDays(organizationId, videoId, fromMs, toMs);
    const edges: Edges = new Map();
    let views = 0;
    const add = (day: { views: number; edges: Iterable<[number, number]> }) => {
      views += day.views;
      addEdges(edges, day.edges);
    };
    for (const day of days) add({ views: day.views, edges: edgesOfText(day.edges) });
    // Each view counts on the day of its first report: one not yet rolled up adds to its view's day.
    const fresh = await this.rollups.playedOf({ organizationId, videoId, afterId: progress, toId: newest });
    if (fresh.length > 0) {
      const earlier = await this.rollups.earlierPlayed(
        fresh.map((r) => r.session_id),
        progress,
      );
      for (const d of retentionDeltas(fresh, earlier)) if (d.day >= Math.max(fromMs, since) && d.day < toMs) add(d);
    }
    if (fromMs < since)
      for (const d of retentionDeltas(await this.rollups.playedOf({ organizationId, videoId, fromMs, toMs: Math.min(toMs, since) }), [])) add(d);
    return { video_id: videoId, from: period.from, to: period.to, ...curveOf(edges, views, video.seconds) };
  }

  /** Identified viewers, the most recently seen first, with what each played per player. */
  async viewers(organizationId: number, scope: { player?: PlayerRef }, query: ViewersQuery, page: Page): Promise<Listing<IdentifiedViewer>> {
    const period = periodOf(query);
    const playerId = scope.player ? (await this.player(organizationId, scope.player)).id : undefined;
    const email = query.email?.toLowerCase();
    const { rows, total } =
      email === undefined && period.toMs > Date.now()
        ? await this.recentlyIdentified(organizationId, playerId, period, page)
        : await this.repo.identifiedViewers(organizationId, { playerId, email }, period.fromMs, period.toMs, page);
    const watched = await this.repo.watchedBy(
      organizationId,
      rows.map((r) => r.email),
      playerId,
      period.fromMs,
      period.toMs,
    );
    const items = rows.map((r) => {
      const players = watched
        .filter((w) => w.email === r.email)
        .map((w) => ({
          player_id: w.player_id,
          uuid: w.uuid,
          name: w.name,
          views: w.views,
          total_watch_seconds: tenths(w.watch_seconds),
          furthest_percent: w.furthest_percent,
        }));
      return {
        email: r.email,
        first_seen: Math.floor(r.first_seen / 1000),
        last_seen: Math.floor(r.last_seen / 1000),
        loads: r.loads,
        total_watch_seconds: tenths(players.reduce((sum, p) => sum + p.total_watch_seconds, 0)),
        players,
      };
    });
    return { items, total };
  }

  /**
   * The identified viewers (of the organization, or of one player) of a period that reaches today: the
   * addresses last given since its start are the period's, in the order of analytics_identified, so
   * only the page's addresses' reports are read.
   */
  private async recentlyIdentified(organizationId: number, playerId: number | undefined, period: { fromMs: number; toMs: number }, page: Page) {
    const { emails, total } = await this.repo.recentlyIdentified(organizationId, playerId, period.fromMs, page);
    const seen = new Map((await this.repo.identifiedIn(organizationId, emails, playerId, period.fromMs, period.toMs)).map((r) => [r.email, r]));
    const rows = emails.map((email) => seen.get(email) ?? { email, first_seen: period.fromMs, last_seen: period.fromMs, loads: 0 });
    return { rows, total };
  }

  /**
   * The organization's figures and most viewed players, from the daily rollups (at most
   * ANALYTICS_ROLLUP_SECONDS late): additive figures summed, distinct viewers and addresses counted
   * from the merged sketches of the period's days.
   */
  async organizationSummary(organizationId: number, query: PeriodQuery): Promise<OrganizationAnalytics> {
    const period = periodOf(query);
    const sums = await this.rollups.organizationTotals(organizationId, period.fromMs, period.toMs);
    const viewers = new DistinctSketch();
    const emails = new DistinctSketch();
    for (const day of await this.rollups.organizationSketches(organizationId, period.fromMs, period.toMs)) {
      viewers.merge(DistinctSketch.from(day.viewers));
      emails.merge(DistinctSketch.from(day.emails));
    }
    const top = await this.rollups.topPlayers(organizationId, period.fromMs, period.toMs, TOP_PLAYERS);
    return {
      from: period.from,
      to: period.to,
      ...figures({ ...sums, unique_viewers: viewers.count(), identified_viewers: emails.count() }),
      top_players: top.map(({ watch_seconds, ...p }) => ({ ...p, total_watch_seconds: tenths(watch_seconds) })),
    };
  }
}

type PlayerRef = { id: number } | { uuid: string };

const MAX_HOUR_DAYS = 31;
const TOP_PLAYERS = 10;

/** A breakdown's unknown value, as the rollups keep it. */
const UNKNOWN = '';

/**
 * The reports of a player's period that its rolled-up days leave out (docs/analytics.md, "A player's
 * figures"): those not yet rolled up, (progress, newest], from `since`; and every report of the days
 * before `since`, which the rollups kept no days of.
 */
function unrolledRanges(
  period: { organizationId: number; playerId: number; fromMs: number; toMs: number },
  progress: number,
  newest: number,
  since: number,
): ReportRange[] {
  const { organizationId, playerId, fromMs, toMs } = period;
  const ranges: Array<ReportRange & { fromMs: number; toMs: number }> = [
    { organizationId, playerId, afterId: progress, toId: newest, fromMs: Math.max(fromMs, since), toMs },
  ];
  if (fromMs < since) ranges.push({ organizationId, playerId, fromMs, toMs: Math.min(toMs, since) });
  return ranges.filter((r) => r.fromMs < r.toMs);
}

/** A day's (or a bucket's, or a period's) figures of a player, with its distinct viewers and addresses. */
interface PlayerDay extends AdditiveFigures {
  viewers: DistinctSketch;
  emails: DistinctSketch;
}

const emptyDay = (): PlayerDay => ({
  loads: 0,
  plays: 0,
  views: 0,
  completions: 0,
  watch_seconds: 0,
  cta_clicks: 0,
  viewers: new DistinctSketch(),
  emails: new DistinctSketch(),
});

/** Adds a day's additive figures to `into`. */
function addFigures(into: PlayerDay, day: AdditiveFigures): void {
  into.loads += day.loads;
  into.plays += day.plays;
  into.views += day.views;
  into.completions += day.completions;
  into.watch_seconds += day.watch_seconds;
  into.cta_clicks += day.cta_clicks;
}

/** A player's totals over a period or an interval. */
interface PlayerTotals {
  loads: number;
  plays: number;
  views: number;
  completions: number;
  unique_viewers: number;
  watch_seconds: number;
  identified_viewers: number;
  cta_clicks: number;
}

const totalsOfDay = (d: PlayerDay): PlayerTotals => ({
  loads: d.loads,
  plays: d.plays,
  views: d.views,
  completions: d.completions,
  unique_viewers: d.viewers.count(),
  watch_seconds: d.watch_seconds,
  identified_viewers: d.emails.count(),
  cta_clicks: d.cta_clicks,
});

/** The figures of a player's or an organization's totals. */
function figures(t: PlayerTotals) {
  return {
    loads: t.loads,
    plays: t.plays,
    views: t.views,
    unique_viewers: t.unique_viewers,
    play_rate: ratio(t.plays, t.loads),
    completion_rate: ratio(t.completions, t.views),
    average_view_seconds: t.views > 0 ? tenths(t.watch_seconds / t.views) : 0,
    total_watch_seconds: tenths(t.watch_seconds),
    identified_viewers: t.identified_viewers,
    cta_clicks: t.cta_clicks,
  };
}
