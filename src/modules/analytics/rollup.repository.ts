import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { settledMaxId } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import { DAY_MS, intervalMs } from './intervals.ts';
import type { PlayedReport } from './retention-curve.ts';

const HOUR_MS = intervalMs('hour');

/** A day of a player, as the rollups key it. */
export interface DayKey {
  organization_id: number;
  player_id: number;
  day: number;
}

/** A day of an organization. */
export interface OrgDay {
  organization_id: number;
  day: number;
}

/** The figures that add up from day to day (the distinct counts do not: sketches merge). */
export interface AdditiveFigures {
  loads: number;
  plays: number;
  views: number;
  completions: number;
  watch_seconds: number;
  cta_clicks: number;
}

/** The additive figures of a player's day (what the reports of one batch add to it). */
export interface DayFigures extends DayKey, AdditiveFigures {}

/** An hour of a player, as the rollups key it. */
export interface HourKey {
  organization_id: number;
  player_id: number;
  hour: number;
}

/** What a range's reports add to a player's hour, with the day it is in. */
export interface HourFigures extends DayFigures, HourKey {}

export interface DaySketches {
  viewers: Uint8Array | null;
  emails: Uint8Array | null;
}

/** A distinct viewer who started playback (`viewers`), or an address given (`emails`), in a player's hour (and day). */
export type DistinctValue = DayKey & HourKey & { kind: 'viewers' | 'emails'; value: string };

/**
 * Which reports: by id (a batch; those a player has not yet rolled up), and by organization, player and
 * time ([fromMs, toMs)).
 */
export interface ReportRange {
  afterId?: number;
  toId?: number;
  organizationId?: number;
  playerId?: number;
  /** A CTA's reports. */
  eventId?: number;
  /** A video's reports. */
  videoId?: number;
  fromMs?: number;
  toMs?: number;
}

/** The dimensions of a player's breakdown. */
export type Dimension = 'country' | 'device' | 'browser';
export const DIMENSIONS: readonly Dimension[] = ['country', 'device', 'browser'];

/** A start of playback with what a breakdown counts of it: its viewer and client facts. */
export interface ViewStart extends DayKey {
  viewer: string;
  country: string | null;
  device: string | null;
  browser: string | null;
}

/** A player's views and distinct viewers of a day with one value of a dimension (`''`: unknown). */
export interface BreakdownDay extends DayKey {
  dimension: Dimension;
  value: string;
  views: number;
  viewers: Uint8Array | null;
}

/** A player's breakdown days of a period, and how far the rollups had read then (as PlayerDays). */
export interface BreakdownDays {
  progress: number;
  newest: number;
  /** `analytics_rollup.breakdown_days_since`: the days before it are not rolled up, and not in `days`. */
  since: number;
  days: BreakdownDay[];
}

/** A video's day, as its retention is rolled up. */
export interface RetentionDayKey {
  organization_id: number;
  video_id: number;
  day: number;
}

/** A CTA's impressions and clicks of a UTC day. */
export interface CtaDay {
  organization_id: number;
  event_id: number;
  day: number;
  impressions: number;
  clicks: number;
}

/** A CTA's rolled-up days of a period, and how far the rollups had read then (as PlayerDays). */
export interface CtaDays {
  progress: number;
  newest: number;
  days: CtaDay[];
}

/** A player's figures and sketches of a day or an hour starting at `start`, rolled up. */
export type RolledUp = AdditiveFigures & DaySketches & { start: number };

/** A player's rolled-up days (or hours) of a period, and how far the rollups had read when they were read. */
export interface PlayerDays {
  /** `analytics_rollup.last_event_id`: the reports above it are not in `days`. */
  progress: number;
  /**
   * The largest report id when they were read: the reports not yet rolled up are those of (progress,
   * newest], a range of the primary key on both sides (with one side, SQLite scanned a whole index).
   */
  newest: number;
  /**
   * `analytics_rollup.player_days_since` (`player_hours_since` for hours): the days before it have no
   * sketches (no hours), and are not in `rows`.
   */
  since: number;
  rows: RolledUp[];
}

