import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addRouteHook, routeHasMethod } from './route-hooks.ts';
import { AppError } from '../lib/errors.ts';
import { type IdempotencyService, requestFingerprint } from '../modules/idempotency/idempotency.service.ts';

const claimed = new WeakMap<FastifyRequest, { organizationId: number; key: string; lease: number }>();

/**
 * `Idempotency-Key` on any POST: executed at most once per organization and key within 24 h. A request
 * that never stores its answer (the process died) holds the key for the lease only (idempotency.service.ts).
 */
export function registerIdempotency(app: FastifyInstance, service: IdempotencyService) {
  app.addHook('onRoute', (route) => {
    // An answer that carries a secret (a new API token) is never stored to be replayed.
    if (!routeHasMethod(route, 'POST') || route.config?.secretAnswer) return;
    addRouteHook(route, 'preHandler', replayOrClaim);
    addRouteHook(route, 'onSend', remember);
  });

  async function replayOrClaim(request: FastifyRequest, reply: FastifyReply) {
    if (request.method !== 'POST' || !request.auth) return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header[0] : header;
    if (!key || key.length > 255) throw new AppError('bad_request', 'Idempotency-Key must be 1 to 255 characters');
    const path = request.url.split('?')[0];
    const begun = await service.begin(request.auth.organizationId, key, requestFingerprint('POST', path, request.body));
    if ('lease' in begun) {
      claimed.set(request, { organizationId: request.auth.organizationId, key, lease: begun.lease });
      return;
    }
    const stored = begun.replay;
    reply.header('idempotent-replayed', 'true').code(stored.status);
    if (stored.type) reply.type(stored.type);
    return reply.serializer((x: unknown) => x as string).send(stored.body);
  }

  async function remember(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const claim = claimed.get(request);
    if (!claim) return payload;
    claimed.delete(request);
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '';
    const type = (reply.getHeader('content-type') as string | undefined) ?? null;
    await service.finish(claim.organizationId, claim.key, claim.lease, { status: reply.statusCode, body, type });
    return payload;
  }
}
