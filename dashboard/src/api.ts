import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './openapi.d.ts';

/**
 * The Dashboard API, typed by the OpenAPI document (openapi.d.ts, `npm run dashboard:types`). The
 * dashboard calls the same operations as any client, authenticated by the session's cookie; what
 * changes something carries the session's CSRF token.
 */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

let csrfToken = '';
export function setCsrfToken(token: string) {
  csrfToken = token;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrfToken) request.headers.set('x-csrf-token', csrfToken);
    return request;
  },
};
api.use(csrf);

/** The API's error answer: `{error, code, details: [{field, message}]}`. */
export interface ApiError {
  error: string;
  code?: string;
  details?: Array<{ field: string; message: string }>;
}

/** An error answer as something to show: the message, and each field's problem by field name. */
export function problemOf(error: unknown): { message: string; fields: Record<string, string> } {
  const e = (error ?? {}) as Partial<ApiError>;
  const fields: Record<string, string> = {};
  for (const d of e.details ?? []) fields[d.field.replace(/^\/|^body\./, '')] = d.message;
  return { message: e.error ?? 'Something went wrong; try again.', fields };
}

export type Session = paths['/dashboard/v1/session']['get']['responses'][200]['content']['application/json'];
