import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { insertJob } from '../src/jobs/queue.ts';
import { JobCancelledError, JobRunner, PermanentJobError } from '../src/jobs/runner.ts';
import { JobsRepository } from '../src/jobs/jobs.repository.ts';
import { openDatabase } from '../src/db/database.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error('timed out');
}

describe.each(dialects)('job queue on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  const status = async (id: number) => (await new JobsRepository(t.database.db).find(id))!;

  it('runs an enqueued job once, with its payload', async () => {
    const seen: unknown[] = [];
    const id = await insertJob(t.database.db, 'test.echo', { n: 1 });
    await new JobRunner(t.database.db, { handlers: { 'test.echo': async (p) => void seen.push(p) } }).drain();
    expect(seen).toEqual([{ n: 1 }]);
    expect((await status(id)).status).toBe('done');
  });

  it('enqueues inside a transaction: a rolled-back change leaves no job', async () => {
    await t.database.db
      .transaction()
      .execute(async (trx) => {
        await insertJob(trx, 'test.rollback', {});
        throw new Error('rollback');
      })
      .catch(() => {});
    const ran: number[] = [];
    await new JobRunner(t.database.db, { handlers: { 'test.rollback': async () => void ran.push(1) } }).drain();
    expect(ran).toEqual([]);
  });

  it('retries with backoff, recording attempts and the last error, then succeeds', async () => {
    let calls = 0;
    const id = await insertJob(t.database.db, 'test.flaky', {}, { maxAttempts: 5 });
    const runner = new JobRunner(t.database.db, {
      handlers: {
        'test.flaky': async () => {
          if (++calls < 3) throw new Error(`boom ${calls}`);
        },
      },
      backoff: () => 30,
      pollMs: 10,
    });
    runner.start();
    await waitFor(async () => (await status(id)).status === 'done');
    await runner.stop();
    const row = await status(id);
    expect(row.attempts).toBe(3);
    expect(calls).toBe(3);
  });

  it('fails a job after max_attempts, or at once on a permanent error', async () => {
    const a = await insertJob(t.database.db, 'test.always', {}, { maxAttempts: 2 });
    const b = await insertJob(t.database.db, 'test.permanent', {}, { maxAttempts: 5 });
    const runner = new JobRunner(t.database.db, {
      handlers: {
        'test.always': async () => {
          throw new Error('nope');
        },
        'test.permanent': async () => {
          throw new PermanentJobError('bad input');
        },
      },
      backoff: () => 10,
      pollMs: 10,
    });
    runner.start();
    await waitFor(async () => (await status(a)).status === 'failed' && (await status(b)).status === 'failed');
    await runner.stop();
    expect((await status(a)).attempts).toBe(2);
    expect((await status(a)).last_error).toBe('nope');
    expect((await status(b)).attempts).toBe(1);
    expect((await status(b)).last_error).toBe('bad input');
  });

  it('takes over a job whose worker died (lease expired)', async () => {
    const id = await insertJob(t.database.db, 'test.orphan', {});
    // A worker claims it and "crashes": never finishes, never renews.
    const dead = await new JobsRepository(t.database.db).claim('dead-worker', Date.now(), 50, ['test.orphan']);
    expect(dead?.id).toBe(id);
    const ran: number[] = [];
    const runner = new JobRunner(t.database.db, { handlers: { 'test.orphan': async () => void ran.push(1) } });
    await runner.drain();
    expect(ran).toEqual([]); // lease still valid
    await sleep(80);
    await runner.drain();
    expect(ran).toEqual([1]);
    expect((await status(id)).attempts).toBe(2);
  });

  it('releases a running job on graceful stop so that another worker takes it', async () => {
    const id = await insertJob(t.database.db, 'test.slow', {});
    const runner = new JobRunner(t.database.db, {
      handlers: {
        'test.slow': (_p, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      },
      pollMs: 10,
    });
    runner.start();
    await waitFor(async () => (await status(id)).status === 'running');
    await runner.stop(50);
    const row = await status(id);
    expect(row.status).toBe('queued');
    expect(row.attempts).toBe(0);
    const ran: number[] = [];
    await new JobRunner(t.database.db, { handlers: { 'test.slow': async () => void ran.push(1) } }).drain();
    expect(ran).toEqual([1]);
  });

  it('runs each lane in its own slots: a full media lane does not hold up short jobs', async () => {
    const media: number[] = [];
    const runner = new JobRunner(t.database.db, {
      handlers: {
        'lane.media': {
          lane: 'media',
          handler: (p: { n: number }, { signal }) => {
            media.push(p.n);
            return new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
          },
        },
        'lane.short': async () => {},
      },
      concurrency: 2,
      shortConcurrency: 1,
      pollMs: 10,
    });
    const slow = [];
    for (let n = 0; n < 3; n++) slow.push(await insertJob(t.database.db, 'lane.media', { n }));
    runner.start();
    await waitFor(async () => media.length === 2);
    const quick = [await insertJob(t.database.db, 'lane.short', {}), await insertJob(t.database.db, 'lane.short', {})];
    await waitFor(async () => (await status(quick[0])).status === 'done' && (await status(quick[1])).status === 'done', 3000);
    // The media lane kept its limit: the third waits.
    expect(await Promise.all(slow.map(async (id) => (await status(id)).status))).toEqual(['running', 'running', 'queued']);
    await runner.stop(20);
  });

  it('aborts a running job whose row was deleted (cancelled), within cancelCheckMs, and records nothing', async () => {
    const reasons: unknown[] = [];
    const logged: string[] = [];
    const id = await insertJob(t.database.db, 'test.cancel', {});
    const runner = new JobRunner(t.database.db, {
      handlers: {
        'test.cancel': (_p, { signal }) =>
          new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              reasons.push(signal.reason);
              reject(signal.reason as Error);
            }),
          ),
      },
      pollMs: 10,
      cancelCheckMs: 50,
      log: { error: (_o, msg) => void logged.push(`error: ${msg}`), info: (_o, msg) => void logged.push(`info: ${msg}`) },
    });
    runner.start();
    await waitFor(async () => (await status(id)).status === 'running');
    expect(await new JobsRepository(t.database.db).deleteOpen([id])).toBe(1);
    const deletedAt = Date.now();
    await waitFor(async () => reasons.length === 1, 2000);
    expect(Date.now() - deletedAt).toBeLessThan(1000);
    expect(reasons[0]).toBeInstanceOf(JobCancelledError);
    await waitFor(async () => logged.length === 1, 2000);
    expect(logged).toEqual(['info: job cancelled']);
    expect(await new JobsRepository(t.database.db).find(id)).toBeUndefined(); // not re-queued by a retry
    await runner.stop(20);
  });

  // Several workers share one database only on PostgreSQL (SQLite is one process's file): defined there alone.
  const onPostgres = dialect === 'postgres' ? it : () => {};
  onPostgres('never runs one job in two workers at once (two pools on one PostgreSQL)', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await insertJob(t.database.db, 'test.exclusive', { i }));
    const schema = (await t.database.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('s')).executeTakeFirstOrThrow()).s;
    const second = openDatabase({ url: process.env.TEST_DATABASE_URL!, pgSchema: schema, poolSize: 3 });
    const active = new Set<number>();
    const runs = new Map<number, number>();
    let overlap = false;
    const handler = async (p: { i: number }) => {
      if (active.has(p.i)) overlap = true;
      active.add(p.i);
      runs.set(p.i, (runs.get(p.i) ?? 0) + 1);
      await sleep(5);
      active.delete(p.i);
    };
    const r1 = new JobRunner(t.database.db, { handlers: { 'test.exclusive': handler }, concurrency: 3, pollMs: 5 });
    const r2 = new JobRunner(second.db, { handlers: { 'test.exclusive': handler }, concurrency: 3, pollMs: 5 });
    r1.start();
    r2.start();
    await waitFor(async () => {
      for (const id of ids) if ((await status(id)).status !== 'done') return false;
      return true;
    });
    await Promise.all([r1.stop(), r2.stop()]);
    await second.destroy();
    expect(overlap).toBe(false);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(30);
  });
});
