import http from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { createContainer, type Container } from './container.ts';
import type { Database } from './db/database.ts';
import type { App } from './http/context.ts';
import { registerAuth } from './http/auth.ts';
import { frameworkErrors, registerErrorHandling } from './http/error-handler.ts';
import { handlersInFlight, trackHandlers } from './http/handlers-in-flight.ts';
import { registerIdempotency } from './http/idempotency.ts';
import { loggerOptions } from './http/logging.ts';
import { registerNegotiation } from './http/negotiation.ts';
import { requestId } from './http/request-id.ts';
import { markDocsPublic, registerOpenApi } from './http/openapi.ts';
import { addRouteHook, addRouteStep } from './http/route-hooks.ts';
import { parseQueryString, registerRequestParsing, stripJsonSuffix } from './http/request-parsing.ts';
import { registerRateLimits } from './http/rate-limit.ts';
import { lazySerializers, registerValidation } from './http/validation.ts';
import { withRequestDeadlines } from './http/request-deadlines.ts';
import tusRoutes, { isTusRequest } from './modules/uploads/tus.routes.ts';
import { dashboardModules } from './modules/index.ts';
import mediaFilesRoutes from './modules/media-files/media-files.routes.ts';
import hubPagesRoutes from './modules/hubs/hub-pages.routes.ts';
import playbackRoutes from './modules/watch/playback.routes.ts';
import { oembedRoutes, watchPageRoutes } from './modules/watch/watch.routes.ts';
import webDashboardRoutes from './modules/web-dashboard/web-dashboard.routes.ts';

function markDeprecated(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) {
  reply.header('deprecation', 'true');
  done(null, payload);
}

export interface AppDeps {
  config: Config;
  database: Database;
  /** The composition root to serve from; made from config and database when not given. */
  container?: Container;
  /** Where the request log goes (default stdout); tests capture it to check what is logged. */
  logStream?: { write(line: string): void };
}

/** Resolves once no route handler of `app` runs: a shutdown waits for it before the database closes. */
export function handlersIdle(app: FastifyInstance): Promise<void> {
  return handlersInFlight(app)?.idle() ?? Promise.resolve();
}

/** The whole HTTP app, without listening: tests inject into it, server.ts listens. */
export async function buildApp({ config, database, logStream, container = createContainer({ config, database }) }: AppDeps): Promise<FastifyInstance> {
  const { services } = container;
  const app = Fastify({
    logger: loggerOptions(config.logLevel, logStream),
    bodyLimit: config.bodyLimit,
    genReqId: requestId,
    rewriteUrl: (req) => stripJsonSuffix(req.url ?? '/'),
    frameworkErrors: (error, request, reply) => void frameworkErrors(error, request, reply),
    routerOptions: { querystringParser: parseQueryString, ignoreTrailingSlash: true },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
    // Bodies have deadlines of their own (src/http/request-deadlines.ts: long uploads only must not
    // stall); headers must arrive within REQUEST_TIMEOUT_SECONDS, checked every second.
    serverFactory: (handler) =>
      http.createServer(
        { requestTimeout: 0, headersTimeout: Math.min(config.requestTimeoutMs, 60_000), connectionsCheckingInterval: 1000 },
        withRequestDeadlines(handler, { bodyMs: config.requestTimeoutMs, idleMs: config.uploadIdleTimeoutMs, isLongUpload: isTusRequest }),
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // A shutdown waits for the handlers still running before the database closes (server.ts).
  trackHandlers(app);
  app.addHook('onRoute', (route) => {
    if (route.config?.deprecated) addRouteHook(route, 'onSend', markDeprecated);
  });

  registerErrorHandling(app);
  registerValidation(app);
  markDocsPublic(app);
  // The steps every route runs, in this order (src/http/route-hooks.ts); errors set the header themselves.
  // nosniff on every answer: a tenant's file (a caption, a poster) must never run as a script or a page.
  addRouteStep(app, () => (request, reply) => void reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff'));
  registerRequestParsing(app);
  registerNegotiation(app);
  registerAuth(app, services.tokens, services.sessions, config.publicUrl);
  registerIdempotency(app, services.idempotency);
  await registerOpenApi(app);
  await registerRateLimits(app, container.rateLimits);

  const deps = { config, services };
  app.addHook('onClose', () => container.mailer.close());
  app.addHook('onClose', () => container.services.analyticsRollups.close());
  await app.register(
    async (dashboard) => {
      for (const mod of dashboardModules) await mod(dashboard, deps);
    },
    { prefix: '/dashboard' },
  );
  // Stored media by signed URL, outside /dashboard (docs/media.md).
  await app.register(async (root) => mediaFilesRoutes(root as App, deps));
  // The media of the watch and embed pages, for viewers with a playback grant (docs/watch.md).
  await app.register(async (root) => playbackRoutes(root as App, deps));
  // The watch and embed pages, and oEmbed also at the root where DESIGN §1 names it (docs/watch.md).
  await app.register(async (root) => watchPageRoutes(root as App, deps));
  await app.register(async (root) => oembedRoutes(root as App, deps, { hide: true }));
  // Direct uploads: the tus endpoint of upload capabilities, no token (docs/uploads.md).
  await app.register(async (root) => tusRoutes(root as App, deps));
  // The public pages of hubs and their video sitemaps (docs/hubs.md).
  await app.register(async (root) => hubPagesRoutes(root as App, deps));
  // The web dashboard for people, on the same API, signed in by a session (docs/dashboard.md).
  await app.register(async (root) => webDashboardRoutes(root as App, deps));
  await app.ready();
  return app;
}
