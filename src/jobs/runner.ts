import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { backoffMs } from './backoff.ts';
import { JobsRepository, type JobRow } from './jobs.repository.ts';
import { onEnqueue } from './queue.ts';
import type { HandlerEntry, JobHandler, JobLane } from './registry.ts';

/** A failure that retrying cannot fix (bad input): the job fails at once. */
export class PermanentJobError extends Error {}

/** Why a job's signal was aborted when its row was deleted (cancelled) while it ran. */
export class JobCancelledError extends Error {
  constructor() {
    super('The job was cancelled');
  }
}

export interface RunnerOptions {
  /** A handler per kind, with its lane (jobHandlers() of src/modules/job-handlers.ts); a bare handler runs in the `short` lane. */
  handlers: Record<string, HandlerEntry>;
  /** Jobs of the `media` lane run at once (WORKER_CONCURRENCY). Default 2. */
  concurrency?: number;
  /** Jobs of the `short` lane run at once, whatever the media lane holds. Default 4. */
  shortConcurrency?: number;
  pollMs?: number;
  leaseMs?: number;
  /** How often running jobs are checked for cancellation (their row deleted). Default 1 s. */
  cancelCheckMs?: number;
  backoff?: (attempt: number) => number;
  log?: { error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}

interface Running {
  lane: JobLane;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Claims due jobs from the jobs table and runs their handlers: leases renewed while running,
 * retries with exponential backoff, a crashed worker's jobs taken again once their lease expires.
 * Each lane (`media`, `short`) claims only its own kinds into its own slots, so long media work never
 * keeps a quick job waiting. A job whose row disappears while it runs (cancelled) is aborted.
 */
export class JobRunner {
  readonly workerId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly repo: JobsRepository;
  private readonly running = new Map<number, Running>();
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private ticking = false;
  private readonly handlers: Record<string, { handler: JobHandler<never>; lane: JobLane }>;
  /** Each lane's kinds and slots; lanes without kinds are left out. */
  private readonly lanes: Array<{ lane: JobLane; types: string[]; limit: number }>;
  private readonly allTypes: string[];
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly cancelCheckMs: number;
  private cancelWatch: NodeJS.Timeout | null = null;

  constructor(
    db: Kysely<DB>,
    private readonly options: RunnerOptions,
  ) {
    this.repo = new JobsRepository(db);
    this.handlers = Object.fromEntries(
      Object.entries(options.handlers).map(([kind, entry]) => [kind, typeof entry === 'function' ? { handler: entry, lane: 'short' as const } : entry]),
    );
    const limits: Record<JobLane, number> = { media: options.concurrency ?? 2, short: options.shortConcurrency ?? 4 };
    this.lanes = (['media', 'short'] as const)
      .map((lane) => ({ lane, types: Object.keys(this.handlers).filter((kind) => this.handlers[kind].lane === lane), limit: limits[lane] }))
      .filter((l) => l.types.length > 0);
    this.allTypes = Object.keys(this.handlers);
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.cancelCheckMs = options.cancelCheckMs ?? 1000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = onEnqueue(() => this.kick());
    this.schedule(0);
  }

  /** Runs until no due job is left (tests and the CLI use it). */
  async drain(): Promise<void> {
    for (;;) {
      if (await this.claimOne()) continue;
      if (this.running.size === 0) {
        // A job re-queued while that claim ran was not due at its instant; all have settled now.
        if (await this.claimOne()) continue;
        return;
      }
      await Promise.race([...this.running.values()].map((r) => r.done));
    }
  }

  private kick() {
    if (!this.stopped) this.schedule(0);
  }

