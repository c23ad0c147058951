import type { FastifyServerOptions } from 'fastify';

/** auth_token must never reach a log: query values are masked, and no body or Authorization is logged. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:auth_token|token)=)[^&#]*/gi, '$1[REDACTED]');
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'body.auth_token', '*.auth_token'], censor: '[REDACTED]' },
    serializers: {
      req(req: { method: string; url: string; id?: string; ip?: string }) {
        return { method: req.method, url: redactUrl(req.url), id: req.id, remoteAddress: req.ip };
      },
    },
  };
}
