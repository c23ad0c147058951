import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { enqueue, type JobPayload } from '../job-kinds.ts';

export type VideoProcessPayload = JobPayload<'video.process'>;
export type VideoFilesPayload = JobPayload<'video.files'>;
export type VideoWebhookPayload = JobPayload<'video.webhook'>;

/** Queues processing of the video's source `version` (pass the transaction that created or changed it). */
export function enqueueProcessing(trx: Kysely<DB>, videoId: number, version: number): Promise<number> {
  return enqueue(trx, 'video.process', { videoId, version });
}

/** Queues removal of store folders (durable: runs even if the immediate removal failed). */
export function enqueueDelete(db: Kysely<DB>, prefixes: string[]): Promise<number> {
  return enqueue(db, 'media.delete', { prefixes });
}

/** Folder of one video's files in the store. */
export const videoPrefix = (uuid: string) => `videos/${uuid}`;

/** Where a video without upload_url finds its source: a direct upload (implemented by the uploads area). */
export interface UploadedSources {
  /** Writes the video's uploaded original to `dest`; false when it has none. */
  fetch(video: { id: number; uuid: string }, dest: string, signal: AbortSignal): Promise<boolean>;
  /** Once processed, keeps the original (taken over from `file`) in the media store. */
  keep(video: { id: number; uuid: string }, file: string): Promise<void>;
  /** Processing failed for good (not a video, …): the uploaded bytes are removed. */
  discard(video: { id: number }): Promise<void>;
}
