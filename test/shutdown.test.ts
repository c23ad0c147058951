import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { freePort } from './helpers/processes.ts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/**
 * `npm start` as a supervisor runs it (systemd, a container, a process manager): a signal to the npm
 * process must stop the server it started, after it has drained, within SHUTDOWN_TIMEOUT_SECONDS.
 * The server is a real process here (not an injected app): what is tested is the process tree and
 * its signals. SQLite only: how the database is closed is the same call on both dialects.
 */

const ROOT = path.resolve(import.meta.dirname, '..');

interface Started {
  npm: ChildProcess;
  dataDir: string;
  port: number;
  token: string;
  output: () => string;
  /** npm's exit code (null when killed by a signal), once npm and every process writing to its output have exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Started[] = [];

/** Whether something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The processes (npm, the server, anything they started) whose environment names this DATA_DIR. */
function processesOf(dataDir: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dataDir}`)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

async function npmStart(env: Record<string, string> = {}): Promise<Started> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-shutdown-'));
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), RTMP_PORT: '0', LOG_LEVEL: 'warn', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  npm.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  // The server writes to the pipes npm was given: they close once both have exited.
  const closed = Promise.all([npm.stdout, npm.stderr].map((s) => new Promise((resolve) => s.once('close', resolve))));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));
  const s: Started = { npm, dataDir, port, token: '', output: () => text, exited: closed.then(() => exit) };
  started.push(s);
  await until(`npm start to answer HTTP\n${text}`, async () => (await fetch(`http://127.0.0.1:${port}/dashboard/v1`).catch(() => null)) !== null, 25_000);
  s.token = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  return s;
}

/** npm's exit, once it and the server have exited; fails (instead of hanging) when they are still running after `ms`. */
async function exitOf(s: Started, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running ${ms} ms after the signal: pids ${processesOf(s.dataDir).join(', ')}\n${s.output()}`)), ms);
  });
  try {
    return await Promise.race([s.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A request whose headers and first half of the body are sent now; `finish()` sends the rest and resolves with the answer. */
async function startSlowPost(s: Started, urlPath: string, body: unknown) {
  const payload = Buffer.from(JSON.stringify(body));
  const socket = net.connect(s.port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const ended = new Promise<string>((resolve) => socket.once('close', () => resolve(answer)));
  socket.on('error', () => {});
  socket.write(
    `POST ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nAuthorization: Bearer ${s.token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${payload.length}\r\n\r\n`,
  );
  const half = Math.floor(payload.length / 2);
  socket.write(payload.subarray(0, half));
  return {
    socket,
    finish: async () => {
      socket.write(payload.subarray(half));
      return ended;
    },
  };
}

/** A keep-alive connection left open and idle after one answered request. */
async function idleKeepAlive(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve) => socket.once('connect', resolve));
  const answered = new Promise((resolve) => socket.once('data', resolve));
  socket.write(`GET /dashboard/v1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\n\r\n`);
  await answered;
  return socket;
}

/** A source server that answers the headers of a large file and then sends almost nothing: a download that never ends. */
const trickle = { server: http.createServer(), port: 0, requests: 0 };

beforeAll(async () => {
  trickle.server.on('request', (_req, res) => {
    trickle.requests++;
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(50_000_000) });
    res.write(Buffer.alloc(1024));
  });
  await new Promise<void>((resolve) => trickle.server.listen(0, '127.0.0.1', resolve));
  trickle.port = (trickle.server.address() as net.AddressInfo).port;
});

afterEach(async () => {
  // Whatever a failed test left running is ended here (by pid: only what this test started).
  for (const s of started.splice(0)) {
    for (const pid of processesOf(s.dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await fsp.rm(s.dataDir, { recursive: true, force: true });
  }
});

afterAll(async () => {
  trickle.server.closeAllConnections();
  await new Promise((resolve) => trickle.server.close(resolve));
});

describe('npm start and signals', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to npm drains (in-flight request answered, running job released) and everything exits 0 within the timeout',
    async (signal) => {
      const s = await npmStart({ SHUTDOWN_TIMEOUT_SECONDS: '4', UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${trickle.port}` });
      const api = (p: string, body: unknown) =>
        fetch(`http://127.0.0.1:${s.port}/dashboard/v1${p}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      // A job that is running when the signal comes: its download never ends.
      const before = trickle.requests;
      const res = await api('/videos', { video: { name: 'Endless', upload_url: `http://127.0.0.1:${trickle.port}/endless.mp4` } });
      expect(res.status).toBe(201);
      const endless = (await res.json()) as { id: number };
      await until('the download job to start', () => trickle.requests > before, 10_000);
      // A request in flight (half its body sent) and an idle keep-alive connection.
      const slow = await startSlowPost(s, '/dashboard/v1/videos', { video: { name: 'In flight', upload_url: `http://127.0.0.1:${trickle.port}/late.mp4` } });
      const idle = await idleKeepAlive(s.port);
      const idleClosed = new Promise((resolve) => idle.once('close', resolve));

      const t0 = Date.now();
      s.npm.kill(signal);
      // New connections are refused while the request in flight is still open.
      await until('the server to stop accepting connections', async () => !(await accepts(s.port)), 3000);
      await idleClosed;
      const answer = await slow.finish();
      expect(answer).toMatch(/^HTTP\/1\.1 201 /);

      const { code, signal: killedBy } = await exitOf(s, 8000);
      const elapsed = Date.now() - t0;
      expect({ code, killedBy }, s.output()).toEqual({ code: 0, killedBy: null });
      expect(elapsed).toBeLessThan(4000 + 1500);
      expect(processesOf(s.dataDir)).toEqual([]);
      expect(await accepts(s.port)).toBe(false);
      expect(s.output()).toContain(`reelbase: ${signal}, shutting down`);
      expect(s.output()).toContain('reelbase: stopped');

      const db = new Sqlite(path.join(s.dataDir, 'reelbase.sqlite'), { readonly: true });
      try {
        // The request answered during the drain was committed before the database was closed.
        const names = db.prepare('select name from videos order by id').all() as Array<{ name: string }>;
        expect(names.map((v) => v.name)).toEqual(['Endless', 'In flight']);
        // The job that could not finish was released for the next worker: queued, no lease, its attempt given back.
        const jobs = db.prepare(`select payload, status, locked_by, attempts from jobs where type = 'video.process' order by id`).all() as Array<{
          payload: string;
          status: string;
          locked_by: string | null;
          attempts: number;
        }>;
        const job = jobs.find((j) => (JSON.parse(j.payload) as { videoId: number }).videoId === endless.id);
        expect(job).toMatchObject({ status: 'queued', locked_by: null, attempts: 0 });
      } finally {
        db.close();
      }
    },
    60_000,
  );

  // The exit 1 past SHUTDOWN_TIMEOUT_SECONDS is proven in test/unit/shutdown.test.ts: what keeps a real
  // server's drain waiting differs between Node versions (a body that never ends holds it on 20, not on 24).

  it('stops the server when npm is killed outright (SIGKILL: no signal reaches the server)', async () => {
    const s = await npmStart({ SHUTDOWN_TIMEOUT_SECONDS: '3' });
    const t0 = Date.now();
    s.npm.kill('SIGKILL');
    await exitOf(s, 8000);
    expect(Date.now() - t0).toBeLessThan(3000 + 1500);
    expect(s.output()).toContain('reelbase: npm, its parent process, exited, shutting down');
    expect(s.output()).toContain('reelbase: stopped');
    expect(processesOf(s.dataDir)).toEqual([]);
    expect(await accepts(s.port)).toBe(false);
  }, 60_000);
});
