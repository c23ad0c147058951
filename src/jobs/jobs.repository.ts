import type { Kysely, Selectable } from 'kysely';
import type { DB, JobsTable } from '../db/schema.ts';
import { skipLocked } from '../db/dialect.ts';

export type JobRow = Selectable<JobsTable>;

export class JobsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async insert(job: { type: string; payload: string; run_at: number; max_attempts: number; now: number }): Promise<number> {
    const row = await this.db
      .insertInto('jobs')
      .values({ type: job.type, payload: job.payload, run_at: job.run_at, max_attempts: job.max_attempts, created_at: job.now, updated_at: job.now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  /**
   * Takes the next due job: queued and due, or running with an expired lease (its worker died).
   * One statement, so two claimers never get the same row.
   */
  claim(workerId: string, now: number, leaseMs: number, types: string[]): Promise<JobRow | undefined> {
    return this.db
      .updateTable('jobs')
      .set((eb) => ({
        status: 'running',
        locked_by: workerId,
        locked_until: now + leaseMs,
        attempts: eb('attempts', '+', 1),
        updated_at: now,
      }))
      .where('id', '=', (eb) =>
        skipLocked(
          this.db,
          eb
            .selectFrom('jobs')
            .select('id')
            .where('type', 'in', types)
            .where((w) =>
              w.or([w.and([w('status', '=', 'queued'), w('run_at', '<=', now)]), w.and([w('status', '=', 'running'), w('locked_until', '<', now)])]),
            )
            .orderBy('run_at')
            .orderBy('id')
            .limit(1),
        ),
      )
      .returningAll()
      .executeTakeFirst();
  }

  /** Extends the lease of a job this worker still holds; false when it was lost. */
  async extend(id: number, workerId: string, until: number): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set({ locked_until: until })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async finish(id: number, workerId: string, now: number): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'done', locked_by: null, locked_until: null, last_error: null, updated_at: now })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .execute();
  }

  async retryLater(id: number, workerId: string, runAt: number, error: string, now: number): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'queued', run_at: runAt, locked_by: null, locked_until: null, last_error: error, updated_at: now })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .execute();
  }

  async fail(id: number, workerId: string, error: string, now: number): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'failed', locked_by: null, locked_until: null, last_error: error, updated_at: now })
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .execute();
  }

  /** Gives a job back without counting the attempt (graceful shutdown). */
  async release(id: number, workerId: string, now: number): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set((eb) => ({ status: 'queued', run_at: now, locked_by: null, locked_until: null, attempts: eb('attempts', '-', 1), updated_at: now }))
      .where('id', '=', id)
      .where('locked_by', '=', workerId)
      .execute();
  }

  find(id: number): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }
}
