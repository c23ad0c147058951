import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRouteStep } from './route-hooks.ts';
import { AppError } from '../lib/errors.ts';
import { can } from '../modules/roles/permissions.ts';
import { hashToken } from '../lib/tokens.ts';
import type { TokensService } from '../modules/tokens/tokens.service.ts';
import type { SessionAuth, SessionsService } from '../modules/sessions/sessions.service.ts';
import { assertSameOrigin } from './same-origin.ts';
import { sameSecret } from '../lib/constant-time.ts';
import { sessionSecretOf } from './cookies.ts';
import type { AuthContext } from './context.ts';

/** The token may come as `Authorization: Bearer`, `?auth_token=` or a body attribute. */
export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const token = bearerToken(header);
    if (token) return token;
  }
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.auth_token;
  if (typeof fromQuery === 'string' && fromQuery) return fromQuery;
  const body = request.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body) && typeof body.auth_token === 'string' && body.auth_token) {
    return body.auth_token;
  }
  return undefined;
}

/** `Bearer <token>` (scheme case-insensitive, one token): the token; anything else: undefined. */
function bearerToken(header: string): string | undefined {
  // Checked without a regex match: this runs on every request.
  if (header.length < 8 || header.slice(0, 6).toLowerCase() !== 'bearer' || !/\s/.test(header[6])) return undefined;
  const token = header.slice(7).trim();
  return token && !/\s/.test(token) ? token : undefined;
}

// HTTP/1.1 clients send the same token on every request of a connection: its hash is remembered
// for the connection (and forgotten with it) rather than computed again each time.
const lastTokenOf = new WeakMap<object, { token: string; hash: string }>();

function tokenHashFor(request: FastifyRequest, token: string): string {
  const connection = request.raw.socket;
  const last = connection ? lastTokenOf.get(connection) : undefined;
  if (last && last.token === token) return last.hash;
  const hash = hashToken(token);
  if (connection) lastTokenOf.set(connection, { token, hash });
  return hash;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A signed-in person's request (docs/sign-in.md): a state-changing one must come from our own pages
 * and echo the session's CSRF token in `X-CSRF-Token`, which a page of another site cannot read.
 */
function checkSessionRequest(request: FastifyRequest, session: SessionAuth, publicUrl: string): AuthContext {
  if (!SAFE_METHODS.has(request.method)) {
    assertSameOrigin(request, publicUrl);
    const echoed = request.headers['x-csrf-token'];
    if (typeof echoed !== 'string' || !sameSecret(echoed, session.csrfToken)) {
      throw new AppError('forbidden', 'A signed-in request that changes something needs the X-CSRF-Token of its session');
    }
  }
  const { csrfToken: _csrf, ...auth } = session;
  return auth;
}

/**
 * Who a request acts for: an API token (Bearer, `auth_token`), else a signed-in session's cookie.
 * A token wins over a cookie, so that a client's requests mean what they meant before sessions.
 */
export function registerAuth(app: FastifyInstance, tokens: TokensService, sessions: SessionsService, publicUrl: string) {
  const secure = publicUrl.startsWith('https:');
  app.decorateRequest('auth', null as never);
  addRouteStep(app, (route) => {
    if (route.config?.public) return undefined;
    const required = route.config?.permission;
    const admit = (request: FastifyRequest, auth: AuthContext | null) => {
      if (!auth) throw new AppError('unauthorized');
      const permission = required ?? (request.method === 'GET' || request.method === 'HEAD' ? 'content:read' : 'content:write');
      if (!can(auth.role, permission)) {
        throw new AppError('forbidden', `The ${auth.role} role may not perform this action (needs ${permission})`);
      }
      request.auth = auth;
    };
    return (request) => {
      const token = presentedToken(request);
      if (!token) {
        const secret = sessionSecretOf(request, secure);
        if (!secret) throw new AppError('unauthorized');
        return sessions.authenticate(secret).then((session) => admit(request, session && checkSessionRequest(request, session, publicUrl)));
      }
      const auth = tokens.authenticateHash(tokenHashFor(request, token));
      // A cached token is checked without waiting; an uncached one after its query.
      if (auth instanceof Promise) return auth.then((found) => admit(request, found));
      admit(request, auth);
    };
  });
}
