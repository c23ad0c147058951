import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { JobsRepository } from './jobs.repository.ts';

export interface EnqueueOptions {
  /** Delay before the first attempt, in milliseconds. */
  delayMs?: number;
  maxAttempts?: number;
}

type Listener = () => void;
const listeners = new Set<Listener>();

/** In-process wake-up for runners, so a job enqueued here starts without waiting for the next poll. */
export function onEnqueue(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Inserts a job row. Pass the transaction of the change that causes it, so that the job exists exactly
 * when the change does. Areas enqueue through the typed `enqueue` of src/modules/job-kinds.ts.
 */
export async function insertJob(db: Kysely<DB>, type: string, payload: unknown, options: EnqueueOptions = {}): Promise<number> {
  const now = Date.now();
  const id = await new JobsRepository(db).insert({
    type,
    payload: JSON.stringify(payload ?? {}),
    run_at: now + (options.delayMs ?? 0),
    max_attempts: options.maxAttempts ?? 10,
    now,
  });
  // Wake runners on the next tick (after the surrounding transaction had a chance to commit).
  setImmediate(() => listeners.forEach((l) => l()));
  return id;
}
