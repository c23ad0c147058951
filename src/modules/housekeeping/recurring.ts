import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { enqueue } from '../job-kinds.ts';
import { HousekeepingRepository } from './housekeeping.repository.ts';

/** The recurring background tasks: each has its row in housekeeping_tasks and one job kind. */
export const RECURRING = { sweep: 'housekeeping.sweep', 'analytics-rollup': 'analytics.rollup' } as const;

/**
 * Makes sure the task's next run is queued (e.g. when a worker starts): any number of processes may ask
 * at once, at most one run is queued. Answers whether this call queued it.
 */
export function scheduleRecurring(db: Kysely<DB>, task: keyof typeof RECURRING, delayMs = 0): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const repo = new HousekeepingRepository(trx);
    // Callers take turns on the task's row: the second one sees the run the first one queued.
    await repo.lockTask(task);
    if (await repo.isQueued(RECURRING[task])) return false;
    await enqueue(trx, RECURRING[task], {}, { delayMs });
    return true;
  });
}
