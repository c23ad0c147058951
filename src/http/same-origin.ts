import type { FastifyRequest } from 'fastify';
import { AppError } from '../lib/errors.ts';

/**
 * A browser names the page that sent a cross-site request in `Origin`: a state-changing request of a
 * session (or one that starts a session) must come from Reelbase's own pages. Clients that are not
 * browsers send no Origin and are not concerned (they have no cookie to be tricked into sending).
 */
export function assertSameOrigin(request: FastifyRequest, publicUrl: string): void {
  // Browsers that send Fetch Metadata say outright when a request comes from another site.
  if (request.headers['sec-fetch-site'] === 'cross-site') throw new AppError('forbidden', 'Cross-site request refused');
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const own = new URL(publicUrl).origin;
  const host = request.headers.host;
  if (origin === own || (host && (origin === `http://${host}` || origin === `https://${host}`))) return;
  throw new AppError('forbidden', 'Cross-site request refused (Origin is not this site)');
}
