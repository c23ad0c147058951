import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { isPostgres } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import { scheduleRecurring } from '../housekeeping/recurring.ts';
import { DistinctSketch } from './distinct-sketch.ts';
import { addEdges, edgesOfText, edgesToText, retentionDeltas, type PlayedReport } from './retention-curve.ts';
import {
  DIMENSIONS,
  type AdditiveFigures,
  type BreakdownDay,
  type DayFigures,
  type HourFigures,
  type HourKey,
  type DayKey,
  type DaySketches,
  type DistinctValue,
  type OrgDay,
  type RetentionDayKey,
  type RollupRepository,
  type ViewStart,
} from './rollup.repository.ts';

export interface RollupOptions {
  /** Seconds from one run to the next (ANALYTICS_ROLLUP_SECONDS): the freshness of the rolled-up figures. */
  intervalSeconds: number;
  /** Report ids per transaction (default: 20,000 on PostgreSQL, 1,000 on SQLite). */
  batchSize?: number;
  /** Rest after each batch as long as it held the event loop (default true; false for a process that serves nothing, a seed). */
  rest?: boolean;
}

/** What one run added. */
export interface RollupResult {
  /** The last report id now rolled up. */
  last_event_id: number;
  batches: number;
  /** Whether it reached the last settled report (false: stopped by its signal). */
  complete: boolean;
}

const TASK = 'analytics-rollup' as const;

/** Runs catch-ups elsewhere than on the event loop (src/modules/analytics/rollup-thread.ts, SQLite in a file). */
export interface RollupRunner {
  /** False once closed, or when it could not start: the runs then go where they are asked for. */
  accepts(): boolean;
  catchUp(signal?: AbortSignal): Promise<RollupResult>;
  close(): Promise<void>;
}

/**
 * The daily rollups of the stored reports (docs/analytics.md, "Rollups"): a recurring job adds the
 * reports stored since its last run to each player's day (additive figures) and to each
 * organization's day (sketches of the distinct viewers and addresses). Each batch is one
 * transaction that also moves `analytics_rollup.last_event_id`, so a report is added once, whatever
 * the number of workers and whenever one dies.
 */
