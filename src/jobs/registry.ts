import type { JobRow } from './jobs.repository.ts';

export interface JobContext {
  job: JobRow;
  /** Aborted when the runner stops or the lease is lost: long handlers (ffmpeg) must stop then. */
  signal: AbortSignal;
}

/** What a kind of job carries and how it is retried; `P` is only a type (the payload's). */
export interface JobKindSpec<P> {
  /** Attempts before the job fails for good (the queue's default is 10). */
  maxAttempts?: number;
  readonly payload?: P;
}

export const jobKind = <P>(spec: Omit<JobKindSpec<P>, 'payload'> = {}): JobKindSpec<P> => spec;

export type PayloadOf<S> = S extends JobKindSpec<infer P> ? P : never;

export type JobHandler<P = unknown> = (payload: P, ctx: JobContext) => Promise<void>;

/** Handlers for some kinds of a registry `R`, each typed by its kind's payload. */
export type JobHandlersFor<R, K extends keyof R> = { [Q in K]: JobHandler<PayloadOf<R[Q]>> };

/**
 * Merges the areas' handler maps into one, refusing a kind handled twice, a kind without a handler
 * and a handler of no known kind: a worker that could not run every queued job does not start.
 */
export function collectHandlers(kinds: readonly string[], groups: ReadonlyArray<Record<string, JobHandler<never>>>): Record<string, JobHandler<never>> {
  const known = new Set(kinds);
  const all: Record<string, JobHandler<never>> = {};
  for (const group of groups) {
    for (const [kind, handler] of Object.entries(group)) {
      if (!known.has(kind)) throw new Error(`job handler for unknown kind "${kind}"`);
      if (all[kind]) throw new Error(`job kind "${kind}" has two handlers`);
      all[kind] = handler;
    }
  }
  const missing = kinds.filter((k) => !all[k]);
  if (missing.length > 0) throw new Error(`job kinds without a handler: ${missing.join(', ')}`);
  return all;
}
