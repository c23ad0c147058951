import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRouteStep } from './route-hooks.ts';
import { AppError } from './errors.ts';
import { can } from '../modules/roles/permissions.ts';
import type { TokensService } from '../modules/tokens/tokens.service.ts';
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

export function registerAuth(app: FastifyInstance, tokens: TokensService) {
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
      if (!token) throw new AppError('unauthorized');
      const auth = tokens.authenticate(token);
      // A cached token is checked without waiting; an uncached one after its query.
      if (auth instanceof Promise) return auth.then((found) => admit(request, found));
      admit(request, auth);
    };
  });
}
