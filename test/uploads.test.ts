/**
 * Direct uploads (docs/uploads.md): POST /v1/uploads, then the real tus-js-client against the tus
 * endpoint on a real port; resumption after a dropped connection and after a restart; the size limit,
 * expiry, the capability's rules; the finished upload processed by the media pipeline.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as tus from 'tus-js-client';
import { freePort } from './helpers/processes.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { makeTestMedia, settle, type TestMedia } from './helpers/media.ts';

const P = '/dashboard/v1';

/** Sends `data` with tus-js-client to the capability URL (or resumes at `uploadUrl`); `stopAt` aborts once that many bytes are acknowledged. */
function tusUpload(
  data: Buffer,
  options: { endpoint?: string; uploadUrl?: string; chunkSize?: number; stopAt?: number },
): Promise<{ url: string | null; outcome: 'done' | 'stopped' | Error; sentFrom: number }> {
  return new Promise((resolve) => {
    let sentFrom = -1;
    const upload = new tus.Upload(data, {
      endpoint: options.endpoint,
      uploadUrl: options.uploadUrl,
      chunkSize: options.chunkSize ?? 64 * 1024,
      retryDelays: [],
      metadata: { filename: 'clip.mp4' },
      onChunkComplete: (_chunk, accepted) => {
        if (sentFrom < 0) sentFrom = accepted - _chunk;
        if (options.stopAt !== undefined && accepted >= options.stopAt) {
          void upload.abort().then(() => resolve({ url: upload.url, outcome: 'stopped', sentFrom }));
        }
      },
      onSuccess: () => resolve({ url: upload.url, outcome: 'done', sentFrom }),
      onError: (err) => resolve({ url: upload.url, outcome: err, sentFrom }),
    });
    upload.start();
  });
}

