import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playbackBase } from './helpers/pages.ts';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { killPublishers, publish, sleep, freePort, waitFor } from './helpers/rtmp.ts';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { LiveIngest } from '../src/modules/live/live-ingest.ts';
import { buildRecording } from '../src/live/recording.ts';
import { partIndexKey } from '../src/live/paths.ts';
import { readOutbox } from '../src/mail/outbox.ts';

/**
 * The live ingest end to end: a real ffmpeg publishes H.264/AAC over RTMP to the ingest of a test
 * app; the API, the HLS output, the health samples, the recording and the notifications are checked.
 * Streams are a few seconds of 640x360 video to keep the machine free for others.
 */

const P = '/dashboard/v1';

/** Bits per second of one stream of a media file, from its packets. */
function measuredBitRate(ffprobePath: string, file: string, stream: 'v' | 'a'): number {
  const out = spawnSync(ffprobePath, ['-v', 'error', '-select_streams', `${stream}:0`, '-show_entries', 'packet=size,pts_time', '-of', 'csv=p=0', file], {
    encoding: 'utf8',
  }).stdout;
  const packets = out
    .trim()
    .split('\n')
    .map((l) => l.split(',').map(Number))
    .filter(([pts, size]) => Number.isFinite(pts) && Number.isFinite(size));
  const bytes = packets.reduce((a, [, size]) => a + size, 0);
  const times = packets.map(([pts]) => pts);
  const span = Math.max(...times) - Math.min(...times);
  return (bytes * 8 * (packets.length / Math.max(1, packets.length - 1))) / span;
}

