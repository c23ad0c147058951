import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { enqueue } from '../../jobs/queue.ts';
import type { Video } from './videos.schemas.ts';

/** Job types of the media pipeline (handlers in src/jobs/handlers/, docs/media.md). */
export const VIDEO_PROCESS_JOB = 'video.process';
export const VIDEO_FILES_JOB = 'video.files';
export const VIDEO_WEBHOOK_JOB = 'video.webhook';
export const MEDIA_DELETE_JOB = 'media.delete';

export interface VideoProcessPayload {
  videoId: number;
  /** The video's media_version when the job was queued. */
  version: number;
}
export interface VideoFilesPayload {
  setId: number;
  version: number;
}
export interface VideoWebhookPayload {
  videoId: number;
  /** Whose key signs the delivery (absent in jobs queued before it was recorded: read from the video). */
  organizationId?: number;
  url: string;
  /** The Video resource as it was when it reached ready or error. */
  video: Video;
}
export interface MediaDeletePayload {
  prefixes: string[];
}

/** Attempts of a processing job: network failures are retried with the queue's backoff (1 s, 2 s, 4 s, 8 s). */
export const PROCESS_ATTEMPTS = 5;

/** Queues processing of the video's source `version` (pass the transaction that created or changed it). */
export function enqueueProcessing(trx: Kysely<DB>, videoId: number, version: number): Promise<number> {
  return enqueue(trx, VIDEO_PROCESS_JOB, { videoId, version } satisfies VideoProcessPayload, { maxAttempts: PROCESS_ATTEMPTS });
}

/** Queues removal of store folders (durable: runs even if the immediate removal failed). */
export function enqueueDelete(db: Kysely<DB>, prefixes: string[]): Promise<number> {
  return enqueue(db, MEDIA_DELETE_JOB, { prefixes } satisfies MediaDeletePayload);
}

/** Folder of one video's files in the store. */
export const videoPrefix = (uuid: string) => `videos/${uuid}`;
