import type { JobHandlersFor } from '../../jobs/registry.ts';
import type { JobKinds } from '../job-kinds.ts';
import type { UploadsService } from './uploads.service.ts';

/** The uploads' jobs (docs/uploads.md). */
export function uploadJobs({ uploads }: { uploads: UploadsService }): JobHandlersFor<JobKinds, 'upload.expire'> {
  return {
    'upload.expire': (payload) => uploads.expire(payload.uploadId),
  };
}
