import type { Kysely } from 'kysely';
import { foldCounterShards } from '../../db/counter-shards.ts';
import type { DB } from '../../db/schema.ts';

/** Queries of the housekeeping sweep: bounded deletes of what is past its retention, and the task rows. */
export class HousekeepingRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>): HousekeepingRepository {
    return new HousekeepingRepository(db);
  }

  /**
   * Deletes at most `limit` jobs of `status` (done or failed) last changed before `before` (ms), oldest
   * ids first; answers how many. A job finishes after it was due, so `run_at < before` holds for every
   * one of them and lets the search use jobs_due_idx (status, run_at). Their job_subjects go with them.
   */
  async deleteFinishedJobs(status: 'done' | 'failed', before: number, limit: number): Promise<number> {
    const r = await this.db
      .deleteFrom('jobs')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', status)
          .where('run_at', '<', before)
          .where('updated_at', '<', before)
          .orderBy('id')
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes at most `limit` counters of the public limits whose window ended by `now` (ms); answers how many. */
  async deleteRateLimits(now: number, limit: number): Promise<number> {
    const expired = this.db.selectFrom('rate_limits').select('key').where('reset_at', '<=', now).limit(limit);
    const r = await this.db.deleteFrom('rate_limits').where('key', 'in', expired).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes at most `limit` signed-in sessions and mailed links that expired by `now` (s); answers how many. */
  async deleteExpiredSessions(now: number, limit: number): Promise<number> {
    const sessions = this.db.selectFrom('user_sessions').select('id_hash').where('expires_at', '<=', now).limit(limit);
    const links = this.db.selectFrom('user_links').select('token_hash').where('expires_at', '<=', now).limit(limit);
    const a = await this.db.deleteFrom('user_sessions').where('id_hash', 'in', sessions).executeTakeFirst();
    const b = await this.db.deleteFrom('user_links').where('token_hash', 'in', links).executeTakeFirst();
    return Math.max(Number(a.numDeletedRows), Number(b.numDeletedRows));
  }

  /**
   * Deletes at most `limit` viewers' reports stored before `before` (ms) that the rollups have already
   * counted, oldest first; answers how many.
   */
  async deleteRolledUpReports(before: number, limit: number): Promise<number> {
    const old = this.db
      .selectFrom('analytics_events')
      .select('id')
      .where('created_at', '<', before)
      .where('id', '<=', (eb) => eb.selectFrom('analytics_rollup').select('last_event_id').where('analytics_rollup.id', '=', 1))
      .orderBy('created_at')
      .limit(limit);
    const r = await this.db.deleteFrom('analytics_events').where('id', 'in', old).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes at most `limit` of the addresses last given at an email gate of the organization before `before` (ms). */
  async deleteIdentifiedBefore(before: number, limit: number): Promise<number> {
    const old = this.db
      .selectFrom('analytics_identified')
      .select(['organization_id', 'email'])
      .where('last_seen', '<', before)
      .orderBy('last_seen')
      .limit(limit)
      .$asTuple('organization_id', 'email');
    const r = await this.db
      .deleteFrom('analytics_identified')
      .where(({ eb, refTuple }) => eb(refTuple('organization_id', 'email'), 'in', old))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes at most `limit` of the addresses last given at an email gate of a player before `before` (ms). */
  async deletePlayersIdentifiedBefore(before: number, limit: number): Promise<number> {
    const old = this.db
      .selectFrom('analytics_identified_players')
      .select(['organization_id', 'player_id', 'email'])
      .where('last_seen', '<', before)
      .orderBy('last_seen')
      .limit(limit)
      .$asTuple('organization_id', 'player_id', 'email');
    const r = await this.db
      .deleteFrom('analytics_identified_players')
      .where(({ eb, refTuple }) => eb(refTuple('organization_id', 'player_id', 'email'), 'in', old))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Deletes at most `limit` idempotency keys created before `before` (Unix seconds); answers how many. */
  async deleteIdempotencyKeys(before: number, limit: number): Promise<number> {
    const r = await this.db
      .deleteFrom('idempotency_keys')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('organization_id', 'key'),
          'in',
          selectFrom('idempotency_keys')
            .select(['organization_id', 'key'])
            .where('created_at', '<', before)
            .orderBy('created_at')
            .limit(limit)
            .$asTuple('organization_id', 'key'),
        ),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * Takes the task's row lock until the transaction ends (an update that changes nothing: the same on
   * both dialects), so that workers deciding at the same time whether to queue the next run take turns.
   */
  async lockTask(task: string): Promise<void> {
    await this.db
      .updateTable('housekeeping_tasks')
      .set((eb) => ({ task: eb.ref('task') }))
      .where('task', '=', task)
      .execute();
  }

  async recordRun(task: string, startedAt: number, finishedAt: number, result: unknown): Promise<void> {
    await this.db
      .updateTable('housekeeping_tasks')
      .set({ last_started_at: startedAt, last_finished_at: finishedAt, last_result: JSON.stringify(result) })
      .where('task', '=', task)
      .execute();
  }

  /** Whether a job of `type` waits in the queue. */
  async isQueued(type: string): Promise<boolean> {
    const row = await this.db.selectFrom('jobs').select('id').where('type', '=', type).where('status', '=', 'queued').limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Folds PostgreSQL's counter shards of up to `limit` keys a table (src/db/counter-shards.ts); answers the rows removed. */
  foldCounterShards(limit: number): Promise<number> {
    return foldCounterShards(this.db, limit);
  }
}
