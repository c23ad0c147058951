import type { FastifyServerOptions } from 'fastify';

/**
 * Names of parameters whose values are secrets: tokens (`auth_token`), signatures of signed media URLs
 * (secret until they expire), live stream keys (`stream_key`, `backup_key`), and anything else named
 * like a key, token, secret or password. Matched against every word of the decoded, lower-cased name, so
 * that `auth_token[]`, `?auth_token`, `AUTH%5FTOKEN` or `x-api-key` are all secret.
 */
const SECRET_WORD = /(?:token|key|secret|signature|password)$/;

/** An API token (src/lib/tokens.ts) wherever it appears, even unnamed (a path segment, a stray value). */
const TOKEN_TEXT = /rb(?:_|%5[Ff])[A-Za-z0-9_-]{16,}/g;

const REDACTED = '[REDACTED]';

/** A query-string component decoded the way the router's parser (URLSearchParams) decodes it. */
function decodeComponent(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  // Read as the name of a parameter of its own: `&` and `=` would end it, and a leading `?` would be
  // dropped, so these are escaped first (and decoded back by the parser).
  return new URLSearchParams(`${text.replace(/[?&=]/g, encodeURIComponent)}=`).keys().next().value ?? text;
}

export function isSecretName(rawName: string): boolean {
  return decodeComponent(rawName)
    .toLowerCase()
    .split(/[^a-z0-9_]+/)
    .some((word) => SECRET_WORD.test(word));
}

// `name=` at the start of a parameter or after a `?`, `;` or `#` inside one.
const NAMED_VALUE = /(?:^|[?;#])([^?;#=]*)=/g;

/**
 * One `&`-separated parameter of the query. The router's parser (parseQueryString, URLSearchParams)
 * splits only at `&` and drops one leading `?` of the whole query; secrets are looked for at finer
 * boundaries too (`?`, `;`, `#` inside a parameter, percent-encoded separators in a name), so that what
 * is masked is a superset of what the router could read as a secret. A value is masked up to the next
 * `&`, which is where the router's value ends.
 */
function redactParameter(parameter: string): string {
  for (const m of parameter.matchAll(NAMED_VALUE)) {
    if (isSecretName(m[1])) return parameter.slice(0, m.index + m[0].length) + REDACTED;
  }
  // A name with an encoded `=`, `&` or `;` (`auth_token%3D…`): its text may hold a secret value.
  const decoded = decodeComponent(parameter);
  if (decoded !== parameter) {
    for (const m of decoded.matchAll(/(?:^|[?;#&])([^?;#&=]*)=/g)) if (isSecretName(m[1])) return REDACTED;
  }
  return parameter;
}

/** Path parameters in the `;name=value` style (not a query for the router, but a secret all the same). */
/**
 * Capabilities carried in a path: a direct upload's secret (`/uploads/<id>/<secret>`), a folder link's
 * token (`/media/folders/<token>/…`) and a viewer's playback grant (`/play/<uuid>/<grant>/…`).
 */
const PATH_CAPABILITY = /^(\/uploads\/[^/]+\/|\/media\/folders\/|\/play\/[^/]+\/)[^/]+/;

function redactPath(path: string): string {
  path = path.replace(PATH_CAPABILITY, `$1${REDACTED}`);
  if (!path.includes(';')) return path;
  return path.replace(/;([^;/=]*)=([^;/]*)/g, (all, name: string) => (isSecretName(name) ? `;${name}=${REDACTED}` : all));
}

/**
 * Where the router ends the path: at the first `?` or `#` after the leading `/` (find-my-way's rule,
 * with the `;` delimiter off, as in app.ts).
 */
function queryStart(url: string): number {
  for (let i = 1; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 || c === 35) return i;
  }
  return -1;
}

/**
 * Secrets must never reach a log: in the URL, the values of secret-named parameters are masked however
 * the query string is written, and so are API tokens wherever they appear; no body or Authorization is
 * logged.
 */
export function redactUrl(url: string): string {
  const q = queryStart(url);
  const path = redactPath(q === -1 ? url : url.slice(0, q));
  const redacted =
    q === -1
      ? path
      : `${path}${url[q]}${url
          .slice(q + 1)
          .split('&')
          .map(redactParameter)
          .join('&')}`;
  return redacted.replace(TOKEN_TEXT, REDACTED);
}

export function loggerOptions(level: string, stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-csrf-token"]', 'body.auth_token', '*.auth_token'], censor: REDACTED },
    serializers: {
      req(req: { method: string; url: string; id?: string; ip?: string }) {
        return { method: req.method, url: redactUrl(req.url), id: req.id, remoteAddress: req.ip };
      },
    },
  };
}
