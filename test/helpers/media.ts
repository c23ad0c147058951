import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';

const run = promisify(execFile);
const { ffmpegPath, ffprobePath } = loadConfig({});
export { ffmpegPath, ffprobePath };

/** Test media made once per test file: tiny, so that processing takes about a second. */
export interface TestMedia {
  dir: string;
  /** 2 s, 320x240, testsrc with a 440 Hz tone. */
  small: string;
  /** 3 s, 1280x720, no audio track. */
  hd: string;
  /** Not a video at all. */
  text: string;
}

export async function makeTestMedia(dir?: string): Promise<TestMedia> {
  const root = dir ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-media-src-')));
  const small = path.join(root, 'small.mp4');
  const hd = path.join(root, 'hd.mp4');
  const text = path.join(root, 'notes.txt');
  const common = ['-hide_banner', '-loglevel', 'error', '-y'];
  await Promise.all([
    run(ffmpegPath, [
      ...common,
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25:duration=2',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      small,
    ]),
    run(ffmpegPath, [
      ...common,
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=1280x720:rate=25:duration=3',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      hd,
    ]),
    fsp.writeFile(text, 'These are not the frames you are looking for.\n'.repeat(50)),
  ]);
  return { dir: root, small, hd, text };
}

/** ffprobe's view of a file (streams and format), for assertions. */
export async function probeJson(file: string): Promise<{ streams: any[]; format: any }> {
  const { stdout } = await run(ffprobePath, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]);
  return JSON.parse(stdout);
}

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A local origin for sources and webhooks, on 127.0.0.1:
 * - GET /files/<name>    a file of `dir` with Content-Length
 * - GET /chunked/<name>  the same without Content-Length
 * - GET /redirect?to=URL 302 to URL; GET /loop?n=K an endless redirect chain
 * - GET /status/<code>   that status
 * - POST /hook           recorded in `received`, answers 200
 */
export async function startOrigin(dir: string) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://origin');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const [, kind, name] = url.pathname.split('/');
      if ((kind === 'files' || kind === 'chunked') && name && !name.includes('..')) {
        const file = path.join(dir, name);
        if (!fs.existsSync(file)) return void res.writeHead(404).end();
        const headers: Record<string, string | number> = { 'content-type': 'video/mp4' };
        if (kind === 'files') headers['content-length'] = fs.statSync(file).size;
        res.writeHead(200, headers);
        return void fs.createReadStream(file).pipe(res);
      }
      if (kind === 'redirect') return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      if (kind === 'loop') return void res.writeHead(302, { location: `/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}` }).end();
      if (kind === 'status') return void res.writeHead(Number(name)).end();
      if (kind === 'hook') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    received,
    hooks: () => received.filter((r) => r.method === 'POST' && r.url.startsWith('/hook')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Checks a delivery's Standard Webhooks signature with the receiver's own code, as a receiver would. */
export function verifySignature(hook: Received, secret: string): boolean {
  const id = String(hook.headers['webhook-id']);
  const timestamp = String(hook.headers['webhook-timestamp']);
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret);
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${hook.body}`).digest('base64');
  return String(hook.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

/** A local port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export const MEDIA_JOB_TYPES = ['video.process', 'video.hls', 'video.files', 'video.webhook', 'media.delete'];

/** Runs jobs until no media job is queued or running (retries with a short backoff included). */
export async function settle(runner: JobRunner, db: Kysely<DB>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    await runner.drain();
    const open = await db.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'running']).where('type', 'in', MEDIA_JOB_TYPES).execute();
    if (open.length === 0) return;
    if (Date.now() > end) throw new Error(`jobs still open: ${open.map((j) => j.id).join(', ')}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}
