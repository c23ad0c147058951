import { GroupCommit, VIEWER_WINDOW_MS } from '../../lib/group-commit.ts';
import type { Counted, RateLimitsRepository } from './rate-limits.repository.ts';

type Done = (err: Error | null, res?: { current: number; ttl: number }) => void;

/** The counter contract of @fastify/rate-limit's stores (incr, read, child), over the database. */
export interface RateLimitStore {
  incr(key: string, done: Done, timeWindow: number, max: number): void;
  read(key: string, done: Done): void;
  child(): RateLimitStore;
}

/**
 * Hits that arrive together are counted in one statement (a flood of viewer reports would otherwise
 * cost a write each), the hits of one key added up; each hit still learns its own count. A hit waits
 * up to VIEWER_WINDOW_MS for others while hits come one at a time (src/lib/group-commit.ts): the
 * viewers' reports are counted here, and wait for their batch as their writes do.
 */
function hitCounter(repo: RateLimitsRepository): GroupCommit<{ key: string; windowMs: number }, Counted> {
  return new GroupCommit(
    async (hits) => {
      const byKey = new Map<string, { key: string; hits: number; windowMs: number }>();
      for (const hit of hits) {
        const entry = byKey.get(hit.key);
        if (entry) entry.hits++;
        else byKey.set(hit.key, { key: hit.key, hits: 1, windowMs: hit.windowMs });
      }
      // In key order: two batches locking the same rows in opposite orders would deadlock on PostgreSQL.
      const counts = [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const after = await repo.hitMany(counts, Date.now());
      // The n-th hit of a key in the batch counts as the n-th of the batch's hits of it.
      const seen = new Map<string, number>();
      return hits.map((hit) => {
        const counted = after.get(hit.key)!;
        const nth = (seen.get(hit.key) ?? 0) + 1;
        seen.set(hit.key, nth);
        return { count: counted.count - byKey.get(hit.key)!.hits + nth, resetAt: counted.resetAt };
      });
    },
    500,
    VIEWER_WINDOW_MS,
  );
}

/**
 * A store class for @fastify/rate-limit (it constructs the store itself) that counts in the database:
 * every API process of a deployment shares the counts, and memory holds nothing per key, so a flood
 * of keys cannot make a process forget the ones it limits.
 */
export function databaseRateLimitStore(repo: RateLimitsRepository): new () => RateLimitStore {
  const counter = hitCounter(repo);
  return class DatabaseRateLimitStore implements RateLimitStore {
    incr(key: string, done: Done, timeWindow: number): void {
      const now = Date.now();
      counter.add({ key, windowMs: timeWindow }).then(
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
