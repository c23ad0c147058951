import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.ts';

/**
 * Query strings: `a[]=x&a[]=y`, `a=x&a=y` (arrays) and `a=x,y` (split when the route's schema declares
 * an array) are all accepted.
 */
export function parseQueryString(qs: string): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [rawKey, value] of new URLSearchParams(qs)) {
    const isArray = rawKey.endsWith('[]');
    const key = isArray ? rawKey.slice(0, -2) : rawKey;
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') continue;
    const prev = out[key];
    if (prev === undefined) out[key] = isArray ? [value] : value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

type SchemaLike = { type?: unknown; properties?: Record<string, SchemaLike>; anyOf?: SchemaLike[] };

function isArraySchema(s: SchemaLike | undefined): boolean {
  if (!s) return false;
  return s.type === 'array' || (Array.isArray(s.anyOf) && s.anyOf.some(isArraySchema));
}

export function registerRequestParsing(app: FastifyInstance) {
  // An empty body with a JSON content type is an empty object (DELETE clients send one); anything
  // else must be a JSON value, parsed with prototype-poisoning protection.
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    defaultJson(request, text, (err: Error | null, value?: unknown) => {
      if (err) return done(new AppError('invalid_json'), undefined);
      done(null, value);
    });
  });

  app.addHook('preValidation', async (request) => {
    const query = request.query as Record<string, unknown> | undefined;
    const props = (request.routeOptions.schema?.querystring as SchemaLike | undefined)?.properties;
    if (query && props) {
      for (const [key, schema] of Object.entries(props)) {
        const value = query[key];
        if (typeof value === 'string' && isArraySchema(schema)) query[key] = value === '' ? [] : value.split(',');
      }
    }
    const wrap = request.routeOptions.config.wrap;
    const body = request.body as Record<string, unknown> | undefined;
    if (wrap && body && typeof body === 'object' && !Array.isArray(body)) {
      const inner = body[wrap];
      if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
        const { [wrap]: _wrapped, ...outer } = body;
        request.body = { ...outer, ...(inner as Record<string, unknown>) };
      }
    }
  });
}

/** Only the dashboard API takes the `.json` suffix; `/dashboard/openapi.json` is a real file name. */
export function stripJsonSuffix(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!/^\/dashboard\/v1(\.1)?(\/.*)?\.json$/.test(path)) return url;
  return path.slice(0, -5) + (q === -1 ? '' : url.slice(q));
}