  private schedule(ms: number) {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick() {
    if (this.stopped || this.ticking) return;
    this.ticking = true;
    try {
      for (const { lane, types, limit } of this.lanes) {
        while (!this.stopped && this.runningIn(lane) < limit && (await this.claimOne(types)));
      }
    } catch (err) {
      this.options.log?.error({ err }, 'job claim failed');
    } finally {
      this.ticking = false;
      if (!this.stopped) this.schedule(this.pollMs);
    }
  }

  private runningIn(lane: JobLane): number {
    let n = 0;
    for (const r of this.running.values()) if (r.lane === lane) n++;
    return n;
  }

  /** Claims one due job of `types` (by default every kind: drain() runs whatever is due) and starts it. */
  private async claimOne(types = this.allTypes): Promise<boolean> {
    const job = await this.repo.claim(this.workerId, Date.now(), this.leaseMs, types);
    if (!job) return false;
    const controller = new AbortController();
    const done = this.execute(job, controller).finally(() => {
      // A retry with no backoff may already run again under the same id (claimed by drain() before
      // this settles): only this run's entry is removed, or drain() would think nothing runs.
      if (this.running.get(job.id)?.controller === controller) this.running.delete(job.id);
      if (this.running.size === 0) this.stopCancelWatch();
      this.kick();
    });
    this.running.set(job.id, { lane: this.handlers[job.type].lane, controller, done });
    this.startCancelWatch();
    return true;
  }

  /**
   * While jobs run, one query every `cancelCheckMs` looks at their rows: a deleted row (the job was
   * cancelled, e.g. with its video) or one this worker no longer holds aborts the job's signal. Works
   * whichever process cancelled it; the lease renewal alone would notice only every third of a lease.
   */
  private startCancelWatch() {
    if (this.cancelWatch) return;
    this.cancelWatch = setInterval(() => void this.checkCancelled(), this.cancelCheckMs);
    this.cancelWatch.unref();
  }

  private stopCancelWatch() {
    if (this.cancelWatch) clearInterval(this.cancelWatch);
    this.cancelWatch = null;
  }

  private async checkCancelled() {
    const ids = [...this.running.keys()];
    let holders: Map<number, boolean>;
    try {
      holders = await this.repo.holders(ids, this.workerId);
    } catch {
      return; // the database is unreachable: the lease renewal decides
    }
    for (const id of ids) {
      const controller = this.running.get(id)?.controller;
      if (!controller || controller.signal.aborted) continue;
      const held = holders.get(id);
      if (held === undefined) controller.abort(new JobCancelledError());
      else if (!held) controller.abort(new Error('lease lost'));
    }
  }

  private async execute(job: JobRow, controller: AbortController) {
    const { handler } = this.handlers[job.type];
    const heartbeat = setInterval(
      async () => {
        const kept = await this.repo.extend(job.id, this.workerId, Date.now() + this.leaseMs).catch(() => true);
        if (!kept && !controller.signal.aborted) {
          const exists = await this.repo.find(job.id).then(Boolean, () => true);
          controller.abort(exists ? new Error('lease lost') : new JobCancelledError());
        }
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    try {
      await handler(JSON.parse(job.payload) as never, { job, signal: controller.signal });
      await this.repo.finish(job.id, this.workerId, Date.now());
    } catch (err) {
      if (controller.signal.reason instanceof JobCancelledError) {
        // Its row is gone: nothing to record.
        this.options.log?.info?.({ jobId: job.id, type: job.type }, 'job cancelled');
        return;
      }
      if (this.stopped && controller.signal.aborted) {
        await this.repo.release(job.id, this.workerId, Date.now());
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      const now = Date.now();
      if (err instanceof PermanentJobError || job.attempts >= job.max_attempts) {
        await this.repo.fail(job.id, this.workerId, message, now);
      } else {
        const delay = (this.options.backoff ?? backoffMs)(job.attempts);
        await this.repo.retryLater(job.id, this.workerId, now + delay, message, now);
      }
      this.options.log?.error({ jobId: job.id, type: job.type, attempt: job.attempts, err: message }, 'job failed');
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Stops claiming; running jobs get `graceMs` to finish, then are aborted and released so that
   * another worker takes them at once.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    const all = [...this.running.values()];
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([Promise.all(all.map((r) => r.done)), timeout]);
    for (const r of this.running.values()) r.controller.abort(new Error('worker stopping'));
    await Promise.all([...this.running.values()].map((r) => r.done));
  }
}
