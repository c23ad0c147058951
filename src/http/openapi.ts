import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type SwaggerUi from '@fastify/swagger-ui';
import { whenUsed } from '../lib/when-used.ts';

// A CommonJS package that reads its own static files: required when first used, not bundled (scripts/build.mjs).
const loadSwaggerUi = whenUsed<typeof SwaggerUi>('@fastify/swagger-ui');

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
  app.get('/dashboard/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  registerDocsUi(app);
}

/** Response headers of the docs app that are the connection's, not the answer's. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);

/**
 * The docs UI (@fastify/swagger-ui and its static files) is loaded at its first request, not at
 * start (~130 ms of a cold start, for a page few processes ever serve): a small Fastify app of its
 * own, built then, answers /dashboard/docs/* through `inject`, with the main app's document.
 */
function registerDocsUi(app: FastifyInstance) {
  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = () =>
    (docs ??= (async () => {
      const swaggerUi = loadSwaggerUi();
      const inner = Fastify({ logger: false });
      // What the UI needs of @fastify/swagger: the document, here the main app's.
      await inner.register(
        fp(async (i) => void i.decorate('swagger', ((options?: { yaml?: boolean }) => app.swagger(options as { yaml: true })) as never), {
          name: '@fastify/swagger',
        }),
      );
      await inner.register(swaggerUi, {
        routePrefix: '/dashboard/docs',
        uiConfig: { docExpansion: 'list' },
        theme: { title: 'Reelbase Dashboard API reference' },
      });
      await inner.ready();
      return inner;
    })().catch((err: unknown) => {
      docs = undefined;
      throw err;
    }));
  for (const url of ['/dashboard/docs', '/dashboard/docs/*']) {
    app.route({
      method: ['GET', 'HEAD'],
      url,
      exposeHeadRoute: false,
      schema: { hide: true },
      handler: async (req, reply) => {
        const answer = await (await docsApp()).inject({ method: req.method as 'GET' | 'HEAD', url: req.url, headers: { accept: req.headers.accept ?? '*/*' } });
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) reply.header(name, value);
        return reply.code(answer.statusCode).send(req.method === 'HEAD' ? undefined : answer.rawPayload);
      },
    });
  }
}
