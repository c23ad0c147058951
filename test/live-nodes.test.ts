import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import type { Database } from '../src/db/database.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { liveKey, localLiveDir, partIndexKey, segmentKey } from '../src/live/paths.ts';
import { LocalFileStore } from '../src/media/file-store.ts';
import { startS3Server, type S3Server } from './helpers/s3-server.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { LiveIngest } from '../src/modules/live/live-ingest.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { playbackBase } from './helpers/pages.ts';
import { freePort, killPublishers, publish, waitFor } from './helpers/rtmp.ts';

/**
 * Several nodes (docs/live.md): a broadcast received by one process is served, playlist and
 * segments, by another process that shares only the database and the file store (its own DATA_DIR,
 * nothing of the first one's disk), whose worker also makes the recording from the store; deleting
 * the instance leaves nothing under live/<player uuid> in the store. The store is the one the
 * configuration makes: on SQLite the local store under a shared MEDIA_DIR (two processes of one
 * machine); on PostgreSQL an S3 bucket (a real S3-compatible server process), as in the scale-out
 * deployment (docs/deployment.md).
 */

const P = '/dashboard/v1';

describe.each(dialects)('live output shared by several nodes on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let ingest: LiveIngest;
  let dataDir: string;
  let otherDataDir: string;
  // The second node: its own configuration, database connection, container, app and worker.
  let other: { config: Config; database: Database; container: Container; app: FastifyInstance; runner: JobRunner };

  let s3: S3Server | undefined;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-live-a-'));
    otherDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-live-b-'));
    s3 = dialect === 'postgres' ? await startS3Server() : undefined;
    const env = { INGEST_HOST: '127.0.0.1', LIVE_RECONNECT_WINDOW_SECONDS: '2', LIVE_HEALTH_INTERVAL_SECONDS: '1', ...(s3?.env ?? {}) };
    t = await createTestApp(dialect, { ...env, DATA_DIR: dataDir, RTMP_PORT: String(await freePort()) }, { sqlitePath: path.join(dataDir, 'db.sqlite') });
    ingest = new LiveIngest(t.config, t.services.liveState, t.container.media);
    await ingest.start();
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      PUBLIC_URL: t.config.publicUrl,
      SIGNING_SECRET: t.config.signingSecret!,
      ...env,
      DATA_DIR: otherDataDir,
      // The same store: the bucket, or the local store's root (MEDIA_DIR).
      ...(s3 ? {} : { MEDIA_DIR: t.config.mediaDir }),
      RTMP_PORT: '0',
    });
    const database = t.openAnother();
    const container = createContainer({ config, database });
    const app = await buildApp({ config, database, container });
    const runner = new JobRunner(database.db, { handlers: jobHandlers(container), pollMs: 100 });
    runner.start();
    other = { config, database, container, app, runner };
    org = await createOrg(t);
  });

  afterAll(async () => {
    killPublishers();
    await other?.runner.stop(2000);
    await other?.app.close();
    await other?.database.destroy();
    await ingest?.stop();
    await t?.close();
    await s3?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(otherDataDir, { recursive: true, force: true });
  });

  /** A DVR stream of 1 s segments, and its instance's details (ingest address, key, player). */
  async function createBroadcast(name: string) {
    const created = await org.api.post(`${P}/organizations/${org.organizationId}/live`, {
      video_options: { video_name: name, description: '', stream_tags: [], segment_length: 1, dvr_enabled: true, disable_notifications: true },
    });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.stream_instance_id as number;
    return { id, details: (await org.api.get(`${P}/organizations/${org.organizationId}/live/${id}`)).body.instance_details };
  }

  it(
    'a second node serves the playlist and segments of a broadcast ingested by the first, records it, and cleanup empties live/<uuid>',
    { timeout: 180_000 },
    async () => {
      const { id, details: s } = await createBroadcast(`Two nodes ${dialect}`);
      const detail = async () => (await client(other.app, org.token).get(`${P}/organizations/${org.organizationId}/live/${id}`)).body.instance_details;
      // The ingest address is the first node's (the second receives no RTMP). Twelve seconds: on a busy
      // machine the broadcast must still be on when the second node has served four segments.
      const pub = publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 12);

      // A viewer of the second node: the watch page's grant, the playlist, every segment it lists.
      const viewer = client(other.app);
      const base = await waitFor('on air on the second node', async () => playbackBase(other.app, s.player_uuid).catch(() => null));
      const fetched = new Map<string, Buffer>();
      const fetchListed = async (playlist: string) => {
        for (const uri of playlist.split('\n').filter((l) => l.endsWith('.ts'))) {
          if (fetched.has(uri)) continue;
          // Listed means readable, at once and from any node.
          const seg = await other.app.inject({ method: 'GET', url: `${base}/live/${uri}` });
          expect(seg.statusCode, uri).toBe(200);
          expect(seg.headers['content-type']).toBe('video/mp2t');
          expect(seg.headers['cache-control']).toBe('private, max-age=86400, immutable');
          expect(Number(seg.headers['content-length'])).toBe(seg.rawPayload.length);
          expect(seg.rawPayload.length).toBeGreaterThan(1000);
          expect(seg.rawPayload[0]).toBe(0x47);
          fetched.set(uri, seg.rawPayload);
        }
      };
      await waitFor(
        'four segments served by the second node',
        async () => {
          const res = await viewer.get(`${base}/live/index.m3u8`);
          if (res.status !== 200) return null;
          expect(String(res.headers['content-type'])).toMatch(/mpegurl/);
          expect(res.headers['cache-control']).toBe('private, no-cache');
          expect(res.raw).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
          expect(res.raw).not.toContain('#EXT-X-ENDLIST');
          await fetchListed(res.raw);
          return fetched.size >= 4;
        },
        30_000,
        50,
      );
      // Both nodes answer the same bytes.
      const [uri, bytes] = [...fetched][0];
      const firstBase = await playbackBase(t.app, s.player_uuid);
      expect(Buffer.compare((await t.app.inject({ method: 'GET', url: `${firstBase}/live/${uri}` })).rawPayload, bytes)).toBe(0);
      // Nothing of it is on the second node's disk.
      expect(fs.existsSync(path.join(otherDataDir, 'live'))).toBe(false);

      // The broadcast ends: the second node's worker records it from the store; its playlist is closed.
      expect((await pub.exited).code).toBe(0);
      const ready = await waitFor('ready', async () => ((await detail()).status === 'ready' ? detail() : null), 120_000, 250);
      expect(ready.vod_created_at).toBeGreaterThan(0);
      const video = (await client(other.app, org.token).get(`${P}/videos/${s.video_id}`)).body;
      expect(video.status).toBe('ready');
      const ended = await viewer.get(`${base}/live/index.m3u8`);
      expect(ended.raw).toContain('#EXT-X-ENDLIST');
      await fetchListed(ended.raw);
      const listed = ended.raw.split('\n').filter((l) => l.endsWith('.ts'));
      expect(listed.length).toBeGreaterThanOrEqual(5);
      // The packager's local files are gone, and so are the recording's downloads.
      await waitFor(
        'local files removed',
        async () =>
          !fs.existsSync(localLiveDir(t.container.media.workDir, s.player_uuid)) &&
          fs.readdirSync(other.container.media.workDir).every((n) => !n.startsWith('job-')),
        10_000,
      );

      // Deleted (through the second node): the output goes from the store.
      const store = t.container.media.store;
      const keys = [...listed.map((l) => segmentKey(s.player_uuid, l.split('/')[0], l.split('/')[1])), partIndexKey(s.player_uuid, 'p0001')];
      for (const key of keys) expect(await store.stat(key), key).not.toBeNull();
      expect((await client(other.app, org.token).delete(`${P}/organizations/${org.organizationId}/live/${id}`)).status).toBe(200);
      expect((await viewer.get(`${base}/live/index.m3u8`)).status).toBe(404);
      // The folder goes last (a recursive rm removes files before their folders): wait for it too.
      const folderGone = () => !(store instanceof LocalFileStore) || !fs.existsSync(path.join(store.root, ...liveKey(s.player_uuid).split('/')));
      await waitFor('cleanup', async () => (await Promise.all(keys.map((k) => store.stat(k)))).every((st) => st === null) && folderGone(), 30_000, 250);
      expect(folderGone()).toBe(true);
    },
  );
  it(
    'an encoder cut off by the death of its ingest node reconnects to another node: the same broadcast goes on, and its recording joins both parts',
    { timeout: 180_000 },
    async () => {
      // Two ingest nodes of their own (the first test's ingest keeps its port): A on the first node, B on the second.
      const onPort0 = (config: Config): Config => ({ ...config, live: { ...config.live, rtmpPort: 0 } });
      const a = new LiveIngest(onPort0(t.config), t.services.liveState, t.container.media);
      const b = new LiveIngest(onPort0(other.config), other.container.services.liveState, other.container.media);
      const [portA, portB] = [await a.start(), await b.start()];
      try {
        const { id, details: s } = await createBroadcast(`Failover ${dialect}`);
        const detail = async () => (await org.api.get(`${P}/organizations/${org.organizationId}/live/${id}`)).body.instance_details;
        const viewer = client(other.app);
        // Part 1 on node A, which dies (its process stops: the publisher's connection is cut) mid-broadcast.
        const first = publish(t.config.ffmpegPath, `rtmp://127.0.0.1:${portA}/live/${s.stream_key}`, 60);
        const watch = await waitFor('on air', async () => playbackBase(other.app, s.player_uuid).catch(() => null));
        const listedNow = async () => (await viewer.get(`${watch}/live/index.m3u8`)).raw.split('\n').filter((l) => l.endsWith('.ts'));
        await waitFor('three segments from node A', async () => (await listedNow()).length >= 3, 30_000, 100);
        await a.stop();
        const cut = await first.exited;
        expect(cut.code).not.toBe(0);
        expect(cut.ms).toBeLessThan(50_000);
        const partOne = await listedNow();
        expect((await detail()).status).toBe('live');

        // The encoder reconnects to node B with the same key, as an encoder retries: until it is let in.
        const second = await waitFor(
          'node B lets the encoder in',
          async () => {
            const p = publish(t.config.ffmpegPath, `rtmp://127.0.0.1:${portB}/live/${s.stream_key}`, 4);
            const early = await Promise.race([p.exited, new Promise<null>((r) => setTimeout(() => r(null), 1500))]);
            return early === null ? p : null;
          },
          20_000,
          250,
        );
        const list = (await org.api.get(`${P}/organizations/${org.organizationId}/live?states[]=ongoing`)).body.stream_instances.filter(
          (i: { id: number }) => i.id === id,
        );
        expect(list).toHaveLength(1);
        await waitFor('segments of the second part', async () => (await listedNow()).length >= partOne.length + 2, 30_000, 100);
        const playlist = (await viewer.get(`${watch}/live/index.m3u8`)).raw;
        // The same broadcast: part one's segments still listed first, then a discontinuity, then node B's.
        expect(
          playlist
            .split('\n')
            .filter((l) => l.endsWith('.ts'))
            .slice(0, partOne.length),
        ).toEqual(partOne);
        expect(playlist).toContain('#EXT-X-DISCONTINUITY');
        const parts = new Set(
          playlist
            .split('\n')
            .filter((l) => l.endsWith('.ts'))
            .map((l) => l.split('/')[0]),
        );
        expect(parts.size).toBe(2);
        for (const uri of playlist.split('\n').filter((l) => l.endsWith('.ts'))) {
          expect((await t.app.inject({ method: 'GET', url: `${await playbackBase(t.app, s.player_uuid)}/live/${uri}` })).statusCode, uri).toBe(200);
        }
        expect((await second.exited).code).toBe(0);

        // The broadcast ends on node B: one recording with both parts.
        await waitFor('ready', async () => (await detail()).status === 'ready', 120_000, 250);
        const files = (await org.api.get(`${P}/videos/${s.video_id}`)).body;
        expect(files.status).toBe('ready');
        // 1 s segments: part one's, and node B's 4 s.
        expect(files.seconds).toBeGreaterThanOrEqual(partOne.length + 3);
      } finally {
        await a.stop().catch(() => {});
        await b.stop();
      }
    },
  );
});
