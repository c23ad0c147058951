import type { JobRow } from './jobs.repository.ts';

export interface JobContext {
  job: JobRow;
  /**
   * Aborted when the runner stops, the lease is lost or the job is cancelled (its row deleted, e.g. with
   * the video it works on): long handlers (downloads, ffmpeg) must stop then.
   */
  signal: AbortSignal;
}

/**
 * The runner's concurrency lanes: `media` for long downloads and transcodes, `short` for everything
 * quick (webhooks, mail, GDPR). Each lane has its own slots, so media work never holds up short jobs.
 */
export type JobLane = 'media' | 'short';

/** What a kind of job carries, how it is retried and in which lane it runs; `P` is only a type (the payload's). */
export interface JobKindSpec<P> {
  /** Attempts before the job fails for good (the queue's default is 10). */
  maxAttempts?: number;
  /** Default `short`. */
  lane?: JobLane;
  readonly payload?: P;
}

export const jobKind = <P>(spec: Omit<JobKindSpec<P>, 'payload'> = {}): JobKindSpec<P> => spec;

export type PayloadOf<S> = S extends JobKindSpec<infer P> ? P : never;

export type JobHandler<P = unknown> = (payload: P, ctx: JobContext) => Promise<void>;

/** A handler with the lane of its kind: what the runner is given for each kind. */
export interface LanedHandler<P = unknown> {
  handler: JobHandler<P>;
  lane: JobLane;
}

/** A runner's entry for one kind: a handler with its lane, or a bare handler (lane `short`). */
export type HandlerEntry = JobHandler<never> | LanedHandler<never>;

/** Handlers for some kinds of a registry `R`, each typed by its kind's payload. */
export type JobHandlersFor<R, K extends keyof R> = { [Q in K]: JobHandler<PayloadOf<R[Q]>> };

/**
 * Merges the areas' handler maps into one, each handler with its kind's lane (`kinds` maps each kind to
 * its lane; a plain list of kinds puts them all in `short`), refusing a kind handled twice, a kind
 * without a handler and a handler of no known kind: a worker that could not run every queued job does
 * not start.
 */
export function collectHandlers(
  kinds: readonly string[] | Readonly<Record<string, JobLane>>,
  groups: ReadonlyArray<Record<string, JobHandler<never>>>,
): Record<string, LanedHandler<never>> {
  const lanes: Readonly<Record<string, JobLane>> = Array.isArray(kinds) ? {} : (kinds as Readonly<Record<string, JobLane>>);
  const names: readonly string[] = Array.isArray(kinds) ? (kinds as readonly string[]) : Object.keys(kinds);
  const known = new Set(names);
  const all: Record<string, LanedHandler<never>> = {};
  for (const group of groups) {
    for (const [kind, handler] of Object.entries(group)) {
      if (!known.has(kind)) throw new Error(`job handler for unknown kind "${kind}"`);
      if (all[kind]) throw new Error(`job kind "${kind}" has two handlers`);
      all[kind] = { handler, lane: lanes[kind] ?? 'short' };
    }
  }
  const missing = names.filter((k) => !all[k]);
  if (missing.length > 0) throw new Error(`job kinds without a handler: ${missing.join(', ')}`);
  return all;
}
