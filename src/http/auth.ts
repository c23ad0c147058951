import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addRouteStep } from './route-hooks.ts';
import { AppError } from './errors.ts';
import { can } from '../modules/roles/permissions.ts';
import type { TokensService } from '../modules/tokens/tokens.service.ts';

/** The token may come as `Authorization: Bearer`, `?auth_token=` or a body attribute. */
export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m) return m[1];
  }
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.auth_token;
  if (typeof fromQuery === 'string' && fromQuery) return fromQuery;
  const body = request.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body) && typeof body.auth_token === 'string' && body.auth_token) {
    return body.auth_token;
  }
  return undefined;
}

export function registerAuth(app: FastifyInstance, tokens: TokensService) {
  app.decorateRequest('auth', null as never);
  addRouteStep(app, (route) => {
    if (route.config?.public) return undefined;
    const required = route.config?.permission;
    return async (request) => {
      const token = presentedToken(request);
      const auth = token ? await tokens.authenticate(token) : null;
      if (!auth) throw new AppError('unauthorized');
      const permission = required ?? (request.method === 'GET' || request.method === 'HEAD' ? 'content:read' : 'content:write');
      if (!can(auth.role, permission)) {
        throw new AppError('forbidden', `The ${auth.role} role may not perform this action (needs ${permission})`);
      }
      request.auth = auth;
    };
  });
}
