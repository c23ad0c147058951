import type { FastifyReply } from 'fastify';

/**
 * For a route that answers shared, frozen views of cached rows (`viewOf` in src/db/read-cache.ts):
 * the JSON body of each view is serialized once, with the route's own response schema, and sent as
 * it is afterwards. Any other value goes through the usual serialization. One sender per route, since
 * a body is only valid for the schema that made it.
 */
export function sharedBodySender() {
  const bodies = new WeakMap<object, string>();
  // Answers the value itself (Fastify serializes it) or the reply it has sent (Fastify then does nothing more).
  return <T>(reply: FastifyReply, value: T): T => {
    if (value === null || typeof value !== 'object' || !Object.isFrozen(value)) return value;
    let body = bodies.get(value);
    if (body === undefined) bodies.set(value, (body = reply.serialize(value) as string));
    return reply.type('application/json; charset=utf-8').send(body) as unknown as T;
  };
}