/**
 * Reports of an id range up to which they are found by id (the player's and time's indexes set aside):
 * what the rollups have not yet read, a few seconds' worth (ANALYTICS_ROLLUP_SECONDS) while they keep
 * up. Beyond (the rollups stopped, or catching up a backlog), the planner chooses.
 */
const BY_ID_AT_MOST = 100_000;

/**
 * Narrows a query of the reports to a range. For a range of at most BY_ID_AT_MOST ids (the reports
 * not yet rolled up), the player and time are compared without their indexes (`+column`, on both
 * dialects), so that the reports are found by id: a popular player's index would read all of its period.
 */
function inRange<O>(qb: SelectQueryBuilder<DB, 'analytics_events', O>, r: ReportRange): SelectQueryBuilder<DB, 'analytics_events', O> {
  const byId = r.afterId !== undefined && r.toId !== undefined && r.toId - r.afterId <= BY_ID_AT_MOST;
  const column = (name: 'organization_id' | 'player_id' | 'event_id' | 'video_id' | 'created_at') =>
    byId ? sql<number>`+${sql.ref(name)}` : sql.ref<number>(name);
  let q = qb;
  if (r.afterId !== undefined) q = q.where('id', '>', r.afterId);
  if (r.toId !== undefined) q = q.where('id', '<=', r.toId);
  if (r.organizationId !== undefined) q = q.where(column('organization_id'), '=', r.organizationId);
  if (r.playerId !== undefined) q = q.where(column('player_id'), '=', r.playerId);
  if (r.eventId !== undefined) q = q.where(column('event_id'), '=', r.eventId);
  if (r.videoId !== undefined) q = q.where(column('video_id'), '=', r.videoId);
  if (r.fromMs !== undefined) q = q.where(column('created_at'), '>=', r.fromMs);
  if (r.toMs !== undefined) q = q.where(column('created_at'), '<', r.toMs);
  return q;
}

/** The UTC day of a report, in epoch ms (literal integers: SQLite's division of a bound number would not truncate). */
const DAY_OF = sql<number>`(created_at / ${sql.lit(DAY_MS)}) * ${sql.lit(DAY_MS)}`;
const HOUR_OF = sql<number>`(created_at / ${sql.lit(HOUR_MS)}) * ${sql.lit(HOUR_MS)}`;
/** A viewer: the visitor, or the load of a viewer without a visitor id (Do-Not-Track). */
export const VIEWER = sql<string>`coalesce(visitor_id, session_id)`;
/**
 * The newest report's id, read in the statement that reads a rollup table and its progress: a batch
 * committed between two statements would be in the rows and above the progress read before it, and
 * counted twice.
 */
const NEWEST = sql<number | string | null>`(select max(id) from analytics_events)`;

/** The progress and newest id of a read selecting `r.last_event_id` and NEWEST (one row at least: the rollup's). */
function progressOf(rows: Array<{ last_event_id: number | string; newest: number | string | null }>) {
  return { progress: Number(rows[0]?.last_event_id ?? 0), newest: Number(rows[0]?.newest ?? 0) };
}
const VIEW_START = sql`type = 'view' and percent = 0`;
/**
 * A load's first start of playback (later chapters of the same load are views, not plays). A scalar
 * subquery, looked up per report by the session index: as NOT EXISTS, PostgreSQL planned an anti-join
 * over every report of the table, for each batch.
 */
const FIRST_PLAY = sql`${VIEW_START} and analytics_events.id = (
  select min(p.id) from analytics_events p
  where p.session_id = analytics_events.session_id and p.player_id = analytics_events.player_id
    and p.organization_id = analytics_events.organization_id and p.type = 'view' and p.percent = 0)`;