function probe(ffprobePath: string, file: string): any {
  const r = spawnSync(ffprobePath, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ffprobe ${file}: ${r.status} ${r.error?.message ?? ''} ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe.each(dialects)('live ingest on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let ingest: LiveIngest;
  let runner: JobRunner;
  let dataDir: string;
  let port: number;
  const adminEmail = `live-admin-${dialect}@example.com`;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-live-'));
    port = await freePort();
    t = await createTestApp(dialect, {
      DATA_DIR: dataDir,
      RTMP_PORT: String(port),
      INGEST_HOST: '127.0.0.1',
      // Long enough for a second ffmpeg to start and connect on a busy two-core machine.
      LIVE_RECONNECT_WINDOW_SECONDS: '6',
      LIVE_HEALTH_INTERVAL_SECONDS: '1',
    });
    ingest = new LiveIngest(t.config, t.services.liveState, t.container.media);
    await ingest.start();
    runner = new JobRunner(t.database.db, { handlers: jobHandlers(createContainer({ config: t.config, database: t.database })), pollMs: 100 });
    runner.start();
    org = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .insertInto('users')
      .values({ organization_id: org.organizationId, email: adminEmail, role: 'admin', created_at: now, updated_at: now })
      .execute();
    await t.database.db
      .updateTable('organizations')
      .set({ features: JSON.stringify({ redundant_streams: true }) })
      .where('id', '=', org.organizationId)
      .execute();
  });

  afterAll(async () => {
    killPublishers();
    await runner?.stop(2000);
    await ingest?.stop();
    await t?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const live = () => `${P}/organizations/${org.organizationId}/live`;
  const detail = async (id: number) => (await org.api.get(`${live()}/${id}`)).body.instance_details;
  async function createStream(video: Record<string, unknown>, stream: Record<string, unknown> = {}) {
    const res = await org.api.post(live(), {
      stream_options: stream,
      video_options: { video_name: `Show ${dialect}`, description: 'd', stream_tags: ['t'], ...video },
    });
    expect(res.status, res.raw).toBe(201);
    const id = res.body.stream_instance_id as number;
    return { id, ...(await detail(id)) };
  }

  it('refuses a wrong key at once; a broadcast goes live, reports health, serves HLS, then becomes a ready video', { timeout: 180_000 }, async () => {
    const s = await createStream({ segment_length: 1, dvr_enabled: true, video_name: 'Launch live' });
    expect(s.ingest_url).toBe(`rtmp://127.0.0.1:${port}/live`);

    // A wrong key (and a right key on the wrong application) is refused before any media is taken.
    for (const url of [`${s.ingest_url}/live_wrongkey`, `rtmp://127.0.0.1:${port}/backup/${s.stream_key}`, `rtmp://127.0.0.1:${port}/other/${s.stream_key}`]) {
      const refused = await publish(t.config.ffmpegPath, url, 5).exited;
      expect(refused.code, url).not.toBe(0);
      expect(refused.ms, url).toBeLessThan(4000);
    }
    expect((await detail(s.id)).status).toBe('unaired');

    const pub = publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 6);
    const liveNow = await waitFor('live', async () => {
      const d = await detail(s.id);
      return d.status === 'live' ? d : null;
    });
    expect(liveNow.start_time).toBeGreaterThan(0);
    expect(liveNow.end_time).toBe(0);
    const ongoing = await org.api.get(`${live()}?states[]=ongoing`);
    expect(ongoing.body.stream_instances.map((i: any) => i.id)).toContain(s.id);
    expect((await org.api.get(`${live()}?states[]=upcoming`)).body.stream_instances.map((i: any) => i.id)).not.toContain(s.id);

    // Health: measured from the incoming stream (after a couple of seconds of data).
    await sleep(2500);
    const health = await waitFor('health', async () => {
      const h = (await org.api.get(`${live()}/${s.id}/health`)).body;
      return h.primary ? h : null;
    });
    expect(health.backup).toBeNull();
    const h = health.primary;
    expect(h.video_codec_name).toBe('h264');
    expect(h.audio_codec_name).toBe('aac');
    expect([h.video_width, h.video_height]).toEqual([640, 360]);
    expect(h.video_r_frame_rate).toBeGreaterThanOrEqual(29);
    expect(h.video_r_frame_rate).toBeLessThanOrEqual(31);
    expect(h.audio_sample_rate).toBe(44100);
    expect(h.video_bit_rate).toBeGreaterThan(500_000 * 0.7);
    expect(h.video_bit_rate).toBeLessThan(500_000 * 1.3);
    expect(h.audio_bit_rate).toBeGreaterThan(20_000);
    expect(Date.now() - Date.parse(h.created_at)).toBeLessThan(5000);

    // HLS: the playlist of the instance's player, segments of about segment_length (1 s).
    // Fetched as a viewer of the watch page does: with the playback grant the page hands out.
    const anon = client(t.app);
    const base = await waitFor('on air', async () => playbackBase(t.app, s.player_uuid).catch(() => null));
    const playlist = await waitFor('3 segments', async () => {
      const res = await anon.get(`${base}/live/index.m3u8`, { accept: 'application/vnd.apple.mpegurl' });
      return res.status === 200 && (res.raw.match(/#EXTINF/g) ?? []).length >= 3 ? res : null;
    });
    expect(String(playlist.headers['content-type'])).toMatch(/mpegurl/);
    expect(playlist.raw).toContain('#EXT-X-PLAYLIST-TYPE:EVENT');
    expect(playlist.raw).not.toContain('#EXT-X-ENDLIST');
    const durations = [...playlist.raw.matchAll(/#EXTINF:([\d.]+)/g)].map((m) => Number(m[1]));
    for (const d of durations) expect(Math.abs(d - 1)).toBeLessThan(0.15);
    const firstSegment = playlist.raw.split('\n').find((l) => l.endsWith('.ts'))!;
    const seg = await t.app.inject({ method: 'GET', url: `${base}/live/${firstSegment}` });
    expect(seg.statusCode).toBe(200);
    expect(seg.headers['content-type']).toBe('video/mp2t');
    expect(seg.rawPayload[0]).toBe(0x47);

    // The organization's admins were told (outbox, as no SMTP is configured).
    const mail = await waitFor('notification', async () =>
      (await readOutbox(dataDir)).find((m) => m.to.includes(adminEmail) && m.subject.includes('Launch live')),
    );
    expect(mail.text).toContain(s.player_uuid);

    // The publisher stops: processing (after the reconnect window), then ready with a playable video.
    expect((await pub.exited).code).toBe(0);
    const processing = await waitFor(
      'processing',
      async () => {
        const d = await detail(s.id);
        return d.status === 'processing' || d.status === 'ready' ? d : null;
      },
      20_000,
      100,
    );
    expect(processing.end_time).toBeGreaterThanOrEqual(processing.start_time);
    expect((await org.api.get(`${live()}/${s.id}/health`)).body).toEqual({ primary: null, backup: null });
    const ended = await anon.get(`${base}/live/index.m3u8`);
    expect(ended.raw).toContain('#EXT-X-ENDLIST');
    // Remux only: the HLS segments carry what was sent, at the bit rates the health reported.
    // (Joined into an MP4 first: the npm build of ffprobe crashes on MPEG-TS input.)
    const joined = path.join(dataDir, 'segments.mp4');
    const recorded = await buildRecording({
      ffmpegPath: t.config.ffmpegPath,
      store: t.container.media.store,
      playerUuid: s.player_uuid,
      workDir: dataDir,
      output: joined,
    });
    expect(recorded).toBeGreaterThanOrEqual(5);
    const streams = probe(t.config.ffprobePath, joined).streams;
    const v = streams.find((x: any) => x.codec_type === 'video');
    expect(v).toMatchObject({ codec_name: 'h264', width: 640, height: 360 });
    const [num, den] = v.avg_frame_rate.split('/').map(Number);
    expect(Math.abs(num / den - 30)).toBeLessThan(0.5);
    expect(streams.find((x: any) => x.codec_type === 'audio')).toMatchObject({ codec_name: 'aac', sample_rate: '44100' });
    const sentVideo = measuredBitRate(t.config.ffprobePath, joined, 'v');
    expect(Math.abs(h.video_bit_rate - sentVideo) / sentVideo).toBeLessThan(0.25);
    const sentAudio = measuredBitRate(t.config.ffprobePath, joined, 'a');
    expect(Math.abs(h.audio_bit_rate - sentAudio) / sentAudio).toBeLessThan(0.25);

    const ready = await waitFor(
      'ready',
      async () => {
        const d = await detail(s.id);
        return d.status === 'ready' ? d : null;
      },
      120_000,
      250,
    );
    expect(ready.vod_created_at).toBeGreaterThan(0);
    expect((await org.api.get(`${live()}?states[]=finished`)).body.stream_instances.map((i: any) => i.id)).toContain(s.id);
    const video = (await org.api.get(`${P}/videos/${s.video_id}`)).body;
    expect(video.status).toBe('ready');
    const files = (await org.api.get(`${P}/videos/${s.video_id}/files`)).body;
    expect(files.urls.hd).toBeTruthy();
    const url = new URL(files.urls.hd);
    const file = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(file.statusCode).toBe(200);
    const mp4 = path.join(dataDir, 'check.mp4');
    fs.writeFileSync(mp4, file.rawPayload);
    const info = probe(t.config.ffprobePath, mp4);
    expect(Number(info.format.duration)).toBeGreaterThan(4);
    expect(Number(info.format.duration)).toBeLessThan(8);
    expect(info.streams.map((x: any) => x.codec_type).sort()).toEqual(['audio', 'video']);
    // The recording has an adaptive ladder like any video: 360p and 240p of a 360p broadcast.
    expect(files.urls.hls).toBeTruthy();
    const hls = new URL(files.urls.hls);
    const master = await t.app.inject({ method: 'GET', url: `${hls.pathname}${hls.search}` });
    expect(master.statusCode).toBe(200);
    expect(master.body).toContain('#EXTM3U');
    expect([...master.body.matchAll(/RESOLUTION=(\d+x\d+)/g)].map((m) => m[1])).toEqual(['640x360', '426x240']);

    // The broadcast of a non-recurring stream is over: its key starts nothing more.
    const after = await publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 3).exited;
    expect(after.code).not.toBe(0);
    // Deleting the finished instance keeps its recording (video and player) in the library.
    expect((await org.api.delete(`${live()}/${s.id}`)).status).toBe(200);
    expect((await org.api.get(`${P}/videos/${s.video_id}`)).body.status).toBe('ready');
    expect((await org.api.get(`${P}/players/uuid=${s.player_uuid}`)).status).toBe(200);
  });

  it('a reconnect within the window continues the broadcast; a recurring stream goes live again as a new instance', { timeout: 180_000 }, async () => {
    const s = await createStream({ segment_length: 1 }, { recurring: true });
    const url = `${s.ingest_url}/${s.stream_key}`;
    await publish(t.config.ffmpegPath, url, 3).exited;
    expect((await detail(s.id)).status).toBe('live');
    await publish(t.config.ffmpegPath, url, 3).exited;
    const d = await detail(s.id);
    expect(d.status).toBe('live');
    const list = (await org.api.get(`${live()}?states[]=ongoing`)).body.stream_instances.filter((i: any) => i.id === s.id);
    expect(list).toHaveLength(1);
    // Two parts joined with a discontinuity.
    const playlist = (await client(t.app).get(`${await playbackBase(t.app, s.player_uuid)}/live/index.m3u8`)).raw;
    expect(playlist).toContain('#EXT-X-DISCONTINUITY');
    expect(playlist).not.toContain('#EXT-X-PLAYLIST-TYPE');

    await waitFor('processing', async () => (await detail(s.id)).status !== 'live', 20_000, 100);
    // The same key starts a new instance of the recurring stream.
    const again = publish(t.config.ffmpegPath, url, 3);
    const next = await waitFor('new instance', async () => {
      const items = (await org.api.get(`${live()}?states[]=ongoing`)).body.stream_instances;
      return items.find((i: any) => i.id > s.id && i.name === s.name);
    });
    expect(next.recurring).toBe(true);
    expect(next.player_uuid).not.toBe(s.player_uuid);
    const nd = await detail(next.id);
    expect(nd.stream_key).toBe(s.stream_key);
    expect(nd.video_id).not.toBe(s.video_id);
    await again.exited;
    await waitFor('both ready', async () => (await detail(s.id)).status === 'ready' && (await detail(next.id)).status === 'ready', 150_000, 250);
  });

  it(
    'redundant streams report both feeds and fail over to the backup; deleting the stream cuts its publishers and the key stops working',
    { timeout: 120_000 },
    async () => {
      const s = await createStream({ segment_length: 1, has_redundant_streams: true });
      // The backup key is refused on the primary URL.
      expect((await publish(t.config.ffmpegPath, `${s.ingest_url}/${s.backup_key}`, 5).exited).code).not.toBe(0);
      const primary = publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 30);
      const backup = publish(t.config.ffmpegPath, `${s.backup_url}/${s.backup_key}`, 30);
      const health = await waitFor('both feeds', async () => {
        const h = (await org.api.get(`${live()}/${s.id}/health`)).body;
        return h.primary && h.backup ? h : null;
      });
      expect(health.backup.video_codec_name).toBe('h264');
      // A second publisher on a key in use is refused.
      expect((await publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 5).exited).code).not.toBe(0);

      // The primary fails: viewers go on with the backup feed (a new part after a discontinuity).
      // (Which feed's media came first decides whether the primary's part is the first or the second.)
      const anon = client(t.app);
      const base = await playbackBase(t.app, s.player_uuid);
      const partsOf = (text: string) => [...text.matchAll(/(p\d{4})\/s\d+\.ts/g)].map((m) => m[1]);
      const primaryPart = await waitFor('primary segments', async () => {
        const parts = partsOf((await anon.get(`${base}/live/index.m3u8`)).raw);
        const lastPart = parts[parts.length - 1];
        return lastPart && parts.filter((p) => p === lastPart).length >= 2 ? lastPart : null;
      });
      primary.proc.kill('SIGKILL');
      const failover = await waitFor('backup segments', async () => {
        const res = await anon.get(`${base}/live/index.m3u8`);
        return partsOf(res.raw).some((p) => p > primaryPart) ? res.raw : null;
      });
      expect(failover).toContain('#EXT-X-DISCONTINUITY');
      expect((await detail(s.id)).status).toBe('live');
      const after = await waitFor('primary gone from health', async () => {
        const h = (await org.api.get(`${live()}/${s.id}/health`)).body;
        return h.primary === null && h.backup ? h : null;
      });
      expect(after.backup.video_width).toBe(640);

      expect(await t.container.media.store.stat(partIndexKey(s.player_uuid, 'p0001'))).not.toBeNull();
      const started = Date.now();
      expect((await org.api.delete(`${live()}/${s.id}`)).body).toEqual({ success: true });
      const b = await backup.exited;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(b.ms).toBeLessThan(25_000);
      const retry = await publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 5).exited;
      expect(retry.code).not.toBe(0);
      expect(retry.ms).toBeLessThan(4000);
      expect((await org.api.get(`${live()}/${s.id}`)).status).toBe(404);
      expect((await client(t.app).get(`${base}/live/index.m3u8`)).status).toBe(404);
      // Its HLS output is removed shortly after (from the file store, whose root is MEDIA_DIR here).
      await waitFor('cleanup', async () => !fs.existsSync(path.join(t.config.mediaDir, 'live', s.player_uuid)), 20_000);
      expect(await t.container.media.store.stat(partIndexKey(s.player_uuid, 'p0001'))).toBeNull();
    },
  );

  it('a stream with notifications disabled sends no email', { timeout: 60_000 }, async () => {
    const s = await createStream({ video_name: `Quiet ${dialect}`, disable_notifications: true });
    await publish(t.config.ffmpegPath, `${s.ingest_url}/${s.stream_key}`, 2).exited;
    expect((await detail(s.id)).start_time).toBeGreaterThan(0);
    await sleep(1000);
    expect((await readOutbox(dataDir)).some((m) => m.subject.includes(`Quiet ${dialect}`))).toBe(false);
  });
});
