import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientFacts } from '../analytics/client-facts.ts';
import type { App, Deps } from '../../http/context.ts';
import { parseCookies } from '../../http/cookies.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import { renderPage, renderRefusal } from '../../web/pages.ts';
import { AccessCodeBody, AnalyticsBeacon, AssetParams, GateBody, Oembed, OembedQuery, PageParams } from './watch.schemas.ts';
import { packageRoot } from '../../lib/package-root.ts';
import { createLimit, enforceLimit, limitReached } from '../../http/rate-limit.ts';
import type { PageKind, PageView, Refusal, RefusalReason } from './watch-view.ts';

const assetsDir = path.join(packageRoot, 'src', 'web', 'assets');
const JS = 'text/javascript; charset=utf-8';
const require = createRequire(import.meta.url);
/**
 * Served under /web: the player's own files and the two libraries it runs on, straight from their
 * pinned npm packages (no bundler): media-chrome's controls (its single-file build, which defines
 * every element) and hls.js (the full build: subtitle renditions need it).
 */
const ASSETS: Record<string, { type: string; file: string }> = {
  'player.js': { type: JS, file: path.join(assetsDir, 'player.js') },
  'player.css': { type: 'text/css; charset=utf-8', file: path.join(assetsDir, 'player.css') },
  // Beside the package's CommonJS entry (dist/cjs/index.js): its exports map no path to this file.
  'media-chrome.js': { type: JS, file: path.join(path.dirname(require.resolve('media-chrome')), '..', 'iife', 'all.js') },
  'hls.js': { type: JS, file: require.resolve('hls.js/dist/hls.min.js') },
};

/** The status each reason a page is refused is answered with. */
const REFUSAL_STATUS: Record<RefusalReason, number> = {
  not_found: 404,
  blocked: 403,
  not_released: 403,
  expired: 410,
  embedding_disabled: 403,
  embedding_not_allowed: 403,
  code_required: 403,
  code_used_up: 403,
  too_many_attempts: 429,
};

/**
 * The public pages (DESIGN §1, docs/watch.md): `GET /watch/:uuid` (share page), `GET /embed/:uuid`
 * (iframe page), a POST of either with the access code form, and the player's script and styles
 * under /web. No token.
 */
