/**
 * The request log never holds a secret sent in the URL, however the query string is written: the
 * spellings the router itself reads as `auth_token` (served 200) and those it does not (401/404, the
 * secret still must not reach the log), over inject and over a real socket (which, unlike inject, passes
 * a `#…` on to the router).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';

/** One request written by hand on a socket: the request target goes out byte for byte. */
function rawGet(port: number, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${target} HTTP/1.1\r\nHost: reelbase.test\r\nConnection: close\r\n\r\n`));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
  });
}

describe.each(dialects)('secrets in URLs stay out of the request log on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect, { LOG_LEVEL: 'info' }, { logStream: { write: (line: string) => void lines.push(line) } });
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  /** The log lines written since the last call. */
  const takeLog = () => lines.splice(0).join('');

  it('serves a token written as the router reads it (??, &&, a percent-encoded name, .json) and logs none of it', async () => {
    const anon = client(t.app);
    const token = org.token;
    for (const url of [
      `${P}/players??auth_token=${token}`,
      `${P}/players.json??auth_token=${token}`,
      `${P}/players?&&auth_token=${token}&&per_page=2`,
      `${P}/players??per_page=2&auth_token=${token}`,
      `${P}/players?%61uth%5Ftoken=${token}`,
      `${P}/players?auth_token=${encodeURIComponent(token)}`,
    ]) {
      const res = await anon.get(url);
      expect(res.status, url).toBe(200);
      const log = takeLog();
      expect(log, url).toContain('[REDACTED]');
      expect(log, url).not.toContain(token);
      expect(log, url).not.toContain(token.slice(3, 23));
    }
  });

  it('logs none of a token or signature the router does not take as one', async () => {
    const anon = client(t.app);
    const token = org.token;
    const cases: Array<[string, string]> = [
      [`${P}/players?x=1&?auth_token=${token}`, token],
      [`${P}/players?per_page=1;auth_token=${token}`, token],
      [`${P}/players;auth_token=${token}`, token],
      [`${P}/players?AUTH_TOKEN=${token}`, token],
      [`${P}/players?auth_token[]=${token}&auth_token[]=${token}`, token],
      [`${P}/players?auth_token%3D${token}`, token],
      [`${P}/players?x%26auth_token=${token}`, token],
      [`${P}/players/${token}`, token],
      [`${P}/captions/1/files/a.vtt??expires=9999999999&signature=0123456789abcdef0123456789abcdef`, '0123456789abcdef0123456789abcdef'],
      [`/media/v/1/x.mp4?expires=1&&signature=fedcba9876543210fedcba9876543210`, 'fedcba9876543210fedcba9876543210'],
      [`${P}/players?stream_key=live-secret-stream-key-1&backup_key=live-secret-backup-key-2`, 'live-secret-'],
    ];
    for (const [url, secret] of cases) {
      const res = await anon.get(url);
      expect(res.status, url).toBeLessThan(500);
      const log = takeLog();
      expect(log.length, url).toBeGreaterThan(0);
      expect(log, url).not.toContain(secret);
      expect(log, url).not.toContain(secret.slice(3, 23));
    }
  });

  it('over a real socket, serves a token after `#` (the router splits there) and logs none of it', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as net.AddressInfo).port;
    const token = org.token;
    for (const [target, status] of [
      [`${P}/players#auth_token=${token}`, 200],
      [`${P}/players??auth_token=${token}`, 200],
      [`${P}/players?per_page=1#auth_token=${token}`, 401],
      [`${P}/players?auth_token=${token}#fragment`, 401],
    ] as const) {
      expect(await rawGet(port, target), target).toBe(status);
      const log = takeLog();
      expect(log.length, target).toBeGreaterThan(0);
      expect(log, target).not.toContain(token);
      expect(log, target).not.toContain(token.slice(3, 23));
    }
  });
});
