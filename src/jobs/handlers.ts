import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { JobHandler } from './runner.ts';

/**
 * The job types this build runs, one handler per type. Areas add theirs here (transcoding, webhook
 * delivery, GDPR requests, live recordings) as they arrive.
 */
export function jobHandlers(_deps: { config: Config; database: Database }): Record<string, JobHandler> {
  return {};
}
