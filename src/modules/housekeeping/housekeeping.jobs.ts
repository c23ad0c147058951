import type { JobHandlersFor } from '../../jobs/registry.ts';
import { PermanentJobError } from '../../jobs/runner.ts';
import type { JobKinds } from '../job-kinds.ts';
import { SweepError, type HousekeepingService } from './housekeeping.service.ts';

export function housekeepingJobs({ housekeeping }: { housekeeping: HousekeepingService }): JobHandlersFor<JobKinds, 'housekeeping.sweep'> {
  return {
    /**
     * The recurring sweep (docs/jobs.md, "Retention"). Its successor is queued before it sweeps; a sweep
     * that fails is therefore not retried (the next one, an interval later, does the same work): it ends
     * `failed`, kept for FAILED_JOB_RETENTION_DAYS. Failing to queue the successor is retried.
     */
    'housekeeping.sweep': async (_payload, ctx) => {
      try {
        await housekeeping.run(ctx.signal);
      } catch (err) {
        if (err instanceof SweepError) throw new PermanentJobError(err.message);
        throw err;
      }
    },
  };
}