/** Queries of the analytics rollups (docs/analytics.md, "Rollups"). */
export class RollupRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>): RollupRepository {
    return new RollupRepository(db);
  }

  /** The largest report id below which every report is committed. */
  settledMaxId(): Promise<number> {
    return settledMaxId(this.db, 'analytics_events');
  }

  /** How far the rollups have read, locking the row until the transaction ends (rollups take turns). */
  async lockProgress(): Promise<number> {
    const row = await this.db
      .updateTable('analytics_rollup')
      .set((eb) => ({ last_event_id: eb.ref('last_event_id') }))
      .where('id', '=', 1)
      .returning('last_event_id')
      .executeTakeFirstOrThrow();
    return Number(row.last_event_id);
  }

  async progress(): Promise<number> {
    const row = await this.db.selectFrom('analytics_rollup').select('last_event_id').where('id', '=', 1).executeTakeFirstOrThrow();
    return Number(row.last_event_id);
  }

  async setProgress(lastEventId: number): Promise<void> {
    await this.db.updateTable('analytics_rollup').set({ last_event_id: lastEventId }).where('id', '=', 1).execute();
  }

  /** What the reports of a range add to each player's hour (and so to its day). */
  async figuresOf(range: ReportRange): Promise<HourFigures[]> {
    const rows = await this.db
      .selectFrom('analytics_events')
      .select([
        'organization_id',
        'player_id',
        DAY_OF.as('day'),
        HOUR_OF.as('hour'),
        sql<number>`sum(case when type = 'load' then 1 else 0 end)`.as('loads'),
        sql<number>`sum(case when ${FIRST_PLAY} then 1 else 0 end)`.as('plays'),
        sql<number>`sum(case when ${VIEW_START} then 1 else 0 end)`.as('views'),
        sql<number>`sum(case when type = 'view' and percent = 100 then 1 else 0 end)`.as('completions'),
        sql<number>`sum(case when type = 'attention_span' then watched_seconds else 0 end)`.as('watch_seconds'),
        sql<number>`sum(case when type = 'cta_click' then 1 else 0 end)`.as('cta_clicks'),
      ])
      .$call((qb) => inRange(qb, range))
      .groupBy(['organization_id', 'player_id', 'day', 'hour'])
      .execute();
    return rows.map((r) => ({
      organization_id: r.organization_id,
      player_id: r.player_id,
      day: Number(r.day),
      hour: Number(r.hour),
      loads: Number(r.loads),
      plays: Number(r.plays),
      views: Number(r.views),
      completions: Number(r.completions),
      watch_seconds: Number(r.watch_seconds ?? 0),
      cta_clicks: Number(r.cta_clicks),
    }));
  }

  /** The starts of playback among a range's reports, with their viewers and client facts (for the breakdowns). */
  async viewStartsOf(range: ReportRange): Promise<ViewStart[]> {
    const rows = await this.db
      .selectFrom('analytics_events')
      .select(['organization_id', 'player_id', DAY_OF.as('day'), VIEWER.as('viewer'), 'country', 'device', 'browser'])
      .$call((qb) => inRange(qb, range))
      .where('type', '=', 'view')
      .where('percent', '=', 0)
      .execute();
    return rows.map((r) => ({ ...r, day: Number(r.day) }));
  }

  /**
   * A range's starts of playback per value of `dimension` and viewer (null: unknown), counted: what a
   * player's breakdown adds to its rolled-up days, each distinct viewer of a value once.
   */
  async viewStartsBy(range: ReportRange, dimension: Dimension): Promise<Array<{ value: string | null; viewer: string; views: number }>> {
    const rows = await this.db
      .selectFrom('analytics_events')
      .select([sql.ref<string | null>(dimension).as('value'), VIEWER.as('viewer'), sql<number>`count(*)`.as('views')])
      .$call((qb) => inRange(qb, range))
      .where('type', '=', 'view')
      .where('percent', '=', 0)
      .groupBy([dimension, 'viewer'])
      .execute();
    return rows.map((r) => ({ value: r.value, viewer: r.viewer, views: Number(r.views) }));
  }

  /** The reports of a range that play a video's view: its starts, and its attention spans with what they played. */
  async playedOf(range: ReportRange): Promise<PlayedReport[]> {
    const rows = await this.db
      .selectFrom('analytics_events')
      .select(PLAYED)
      .$call((qb) => inRange(qb, range))
      .where('video_id', 'is not', null)
      .where(PLAYS)
      .execute();
    return rows.map(playedReport);
  }

  /** The reports up to `atMostId` of these loads that play a view (by the loads' index). */
  async earlierPlayed(sessions: string[], atMostId: number): Promise<PlayedReport[]> {
    const rows = await inChunks([...new Set(sessions)], (chunk) =>
      this.db
        .selectFrom('analytics_events')
        .select(PLAYED)
        .where('session_id', 'in', chunk)
        .where('id', '<=', atMostId)
        .where('video_id', 'is not', null)
        .where(PLAYS)
        .execute(),
    );
    return rows.map(playedReport);
  }

  /** What the reports of a range add to each CTA's day. */
  async ctaFiguresOf(range: ReportRange): Promise<CtaDay[]> {
    const rows = await this.db
      .selectFrom('analytics_events')
      .select([
        'organization_id',
        'event_id',
        DAY_OF.as('day'),
        sql<number>`sum(case when type = 'cta_impression' then 1 else 0 end)`.as('impressions'),
        sql<number>`sum(case when type = 'cta_click' then 1 else 0 end)`.as('clicks'),
      ])
      .$call((qb) => inRange(qb, range))
      .where('type', 'in', ['cta_impression', 'cta_click'])
      .where('event_id', 'is not', null)
      .groupBy(['organization_id', 'event_id', 'day'])
      .execute();
    return rows.map((r) => ({
      organization_id: r.organization_id,
      event_id: r.event_id!,
      day: Number(r.day),
      impressions: Number(r.impressions),
      clicks: Number(r.clicks),
    }));
  }

  /** The distinct viewers who started playback, and the addresses given, per player's hour, among a range's reports. */
  async distinctOf(range: ReportRange): Promise<DistinctValue[]> {
    const rows = await this.db
      .selectFrom('analytics_events')
      .select([
        'organization_id',
        'player_id',
        DAY_OF.as('day'),
        HOUR_OF.as('hour'),
        sql<'viewers' | 'emails'>`case when type = 'identified_view' then 'emails' else 'viewers' end`.as('kind'),
        sql<string>`case when type = 'identified_view' then email else ${VIEWER} end`.as('value'),
      ])
      .distinct()
      .$call((qb) => inRange(qb, range))
      .where((eb) => eb.or([eb.and([eb('type', '=', 'view'), eb('percent', '=', 0)]), eb('type', '=', 'identified_view')]))
      .execute();
    return rows.map((r) => ({ ...r, day: Number(r.day), hour: Number(r.hour) }));
  }

  /**
   * A player's rolled-up days in [fromMs, toMs) from `player_days_since`, with the rollups' progress
   * and the newest report's id, in one statement (NEWEST).
   */
  async playerDays(organizationId: number, playerId: number, fromMs: number, toMs: number): Promise<PlayerDays> {
    const rows = await this.db
      .selectFrom('analytics_rollup as r')
      .leftJoin('analytics_days as d', (join) =>
        join
          .on('d.organization_id', '=', organizationId)
          .on('d.player_id', '=', playerId)
          .on('d.day', '>=', fromMs)
          .on('d.day', '<', toMs)
          .onRef('d.day', '>=', 'r.player_days_since'),
      )
      .select(['r.last_event_id', 'r.player_days_since as since', NEWEST.as('newest'), 'd.day as start', ...ROLLED_UP.map((c) => `d.${c}` as const)])
      .where('r.id', '=', 1)
      .execute();
    return { ...progressOf(rows), since: Number(rows[0]?.since ?? 0), rows: rolledUpOf(rows) };
  }

  /** A player's rolled-up hours in [fromMs, toMs) from `player_hours_since`, as playerDays. */
  async playerHours(organizationId: number, playerId: number, fromMs: number, toMs: number): Promise<PlayerDays> {
    const rows = await this.db
      .selectFrom('analytics_rollup as r')
      .leftJoin('analytics_player_hours as h', (join) =>
        join
          .on('h.organization_id', '=', organizationId)
          .on('h.player_id', '=', playerId)
          .on('h.hour', '>=', fromMs)
          .on('h.hour', '<', toMs)
          .onRef('h.hour', '>=', 'r.player_hours_since'),
      )
      .select(['r.last_event_id', 'r.player_hours_since as since', NEWEST.as('newest'), 'h.hour as start', ...ROLLED_UP.map((c) => `h.${c}` as const)])
      .where('r.id', '=', 1)
      .execute();
    return { ...progressOf(rows), since: Number(rows[0]?.since ?? 0), rows: rolledUpOf(rows) };
  }

  /**
   * A video's rolled-up retention days in [fromMs, toMs) from `retention_days_since`, with the rollups'
   * progress and the newest report's id, in one statement (NEWEST).
   */
  async retentionDays(organizationId: number, videoId: number, fromMs: number, toMs: number) {
    const rows = await this.db
      .selectFrom('analytics_rollup as r')
      .leftJoin('analytics_retention_days as d', (join) =>
        join
          .on('d.organization_id', '=', organizationId)
          .on('d.video_id', '=', videoId)
          .on('d.day', '>=', fromMs)
          .on('d.day', '<', toMs)
          .onRef('d.day', '>=', 'r.retention_days_since'),
      )
      .select(['r.last_event_id', 'r.retention_days_since', NEWEST.as('newest'), 'd.day', 'd.views', 'd.edges'])
      .where('r.id', '=', 1)
      .execute();
    return {
      ...progressOf(rows),
      since: Number(rows[0]?.retention_days_since ?? 0),
      days: rows.filter((r) => r.day !== null).map((r) => ({ views: Number(r.views ?? 0), edges: r.edges ?? '[]' })),
    };
  }

  /** The views and edges already kept for these videos' days. */
  async retentionDayEdges(keys: RetentionDayKey[]): Promise<Array<RetentionDayKey & { views: number; edges: string }>> {
    const rows = await inChunks(keys, (chunk) =>
      this.db
        .selectFrom('analytics_retention_days')
        .select(['organization_id', 'video_id', 'day', 'views', 'edges'])
        .where((eb) =>
          eb(
            eb.refTuple('organization_id', 'video_id', 'day'),
            'in',
            chunk.map((k) => eb.tuple(k.organization_id, k.video_id, k.day)),
          ),
        )
        .execute(),
    );
    return rows.map((r) => ({ ...r, day: Number(r.day), views: Number(r.views) }));
  }

  /**
   * Sets the views and edges of each video's day (already added to the kept ones: only rollup batches
   * write them, in the transaction that moves the progress, as setOrgDays).
   */
  async setRetentionDays(rows: Array<RetentionDayKey & { views: number; edges: string }>): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await this.db
        .insertInto('analytics_retention_days')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict((oc) => oc.columns(['organization_id', 'video_id', 'day']).doUpdateSet({ views: sql`excluded.views`, edges: sql`excluded.edges` }))
        .execute();
    }
  }

  /** A CTA's rolled-up days in [fromMs, toMs), with the rollups' progress and the newest report's id, in one statement (as playerDays). */
  async ctaDays(organizationId: number, eventId: number, fromMs: number, toMs: number): Promise<CtaDays> {
    const rows = await this.db
      .selectFrom('analytics_rollup as r')
      .leftJoin('analytics_cta_days as d', (join) =>
        join.on('d.organization_id', '=', organizationId).on('d.event_id', '=', eventId).on('d.day', '>=', fromMs).on('d.day', '<', toMs),
      )
      .select(['r.last_event_id', NEWEST.as('newest'), 'd.day', 'd.impressions', 'd.clicks'])
      .where('r.id', '=', 1)
      .execute();
    return {
      ...progressOf(rows),
      days: rows
        .filter((r) => r.day !== null)
        .map((r) => ({
          organization_id: organizationId,
          event_id: eventId,
          day: Number(r.day),
          impressions: Number(r.impressions ?? 0),
          clicks: Number(r.clicks ?? 0),
        })),
    };
  }

  /**
   * A player's breakdown days by `dimension` in [fromMs, toMs) from `breakdown_days_since`, with the
   * rollups' progress and the newest report's id, in one statement (as playerDays).
   */
  async breakdownDays(organizationId: number, playerId: number, dimension: Dimension, fromMs: number, toMs: number): Promise<BreakdownDays> {
    const rows = await this.db
      .selectFrom('analytics_rollup as r')
      .leftJoin('analytics_breakdown_days as d', (join) =>
        join
          .on('d.organization_id', '=', organizationId)
          .on('d.player_id', '=', playerId)
          .on('d.dimension', '=', dimension)
          .on('d.day', '>=', fromMs)
          .on('d.day', '<', toMs)
          .onRef('d.day', '>=', 'r.breakdown_days_since'),
      )
      .select(['r.last_event_id', 'r.breakdown_days_since', NEWEST.as('newest'), 'd.day', 'd.value', 'd.views', 'd.viewers'])
      .where('r.id', '=', 1)
      .execute();
    return {
      ...progressOf(rows),
      since: Number(rows[0]?.breakdown_days_since ?? 0),
      days: rows
        .filter((r) => r.day !== null)
        .map((r) => ({
          organization_id: organizationId,
          player_id: playerId,
          dimension,
          day: Number(r.day),
          value: r.value!,
          views: Number(r.views ?? 0),
          viewers: r.viewers ?? null,
        })),
    };
  }

  /** The sketches already kept for these breakdown days. */
  async breakdownDaySketches(keys: Array<Omit<BreakdownDay, 'views' | 'viewers'>>): Promise<Array<Omit<BreakdownDay, 'views'>>> {
    const rows = await inChunks(keys, (chunk) =>
      this.db
        .selectFrom('analytics_breakdown_days')
        .select(['organization_id', 'player_id', 'dimension', 'day', 'value', 'viewers'])
        .where((eb) =>
          eb(
            eb.refTuple('organization_id', 'player_id', 'dimension', 'day', 'value'),
            'in',
            chunk.map((k) => eb.tuple(k.organization_id, k.player_id, k.dimension, k.day, k.value)),
          ),
        )
        .execute(),
    );
    return rows.map((r) => ({ ...r, dimension: r.dimension as Dimension, day: Number(r.day) }));
  }

  /** The sketches already kept for these players' days. */
  async playerDaySketches(keys: DayKey[]): Promise<Array<DayKey & DaySketches>> {
    const rows = await inChunks(keys, (chunk) =>
      this.db
        .selectFrom('analytics_days')
        .select(['organization_id', 'player_id', 'day', 'viewers', 'emails'])
        .where((eb) =>
          eb(
            eb.refTuple('organization_id', 'day', 'player_id'),
            'in',
            chunk.map((k) => eb.tuple(k.organization_id, k.day, k.player_id)),
          ),
        )
        .execute(),
    );
    return rows.map((r) => ({ ...r, day: Number(r.day) }));
  }

  /** The sketches already kept for these players' hours. */
  async playerHourSketches(keys: HourKey[]): Promise<Array<HourKey & DaySketches>> {
    const rows = await inChunks(keys, (chunk) =>
      this.db
        .selectFrom('analytics_player_hours')
        .select(['organization_id', 'player_id', 'hour', 'viewers', 'emails'])
        .where((eb) =>
          eb(
            eb.refTuple('organization_id', 'player_id', 'hour'),
            'in',
            chunk.map((k) => eb.tuple(k.organization_id, k.player_id, k.hour)),
          ),
        )
        .execute(),
    );
    return rows.map((r) => ({ ...r, hour: Number(r.hour) }));
  }

  /** The sketches already kept for these organization days. */
  async orgDaySketches(keys: OrgDay[]): Promise<Array<OrgDay & DaySketches>> {
    const rows = await inChunks(keys, (chunk) =>
      this.db
        .selectFrom('analytics_org_days')
        .select(['organization_id', 'day', 'viewers', 'emails'])
        .where((eb) =>
          eb(
            eb.refTuple('organization_id', 'day'),
            'in',
            chunk.map((k) => eb.tuple(k.organization_id, k.day)),
          ),
        )
        .execute(),
    );
    return rows.map((r) => ({ ...r, day: Number(r.day) }));
  }

  /**
   * Adds the figures to each player's day, and sets its sketches where a row has them (already merged
   * with the kept ones: as for setOrgDays, only rollup batches write them).
   */
  async addToDays(rows: Array<DayFigures & DaySketches>): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await this.db
        .insertInto('analytics_days')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict((oc) => oc.columns(['organization_id', 'day', 'player_id']).doUpdateSet(added('analytics_days')))
        .execute();
    }
  }

  /** Adds the figures to each player's hour and sets its sketches, as addToDays. */
  async addToHours(rows: Array<HourKey & AdditiveFigures & DaySketches>): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await this.db
        .insertInto('analytics_player_hours')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict((oc) => oc.columns(['organization_id', 'player_id', 'hour']).doUpdateSet(added('analytics_player_hours')))
        .execute();
    }
  }

  /**
   * Adds the views to each breakdown day and sets its sketch (already merged with the kept one: only
   * rollup batches write them, in the transaction that moves the progress, as setOrgDays).
   */
  async addToBreakdownDays(rows: BreakdownDay[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await this.db
        .insertInto('analytics_breakdown_days')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict((oc) =>
          oc.columns(['organization_id', 'player_id', 'dimension', 'day', 'value']).doUpdateSet({
            views: sql`analytics_breakdown_days.views + excluded.views`,
            viewers: sql`excluded.viewers`,
          }),
        )
        .execute();
    }
  }

  /**
   * Adds the figures to each CTA's day. Only rollup batches write them, holding the progress row
   * (RollupService), so their rows need no order; another writer would have to sort them or take it too.
   */
  async addToCtaDays(rows: CtaDay[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await this.db
        .insertInto('analytics_cta_days')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict((oc) =>
          oc.columns(['organization_id', 'event_id', 'day']).doUpdateSet({
            impressions: sql`analytics_cta_days.impressions + excluded.impressions`,
            clicks: sql`analytics_cta_days.clicks + excluded.clicks`,
          }),
        )
        .execute();
    }
  }

  /**
   * Sets the sketches of each organization day (already merged with the kept ones). Only rollup batches
   * write these rows, in the transaction that moves the progress: a batch merges them before its
   * transaction, relying on that (RollupService.catchUpHere). Another writer must take the progress row too.
   */
  async setOrgDays(rows: Array<OrgDay & DaySketches>): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      await this.db
        .insertInto('analytics_org_days')
        .values(rows.slice(i, i + ROWS_PER_STATEMENT))
        .onConflict((oc) => oc.columns(['organization_id', 'day']).doUpdateSet({ viewers: sql`excluded.viewers`, emails: sql`excluded.emails` }))
        .execute();
    }
  }

  /** The organization's rolled-up figures of the days in [fromMs, toMs). */
  async organizationTotals(organizationId: number, fromMs: number, toMs: number) {
    const row = await this.db
      .selectFrom('analytics_days')
      .select((eb) => [
        eb.fn.sum<number>('loads').as('loads'),
        eb.fn.sum<number>('plays').as('plays'),
        eb.fn.sum<number>('views').as('views'),
        eb.fn.sum<number>('completions').as('completions'),
        eb.fn.sum<number>('watch_seconds').as('watch_seconds'),
        eb.fn.sum<number>('cta_clicks').as('cta_clicks'),
      ])
      .where('organization_id', '=', organizationId)
      .where('day', '>=', fromMs)
      .where('day', '<', toMs)
      .executeTakeFirstOrThrow();
    const n = (v: unknown) => Number(v ?? 0);
    return {
      loads: n(row.loads),
      plays: n(row.plays),
      views: n(row.views),
      completions: n(row.completions),
      watch_seconds: n(row.watch_seconds),
      cta_clicks: n(row.cta_clicks),
    };
  }

  /** The organization's sketches of the days in [fromMs, toMs). */
  organizationSketches(organizationId: number, fromMs: number, toMs: number): Promise<DaySketches[]> {
    return this.db
      .selectFrom('analytics_org_days')
      .select(['viewers', 'emails'])
      .where('organization_id', '=', organizationId)
      .where('day', '>=', fromMs)
      .where('day', '<', toMs)
      .execute();
  }

  /** The organization's players with the most views in the days of [fromMs, toMs). */
  async topPlayers(organizationId: number, fromMs: number, toMs: number, limit: number) {
    const rows = await this.db
      .selectFrom('analytics_days')
      .innerJoin('players', 'players.id', 'analytics_days.player_id')
      .select((eb) => [
        'players.id as player_id',
        'players.uuid',
        'players.name',
        eb.fn.sum<number>('analytics_days.views').as('views'),
        eb.fn.sum<number>('analytics_days.watch_seconds').as('watch_seconds'),
      ])
      .where('analytics_days.organization_id', '=', organizationId)
      .where('analytics_days.day', '>=', fromMs)
      .where('analytics_days.day', '<', toMs)
      .groupBy(['players.id', 'players.uuid', 'players.name'])
      .orderBy('views', 'desc')
      .orderBy('players.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ player_id: r.player_id, uuid: r.uuid, name: r.name, views: Number(r.views ?? 0), watch_seconds: Number(r.watch_seconds ?? 0) }));
  }
}

