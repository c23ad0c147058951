/**
 * Housekeeping (docs/jobs.md, "Retention"): a recurring `housekeeping.sweep` job deletes finished jobs
 * and expired idempotency keys in bounded batches, keeps everything still needed, and is queued at
 * most once however many workers ask for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { HousekeepingRepository } from '../src/modules/housekeeping/housekeeping.repository.ts';
import { HousekeepingService } from '../src/modules/housekeeping/housekeeping.service.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_S = 60 * 60;

describe('housekeeping configuration', () => {
  it("defaults: a sweep an hour, done jobs kept 7 days, failed jobs 30, viewers' reports 730; a rollup each 30 s; all configurable", () => {
    expect(loadConfig({}).housekeeping).toEqual({ intervalSeconds: 3600, doneJobRetentionDays: 7, failedJobRetentionDays: 30, analyticsRetentionDays: 730 });
    expect(loadConfig({}).analyticsRollup).toEqual({ intervalSeconds: 30 });
    const set = loadConfig({
      HOUSEKEEPING_INTERVAL_SECONDS: '600',
      JOB_RETENTION_DAYS: '2',
      FAILED_JOB_RETENTION_DAYS: '90',
      ANALYTICS_RETENTION_DAYS: '90',
      ANALYTICS_ROLLUP_SECONDS: '10',
    });
    expect(set.housekeeping).toEqual({ intervalSeconds: 600, doneJobRetentionDays: 2, failedJobRetentionDays: 90, analyticsRetentionDays: 90 });
    expect(set.analyticsRollup).toEqual({ intervalSeconds: 10 });
    expect(() => loadConfig({ JOB_RETENTION_DAYS: '0' })).toThrow(/JOB_RETENTION_DAYS/);
    expect(() => loadConfig({ ANALYTICS_RETENTION_DAYS: '0' })).toThrow(/ANALYTICS_RETENTION_DAYS/);
  });
});

describe.each(dialects)('housekeeping on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  const db = () => t.database.db;
  const worker = () => new JobRunner(t.database.db, { handlers: jobHandlers(createContainer({ config: t.config, database: t.database })), backoff: () => 10 });
  const queuedSweeps = () =>
    db()
      .selectFrom('jobs')
      .select(['id', 'run_at', 'max_attempts'])
      .where('type', '=', 'housekeeping.sweep')
      .where('status', '=', 'queued')
      .orderBy('id')
      .execute();
  /** Makes the queued sweep due, as the passing of its interval would, and lets a worker run it. */
  const sweepNow = async () => {
    await db().updateTable('jobs').set({ run_at: Date.now() }).where('type', '=', 'housekeeping.sweep').where('status', '=', 'queued').execute();
    await worker().drain();
  };
  /** A job as the queue leaves it, last changed `ageMs` ago. */
  const job = async (status: string, ageMs: number, extra: { run_at?: number; locked_until?: number; type?: string } = {}) => {
    const at = Date.now() - ageMs;
    const row = await db()
      .insertInto('jobs')
      .values({
        type: extra.type ?? 'video.webhook',
        payload: '{}',
        status,
        run_at: extra.run_at ?? at,
        locked_by: status === 'running' ? 'another-worker' : null,
        locked_until: extra.locked_until ?? null,
        created_at: at,
        updated_at: at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };
  const exists = async (id: number) => (await db().selectFrom('jobs').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
  const keyRow = (key: string) =>
    db().selectFrom('idempotency_keys').select('key').where('organization_id', '=', org.organizationId).where('key', '=', key).executeTakeFirst();

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t?.close());

  it('one sweep is queued from the start; each run queues the next an interval later; never more than one however many workers ask', async () => {
    const first = await queuedSweeps();
    expect(first).toHaveLength(1);
    // Workers starting together all make sure a sweep is queued: still one.
    await Promise.all(Array.from({ length: 6 }, () => t.services.housekeeping.schedule()));
    expect(await queuedSweeps()).toEqual(first);

    const before = Date.now();
    await sweepNow();
    const ran = await db().selectFrom('jobs').select(['status', 'attempts']).where('id', '=', first[0].id).executeTakeFirstOrThrow();
    expect(ran).toEqual({ status: 'done', attempts: 1 });
    const next = await queuedSweeps();
    expect(next).toHaveLength(1);
    expect(next[0].id).not.toBe(first[0].id);
    expect(Number(next[0].run_at)).toBeGreaterThanOrEqual(before + t.config.housekeeping.intervalSeconds * 1000);
    expect(Number(next[0].run_at)).toBeLessThanOrEqual(Date.now() + t.config.housekeeping.intervalSeconds * 1000);

    // Two sweeps due at once (two workers take one each): they still leave one queued behind them.
    await db()
      .insertInto('jobs')
      .values({ type: 'housekeeping.sweep', payload: '{}', run_at: Date.now(), created_at: Date.now(), updated_at: Date.now() })
      .execute();
    await sweepNow();
    expect(await queuedSweeps()).toHaveLength(1);
    await Promise.all([t.services.housekeeping.schedule(), t.services.housekeeping.schedule()]);
    expect(await queuedSweeps()).toHaveLength(1);

    // The run is recorded for operators.
    const task = await db().selectFrom('housekeeping_tasks').selectAll().where('task', '=', 'sweep').executeTakeFirstOrThrow();
    expect(Number(task.last_finished_at)).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(JSON.parse(task.last_result!)).toMatchObject({
      done_jobs: expect.any(Number),
      failed_jobs: expect.any(Number),
      idempotency_keys: expect.any(Number),
    });
  });

  it('deletes done jobs after 7 days, failed ones after 30, idempotency keys after their 24 h; keeps recent ones and every job still to run', async () => {
    const oldDone = await job('done', 8 * DAY_MS);
    const recentDone = await job('done', 6 * DAY_MS);
    const oldFailed = await job('failed', 31 * DAY_MS);
    const recentFailed = await job('failed', 29 * DAY_MS);
    // Not finished, however old: a retry waiting for its time, a long job another worker holds.
    const oldQueued = await job('queued', 60 * DAY_MS, { run_at: Date.now() + HOUR_S * 1000 });
    const oldRunning = await job('running', 60 * DAY_MS, { locked_until: Date.now() + HOUR_S * 1000 });
    // What a finished job named is forgotten with it (docs/gdpr.md).
    await db().insertInto('job_subjects').values({ job_id: oldDone, organization_id: org.organizationId, email: 'gone@example.com' }).execute();
    await db().insertInto('job_subjects').values({ job_id: recentDone, organization_id: org.organizationId, email: 'kept@example.com' }).execute();

    // Idempotency keys through the wire: one answered 25 hours ago, one an hour ago.
    for (const key of ['k-old', 'k-recent']) {
      const res = await org.api.post(`${P}/tags`, { name: `tag ${key}` }, { 'idempotency-key': key });
      expect(res.status, res.raw).toBe(201);
    }
    const aged = (hours: number) => Math.floor(Date.now() / 1000) - hours * HOUR_S;
    await db()
      .updateTable('idempotency_keys')
      .set({ created_at: aged(25) })
      .where('key', '=', 'k-old')
      .execute();
    await db()
      .updateTable('idempotency_keys')
      .set({ created_at: aged(1) })
      .where('key', '=', 'k-recent')
      .execute();
    // Counters of the public limits: one whose window has passed, one still counting.
    await db()
      .insertInto('rate_limits')
      .values([
        { key: `report:gone:${org.organizationId}`, count: 3, reset_at: Date.now() - 1000 },
        { key: `report:live:${org.organizationId}`, count: 3, reset_at: Date.now() + 600_000 },
      ])
      .execute();

    await sweepNow();

    expect(await exists(oldDone)).toBe(false);
    expect(await exists(oldFailed)).toBe(false);
    expect(await exists(recentDone)).toBe(true);
    expect(await exists(recentFailed)).toBe(true);
    expect(await exists(oldQueued)).toBe(true);
    expect(await exists(oldRunning)).toBe(true);
    const subjects = await db().selectFrom('job_subjects').select('email').where('organization_id', '=', org.organizationId).execute();
    expect(subjects).toEqual([{ email: 'kept@example.com' }]);

    expect(await keyRow('k-old')).toBeUndefined();
    expect(await keyRow('k-recent')).toBeDefined();
    // The recent key still answers as before: replayed, not run again.
    const replay = await org.api.post(`${P}/tags`, { name: 'tag k-recent' }, { 'idempotency-key': 'k-recent' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    const task = await db().selectFrom('housekeeping_tasks').selectAll().where('task', '=', 'sweep').executeTakeFirstOrThrow();
    expect(JSON.parse(task.last_result!)).toMatchObject({ done_jobs: 1, failed_jobs: 1, idempotency_keys: 1, rate_limits: 1 });
    const counters = await db().selectFrom('rate_limits').select('key').where('key', 'like', `report:%:${org.organizationId}`).execute();
    expect(counters).toEqual([{ key: `report:live:${org.organizationId}` }]);
  });

  it('deletes in bounded batches: a backlog larger than one sweep may take is finished by the next ones', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 11; i++) ids.push(await job('done', 10 * DAY_MS, { type: 'media.delete' }));
    const statements: number[] = [];
    class CountingRepository extends HousekeepingRepository {
      override async deleteFinishedJobs(...args: Parameters<HousekeepingRepository['deleteFinishedJobs']>): Promise<number> {
        const n = await super.deleteFinishedJobs(...args);
        statements.push(n);
        return n;
      }
    }
    const small = new HousekeepingService(
      db(),
      { intervalSeconds: 3600, doneJobRetentionDays: 7, failedJobRetentionDays: 30, analyticsRetentionDays: 730, batchSize: 3, maxBatches: 2 },
      new CountingRepository(db()),
    );
    const remaining = async () => (await Promise.all(ids.map(exists))).filter(Boolean).length;
    const first = await small.sweep();
    expect(first.done_jobs).toBe(6);
    expect(statements.every((n) => n <= 3)).toBe(true);
    expect(await remaining()).toBe(5);
    await small.sweep();
    expect(await remaining()).toBe(0);
  });
});
