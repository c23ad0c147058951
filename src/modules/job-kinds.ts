import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { insertJob, type EnqueueOptions } from '../jobs/queue.ts';
import { jobKind, type PayloadOf } from '../jobs/registry.ts';
import type { OutgoingMail } from '../mail/mailer.ts';

/** Attempts of a webhook delivery: with the backoff (capped at an hour) they span about a day (DESIGN §3). */
export const WEBHOOK_DELIVERY_ATTEMPTS = 30;
/** Attempts of a processing job: network failures are retried with the queue's backoff (1 s, 2 s, 4 s, 8 s). */
export const PROCESS_ATTEMPTS = 5;

/**
 * Every kind of background job, with its payload type and retry budget: the one map from kind to
 * payload. It imports no area (every area imports it). Handlers live next to their area (`<area>.jobs.ts`) and are gathered in job-handlers.ts.
 * Payloads are stored as JSON in the jobs table: change one only compatibly (old rows still run).
 */
export const jobKinds = {
  /** upload_url → download → probe → sd/hd → thumbnails → ready (docs/media.md). */
  'video.process': jobKind<{ videoId: number; /** the video's media_version when queued */ version: number }>({ maxAttempts: PROCESS_ATTEMPTS }),
  /** A custom_identifier file set made from the video's source. */
  'video.files': jobKind<{ setId: number; version: number }>({ maxAttempts: PROCESS_ATTEMPTS }),
  /** The video POSTed to its webhook_url once ready or error. */
  'video.webhook': jobKind<{
    videoId: number;
    /** Whose key signs the delivery (absent in jobs queued before it was recorded: read from the video). */
    organizationId?: number;
    url: string;
    /** The Video resource (as the API answers it) when it reached ready or error. */
    video: { status: string | null } & Record<string, unknown>;
  }>({ maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS }),
  /** Removal of store folders (durable: runs even if the immediate removal failed). */
  'media.delete': jobKind<{ prefixes: string[] }>(),
  'caption.fetch': jobKind<{ caption_id: number; revision: number }>({ maxAttempts: 5 }),
  'thumbnail.fetch': jobKind<{ thumbnail_id: number; url: string }>({ maxAttempts: 5 }),
  /** The recording of a finished broadcast becomes its video. */
  'live.record': jobKind<{ instance_id: number }>(),
  /** Mail to the stream's notification addresses when a broadcast starts or ends. */
  'live.notify': jobKind<{ instance_id: number }>(),
  /** HLS output of a deleted instance removed once no request can still want it. */
  'live.cleanup': jobKind<{ player_uuid: string }>(),
  'gdpr.process': jobKind<{ requestId: number; /** role of the token that filed it: it may not erase or rewrite a more powerful user */ actorRole: string }>(),
  'gdpr.webhook': jobKind<{ requestId: number }>({ maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS }),
  /** One analytics or player message to one webhook, signed with the webhook's key. */
  'webhook.notify': jobKind<{ webhookId: number; messageId: string; event: string; body: Record<string, unknown> }>({ maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS }),
  'mail.stakeholder': jobKind<{ emailId: number; mail: OutgoingMail }>({ maxAttempts: 20 }),
};

export type JobKinds = typeof jobKinds;
export type JobKind = keyof JobKinds;
export type JobPayload<K extends JobKind> = PayloadOf<JobKinds[K]>;
export const JOB_KINDS = Object.keys(jobKinds) as JobKind[];

/** Enqueues a job of a known kind, type-checked against its payload, in the caller's transaction. */
export function enqueue<K extends JobKind>(
  db: Kysely<DB>,
  kind: K,
  payload: JobPayload<K>,
  options: Omit<EnqueueOptions, 'maxAttempts'> = {},
): Promise<number> {
  return insertJob(db, kind, payload, { ...options, maxAttempts: jobKinds[kind].maxAttempts });
}