/**
 * What a batch's row does to a player's kept day or hour: its figures are added, its sketches (already
 * merged with the kept ones: only rollup batches write them) set where it has them.
 */
function added(table: 'analytics_days' | 'analytics_player_hours') {
  const kept = (column: string) => sql.ref(`${table}.${column}`);
  const sum = (column: string) => sql<number>`${kept(column)} + ${sql.ref(`excluded.${column}`)}`;
  const sketch = (column: string) => sql<Uint8Array | null>`coalesce(${sql.ref(`excluded.${column}`)}, ${kept(column)})`;
  return {
    loads: sum('loads'),
    plays: sum('plays'),
    views: sum('views'),
    completions: sum('completions'),
    watch_seconds: sum('watch_seconds'),
    cta_clicks: sum('cta_clicks'),
    viewers: sketch('viewers'),
    emails: sketch('emails'),
  };
}

/** A report that plays a view: a start of playback, or an attention span. */
const PLAYS = sql<boolean>`((type = 'view' and percent = 0) or type = 'attention_span')`;
const PLAYED = ['id', 'organization_id', 'video_id', 'session_id', 'chapter', 'created_at', 'watched'] as const;
const playedReport = (r: {
  id: number;
  organization_id: number;
  video_id: number | null;
  session_id: string;
  chapter: number;
  created_at: number;
  watched: string | null;
}) => ({
  ...r,
  id: Number(r.id),
  video_id: r.video_id!,
  created_at: Number(r.created_at),
});

