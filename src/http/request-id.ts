import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_ID = /^[\w.-]{1,64}$/;

// A random prefix per process and a counter per request: unique enough to find a request in the
// logs of many processes, without building a UUID string on every request.
const prefix = randomBytes(6).toString('hex');
let counter = 0;

/** The request's id: the client's `X-Request-Id` when it is a sane token, else a new one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : `${prefix}-${(++counter).toString(36)}`;
}
