import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { App, Deps } from '../../http/context.ts';
import { packageRoot } from '../../lib/package-root.ts';
import { AppError } from '../../lib/errors.ts';

/** Where scripts/build-dashboard.mjs leaves the dashboard (built by `npm ci` and `npm run build`). */
export const DASHBOARD_DIR = path.join(packageRoot, 'dist', 'dashboard');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const AssetParams = Type.Object({ file: Type.String({ maxLength: 200, pattern: '^[A-Za-z0-9_.-]+$' }) });

/**
 * The web dashboard at /app (docs/dashboard.md): one page, index.html, for every path under /app
 * (the dashboard routes in the browser), and its assets, whose names carry their content's hash, so
 * that they are cached for a year. The page's CSP allows nothing from anywhere else.
 */
export default async function webDashboardRoutes(app: App, { config, dashboardDir = DASHBOARD_DIR }: Pick<Deps, 'config'> & { dashboardDir?: string }) {
  const origin = new URL(config.publicUrl).origin;
  const csp = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' ${origin} data: blob:`,
    `media-src 'self' ${origin} blob:`,
    `connect-src 'self' ${origin}`,
    `frame-src 'self' ${origin}`,
    "base-uri 'none'",
    "object-src 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  const files = new Map<string, Buffer>();
  function read(relative: string): Buffer | null {
    const cached = files.get(relative);
    if (cached) return cached;
    try {
      const content = fs.readFileSync(path.join(dashboardDir, relative));
      files.set(relative, content);
      return content;
    } catch {
      return null;
    }
  }

  function page(reply: FastifyReply) {
    const html = read('index.html');
    if (!html) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('The dashboard is not built: run `npm run build` (npm ci builds it).\n');
    }
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', csp)
      .header('referrer-policy', 'same-origin')
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-cache')
      .send(html);
  }

  const common = { config: { public: true, media: true }, schema: { hide: true } } as const;
  app.get('/app', common, (_request, reply) => page(reply));
  app.get('/app/*', common, (_request, reply) => page(reply));
  app.get('/app/assets/:file', { config: common.config, schema: { hide: true, params: AssetParams } }, (request, reply) => {
    const { file } = request.params;
    const type = TYPES[path.extname(file)];
    const content = type ? read(path.join('assets', file)) : null;
    if (!content) throw new AppError('not_found', '404: No such file');
    return reply.type(type).header('cache-control', 'public, max-age=31536000, immutable').send(content);
  });
}