export class RollupService {
  private readonly batchSize: number;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: RollupOptions,
    private readonly repo: RollupRepository,
    private readonly elsewhere?: RollupRunner,
  ) {
    // SQLite reads a batch synchronously on the event loop that serves every request: 1,000 reports
    // hold it a few milliseconds, 20,000 tens (docs/analytics.md, "Rollups").
    this.batchSize = options.batchSize ?? (isPostgres(db) ? 20_000 : 1_000);
  }

  /** Makes sure a run is queued; at most one is, however many workers ask. */
  schedule(delayMs = 0): Promise<boolean> {
    return scheduleRecurring(this.db, TASK, delayMs);
  }

  /** One run of the `analytics.rollup` job: the next is queued first, then the reports are added. */
  async run(signal?: AbortSignal): Promise<RollupResult> {
    await this.schedule(this.options.intervalSeconds * 1000);
    return this.catchUp(signal);
  }

  /**
   * Adds every settled report not yet rolled up, batch by batch. Where there is a rollups' thread, a
   * backlog of more than one batch is added there (the thread starts for the first such backlog: an
   * idle server does not pay for it); one batch or less, a few milliseconds of the event loop, here,
   * and so is every backlog once the thread is closed (a shutdown) or could not start.
   */
  async catchUp(signal?: AbortSignal): Promise<RollupResult> {
    if (!this.elsewhere?.accepts()) return this.catchUpHere(signal);
    const bound = await this.repo.settledMaxId();
    const from = await this.repo.progress();
    return bound - from > this.batchSize ? this.elsewhere.catchUp(signal) : this.catchUpHere(signal, { bound, from });
  }

  /** Ends the rollups' thread, if any (the app's close). */
  async close(): Promise<void> {
    await this.elsewhere?.close();
  }

  /** `known`: the bound and the progress, when the caller has just read them. */
  private async catchUpHere(signal?: AbortSignal, known?: { bound: number; from: number }): Promise<RollupResult> {
    const bound = known?.bound ?? (await this.repo.settledMaxId());
    let from = known?.from ?? (await this.repo.progress());
    let batches = 0;
    while (from < bound) {
      if (signal?.aborted) return { last_event_id: from, batches, complete: false };
      const held = performance.eventLoopUtilization();
      const to = Math.min(from + this.batchSize, bound);
      // Read outside the transaction, which then only writes: the reports up to `bound` are committed.
      // (One erased by a GDPR request meanwhile may still be counted: rollups keep figures and hashes.)
      const range = { afterId: from, toId: to };
      // Each distinct value hashed once, for its hour's and its day's sketches.
      const distinct = (await this.repo.distinctOf(range)).map((d) => ({ ...d, hash: DistinctSketch.hash(d.value) }));
      // The days' sketches are merged before the transaction too: only batches write them, and one that
      // finds the progress moved is not applied, so what was read stands if it is. The transaction then
      // only writes, and holds SQLite's one write lock for that alone (the server's writes wait it out).
      const playerDays = await merged(distinct, playerDayKey, playerDayOf, (keys) => this.repo.playerDaySketches(keys));
      const playerHours = await merged(distinct, playerHourKey, playerHourOf, (keys) => this.repo.playerHourSketches(keys));
      const byHour = await this.repo.figuresOf(range);
      const hours = byHour.map((f) => ({ ...playerHourOf(f), ...additive(f), ...(playerHours.get(playerHourKey(f)) ?? NO_SKETCHES) }));
      const days = daysOf(byHour).map((f) => ({ ...f, ...(playerDays.get(playerDayKey(f)) ?? NO_SKETCHES) }));
      const orgDays = await merged(distinct, orgDayKey, orgDayOf, (keys) => this.repo.orgDaySketches(keys));
      const ctaDays = await this.repo.ctaFiguresOf(range);
      const breakdownDays = await breakdownOf(await this.repo.viewStartsOf(range), (keys) => this.repo.breakdownDaySketches(keys));
      const retentionDays = await retentionOf(
        await this.repo.playedOf(range),
        (sessions) => this.repo.earlierPlayed(sessions, from),
        (keys) => this.repo.retentionDayEdges(keys),
      );
      const applied = await this.db.transaction().execute(async (trx) => {
        const repo = this.repo.with(trx);
        if ((await repo.lockProgress()) !== from) return false;
        await repo.addToDays(days);
        await repo.addToHours(hours);
        if (ctaDays.length > 0) await repo.addToCtaDays(ctaDays);
        if (breakdownDays.length > 0) await repo.addToBreakdownDays(breakdownDays);
        if (retentionDays.length > 0) await repo.setRetentionDays(retentionDays);
        if (orgDays.size > 0) await repo.setOrgDays([...orgDays.values()]);
        await repo.setProgress(to);
        return true;
      });
      if (applied) {
        batches++;
        from = to;
      } else {
        // Another worker's run moved on meanwhile: go on from where it is.
        from = await this.repo.progress();
      }
      // Then rest as long as the batch held the event loop. Its queries answer in microtasks (at once, on
      // SQLite): without a turn between batches, a backlog held every request until the whole run was
      // done; and a new connection is accepted once per turn (docs/performance.md), so a run taking
      // every turn let viewers' new connections in one per batch.
      // (On PostgreSQL the loop served requests while the batch's queries ran, and that counts too: the
      // busier the server, the slower the rollup, within the freshness of docs/analytics.md.)
      if (from < bound && this.options.rest !== false) {
        const ms = Math.min(1000, Math.max(1, performance.eventLoopUtilization(held).active));
        await sleep(ms, undefined, { signal }).catch(() => undefined);
      } else if (from < bound) {
        // Without a rest, still one turn: the rollups' thread hears an abort (a shutdown) between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return { last_event_id: from, batches, complete: true };
  }
}

const NO_SKETCHES: DaySketches = { viewers: null, emails: null };
const orgDayKey = (k: OrgDay) => `${k.organization_id}:${k.day}`;
const orgDayOf = ({ organization_id, day }: OrgDay): OrgDay => ({ organization_id, day });
const playerDayKey = (k: DayKey) => `${k.organization_id}:${k.day}:${k.player_id}`;
const playerDayOf = ({ organization_id, day, player_id }: DayKey): DayKey => ({ organization_id, day, player_id });
const playerHourKey = (k: HourKey) => `${k.organization_id}:${k.player_id}:${k.hour}`;
const playerHourOf = ({ organization_id, player_id, hour }: HourKey): HourKey => ({ organization_id, player_id, hour });
const additive = ({ loads, plays, views, completions, watch_seconds, cta_clicks }: AdditiveFigures): AdditiveFigures => ({
  loads,
  plays,
  views,
  completions,
  watch_seconds,
  cta_clicks,
});

/** A batch's figures per player's hour, summed per player's day. */
function daysOf(hours: HourFigures[]): DayFigures[] {
  const days = new Map<string, DayFigures>();
  for (const h of hours) {
    const key = playerDayKey(h);
    const day = days.get(key);
    if (!day) {
      days.set(key, { ...playerDayOf(h), ...additive(h) });
      continue;
    }
    day.loads += h.loads;
    day.plays += h.plays;
    day.views += h.views;
    day.completions += h.completions;
    day.watch_seconds += h.watch_seconds;
    day.cta_clicks += h.cta_clicks;
  }
  return [...days.values()];
}

/** A batch's distinct value with its hash. */
type Hashed = DistinctValue & { hash: number };

/**
 * The days or hours (an organization's or a player's: `dayOf` a value's, `keyOf` its name) that a
 * batch's distinct values fall on, each with its kept sketches and those values added.
 */
async function merged<K extends object>(
  distinct: Hashed[],
  keyOf: (k: K | DistinctValue) => string,
  dayOf: (d: DistinctValue) => K,
  kept: (keys: K[]) => Promise<Array<K & DaySketches>>,
): Promise<Map<string, K & DaySketches>> {
  const days = new Map<string, K>();
  for (const d of distinct) {
    const k = keyOf(d);
    if (!days.has(k)) days.set(k, dayOf(d));
  }
  if (days.size === 0) return new Map();
  const stored = new Map((await kept([...days.values()])).map((r) => [keyOf(r), r]));
  const sketches = new Map(
    [...days.keys()].map((k) => [k, { viewers: DistinctSketch.from(stored.get(k)?.viewers), emails: DistinctSketch.from(stored.get(k)?.emails) }]),
  );
  for (const d of distinct) sketches.get(keyOf(d))![d.kind].addHash(d.hash);
  const out = new Map<string, K & DaySketches>();
  for (const [k, day] of days) {
    const s = sketches.get(k)!;
    out.set(k, { ...day, viewers: s.viewers.toBuffer(), emails: s.emails.toBuffer() });
  }
  return out;
}

type BreakdownKey = Omit<BreakdownDay, 'views' | 'viewers'>;
const breakdownKey = (k: BreakdownKey) => `${k.organization_id}:${k.player_id}:${k.dimension}:${k.day}:${k.value}`;

/**
 * A batch's starts of playback as breakdown days: per player's day, dimension and value (`''` when
 * unknown), the views they add, and the kept sketch of the distinct viewers with theirs added.
 */
async function breakdownOf(
  starts: ViewStart[],
  kept: (keys: BreakdownKey[]) => Promise<Array<BreakdownKey & Pick<BreakdownDay, 'viewers'>>>,
): Promise<BreakdownDay[]> {
  const days = new Map<string, { key: BreakdownKey; views: number; viewers: Set<number> }>();
  for (const start of starts) {
    // Hashed once, for its three days' sketches.
    const viewer = DistinctSketch.hash(start.viewer);
    for (const dimension of DIMENSIONS) {
      const key = { organization_id: start.organization_id, player_id: start.player_id, dimension, day: start.day, value: start[dimension] ?? '' };
      const name = breakdownKey(key);
      if (!days.has(name)) days.set(name, { key, views: 0, viewers: new Set() });
      const day = days.get(name)!;
      day.views++;
      day.viewers.add(viewer);
    }
  }
  if (days.size === 0) return [];
  const stored = new Map((await kept([...days.values()].map((d) => d.key))).map((r) => [breakdownKey(r), r.viewers]));
  return [...days].map(([name, day]) => {
    const sketch = DistinctSketch.from(stored.get(name));
    for (const viewer of day.viewers) sketch.addHash(viewer);
    return { ...day.key, views: day.views, viewers: sketch.toBuffer() };
  });
}

type RetentionDay = RetentionDayKey & { views: number; edges: string };
const retentionKey = (k: RetentionDayKey) => `${k.organization_id}:${k.video_id}:${k.day}`;

/**
 * A batch's reports that play views as videos' retention days: what they add (their views' earlier
 * reports, already counted, read by `earlier`), added to what is kept.
 */
async function retentionOf(
  played: PlayedReport[],
  earlier: (sessions: string[]) => Promise<PlayedReport[]>,
  kept: (keys: RetentionDayKey[]) => Promise<RetentionDay[]>,
): Promise<RetentionDay[]> {
  if (played.length === 0) return [];
  const deltas = retentionDeltas(played, await earlier(played.map((r) => r.session_id)));
  const stored = new Map(
    (await kept(deltas.map(({ organization_id, video_id, day }) => ({ organization_id, video_id, day })))).map((r) => [retentionKey(r), r]),
  );
  return deltas.map(({ organization_id, video_id, day, views, edges }) => {
    const before = stored.get(retentionKey({ organization_id, video_id, day }));
    return { organization_id, video_id, day, views: (before?.views ?? 0) + views, edges: edgesToText(addEdges(edges, edgesOfText(before?.edges ?? null))) };
  });
}
