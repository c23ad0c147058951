import { randomUUID } from 'node:crypto';
import { ERRORS, type Lock, type Locker, type RequestRelease } from '@tus/utils';
import type { UploadsRepository } from './uploads.repository.ts';

export interface LockerOptions {
  /** A holder that stops renewing (a killed process) loses the lock after this long. */
  leaseMs: number;
  /** How often a waiting request tries again, and a holder renews and looks for a release request. */
  pollMs: number;
  /** A request gives up waiting after this long (tus answers it with its lock timeout). */
  timeoutMs: number;
}

const DEFAULTS: LockerOptions = { leaseMs: 15_000, pollMs: 250, timeoutMs: 30_000 };

/**
 * @tus/server's Locker over the database, so that one upload is written by one request at a time
 * whichever API process each request reaches (its MemoryLocker only sees its own process). Semantics
 * as MemoryLocker's: a request that wants a held upload asks the holder to release it (a client that
 * resumes after a dropped connection must not wait for the dead request), and waits.
 */
export class DatabaseLocker implements Locker {
  private readonly options: LockerOptions;

  constructor(
    private readonly repo: UploadsRepository,
    options: Partial<LockerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  newLock(id: string): Lock {
    return new DatabaseLock(id, this.repo, this.options);
  }
}

class DatabaseLock implements Lock {
  private readonly owner = randomUUID();
  private heartbeat?: NodeJS.Timeout;

  constructor(
    private readonly id: string,
    private readonly repo: UploadsRepository,
    private readonly options: LockerOptions,
  ) {}

  async lock(signal: AbortSignal, requestRelease: RequestRelease): Promise<void> {
    const deadline = Date.now() + this.options.timeoutMs;
    let asked = false;
    while (!(await this.repo.tryLock(this.id, this.owner, Date.now(), this.options.leaseMs))) {
      if (!asked) {
        await this.repo.requestRelease(this.id);
        asked = true;
      }
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- @tus/server answers its own lock timeout object, as from MemoryLocker
      if (signal.aborted || Date.now() > deadline) throw ERRORS.ERR_LOCK_TIMEOUT;
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs));
    }
    let releasing = false;
    this.heartbeat = setInterval(() => {
      this.repo.renewLock(this.id, this.owner, Date.now() + this.options.leaseMs).then(
        (wanted) => {
          // Asked for by another request (or lost): this request ends, and unlocks on its way out.
          if ((wanted === null || wanted) && !releasing) {
            releasing = true;
            void requestRelease();
          }
        },
        () => {}, // the database is unreachable: the lease decides
      );
    }, this.options.pollMs);
    this.heartbeat.unref();
  }

  async unlock(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.repo.unlock(this.id, this.owner);
  }
}