/** A raw tus request (the protocol's headers set). */
async function tusRequest(url: string, method: string, headers: Record<string, string> = {}, body?: Buffer) {
  const res = await fetch(url, { method, headers: { 'Tus-Resumable': '1.0.0', ...headers }, body: body ? new Uint8Array(body) : undefined });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe.each(dialects)('direct uploads on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let app: FastifyInstance;
  let port: number;
  let dataDir: string;
  let media: TestMedia;
  let runner: JobRunner;

  const startApp = async (config = t.config, database = t.database) => {
    app = await buildApp({ config, database, container: createContainer({ config, database }) });
    await app.listen({ host: '127.0.0.1', port });
  };
  const createUpload = async (body: Record<string, unknown> = { name: 'Laptop clip' }) => {
    const res = await org.api.post(`${P}/uploads`, body);
    expect(res.status, res.raw).toBe(201);
    return res.body as { id: string; url: string; video_id: number; player_uuid: string; expires_at: number };
  };
  const video = async (id: number) => (await org.api.get(`${P}/videos/${id}`)).body;
  const uploadsDir = () => t.config.uploads.dir;
  const bytesOf = (id: string) => path.join(uploadsDir(), id);
  /** Time passes: the upload's expiry is now behind it. */
  const expiryPassed = (id: string) =>
    t.database.db
      .updateTable('uploads')
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where('id', '=', id)
      .execute();

  beforeAll(async () => {
    port = await freePort();
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-uploads-${dialect}-`));
    media = await makeTestMedia();
    t = await createTestApp(
      dialect,
      { DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}`, MAX_UPLOAD_BYTES: String(5 * 1024 * 1024) },
      { sqlitePath: path.join(dataDir, 'reelbase.sqlite') },
    );
    org = await createOrg(t);
    await startApp();
    runner = new JobRunner(t.database.db, { handlers: jobHandlers(t.container), backoff: () => 10, pollMs: 10 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
    await fsp.rm(dataDir, { recursive: true, force: true });
    await fsp.rm(media.dir, { recursive: true, force: true });
  });

  it('POST /v1/uploads makes a video waiting for its upload, its facade player, and a tus URL that needs no token', async () => {
    const upload = await createUpload({ name: 'Laptop clip', description: 'From a laptop', player: { name: 'Laptop player' } });
    expect(Object.keys(upload).sort()).toEqual(['expires_at', 'id', 'player_uuid', 'url', 'video_id']);
    expect(upload.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/uploads/[0-9a-f]{24}/[\\w-]{43}$`));
    expect(upload.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(24 * 3600 - 60);
    const v = await video(upload.video_id);
    expect(v).toMatchObject({ name: 'Laptop clip', description: 'From a laptop', status: 'waiting_for_upload', upload_url: null, origin: 'upload' });
    const players = (await org.api.get(`${P}/players`)).body as Array<{ uuid: string; name: string; player_type: string }>;
    expect(players.find((p) => p.uuid === upload.player_uuid)).toMatchObject({ name: 'Laptop player', player_type: 'video_facade' });
    // Nothing is processed before the file arrives.
    const jobs = await t.database.db.selectFrom('jobs').select('payload').where('type', '=', 'video.process').execute();
    expect(jobs.filter((j) => JSON.parse(j.payload).videoId === upload.video_id)).toEqual([]);
  });

  it('answers 401 without a token, 403 to viewers, 422 to a bad body, and creates nothing', async () => {
    const before = (await org.api.get(`${P}/videos`)).body.length;
    const anonymous = await fetch(`http://127.0.0.1:${port}${P}/uploads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    expect(anonymous.status).toBe(401);
    const viewer = await org.as('viewer');
    expect((await viewer.post(`${P}/uploads`, { name: 'x' })).status).toBe(403);
    const editor = await org.as('editor');
    expect((await editor.post(`${P}/uploads`, { name: 'by an editor' })).status).toBe(201);
    for (const bad of [{}, { name: '' }, { name: 'x', player: { name: '' } }, { name: 'x', description: 7 }]) {
      expect((await org.api.post(`${P}/uploads`, bad)).status, JSON.stringify(bad)).toBe(422);
    }
    expect((await org.api.get(`${P}/videos`)).body.length).toBe(before + 1);
  });

  it('takes a file from tus-js-client in chunks; the video is processed like an upload_url and keeps its original', async () => {
    const upload = await createUpload();
    const data = await fsp.readFile(media.small);
    const sent = await tusUpload(data, { endpoint: upload.url, chunkSize: 16 * 1024 });
    expect(sent.outcome).toBe('done');
    expect(sent.url).toBe(upload.url);
    expect((await video(upload.video_id)).status).toBeNull(); // queued
    await settle(runner, t.database.db);
    const ready = await video(upload.video_id);
    expect(ready).toMatchObject({ status: 'ready', error_message: null, seconds: 2 });
    const files = (await org.api.get(`${P}/videos/${upload.video_id}/files`)).body;
    expect(files.urls.sd).toMatch(/\/media\/files\/videos\//);
    // The original is kept in the media store, byte for byte; the upload store holds nothing of it.
    const uuid = ready.uuid as string;
    const original = await fsp.readFile(path.join(t.config.mediaDir, 'videos', uuid, 'original'));
    expect(crypto.createHash('sha256').update(original).digest('hex')).toBe(crypto.createHash('sha256').update(data).digest('hex'));
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    // The URL is single-use: no second upload, no more bytes.
    expect((await tusRequest(upload.url, 'POST', { 'Upload-Length': '10' })).status).toBe(409);
    expect((await tusRequest(upload.url, 'PATCH', { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, Buffer.from('x'))).status).toBe(
      409,
    );
  });

  it('resumes after a dropped connection and after a server restart, from the offset it reached', async () => {
    const upload = await createUpload();
    const data = await fsp.readFile(media.hd);
    const half = Math.floor(data.length / 2);
    const first = await tusUpload(data, { endpoint: upload.url, chunkSize: 32 * 1024, stopAt: half });
    expect(first.outcome).toBe('stopped');
    const head = await tusRequest(upload.url, 'HEAD');
    const offset = Number(head.headers.get('upload-offset'));
    expect(offset).toBeGreaterThanOrEqual(half);
    expect(offset).toBeLessThan(data.length);

    // A restart: this app goes away, a new one (another connection to the same database) takes over.
    await app.close();
    await startApp(t.config, t.openAnother());
    expect(Number((await tusRequest(upload.url, 'HEAD')).headers.get('upload-offset'))).toBe(offset);
    const rest = await tusUpload(data, { uploadUrl: upload.url, chunkSize: 32 * 1024 });
    expect(rest.outcome).toBe('done');
    expect(rest.sentFrom).toBe(offset); // continued, not started over
    await settle(runner, t.database.db);
    expect(await video(upload.video_id)).toMatchObject({ status: 'ready', seconds: 3 });
  });

  it('refuses more than MAX_UPLOAD_BYTES with 413 and keeps nothing', async () => {
    const upload = await createUpload();
    const tooBig = await tusRequest(upload.url, 'POST', { 'Upload-Length': String(5 * 1024 * 1024 + 1) });
    expect(tooBig.status).toBe(413);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    // Deferred length: the bytes past the limit are refused as they come.
    const deferred = await tusRequest(upload.url, 'POST', { 'Upload-Defer-Length': '1' });
    expect(deferred.status).toBe(201);
    const over = await tusRequest(
      upload.url,
      'PATCH',
      { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
      Buffer.alloc(5 * 1024 * 1024 + 10),
    );
    expect(over.status).toBe(413);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    expect((await tusRequest(upload.url, 'HEAD')).status).toBe(404);
    expect((await video(upload.video_id)).status).toBe('waiting_for_upload');
  });

  it('ends a file that is not media in error with a clear message', async () => {
    const upload = await createUpload();
    const sent = await tusUpload(await fsp.readFile(media.text), { endpoint: upload.url });
    expect(sent.outcome).toBe('done');
    await settle(runner, t.database.db);
    const failed = await video(upload.video_id);
    expect(failed.status).toBe('error');
    expect(failed.error_message).toMatch(/^The upload is not a video/);
    // Nothing will ever use its bytes.
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    expect((await t.services.uploads.find(upload.id))?.status).toBe('discarded');
  });

  it('removes at expiry the bytes of a finished upload whose video was deleted before processing, and never serves an original to viewers', async () => {
    const upload = await createUpload();
    expect((await tusUpload(await fsp.readFile(media.small), { endpoint: upload.url })).outcome).toBe('done');
    expect((await org.api.delete(`${P}/videos/${upload.video_id}`)).status).toBe(200);
    await t.database.db.updateTable('jobs').set({ status: 'done' }).where('type', '=', 'video.process').where('status', '=', 'queued').execute();
    await expiryPassed(upload.id);
    await t.services.uploads.expire(upload.id);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);

    // The original of a processed upload stays out of the viewer's reach (it is the API's, not the page's).
    const kept = await createUpload();
    expect((await tusUpload(await fsp.readFile(media.small), { endpoint: kept.url })).outcome).toBe('done');
    await settle(runner, t.database.db);
    const uuid = (await video(kept.video_id)).uuid as string;
    const page = await fetch(`http://127.0.0.1:${port}/watch/${kept.player_uuid}`);
    const grantPath = /\/play\/[^/]+\/[^/]+\//.exec(await page.text())![0];
    expect((await fetch(`http://127.0.0.1:${port}${grantPath}files/videos/${uuid}/original`)).status).toBe(404);
    // Nor a caption's file: a page offers captions only once published, by their own route.
    const caption = (await org.api.post(`${P}/videos/${kept.video_id}/captions`, { language: 'en', content: '1\n00:00:00,000 --> 00:00:01,000\nDraft\n' }))
      .body;
    const captionKey = (await t.database.db.selectFrom('captions').select('file_key').where('id', '=', caption.id).executeTakeFirstOrThrow()).file_key!;
    expect(captionKey.startsWith(`videos/${uuid}/captions/`)).toBe(true);
    expect(await t.container.media.store.stat(captionKey)).not.toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}${grantPath}${captionKey.replace(/^/, 'files/')}`)).status).toBe(404);
  });

  it('keeps the bytes when a PATCH past the limit comes without the secret, or a POST claims a huge size', async () => {
    const upload = await createUpload();
    expect((await tusRequest(upload.url, 'POST', { 'Upload-Defer-Length': '1' })).status).toBe(201);
    expect(
      (await tusRequest(upload.url, 'PATCH', { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, Buffer.alloc(1000, 1))).status,
    ).toBe(204);
    const wrong = upload.url.replace(/\/[\w-]{43}$/, `/${'A'.repeat(43)}`);
    expect((await tusRequest(wrong, 'POST', { 'Upload-Length': String(1e12) })).status).toBe(413);
    expect((await tusRequest(wrong, 'PATCH', { 'Upload-Offset': '1000', 'Content-Type': 'application/offset+octet-stream' }, Buffer.alloc(10))).status).toBe(
      404,
    );
    expect((await tusRequest(upload.url, 'POST', { 'Upload-Length': String(1e12) })).status).toBe(413);
    expect(Number((await tusRequest(upload.url, 'HEAD')).headers.get('upload-offset'))).toBe(1000);
  });

  it('speaks the tus extensions it names: creation, termination, expiration', async () => {
    const upload = await createUpload();
    const options = await tusRequest(upload.url, 'OPTIONS');
    expect(options.status).toBeLessThan(300);
    const extensions = (options.headers.get('tus-extension') ?? '').split(',').map((e) => e.trim());
    expect(extensions).toEqual(expect.arrayContaining(['creation', 'termination', 'expiration']));
    const created = await tusRequest(upload.url, 'POST', { 'Upload-Length': '100000' });
    expect(created.status).toBe(201);
    // Expiration: the date the unfinished upload goes, the upload's own.
    const expires = Date.parse(created.headers.get('upload-expires') ?? '');
    expect(Math.abs(expires / 1000 - upload.expires_at)).toBeLessThanOrEqual(1);
    expect(
      (await tusRequest(upload.url, 'PATCH', { 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, Buffer.alloc(1000, 1))).status,
    ).toBe(204);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(true);
    // Termination: the client gives up; its bytes go, and the upload is no more.
    expect((await tusRequest(upload.url, 'DELETE')).status).toBe(204);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    expect([404, 410]).toContain((await tusRequest(upload.url, 'HEAD')).status);
  });

  it('refuses a wrong secret like an unknown upload, and does not serve GET', async () => {
    const upload = await createUpload();
    const wrong = upload.url.replace(/\/[\w-]{43}$/, `/${'A'.repeat(43)}`);
    expect((await tusRequest(wrong, 'POST', { 'Upload-Length': '10' })).status).toBe(404);
    expect((await tusRequest(wrong.replace(/[0-9a-f]{24}/, 'f'.repeat(24)), 'HEAD')).status).toBe(404);
    expect((await tusRequest(upload.url, 'POST', { 'Upload-Length': '4' })).status).toBe(201);
    expect((await tusRequest(wrong, 'HEAD')).status).toBe(404);
    expect((await fetch(upload.url)).status).toBe(404);
  });

  it('expires an unfinished upload: refused with 410, its bytes removed, its video in error', async () => {
    const upload = await createUpload();
    const partial = await tusUpload(Buffer.alloc(200_000, 1), { endpoint: upload.url, chunkSize: 50_000, stopAt: 100_000 });
    expect(partial.outcome).toBe('stopped');
    expect(fs.existsSync(bytesOf(upload.id))).toBe(true);
    // Time passes: the expiry is now, and its job (queued at creation) runs.
    await expiryPassed(upload.id);
    await t.database.db.updateTable('jobs').set({ run_at: Date.now() }).where('type', '=', 'upload.expire').execute();
    await settle(runner, t.database.db);
    expect((await tusRequest(upload.url, 'HEAD')).status).toBe(410);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    const failed = await video(upload.video_id);
    expect(failed.status).toBe('error');
    expect(failed.error_message).toMatch(/expired/);
  });

  it('an expiry during a PATCH ends that request before it removes the bytes', async () => {
    const upload = await createUpload();
    const size = 4_000_000;
    expect((await tusRequest(upload.url, 'POST', { 'Upload-Length': String(size) })).status).toBe(201);
    // A client still sending, slowly, when the upload expires.
    const req = http.request(upload.url, {
      method: 'PATCH',
      headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(size) },
    });
    const ended = new Promise<string>((resolve) => {
      req.on('response', (res) => {
        res.resume();
        resolve(`answered ${res.statusCode}`);
      });
      req.on('error', () => resolve('closed'));
    });
    req.on('error', () => {});
    const writer = setInterval(() => req.write(Buffer.alloc(4_096, 2)), 20);
    try {
      const deadline = Date.now() + 10_000;
      while (!(fs.existsSync(bytesOf(upload.id)) && fs.statSync(bytesOf(upload.id)).size > 100_000)) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await expiryPassed(upload.id);
      await t.services.uploads.expire(upload.id);
      // The writer was asked to let go, and did, while the client was still sending.
      const outcome = await Promise.race([ended, new Promise<string>((resolve) => setTimeout(() => resolve('still writing'), 3_000))]);
      expect(outcome).not.toBe('still writing');
      expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
    } finally {
      clearInterval(writer);
      req.destroy();
    }
    expect((await tusRequest(upload.url, 'HEAD')).status).toBe(410);
    expect(fs.existsSync(bytesOf(upload.id))).toBe(false);
  });
});
