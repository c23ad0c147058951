import type { FastifyRequest } from 'fastify';

/** The cookies of a `Cookie` header, values percent-decoded where they can be. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      out[name] = value;
    }
  }
  return out;
}

/**
 * The cookie of a signed-in person's session (docs/sign-in.md). Behind https it is a `__Host-`
 * cookie, which a sibling subdomain cannot set or overwrite (a browser accepts it only Secure, for
 * Path=/ and without Domain).
 */
export const sessionCookieName = (secure: boolean) => (secure ? '__Host-reelbase_session' : 'reelbase_session');

/** The session secret a request carries, if any. Read without parsing every cookie when there is none. */
export function sessionSecretOf(request: FastifyRequest, secure: boolean): string | undefined {
  const header = request.headers.cookie;
  const name = sessionCookieName(secure);
  if (!header || !header.includes(name)) return undefined;
  const value = parseCookies(header)[name];
  return value && /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : undefined;
}

/** `Set-Cookie` of a session: HttpOnly, SameSite=Lax, Secure behind https; `maxAge` 0 removes it. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${sessionCookieName(secure)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}
