import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { addRouteStep } from './route-hooks.ts';
import { AppError, invalidField, notFound } from '../lib/errors.ts';
import { FormBodyError, parseFormBody } from './form-body.ts';
import { coerceForm, type SchemaNode } from './form-coercion.ts';

/** Marks a request whose body came from a form: its strings take the body schema's types. */
const FROM_FORM = Symbol('reelbase.formBody');

/**
 * Text with a NUL character cannot be stored by PostgreSQL (SQLite would keep it): refused on every
 * dialect alike. Returns the dotted path of the first string (or key) holding one, else null.
 */
export function nulPath(value: unknown, path = ''): string | null {
  // Depth-first with an explicit stack, in the order a recursive walk takes: a body nested
  // thousands deep must not overflow the call stack.
  const stack: Array<{ value: unknown; path: string }> = [{ value, path }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item.value === 'string') {
      if (item.value.includes('\0')) return item.path || '(body)';
      continue;
    }
    if (item.value === null || typeof item.value !== 'object') continue;
    const entries = Object.entries(item.value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, inner] = entries[i];
      const at = item.path ? `${item.path}.${key}` : key;
      if (key.includes('\0')) return at;
      stack.push({ value: inner, path: at });
    }
  }
  return null;
}

/**
 * Query strings: `a[]=x&a[]=y`, `a=x&a=y` (arrays) and `a=x,y` (split when the route's schema declares
 * an array) are all accepted.
 */
export function parseQueryString(qs: string): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  if (qs.length === 0) return out;
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
  // Bodies are JSON only: without this, Fastify's built-in text/plain parser would hand a string to
  // the body schema (a 422) where the media type is what is wrong (a 415).
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, {});
    void defaultJson(request, text, (err: Error | null, value?: unknown) => {
      if (err) return done(new AppError('invalid_json'), undefined);
      // In JSON text a NUL can only be written as the escape \u0000: walk the value only then.
      const nul = text.includes('\\u0000') ? nulPath(value) : null;
      if (nul) return done(invalidField(nul, 'must not contain NUL characters'), undefined);
      done(null, value);
    });
  });

  // Rails clients send form bodies (docs/api-decisions.md): parsed with Rack's bracket rules, then
  // typed by the route's schema in the normalizer below.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, body, done) => {
    let value: Record<string, unknown>;
    try {
      value = parseFormBody(body as string);
    } catch (err) {
      if (err instanceof FormBodyError) return done(new AppError('invalid_form', `The form body cannot be parsed: ${err.message}`), undefined);
      return done(err as Error, undefined);
    }
    const nul = nulPath(value);
    if (nul) return done(invalidField(nul, 'must not contain NUL characters'), undefined);
    (request as unknown as Record<symbol, boolean>)[FROM_FORM] = true;
    done(null, value);
  });

  addRouteStep(app, requestNormalizer);
}

/**
 * Before validation: an absent body becomes `{}`, NUL characters are refused, comma-separated query
 * values become arrays where the schema wants one, and a wrapped body is unwrapped. Throws AppError.
 */
function requestNormalizer(route: RouteOptions): (request: FastifyRequest) => void {
  const hasBody = Boolean(route.schema?.body);
  const props = (route.schema as { querystring?: SchemaLike } | undefined)?.querystring?.properties ?? {};
  const arrayKeys = Object.keys(props).filter((key) => isArraySchema(props[key]));
  const wrap = route.config?.wrap;
  const bodySchema = route.schema?.body as SchemaNode | undefined;
  return (request) => {
    normalizeRequest(request, hasBody, arrayKeys, wrap);
    if ((request as unknown as Record<symbol, boolean>)[FROM_FORM]) request.body = coerceForm(bodySchema, request.body);
  };
}

function normalizeRequest(request: FastifyRequest, hasBody: boolean, arrayKeys: string[], wrap: string | undefined): void {
  // A POST/PATCH sent without any body is an empty object, so the schema names the missing fields.
  if (request.body === undefined && hasBody) request.body = {};
  // Loops rather than Object.values/entries: this runs on every request, mostly over nothing.
  const params = request.params as Record<string, unknown> | undefined;
  for (const key in params) {
    const value = params[key];
    if (typeof value === 'string' && value.includes('\0')) throw notFound('record');
  }
  const query = request.query as Record<string, unknown> | undefined;
  let hasQuery = false;
  for (const _key in query) {
    hasQuery = true;
    break;
  }
  if (query && hasQuery) {
    const badQuery = nulPath(query);
    if (badQuery) throw invalidField(badQuery.replace(/\.\d+$/, ''), 'must not contain NUL characters');
    for (const key of arrayKeys) {
      const value = query[key];
      if (typeof value === 'string') query[key] = value === '' ? [] : value.split(',');
    }
  }
  const body = request.body as Record<string, unknown> | undefined;
  if (wrap && body && typeof body === 'object' && !Array.isArray(body)) {
    const inner = body[wrap];
    if (inner && typeof inner === 'object' && !Array.isArray(inner)) {
      const { [wrap]: _wrapped, ...outer } = body;
      request.body = { ...outer, ...(inner as Record<string, unknown>) };
    }
  }
}

/** Only the dashboard API takes the `.json` suffix; `/dashboard/openapi.json` is a real file name. */
export function stripJsonSuffix(url: string): string {
  const q = url.indexOf('?');
  // Most paths do not end in .json: answered without slicing the path out (this runs on every request).
  if (!url.startsWith('.json', (q === -1 ? url.length : q) - 5)) return url;
  const path = q === -1 ? url : url.slice(0, q);
  if (!/^\/dashboard\/v1(\.1)?(\/.*)?\.json$/.test(path)) return url;
  return path.slice(0, -5) + (q === -1 ? '' : url.slice(q));
}