/** The columns of a player's rolled-up day or hour. */
const ROLLED_UP = ['loads', 'plays', 'views', 'completions', 'watch_seconds', 'cta_clicks', 'viewers', 'emails'] as const;

type Nullable<T> = { [K in keyof T]: T[K] | null };

/** The rolled-up rows of a left join (none: one row of nulls), PostgreSQL's bigint strings as numbers. */
function rolledUpOf(rows: Array<Nullable<Record<(typeof ROLLED_UP)[number] | 'start', unknown>>>): RolledUp[] {
  const n = (v: unknown) => Number(v ?? 0);
  return rows
    .filter((r) => r.start !== null)
    .map((r) => ({
      start: n(r.start),
      loads: n(r.loads),
      plays: n(r.plays),
      views: n(r.views),
      completions: n(r.completions),
      watch_seconds: n(r.watch_seconds),
      cta_clicks: n(r.cta_clicks),
      viewers: (r.viewers as Uint8Array | null) ?? null,
      emails: (r.emails as Uint8Array | null) ?? null,
    }));
}

/** `read`'s rows for each chunk of `keys` that one statement's tuple `in` takes, together. */
async function inChunks<K, R>(keys: K[], read: (chunk: K[]) => Promise<R[]>): Promise<R[]> {
  const found: R[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) found.push(...(await read(keys.slice(i, i + KEYS_PER_STATEMENT))));
  return found;
}

const KEYS_PER_STATEMENT = 300;
/** At most eleven columns a row (the players' days): well under SQLite's (32,766) and PostgreSQL's (65,535) limits of bound values. */
const ROWS_PER_STATEMENT = 500;
