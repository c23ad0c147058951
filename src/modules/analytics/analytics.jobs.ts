import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { RollupService } from './rollup.service.ts';

export function analyticsJobs({ rollups }: { rollups: RollupService }): JobHandlersFor<JobKinds, 'analytics.rollup'> {
  return {
    /**
     * The recurring rollup (docs/analytics.md, "Rollups"). Its successor is queued first; a run that
     * fails is retried, and what it did not add the next run adds (progress moves with each batch).
     */
    'analytics.rollup': async (_payload, ctx) => {
      await rollups.run(ctx.signal);
    },
  };
}
