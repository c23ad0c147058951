import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { GdprService } from './gdpr.service.ts';

export function gdprJobs({ gdpr }: { gdpr: GdprService }): JobHandlersFor<JobKinds, 'gdpr.process'> {
  return {
    /**
     * Carries out a GDPR request (docs/gdpr.md). A request that cannot be done as asked ends `failed`
     * with its reason; an unexpected error is retried, and on the last attempt the request is marked
     * `failed` too, so that it never stays `processing`.
     */
    'gdpr.process': async (payload, ctx) => {
      try {
        await gdpr.process(payload);
      } catch (err) {
        if (ctx.job.attempts >= ctx.job.max_attempts) {
          await gdpr.fail(payload.requestId, `Processing failed after ${ctx.job.attempts} attempts: ${(err as Error).message}`.slice(0, 1000));
        }
        throw err;
      }
    },
  };
}
