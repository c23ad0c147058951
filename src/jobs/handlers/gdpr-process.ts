import type { Database } from '../../db/database.ts';
import { GdprService, type GdprProcessPayload } from '../../modules/gdpr/gdpr.service.ts';
import type { JobHandler } from '../runner.ts';

/**
 * `gdpr.process`: carries out a GDPR request (docs/gdpr.md). A request that cannot be done as asked
 * ends `failed` with its reason; an unexpected error is retried, and on the last attempt the request
 * is marked `failed` too, so that it never stays `processing`.
 */
export function gdprProcessHandler({ database }: { database: Database }): JobHandler {
  const service = new GdprService(database.db);
  return async (payload: GdprProcessPayload, ctx) => {
    try {
      await service.process(payload);
    } catch (err) {
      if (ctx.job.attempts >= ctx.job.max_attempts) {
        await service.fail(payload.requestId, `Processing failed after ${ctx.job.attempts} attempts: ${(err as Error).message}`.slice(0, 1000));
      }
      throw err;
    }
  };
}
