import type { FastifyServerOptions } from 'fastify';

// Signed media URLs work until they expire, so their signatures are as secret as tokens.
const SECRET_QUERY_KEYS = new Set(['auth_token', 'token', 'signature']);

/**
 * auth_token must never reach a log: query values are masked, and no body or Authorization is logged.
 * Keys are compared the way the query parser reads them (percent-decoded, `[]` suffix dropped), so that
 * `auth%5Ftoken=…` or `auth_token[]=…` are masked too.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawKey = eq === -1 ? part : part.slice(0, eq);
      let key = rawKey.replace(/\+/g, ' ');
      try {
        key = decodeURIComponent(key);
      } catch {
        // A malformed escape: the parser keeps it literally, and so can never read it as auth_token.
      }
      key = key.trim().toLowerCase().replace(/\[\]$/, '');
      return eq !== -1 && SECRET_QUERY_KEYS.has(key) ? `${rawKey}=[REDACTED]` : part;
    });
  return `${url.slice(0, q + 1)}${parts.join('&')}`;
}

export function loggerOptions(level: string, stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers.authorization', 'body.auth_token', '*.auth_token'], censor: '[REDACTED]' },
    serializers: {
      req(req: { method: string; url: string; id?: string; ip?: string }) {
        return { method: req.method, url: redactUrl(req.url), id: req.id, remoteAddress: req.ip };
      },
    },
  };
}
