/**
 * Object storage end to end (STORAGE_URL=s3://…, a real S3-compatible server process on loopback): a
 * file uploaded with tus lands in the bucket (resumed across a restart: offsets live in the bucket),
 * is processed, and its renditions are served from the bucket with ranges, or by redirect to a
 * presigned URL; deleting the video deletes its objects; nothing is left on the local disk.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import * as tus from 'tus-js-client';
import { freePort } from './helpers/processes.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { ffmpegPath, makeTestMedia, settle, type TestMedia } from './helpers/media.ts';
import { startS3Server, type S3Server } from './helpers/s3-server.ts';

const P = '/dashboard/v1';
const run = promisify(execFile);

function send(data: Buffer, options: { endpoint?: string; uploadUrl?: string; stopAt?: number; retryDelays?: number[] }): Promise<'done' | 'stopped' | Error> {
  return new Promise((resolve) => {
    const upload = new tus.Upload(data, {
      retryDelays: [],
      ...options,
      chunkSize: 5 * 1024 * 1024,
      onChunkComplete: (_chunk, accepted) => {
        if (options.stopAt !== undefined && accepted >= options.stopAt) void upload.abort().then(() => resolve('stopped'));
      },
      onSuccess: () => resolve('done'),
      onError: (err) => resolve(err),
    });
    upload.start();
  });
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

describe.each(dialects)('object storage on %s', (dialect) => {
  let s3: S3Server;
  let t: TestApp;
  let org: OrgContext;
  let app: FastifyInstance;
  let port: number;
  let dataDir: string;
  let media: TestMedia;
  let runner: JobRunner;
  /** The objects in the bucket (s3rver keeps each as a folder entry ending in ._S3rver_object). */
  const objects = () => filesUnder(path.join(s3.directory, s3.bucket)).filter((f) => f.endsWith('._S3rver_object'));

  beforeAll(async () => {
    s3 = await startS3Server();
    port = await freePort();
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-s3mode-${dialect}-`));
    media = await makeTestMedia();
    t = await createTestApp(dialect, { ...s3.env, DATA_DIR: dataDir, PUBLIC_URL: `http://127.0.0.1:${port}` }, { sqlitePath: path.join(dataDir, 'db.sqlite') });
    org = await createOrg(t);
    app = t.app;
    await app.listen({ host: '127.0.0.1', port });
    runner = new JobRunner(t.database.db, { handlers: jobHandlers(t.container), backoff: () => 10, pollMs: 10 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
    await s3?.close();
    await fsp.rm(dataDir, { recursive: true, force: true });
    await fsp.rm(media.dir, { recursive: true, force: true });
  });

  it('keeps nothing in the bucket of an upload refused with 413, of one that is not media, or of one that expired', { timeout: 60_000 }, async () => {
    const ofUpload = (id: string) => objects().filter((o) => o.includes(`tus/${id}`));
    const create = async (name: string) => (await org.api.post(`${P}/uploads`, { name })).body as { id: string; url: string; video_id: number };
    const video = async (id: number) => (await org.api.get(`${P}/videos/${id}`)).body;

    const big = await create('Too big');
    const refused = await fetch(big.url, { method: 'POST', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Length': String(t.config.maxUploadBytes + 1) } });
    expect(refused.status).toBe(413);
    expect(ofUpload(big.id)).toEqual([]);
    expect((await video(big.video_id)).status).toBe('waiting_for_upload');

    const text = await create('Not a video');
    expect(await send(await fsp.readFile(media.text), { endpoint: text.url })).toBe('done');
    await settle(runner, t.database.db);
    expect(await video(text.video_id)).toMatchObject({ status: 'error', error_message: expect.stringMatching(/^The upload is not a video/) });
    expect(ofUpload(text.id)).toEqual([]);

    const late = await create('Never finished');
    expect(await send(Buffer.alloc(6 * 1024 * 1024, 1), { endpoint: late.url, stopAt: 5 * 1024 * 1024 })).toBe('stopped');
    expect(ofUpload(late.id).length).toBeGreaterThan(0);
    // Time passes: the expiry is behind it, and its job (queued at creation) runs.
    await t.database.db
      .updateTable('uploads')
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where('id', '=', late.id)
      .execute();
    await t.database.db.updateTable('jobs').set({ run_at: Date.now() }).where('type', '=', 'upload.expire').execute();
    await settle(runner, t.database.db);
    expect((await fetch(late.url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } })).status).toBe(410);
    expect(ofUpload(late.id)).toEqual([]);
    expect(await video(late.video_id)).toMatchObject({ status: 'error', error_message: expect.stringMatching(/expired/) });
  });

  it(
    'takes a tus upload into the bucket across a restart, processes it, serves ranges from the bucket, and leaves no media on disk',
    { timeout: 120_000 },
    async () => {
      const created = (await org.api.post(`${P}/uploads`, { name: 'S3 clip' })).body as { url: string; video_id: number; id: string };
      // About 12 MB (a second of lossless noise): several 5 MB parts.
      const noisy = path.join(media.dir, 'noise.mp4');
      await run(ffmpegPath, [
        '-loglevel',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        'color=c=gray:s=640x360:d=1:r=25,noise=alls=100:allf=t',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-crf',
        '0',
        '-pix_fmt',
        'yuv420p',
        noisy,
      ]);
      const data = await fsp.readFile(noisy);
      expect(data.length).toBeGreaterThan(10 * 1024 * 1024);
      expect(await send(data, { endpoint: created.url, stopAt: 5 * 1024 * 1024 })).toBe('stopped');

      // Another node (or this one restarted): the offset comes from the bucket.
      await app.close();
      const container = createContainer({ config: t.config, database: t.openAnother() });
      app = await buildApp({ config: t.config, database: container.database, container });
      await app.listen({ host: '127.0.0.1', port });
      const head = await fetch(created.url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
      const offset = Number(head.headers.get('upload-offset'));
      expect(offset).toBeGreaterThanOrEqual(5 * 1024 * 1024);
      expect(offset).toBeLessThan(data.length);
      // The stopped request's last part may still be landing: the client retries as tus-js-client does by default.
      expect(await send(data, { uploadUrl: created.url, retryDelays: [200, 500, 1000, 2000] })).toBe('done');

      await settle(runner, t.database.db);
      const api = client(app, org.token);
      const video = (await api.get(`${P}/videos/${created.video_id}`)).body;
      expect(video, video.error_message as string).toMatchObject({ status: 'ready', seconds: 1 });
      // The original is an object of the bucket, byte for byte; the tus objects are gone.
      const original = t.container.media.store;
      const stat = await original.stat(`videos/${video.uuid}/original`);
      expect(stat?.size).toBe(data.length);
      expect(objects().some((o) => o.includes('tus'))).toBe(false);

      const { urls } = (await api.get(`${P}/videos/${created.video_id}/files`)).body;
      const link = new URL(urls.hd as string);
      const whole = await app.inject({ url: `${link.pathname}${link.search}` });
      expect(whole.statusCode).toBe(200);
      const size = Number(whole.headers['content-length']);
      expect(whole.rawPayload.subarray(4, 8).toString()).toBe('ftyp');
      const range = await app.inject({ url: `${link.pathname}${link.search}`, headers: { range: 'bytes=100-65635' } });
      expect(range.statusCode).toBe(206);
      expect(range.headers['content-range']).toBe(`bytes 100-65635/${size}`);
      expect(range.rawPayload).toEqual(whole.rawPayload.subarray(100, 65_636));
      expect((await app.inject({ url: `${link.pathname}${link.search}`, headers: { range: `bytes=${size}-` } })).statusCode).toBe(416);

      // The adaptive ladder is in the bucket too: its master, a rung's playlist and a segment, by the API's folder link.
      const master = new URL(urls.hls as string);
      const masterText = (await app.inject({ url: `${master.pathname}${master.search}` })).body;
      expect(masterText).toContain('#EXT-X-STREAM-INF:');
      expect(objects().some((o) => o.includes(`${video.uuid}/`) && o.includes('/hls/'))).toBe(true);
      const rungUrl = new URL(
        masterText.split('\n').find((l) => l.endsWith('.m3u8'))!,
        master,
      );
      const rung = await app.inject({ url: `${rungUrl.pathname}${rungUrl.search}` });
      expect(rung.statusCode).toBe(200);
      const segmentUrl = new URL(
        rung.body.split('\n').find((l) => l.endsWith('.m4s'))!,
        rungUrl,
      );
      const segment = await app.inject({ url: `${segmentUrl.pathname}${segmentUrl.search}` });
      expect(segment.statusCode).toBe(200);
      expect(segment.rawPayload.includes(Buffer.from('moof'))).toBe(true);

      // A caption's file is an object of the bucket too, read back through the API.
      const caption = (await api.post(`${P}/videos/${created.video_id}/captions`, { language: 'en', content: '1\n00:00:00,000 --> 00:00:01,000\nHi there\n' }))
        .body;
      const captionKey = (await t.database.db.selectFrom('captions').select('file_key').where('id', '=', caption.id).executeTakeFirstOrThrow()).file_key!;
      expect(objects().some((o) => o.includes(captionKey))).toBe(true);
      expect((await api.get(`${P}/captions/${caption.id}/content?format=srt`)).raw).toContain('Hi there');

      // No media on the local disk: only the database and the (empty) work and upload folders.
      expect(filesUnder(dataDir).filter((f) => !f.startsWith('db.sqlite') && f !== 'signing-secret')).toEqual([]);

      // Deleting the video deletes its objects.
      const before = objects().filter((o) => o.includes(video.uuid as string));
      expect(before.length).toBeGreaterThan(4);
      // The store knows its keys (stored_objects): the folder is deleted from them, with no listing.
      const recorded = () => t.database.db.selectFrom('stored_objects').select('key').where('key', 'like', `videos/${video.uuid}/%`).execute();
      expect((await recorded()).length).toBe(before.length);
      expect((await api.delete(`${P}/videos/${created.video_id}`)).status).toBe(200);
      expect(objects().filter((o) => o.includes(video.uuid as string))).toEqual([]);
      expect(await recorded()).toEqual([]);
    },
  );

  it('with MEDIA_DELIVERY=redirect answers files by a redirect to a presigned URL that serves ranges', { timeout: 60_000 }, async () => {
    const config = loadConfig({
      ...s3.env,
      MEDIA_DELIVERY: 'redirect',
      DATA_DIR: dataDir,
      PUBLIC_URL: 'http://reelbase.test',
      LOG_LEVEL: 'silent',
      SIGNING_SECRET: t.config.signingSecret,
    });
    const container = createContainer({ config, database: t.database });
    const redirecting = await buildApp({ config, database: t.database, container });
    try {
      const key = 'videos/redirect-check/r0/sd.mp4';
      await container.media.store.put(
        key,
        await fsp.readFile(media.small).then((b) => {
          const file = path.join(os.tmpdir(), `reelbase-redirect-${crypto.randomUUID()}`);
          fs.writeFileSync(file, b);
          return file;
        }),
      );
      const link = new URL(container.media.fileUrl(key));
      const res = await redirecting.inject({ url: `${link.pathname}${link.search}` });
      expect(res.statusCode).toBe(302);
      expect(res.headers['cache-control']).toBe('private, no-store');
      const location = res.headers.location as string;
      expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/media/${key}?`)).toBe(true);
      expect(location).toMatch(/X-Amz-Signature=/);
      const ranged = await fetch(location, { headers: { range: 'bytes=0-7' } });
      expect(ranged.status).toBe(206);
      expect(
        Buffer.from(await ranged.arrayBuffer())
          .subarray(4, 8)
          .toString(),
      ).toBe('ftyp');
      // Playlists are streamed even so: their relative URIs must resolve against Reelbase's address.
      const playlistKey = 'videos/redirect-check/r0/hls/master.m3u8';
      await container.media.store.put(playlistKey, Readable.from(['#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n360p/index.m3u8\n']));
      const folder = new URL(container.media.folderUrl('videos/redirect-check/r0/hls', 'master.m3u8'));
      const playlist = await redirecting.inject({ url: folder.pathname });
      expect(playlist.statusCode).toBe(200);
      expect(playlist.body).toContain('360p/index.m3u8');
      // The rules still apply first: a tampered link is refused, not redirected.
      expect(
        (await redirecting.inject({ url: `${link.pathname}${link.search.replace(/signature=(.)/, (_, c: string) => `signature=${c === 'x' ? 'y' : 'x'}`)}` }))
          .statusCode,
      ).toBe(403);
    } finally {
      await redirecting.close();
    }
  });
});
