import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { backoffMs } from './backoff.ts';
import { JobsRepository, type JobRow } from './jobs.repository.ts';
import { onEnqueue } from './queue.ts';
import type { JobHandler } from './registry.ts';

/** A failure that retrying cannot fix (bad input): the job fails at once. */
export class PermanentJobError extends Error {}

export interface RunnerOptions {
  handlers: Record<string, JobHandler<never>>;
  concurrency?: number;
  pollMs?: number;
  leaseMs?: number;
  backoff?: (attempt: number) => number;
  log?: { error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}

/**
 * Claims due jobs from the jobs table and runs their handlers: leases renewed while running,
 * retries with exponential backoff, a crashed worker's jobs taken again once their lease expires.
 */
export class JobRunner {
  readonly workerId = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly repo: JobsRepository;
  private readonly running = new Map<number, { controller: AbortController; done: Promise<void> }>();
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private ticking = false;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;

  constructor(
    db: Kysely<DB>,
    private readonly options: RunnerOptions,
  ) {
    this.repo = new JobsRepository(db);
    this.concurrency = options.concurrency ?? 2;
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? 60_000;
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
      while (!this.stopped && this.running.size < this.concurrency && (await this.claimOne()));
    } catch (err) {
      this.options.log?.error({ err }, 'job claim failed');
    } finally {
      this.ticking = false;
      if (!this.stopped) this.schedule(this.pollMs);
    }
  }

  private async claimOne(): Promise<boolean> {
    const job = await this.repo.claim(this.workerId, Date.now(), this.leaseMs, Object.keys(this.options.handlers));
    if (!job) return false;
    const controller = new AbortController();
    const done = this.execute(job, controller).finally(() => {
      this.running.delete(job.id);
      this.kick();
    });
    this.running.set(job.id, { controller, done });
    return true;
  }

  private async execute(job: JobRow, controller: AbortController) {
    const handler = this.options.handlers[job.type];
    const heartbeat = setInterval(
      async () => {
        const kept = await this.repo.extend(job.id, this.workerId, Date.now() + this.leaseMs).catch(() => true);
        if (!kept) controller.abort(new Error('lease lost'));
      },
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    try {
      await handler(JSON.parse(job.payload) as never, { job, signal: controller.signal });
      await this.repo.finish(job.id, this.workerId, Date.now());
    } catch (err) {
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