export async function watchPageRoutes(app: App, { config, services }: Deps) {
  const watch = services.watch;
  // Wrong access codes: ten per address and player in ten minutes, so that a code cannot be guessed at speed.
  const TEN_MINUTES = 10 * 60_000;
  /** Limits count per address and player: what one viewer does to one video. */
  const visitorKey = (prefix: string) => (request: FastifyRequest) => `${prefix}:${request.ip}:${(request.params as { uuid: string }).uuid.toLowerCase()}`;
  const attempts = createLimit(app, config.limits.accessCodeAttemptsPer10Minutes, TEN_MINUTES, visitorKey('code'));
  const origin = new URL(config.publicUrl).origin;
  const secure = config.publicUrl.startsWith('https:');
  const common = { public: true, media: true } as const;

  // The pages' own small forms (access code, email gate): flat fields, at most 4 KiB.
  app.removeContentTypeParser('application/x-www-form-urlencoded');
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  /** An HTML page with the headers every page has: its CSP (with the response's nonce) and no caching. */
  function sendPage(reply: FastifyReply, status: number, nonce: string, frameAncestors: string, html: string) {
    return (
      reply
        .code(status)
        .header(
          'content-security-policy',
          `default-src 'self'; script-src 'self' 'nonce-${nonce}'; style-src 'self' 'unsafe-inline'; img-src * data: blob:; media-src 'self' ${origin} blob:; connect-src 'self' ${origin}; base-uri 'none'; object-src 'none'; frame-ancestors ${frameAncestors}`,
        )
        .header('referrer-policy', 'strict-origin-when-cross-origin')
        .header('x-content-type-options', 'nosniff')
        // Signed media URLs expire and access depends on the visitor: never cached by others.
        .header('cache-control', 'private, no-store')
        .type('text/html; charset=utf-8')
        .send(html)
    );
  }

  function ancestorsOf(view: PageView): string {
    if (view.kind === 'watch') return "'self'";
    if (!view.frameAncestors) return '*';
    return ["'self'", ...view.frameAncestors.flatMap((d) => [`https://${d}`, `https://*.${d}`, `http://${d}`, `http://*.${d}`])].join(' ');
  }

  async function answer(kind: PageKind, uuid: string, request: FastifyRequest, reply: FastifyReply, accessCode?: string) {
    const nonce = randomBytes(16).toString('base64');
    if (accessCode !== undefined && (await limitReached(attempts, request, reply, { increment: false, full: true }))) {
      return sendPage(
        reply,
        429,
        nonce,
        "'self'",
        renderRefusal({ reason: 'too_many_attempts', title: 'Too many attempts', message: 'Too many wrong access codes. Try again later.' }),
      );
    }
    const outcome = await watch.page(kind, uuid, {
      ip: request.ip,
      referer: request.headers.referer,
      cookies: parseCookies(request.headers.cookie),
      accessCode,
    });
    if (outcome.kind === 'granted') {
      const cookie = `${outcome.cookie.name}=${outcome.cookie.value}; Path=/; HttpOnly; Max-Age=2592000; ${secure ? 'SameSite=None; Secure' : 'SameSite=Lax'}`;
      // Post/redirect/get: the page is then an ordinary GET, and a reload does not send the code again.
      return reply.code(303).header('set-cookie', cookie).header('location', `/${kind}/${uuid}`).header('cache-control', 'no-store').send();
    }
    if (outcome.kind === 'refused') {
      // Only wrong codes count, once the player is known to exist and to ask for one.
      if (accessCode !== undefined && outcome.refusal.askCode) await attempts(request);
      return sendPage(reply, REFUSAL_STATUS[outcome.refusal.reason], nonce, kind === 'embed' ? '*' : "'self'", renderRefusal(outcome.refusal));
    }
    const oembed = `${config.publicUrl}/dashboard/v1.1/oembed?url=${encodeURIComponent(outcome.view.watchUrl)}&format=json`;
    return sendPage(reply, 200, nonce, ancestorsOf(outcome.view), renderPage(outcome.view, nonce, oembed));
  }

  for (const kind of ['watch', 'embed'] as const) {
    app.get(`/${kind}/:uuid`, { config: common, schema: { hide: true, params: PageParams } }, (request, reply) =>
      answer(kind, request.params.uuid, request, reply),
    );
    app.post(`/${kind}/:uuid`, { config: common, schema: { hide: true, params: PageParams, body: AccessCodeBody } }, (request, reply) =>
      answer(kind, request.params.uuid, request, reply, request.body.access_code ?? ''),
    );
  }

  // Viewer reports: generous for a real player (a handful per chapter), a bound for a script that floods.
  const reports = createLimit(app, config.limits.reportsPer10Minutes, TEN_MINUTES, visitorKey('report'));

  const visitorOf = (request: FastifyRequest) => ({ ip: request.ip, referer: request.headers.referer, cookies: parseCookies(request.headers.cookie) });
  /** A page's rules refused a request of its script: answered as JSON, like the API. */
  const refusalError = (refusal: Refusal) => (refusal.reason === 'not_found' ? notFound('player') : new AppError('forbidden', refusal.message));
  /** What the player script is given of a page: its chapters (with their media) and the email gate's state. */
  const scriptView = (view: PageView) => ({ chapters: view.chapters, emailGate: view.emailGate });

  for (const kind of ['watch', 'embed'] as const) {
    // The page's chapters again, for a page left open: an upcoming broadcast polls it to start when it airs.
    app.get(`/${kind}/:uuid/chapters`, { config: { public: true }, schema: { hide: true, params: PageParams } }, async (request, reply) => {
      const outcome = await watch.page(kind, request.params.uuid, visitorOf(request));
      if (outcome.kind !== 'page') throw outcome.kind === 'refused' ? refusalError(outcome.refusal) : notFound('player');
      return reply.header('cache-control', 'private, no-store').send(scriptView(outcome.view));
    });

    // The email gate: the address is reported (an identified view), the browser keeps a cookie, and
    // the chapters behind the gate are answered with their media (docs/watch.md).
    app.post(`/${kind}/:uuid/gate`, { config: { public: true }, schema: { hide: true, params: PageParams, body: GateBody } }, async (request, reply) => {
      const outcome = await watch.passGate(kind, request.params.uuid, visitorOf(request));
      if (outcome.kind === 'refused') throw refusalError(outcome.refusal);
      if (outcome.kind === 'not_found') throw notFound('email gate');
      const { email, chapter, player_load_id, visitor_uuid, embed_url } = request.body;
      const beacon = { type: 'identified_view' as const, email, chapter, player_load_id, visitor_uuid, ...(embed_url ? { embed_url } : {}) };
      const sent = await services.viewerReports.report(request.params.uuid, request.ip, beacon, clientFacts(request.headers), () =>
        enforceLimit(reports, request, reply),
      );
      if (!sent) throw notFound('chapter');
      const cookie = `${outcome.cookie.name}=${outcome.cookie.value}; Path=/; HttpOnly; ${secure ? 'SameSite=None; Secure' : 'SameSite=Lax'}`;
      return reply.header('set-cookie', cookie).header('cache-control', 'private, no-store').send(scriptView(outcome.view));
    });
  }
  app.post(
    '/watch/:uuid/analytics',
    { config: { public: true }, schema: { hide: true, params: PageParams, body: AnalyticsBeacon } },
    async (request, reply) => {
      // Counted only once the report is about a real chapter of a player this address may see.
      const sent = await services.viewerReports.report(request.params.uuid, request.ip, request.body, clientFacts(request.headers), () =>
        enforceLimit(reports, request, reply),
      );
      if (!sent) throw notFound('player');
      return reply.code(204).send();
    },
  );

  const assets = new Map(Object.entries(ASSETS).map(([name, asset]) => [name, fs.readFileSync(asset.file)]));
  app.get('/web/:file', { config: common, schema: { hide: true, params: AssetParams } }, async (request, reply) => {
    const body = assets.get(request.params.file);
    if (!body) throw notFound('file');
    return reply.type(ASSETS[request.params.file].type).header('cache-control', 'public, max-age=300').header('x-content-type-options', 'nosniff').send(body);
  });

  // Reference clients build share links as /share/<uuid> (the vidyard gem's Player#url): the share page.
  app.get('/share/:uuid', { config: common, schema: { hide: true, params: PageParams } }, async (request, reply) =>
    reply
      .code(301)
      .header('location', `/watch/${encodeURIComponent(request.params.uuid)}`)
      .send(),
  );

  // Browsers ask every page's origin for it; an SVG is served under the name they ask for.
  const favicon = fs.readFileSync(path.join(assetsDir, 'favicon.svg'));
  app.get('/favicon.ico', { config: common, schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon),
  );
}

