import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * The docs UI and its assets are public, like the document itself, and served whatever Accept asks.
 * Registered before the route steps (src/http/route-hooks.ts), which read these options.
 */
export function markDocsPublic(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/dashboard/docs')) route.config = { ...(route.config ?? {}), public: true, media: true };
  });
}

/**
 * OpenAPI 3.1 generated from the route schemas, at /dashboard/openapi.json, rendered at /dashboard/docs.
 * The schemas' examples make "Try it out" send requests that work (test/openapi-examples.test.ts).
 */
export async function registerOpenApi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Reelbase Dashboard API',
        version: '1.0.0',
        description: 'Wire-compatible Dashboard API. Authenticate with `auth_token` (query or body) or `Authorization: Bearer <token>`.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          queryToken: { type: 'apiKey', in: 'query', name: 'auth_token' },
        },
      },
      security: [{ bearer: [] }, { queryToken: [] }],
    },
    hideUntagged: false,
  });
  await app.register(swaggerUi, { routePrefix: '/dashboard/docs', uiConfig: { docExpansion: 'list' }, theme: { title: 'Reelbase Dashboard API reference' } });
  app.get('/dashboard/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
}
