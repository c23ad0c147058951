import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { STATISTICS_KEPT_BY_THE_DATABASE, type PlannerStatistics } from '../../db/sqlite-statistics.ts';
import { nowSeconds } from '../../lib/time.ts';
import { IDEMPOTENCY_WINDOW_SECONDS } from '../idempotency/idempotency.service.ts';
import type { HousekeepingRepository } from './housekeeping.repository.ts';
import { scheduleRecurring } from './recurring.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const TASK = 'sweep' as const;

export interface HousekeepingOptions {
  /** Seconds from one sweep to the next (HOUSEKEEPING_INTERVAL_SECONDS). */
  intervalSeconds: number;
  /** Days a job that succeeded is kept (JOB_RETENTION_DAYS). */
  doneJobRetentionDays: number;
  /** Days a job that failed for good is kept (FAILED_JOB_RETENTION_DAYS). */
  failedJobRetentionDays: number;
  /** Days viewers' raw reports are kept (ANALYTICS_RETENTION_DAYS); their daily rollups stay. */
  analyticsRetentionDays: number;
  /** Rows per delete statement: each is its own short transaction. */
  batchSize?: number;
  /** Delete statements per kind of row and sweep, so that one sweep ends soon; the rest waits for the next. */
  maxBatches?: number;
}

/** What one sweep deleted; `complete` is false when a cap stopped it before the end. */
export interface SweepResult {
  done_jobs: number;
  failed_jobs: number;
  idempotency_keys: number;
  /** Counters of the public limits whose window has passed (docs/security.md). */
  rate_limits: number;
  /** Expired signed-in sessions and mailed links (the larger of the two counts of a batch). */
  sessions: number;
  /** Viewers' reports past ANALYTICS_RETENTION_DAYS (only those already rolled up). */
  analytics_reports: number;
  /** Addresses last given before ANALYTICS_RETENTION_DAYS. */
  analytics_addresses: number;
  /** Rows of PostgreSQL's counter shards folded into others (src/db/counter-shards.ts). */
  counter_rows: number;
  complete: boolean;
}

/** The sweep itself failed (not the scheduling of the next one, which is already done). */
export class SweepError extends Error {}

/**
 * Deletes what nothing needs any more (docs/jobs.md, "Retention"): jobs that succeeded after
 * JOB_RETENTION_DAYS, jobs that failed after FAILED_JOB_RETENTION_DAYS (what they named in job_subjects
 * goes with them), idempotency keys past their 24 h window, viewers' reports (once rolled up) and
 * addresses past ANALYTICS_RETENTION_DAYS; it folds PostgreSQL's counter shards, and gathers SQLite's
 * planner statistics where they are missing or stale. A queued or running job is never touched,
 * however old. Rows are deleted in bounded batches so that no statement holds a long lock.
 */
export class HousekeepingService {
  private readonly batchSize: number;
  private readonly maxBatches: number;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly options: HousekeepingOptions,
    private readonly repo: HousekeepingRepository,
    /** The query planner's statistics (Database.statistics): gathered at the end of a sweep. */
    private readonly statistics: PlannerStatistics = STATISTICS_KEPT_BY_THE_DATABASE,
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.maxBatches = options.maxBatches ?? 200;
  }

  /**
   * Makes sure a sweep is queued (e.g. when a worker starts): any number of processes may ask at once,
   * at most one sweep is queued. Answers whether this call queued it.
   */
  schedule(delayMs = 0): Promise<boolean> {
    return scheduleRecurring(this.db, TASK, delayMs);
  }

  /**
   * One run of the `housekeeping.sweep` job: the next run is queued first (an interval later), so that a
   * sweep that fails does not end the chain; then the sweep, recorded in housekeeping_tasks. A failed
   * sweep throws SweepError.
   */
  async run(signal?: AbortSignal): Promise<SweepResult> {
    await this.schedule(this.options.intervalSeconds * 1000);
    const startedAt = nowSeconds();
    try {
      const result = await this.sweep(Date.now(), signal);
      await this.repo.recordRun(TASK, startedAt, nowSeconds(), result);
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      await this.repo.recordRun(TASK, startedAt, nowSeconds(), { error: message }).catch(() => undefined);
      throw new SweepError(`housekeeping sweep failed: ${message}`, { cause: err });
    }
  }

  /** Deletes, in batches, everything past its retention at `now` (ms). Stops between batches once `signal` aborts. */
  async sweep(now = Date.now(), signal?: AbortSignal): Promise<SweepResult> {
    const done = await this.inBatches((limit) => this.repo.deleteFinishedJobs('done', now - this.options.doneJobRetentionDays * DAY_MS, limit), signal);
    const failed = await this.inBatches((limit) => this.repo.deleteFinishedJobs('failed', now - this.options.failedJobRetentionDays * DAY_MS, limit), signal);
    const keys = await this.inBatches((limit) => this.repo.deleteIdempotencyKeys(Math.floor(now / 1000) - IDEMPOTENCY_WINDOW_SECONDS, limit), signal);
    const limits = await this.inBatches((limit) => this.repo.deleteRateLimits(now, limit), signal);
    const sessions = await this.inBatches((limit) => this.repo.deleteExpiredSessions(Math.floor(now / 1000), limit), signal);
    const analyticsBefore = now - this.options.analyticsRetentionDays * DAY_MS;
    const reports = await this.inBatches((limit) => this.repo.deleteRolledUpReports(analyticsBefore, limit), signal);
    // The organizations' and the players' rows of the identified (both counted as analytics_addresses).
    const addresses = await this.inBatches(
      async (limit) =>
        (await this.repo.deleteIdentifiedBefore(analyticsBefore, limit)) + (await this.repo.deletePlayersIdentifiedBefore(analyticsBefore, limit)),
      signal,
    );
    const counters = await this.inBatches((limit) => this.repo.foldCounterShards(limit), signal);
    if (!signal?.aborted) await this.statistics.refresh(signal);
    return {
      done_jobs: done.deleted,
      failed_jobs: failed.deleted,
      idempotency_keys: keys.deleted,
      rate_limits: limits.deleted,
      sessions: sessions.deleted,
      analytics_reports: reports.deleted,
      analytics_addresses: addresses.deleted,
      counter_rows: counters.deleted,
      complete: [done, failed, keys, limits, sessions, reports, addresses, counters].every((kind) => kind.complete),
    };
  }

  private async inBatches(deleteBatch: (limit: number) => Promise<number>, signal?: AbortSignal): Promise<{ deleted: number; complete: boolean }> {
    let deleted = 0;
    for (let batch = 0; batch < this.maxBatches; batch++) {
      if (signal?.aborted) return { deleted, complete: false };
      const n = await deleteBatch(this.batchSize);
      deleted += n;
      if (n < this.batchSize) return { deleted, complete: true };
    }
    return { deleted, complete: false };
  }
}
