import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { JobsRepository } from '../jobs/jobs.repository.ts';
import { insertJob, type EnqueueOptions } from '../jobs/queue.ts';
import { jobKind, type JobLane, type PayloadOf } from '../jobs/registry.ts';
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
  'video.process': jobKind<{ videoId: number; /** the video's media_version when queued */ version: number }>({ maxAttempts: PROCESS_ATTEMPTS, lane: 'media' }),
  /** The HLS ladder of a video processed before ladders existed (`reelbase media backfill-hls`). */
  'video.hls': jobKind<{ videoId: number }>({ maxAttempts: PROCESS_ATTEMPTS, lane: 'media' }),
  /** A custom_identifier file set made from the video's source. */
  'video.files': jobKind<{ setId: number; version: number }>({ maxAttempts: PROCESS_ATTEMPTS, lane: 'media' }),
  /** The video POSTed to its webhook_url once ready or error. */
  'video.webhook': jobKind<{
    videoId: number;
    /** Whose key signs the delivery (absent in jobs queued before it was recorded: read from the video). */
    organizationId?: number;
    url: string;
    /** The Video resource (as the API answers it) when it reached ready or error. */
    video: { status: string | null } & Record<string, unknown>;
  }>({ maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS }),
  /** An unfinished direct upload reached its expiry: refused from then on, bytes removed, video failed (docs/uploads.md). */
  'upload.expire': jobKind<{ uploadId: string }>(),
  /** Removal of store folders (durable: runs even if the immediate removal failed). */
  'media.delete': jobKind<{ prefixes: string[] }>(),
  'caption.fetch': jobKind<{ caption_id: number; revision: number }>({ maxAttempts: 5, lane: 'media' }),
  'thumbnail.fetch': jobKind<{ thumbnail_id: number; url: string }>({ maxAttempts: 5, lane: 'media' }),
  /** The recording of a finished broadcast becomes its video. */
  'live.record': jobKind<{ instance_id: number }>({ lane: 'media' }),
  /** Mail to the stream's notification addresses when a broadcast starts or ends. */
  'live.notify': jobKind<{ instance_id: number }>(),
  /** HLS output of a deleted instance removed once no request can still want it. */
  'live.cleanup': jobKind<{ player_uuid: string }>(),
  'gdpr.process': jobKind<{ requestId: number; /** role of the token that filed it: it may not erase or rewrite a more powerful user */ actorRole: string }>(),
  'gdpr.webhook': jobKind<{ requestId: number }>({ maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS }),
  /** One analytics or player message to one webhook, signed with the webhook's key. */
  'webhook.notify': jobKind<{ webhookId: number; messageId: string; event: string; body: Record<string, unknown> }>({ maxAttempts: WEBHOOK_DELIVERY_ATTEMPTS }),
  /** A stakeholder email (outbox): queued with its row, sent at once by the request or else by a worker. */
  'mail.stakeholder': jobKind<{ emailId: number; mail: OutgoingMail }>({ maxAttempts: 20 }),
  /** An invitation or a password reset link mailed to a user (docs/sign-in.md); the link is made when the mail is sent. */
  'account.mail': jobKind<{ userId: number; purpose: 'invite' | 'reset' }>({ maxAttempts: 10 }),
  /**
   * Deletes finished jobs and expired rows in bounded batches, and queues the next sweep (docs/jobs.md,
   * "Retention"). Attempts: a sweep that cannot queue its successor is retried for days rather than end the chain.
   */
  'housekeeping.sweep': jobKind<Record<string, never>>({ maxAttempts: 100, lane: 'short' }),
  /** Adds the reports stored since the last run to the daily rollups, and queues the next run (docs/analytics.md, "Rollups"). */
  'analytics.rollup': jobKind<Record<string, never>>({ maxAttempts: 100, lane: 'short' }),
};

export type JobKinds = typeof jobKinds;
export type JobKind = keyof JobKinds;
export type JobPayload<K extends JobKind> = PayloadOf<JobKinds[K]>;
export const JOB_KINDS = Object.keys(jobKinds) as JobKind[];
/**
 * The runner's lane of each kind: downloads and transcodes (`media`, WORKER_CONCURRENCY slots) apart
 * from quick jobs (`short`), so that slow sources never hold up webhooks, mail or GDPR requests.
 */
export const JOB_LANES = Object.fromEntries(JOB_KINDS.map((kind) => [kind, jobKinds[kind].lane ?? 'short'])) as Record<JobKind, JobLane>;

/** Enqueues a job of a known kind, type-checked against its payload, in the caller's transaction. */
export function enqueue<K extends JobKind>(
  db: Kysely<DB>,
  kind: K,
  payload: JobPayload<K>,
  options: Omit<EnqueueOptions, 'maxAttempts'> = {},
): Promise<number> {
  return insertJob(db, kind, payload, { ...options, maxAttempts: jobKinds[kind].maxAttempts });
}

/**
 * `enqueue` for a job whose payload names people: their addresses are recorded (job_subjects) in the same
 * transaction, so that a GDPR request of the organization finds the job by index instead of reading every
 * payload (docs/gdpr.md). Every job that carries a person's address must be enqueued this way.
 */
export async function enqueueNaming<K extends JobKind>(
  db: Kysely<DB>,
  kind: K,
  payload: JobPayload<K>,
  subjects: { organizationId: number; emails: readonly string[] },
  options: Omit<EnqueueOptions, 'maxAttempts'> = {},
): Promise<number> {
  const id = await enqueue(db, kind, payload, options);
  await new JobsRepository(db).addSubjects(id, subjects.organizationId, subjects.emails);
  return id;
}

/**
 * Cancels the queued and running jobs of `kind` whose payload `match`es, in the caller's transaction
 * (e.g. the processing of a video being deleted): their rows are deleted, and a worker running one
 * aborts it within a second (src/jobs/runner.ts). Answers how many there were.
 */
export async function cancelJobs<K extends JobKind>(db: Kysely<DB>, kind: K, match: (payload: JobPayload<K>) => boolean): Promise<number> {
  const jobs = new JobsRepository(db);
  const ids = (await jobs.openOfType(kind)).filter((job) => match(JSON.parse(job.payload) as JobPayload<K>)).map((job) => job.id);
  return jobs.deleteOpen(ids);
}
