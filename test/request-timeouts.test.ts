import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

describe.each(dialects)('slow clients are timed out (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp(dialect, { REQUEST_TIMEOUT_SECONDS: '2' });
    org = await createOrg(t);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t.close());

  /** Sends the headers of a POST with a 100-byte body, then one byte every 400 ms; answers when the server ends it. */
  function drip(): Promise<{ ms: number; answer: string }> {
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1');
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      socket.on('connect', () => {
        socket.write(
          `POST /dashboard/v1/players HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
        );
        timer = setInterval(() => socket.write(' '), 400);
      });
      socket.on('data', (d) => (answer += d.toString()));
      const done = () => {
        clearInterval(timer);
        resolve({ ms: Date.now() - started, answer });
      };
      socket.on('close', done);
      socket.on('error', () => {});
      setTimeout(() => socket.destroy(), 15_000);
    });
  }

  it('a body dripped a byte at a time is cut off after REQUEST_TIMEOUT_SECONDS, and the server goes on answering', async () => {
    const { ms, answer } = await drip();
    expect(ms).toBeLessThan(6000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect((await org.api.get('/dashboard/v1/players')).status).toBe(200);
  });
});
