import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type * as IoRedis from 'ioredis';
import { whenUsed } from '../lib/when-used.ts';
import { AppError } from '../lib/errors.ts';

const ioredis = whenUsed<typeof IoRedis>('ioredis');

export type RateLimitBackend = { redisUrl: string } | { store: new () => object };

/**
 * @fastify/rate-limit, counting in Redis when REDIS_URL is set and in the database otherwise: either
 * way every process of a deployment shares the counts (docs/security.md). No route is limited by
 * default (`global: false`); routes call a limit where they have checked what they can cheaply.
 */
export async function registerRateLimits(app: FastifyInstance, backend: RateLimitBackend): Promise<void> {
  if ('redisUrl' in backend) {
    // No offline queue: while Redis is unreachable a count fails at once (and the request goes on, unlimited)
    // instead of waiting for a reconnection.
    const redis = new (ioredis().Redis)(backend.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: false, lazyConnect: false });
    // ioredis reconnects by itself; an outage is logged once a minute rather than at every attempt.
    let loggedAt = 0;
    redis.on('error', (err: Error) => {
      if (Date.now() - loggedAt < 60_000) return;
      loggedAt = Date.now();
      app.log.warn({ err: err.message }, 'limits: Redis unreachable, the public limits are not counted meanwhile');
    });
    // Counting starts with the connection: wait for it a little (an unreachable Redis does not hold the start).
    if (redis.status !== 'ready') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    app.addHook('onClose', async () => {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    });
    // Redis unreachable: the limited routes keep answering, unlimited meanwhile (docs/deployment.md).
    await app.register(rateLimit, { global: false, redis, nameSpace: 'reelbase:limit:', skipOnError: true });
  } else {
    await app.register(rateLimit, { global: false, store: backend.store as never });
  }
}

export type Limit = (
  request: FastifyRequest,
  options?: { increment?: boolean },
) => Promise<{ isAllowed: boolean; max?: number; remaining?: number; ttlInSeconds?: number; isExceeded?: boolean }>;

/** A limit of `max` per `windowMs`, counted per the key `keyOf` gives a request. */
export function createLimit(app: FastifyInstance, max: number, windowMs: number, keyOf: (request: FastifyRequest) => string): Limit {
  return app.createRateLimit({ max, timeWindow: windowMs, keyGenerator: keyOf });
}

/**
 * Counts one request against a limit (or, with `increment: false`, only looks), answers the
 * RateLimit-* headers, and tells whether the request is past the limit (then with Retry-After).
 * `full`: refused once the count reaches the maximum (for limits that count failures: the next try
 * is refused before it is made).
 */
export async function limitReached(
  limit: Limit,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { increment?: boolean; full?: boolean } = {},
): Promise<boolean> {
  const state = await limit(request, { increment: options.increment ?? true });
  if (state.isAllowed || state.max === undefined) return false;
  const remaining = state.remaining ?? 0;
  reply
    .header('ratelimit-limit', state.max)
    .header('ratelimit-remaining', remaining)
    .header('ratelimit-reset', state.ttlInSeconds ?? 0);
  if (!state.isExceeded && !(options.full && remaining <= 0)) return false;
  reply.header('retry-after', Math.max(1, state.ttlInSeconds ?? 1));
  return true;
}

/** As limitReached, refusing with 429 rate_limited past the limit. */
export async function enforceLimit(limit: Limit, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (await limitReached(limit, request, reply)) throw new AppError('rate_limited', 'Too many requests from this address; try again later');
}