/** `GET /v1/oembed` (fixed-size embed code) and `GET /v1.1/oembed` (responsive), public as oEmbed is. */
export async function oembedRoutes(app: App, { services }: Deps, options: { hide?: boolean } = {}) {
  const watch = services.watch;
  for (const version of ['v1', 'v1.1'] as const) {
    app.get(
      `/${version}/oembed`,
      {
        config: { public: true },
        schema: {
          hide: options.hide,
          tags: ['service'],
          summary: version === 'v1' ? 'oEmbed of a watch or embed URL (fixed-size embed code)' : 'oEmbed of a watch or embed URL (responsive embed code)',
          querystring: OembedQuery,
          response: { 200: Oembed },
        },
      },
      async (request) => {
        const format = request.query.format?.toLowerCase() ?? 'json';
        if (format === 'xml') throw new AppError('not_implemented', 'Only format=json is supported');
        if (format !== 'json') throw new AppError('validation_failed', 'format must be json', [{ field: 'format', message: 'must be json' }]);
        const outcome = await watch.oembed(request.query, version === 'v1.1', request.ip);
        if (outcome.kind === 'not_found') throw notFound('video at that URL');
        if (outcome.kind === 'forbidden') throw new AppError('forbidden', outcome.message);
        return outcome.oembed;
      },
    );
  }
}
