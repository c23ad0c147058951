import { Type } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { App, Deps } from '../../http/context.ts';
import { renderRefusal } from '../../web/pages.ts';
import { renderHub } from '../../web/hub-pages.ts';

const Slug = Type.String({ minLength: 1, maxLength: 100 });

/** Pages have no script: a strict policy, images from this origin only (posters are served here). */
const CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

function sendHtml(reply: FastifyReply, status: number, html: string, cache: string) {
  return reply
    .code(status)
    .header('content-security-policy', CSP)
    .header('referrer-policy', 'strict-origin-when-cross-origin')
    .header('cache-control', cache)
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * The public pages of hubs (docs/hubs.md): `GET /hubs/:slug`, `GET /hubs/:slug/:category_slug` and
 * `GET /hubs/:slug/sitemap.xml` (`sitemap-<n>.xml` beyond 50,000 videos). No token.
 */
export default async function hubPagesRoutes(app: App, { services }: Deps) {
  const pages = services.hubPages;
  const common = { public: true, media: true } as const;
  const notFound = { reason: 'not_found', title: 'Hub not found', message: 'There is no hub at this address.' } as const;
  const blocked = { reason: 'blocked', title: 'Not available', message: 'This hub is not available from your network.' } as const;

  async function answer(reply: FastifyReply, ip: string, slug: string, category: string | null) {
    const outcome = await pages.page(slug, category, ip);
    if (outcome.kind === 'not_found') return sendHtml(reply, 404, renderRefusal(notFound), 'no-store');
    if (outcome.kind === 'blocked') return sendHtml(reply, 403, renderRefusal(blocked), 'no-store');
    // Shared caches may keep it briefly: the page holds no signed or per-visitor address.
    return sendHtml(reply, 200, renderHub(outcome.view), 'public, max-age=60');
  }

  async function sitemap(reply: FastifyReply, slug: string, page: number) {
    const xml = await pages.sitemap(slug, page);
    if (xml === null) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
    return reply.type('application/xml; charset=utf-8').header('cache-control', 'public, max-age=300').send(xml);
  }

  app.get('/hubs/:slug', { config: common, schema: { hide: true, params: Type.Object({ slug: Slug }) } }, (req, reply) =>
    answer(reply, req.ip, req.params.slug, null),
  );
  app.get('/hubs/:slug/sitemap.xml', { config: common, schema: { hide: true, params: Type.Object({ slug: Slug }) } }, (req, reply) =>
    sitemap(reply, req.params.slug, 0),
  );
  app.get('/hubs/:slug/:category', { config: common, schema: { hide: true, params: Type.Object({ slug: Slug, category: Slug }) } }, (req, reply) => {
    const page = /^sitemap-([1-9][0-9]{0,5})\.xml$/.exec(req.params.category);
    return page ? sitemap(reply, req.params.slug, Number(page[1])) : answer(reply, req.ip, req.params.slug, req.params.category);
  });
}
