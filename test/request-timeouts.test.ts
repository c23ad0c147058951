import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

describe.each(dialects)('slow clients are timed out (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp(dialect, { REQUEST_TIMEOUT_SECONDS: '2', UPLOAD_IDLE_TIMEOUT_SECONDS: '1' });
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

  /** A tus upload of `size` bytes created through the API; answers its path (the capability). */
  async function tusPath(size: number): Promise<string> {
    const upload = await org.api.post('/dashboard/v1/uploads', { name: 'Slow upload' });
    const url = new URL(upload.body.url as string);
    const created = await fetch(`http://127.0.0.1:${port}${url.pathname}`, {
      method: 'POST',
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': String(size) },
    });
    expect(created.status).toBe(201);
    return url.pathname;
  }

  /** PATCHes `size` bytes, `perTick` every `everyMs` (stopping after `stopAfter` bytes when given); answers what the server said. */
  function slowPatch(pathname: string, size: number, perTick: number, everyMs: number, stopAfter = size): Promise<{ ms: number; answer: string }> {
    return new Promise((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1');
      let answer = '';
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      socket.on('connect', () => {
        socket.write(
          `PATCH ${pathname} HTTP/1.1\r\nHost: x\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${size}\r\n\r\n`,
        );
        timer = setInterval(() => {
          if (sent >= stopAfter) return;
          const n = Math.min(perTick, size - sent);
          socket.write(Buffer.alloc(n, 7));
          sent += n;
        }, everyMs);
      });
      socket.on('data', (d) => {
        answer += d.toString();
        if (answer.includes('\r\n\r\n')) socket.end();
      });
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ ms: Date.now() - started, answer });
      });
      socket.on('error', () => {});
      setTimeout(() => socket.destroy(), 15_000);
    });
  }

  it('a tus upload that keeps sending may take longer than REQUEST_TIMEOUT_SECONDS; one that stalls is cut after UPLOAD_IDLE_TIMEOUT_SECONDS', async () => {
    const steady = await slowPatch(await tusPath(16_000), 16_000, 1000, 200);
    expect(steady.ms).toBeGreaterThan(3000);
    expect(steady.answer).toMatch(/^HTTP\/1\.1 204/);
    const stalled = await slowPatch(await tusPath(16_000), 16_000, 1000, 100, 4000);
    expect(stalled.ms).toBeLessThan(4000);
    expect(stalled.answer).not.toMatch(/^HTTP\/1\.1 204/);
  });

  it('ends the connection of a refused tus request whose body is still coming, at once', async () => {
    const answer = await new Promise<{ ms: number; text: string }>((resolve) => {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1');
      let text = '';
      socket.on('connect', () => {
        socket.write(
          'PATCH /uploads/0123456789abcdef01234567/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: x\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: 1000000\r\n\r\nx',
        );
      });
      socket.on('data', (d) => (text += d.toString()));
      socket.on('close', () => resolve({ ms: Date.now() - started, text }));
      socket.on('error', () => {});
      setTimeout(() => socket.destroy(), 15_000);
    });
    expect(answer.text).toMatch(/^HTTP\/1\.1 404/);
    expect(answer.ms).toBeLessThan(2000);
  });
});
