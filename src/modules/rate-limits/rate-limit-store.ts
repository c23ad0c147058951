import type { RateLimitsRepository } from './rate-limits.repository.ts';

type Done = (err: Error | null, res?: { current: number; ttl: number }) => void;

/** The counter contract of @fastify/rate-limit's stores (incr, read, child), over the database. */
export interface RateLimitStore {
  incr(key: string, done: Done, timeWindow: number, max: number): void;
  read(key: string, done: Done): void;
  child(): RateLimitStore;
}

/**
 * A store class for @fastify/rate-limit (it constructs the store itself) that counts in the database:
 * every API process of a deployment shares the counts, and memory holds nothing per key, so a flood
 * of keys cannot make a process forget the ones it limits.
 */
export function databaseRateLimitStore(repo: RateLimitsRepository): new () => RateLimitStore {
  return class DatabaseRateLimitStore implements RateLimitStore {
    incr(key: string, done: Done, timeWindow: number): void {
      const now = Date.now();
      repo.hit(key, timeWindow, now).then(
        (r) => done(null, { current: r.count, ttl: Math.max(0, r.resetAt - now) }),
        (err: Error) => done(err),
      );
    }

    read(key: string, done: Done): void {
      const now = Date.now();
      repo.read(key, now).then(
        (r) => done(null, { current: r.count, ttl: Math.max(0, r.resetAt - now) }),
        (err: Error) => done(err),
      );
    }

    child(): RateLimitStore {
      return this;
    }
  };
}
