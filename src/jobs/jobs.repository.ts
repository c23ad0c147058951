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

  /** Of these job ids, the ones running now (leased to some worker). */
  async runningAmong(ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db.selectFrom('jobs').select('id').where('id', 'in', ids).where('status', '=', 'running').execute();
    return new Set(rows.map((r) => r.id));
  }

  find(id: number): Promise<JobRow | undefined> {
    return this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Queued and running jobs of one kind (payload included, for the caller to match). */
  openOfType(type: string): Promise<Array<Pick<JobRow, 'id' | 'payload'>>> {
    return this.db.selectFrom('jobs').select(['id', 'payload']).where('type', '=', type).where('status', 'in', ['queued', 'running']).execute();
  }

  /** Deletes those of the jobs that are still queued or running (cancellation); answers how many. */
  async deleteOpen(ids: readonly number[]): Promise<number> {
    if (ids.length === 0) return 0;
    const r = await this.db
      .deleteFrom('jobs')
      .where('id', 'in', [...ids])
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Of the given jobs, those that still exist and whether this worker still holds each (running, its lock). */
  async holders(ids: readonly number[], workerId: string): Promise<Map<number, boolean>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('jobs')
      .select(['id', 'status', 'locked_by'])
      .where('id', 'in', [...ids])
      .execute();
    return new Map(rows.map((r) => [r.id, r.status === 'running' && r.locked_by === workerId]));
  }

  /** The same queries on another connection (a transaction). */
  with(db: Kysely<DB>): JobsRepository {
    return new JobsRepository(db);
  }

  /**
   * Records the people a job's payload names (lower-cased, once each), so that a GDPR request finds the
   * job by index (docs/gdpr.md). The rows go with the job.
   */
  async addSubjects(jobId: number, organizationId: number, emails: readonly string[]): Promise<void> {
    const distinct = [...new Set(emails.map((e) => e.trim().toLowerCase()))];
    if (distinct.length === 0) return;
    await this.db
      .insertInto('job_subjects')
      .values(distinct.map((email) => ({ job_id: jobId, organization_id: organizationId, email })))
      .onConflict((oc) => oc.columns(['job_id', 'email']).doNothing())
      .execute();
  }

  /** Moves a job that is still queued to `runAt` (noting `error` when given); false when it is not queued any more. */
  async postponeQueued(id: number, runAt: number, now: number, error?: string): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set({ run_at: runAt, updated_at: now, ...(error === undefined ? {} : { last_error: error.slice(0, 1000) }) })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Deletes a job that is still queued (its work was done another way); false when a worker has it. */
  async deleteQueued(id: number): Promise<boolean> {
    const r = await this.db.deleteFrom('jobs').where('id', '=', id).where('status', '=', 'queued').executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
