import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { runningTools, toolEvents } from '../src/media/ffmpeg.ts';
import { UrlSigner } from '../src/media/signed-urls.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { closedPort, ffmpegPath, makeTestMedia, probeJson, settle, startOrigin, verifySignature, type TestMedia } from './helpers/media.ts';

const P = '/dashboard/v1';
const run = promisify(execFile);
const VIDEO_KEYS = [
  'audio_gain',
  'created_at',
  'description',
  'error_message',
  'id',
  'name',
  'notes',
  'origin',
  'seconds',
  'status',
  'sync',
  'updated_at',
  'upload_url',
  'uuid',
  'webhook_url',
];

let media: TestMedia;
let origin: Awaited<ReturnType<typeof startOrigin>>;
let deadPort: number;

beforeAll(async () => {
  media = await makeTestMedia();
  origin = await startOrigin(media.dir);
  deadPort = await closedPort();
});
afterAll(async () => {
  await origin?.close();
  if (media) await fsp.rm(media.dir, { recursive: true, force: true });
});

/** The environment a test app was made from, to derive another worker's configuration. */
const envOf = (t: TestApp) => ({
  LOG_LEVEL: 'silent',
  DATA_DIR: t.config.dataDir,
  PUBLIC_URL: t.config.publicUrl,
  UPLOAD_ALLOWED_HOSTS: t.config.uploadAllowedHosts.join(','),
});

/** Path and query of a signed URL, for app.inject. */
const local = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe.each(dialects)('media processing on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let dataDir: string;
  let runner: JobRunner;
  const src = (name: string) => `${origin.base}/files/${name}`;

  const makeRunner = (config = t.config) =>
    new JobRunner(t.database.db, { handlers: jobHandlers(createContainer({ config, database: t.database })), backoff: () => 10, pollMs: 10 });
  const videoRow = (id: number) => t.database.db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const jobsOf = async (type: string, videoId: number) =>
    (await t.database.db.selectFrom('jobs').selectAll().where('type', '=', type).execute()).filter((j) => JSON.parse(j.payload).videoId === videoId);
  const createVideo = async (body: Record<string, unknown>) => {
    const res = await org.api.post(`${P}/videos`, { video: { name: 'Clip', ...body } });
    expect(res.status, res.raw).toBe(201);
    return res.body;
  };
  const storeHas = (key: string) => fs.existsSync(path.join(t.config.mediaDir, key));

  beforeAll(async () => {
    dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-media-${dialect}-`));
    t = await createTestApp(dialect, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${origin.port}, 127.0.0.1:${deadPort}`, DATA_DIR: dataDir });
    org = await createOrg(t);
    runner = makeRunner();
  });
  afterAll(async () => {
    await t?.close();
    await fsp.rm(dataDir, { recursive: true, force: true });
  });

  describe('a small clip', () => {
    let video: any;

    beforeAll(async () => {
      origin.received.length = 0;
      video = await createVideo({ upload_url: src('small.mp4'), webhook_url: `${origin.base}/hook?v=small` });
    });

    it('is created with status null, queued, then processed to ready with duration and dimensions', async () => {
      expect(video.status).toBeNull();
      expect((await org.api.get(`${P}/videos/${video.id}`)).body.status).toBeNull();
      expect(await jobsOf('video.process', video.id)).toHaveLength(1);
      expect((await org.api.get(`${P}/videos/${video.id}/files`)).body).toEqual({ id: video.id, urls: { sd: null, hd: null, hls: null } });

      await settle(runner, t.database.db);
      const ready = (await org.api.get(`${P}/videos/${video.id}`)).body;
      expect(Object.keys(ready).sort()).toEqual(VIDEO_KEYS);
      expect(ready.status).toBe('ready');
      expect(ready.error_message).toBeNull();
      expect(ready.seconds).toBe(2);
      const row = await videoRow(video.id);
      expect([row.width, row.height]).toEqual([320, 240]);
      const files = await t.database.db.selectFrom('video_files').selectAll().where('video_id', '=', video.id).orderBy('quality').execute();
      // A source smaller than 480p keeps its size in both renditions.
      expect(files.map((f) => [f.quality, f.width, f.height, f.content_type])).toEqual([
        ['hd', 320, 240, 'video/mp4'],
        ['hls', 320, 240, 'application/vnd.apple.mpegurl'],
        ['sd', 320, 240, 'video/mp4'],
      ]);
      for (const f of files.filter((f) => f.quality !== 'hls')) expect(Number(f.bytes)).toBeGreaterThan(1000);
    });

    it('has four generated thumbnails, the first selected', async () => {
      const thumbs = await t.database.db.selectFrom('thumbnails').selectAll().where('video_id', '=', video.id).orderBy('id').execute();
      expect(thumbs).toHaveLength(4);
      expect(thumbs.map((th) => th.kind)).toEqual(['generated', 'generated', 'generated', 'generated']);
      expect(thumbs.map((th) => Boolean(th.selected))).toEqual([true, false, false, false]);
      expect(thumbs.map((th) => th.millisecond)).toEqual([250, 750, 1250, 1750]);
      for (const th of thumbs) {
        expect(th.organization_id).toBe(org.organizationId);
        expect(storeHas(th.path!)).toBe(true);
        const head = fs.readFileSync(path.join(t.config.mediaDir, th.path!)).subarray(0, 3);
        expect([...head]).toEqual([0xff, 0xd8, 0xff]); // JPEG
      }
    });

    it('serves the renditions by signed URL: full, ranges, HEAD, 416, tampered and expired links', async () => {
      const { urls } = (await org.api.get(`${P}/videos/${video.id}/files`)).body;
      expect(urls.sd).toMatch(/^http:\/\/reelbase\.test\/media\/files\/videos\/[0-9a-f-]+\/r0-[0-9a-f]+\/sd\.mp4\?expires=\d+&signature=[\w-]+$/);
      expect(urls.hd).toMatch(/\/hd\.mp4\?/);
      const expires = Number(new URL(urls.sd).searchParams.get('expires'));
      expect(expires - Math.floor(Date.now() / 1000)).toBeGreaterThan(6 * 3600 - 60);

      const full = await t.app.inject({ url: local(urls.sd) });
      expect(full.statusCode).toBe(200);
      expect(full.headers['content-type']).toBe('video/mp4');
      expect(full.headers['accept-ranges']).toBe('bytes');
      const size = full.rawPayload.length;
      expect(Number(full.headers['content-length'])).toBe(size);
      // faststart: the index (moov) comes before the media data (mdat).
      expect(full.rawPayload.indexOf('moov')).toBeGreaterThan(0);
      expect(full.rawPayload.indexOf('moov')).toBeLessThan(full.rawPayload.indexOf('mdat'));

      const part = await t.app.inject({ url: local(urls.sd), headers: { range: 'bytes=100-199' } });
      expect(part.statusCode).toBe(206);
      expect(part.headers['content-range']).toBe(`bytes 100-199/${size}`);
      expect(part.rawPayload.equals(full.rawPayload.subarray(100, 200))).toBe(true);
      const tail = await t.app.inject({ url: local(urls.sd), headers: { range: 'bytes=-10' } });
      expect(tail.statusCode).toBe(206);
      expect(tail.rawPayload.equals(full.rawPayload.subarray(size - 10))).toBe(true);

      const past = await t.app.inject({ url: local(urls.sd), headers: { range: `bytes=${size}-` } });
      expect(past.statusCode).toBe(416);
      expect(past.headers['content-range']).toBe(`bytes */${size}`);
      expect(past.json()).toMatchObject({ code: 'range_not_satisfiable' });

      const head = await t.app.inject({ method: 'HEAD', url: local(urls.sd) });
      expect(head.statusCode).toBe(200);
      expect(Number(head.headers['content-length'])).toBe(size);
      expect(head.rawPayload.length).toBe(0);

      // Whatever the client accepts, a file is a file (no 406); a conditional request gets a 304.
      expect((await t.app.inject({ url: local(urls.sd), headers: { accept: 'video/mp4' } })).statusCode).toBe(200);
      expect((await t.app.inject({ url: local(urls.sd), headers: { 'if-none-match': String(full.headers.etag) } })).statusCode).toBe(304);

      const tampered = await t.app.inject({ url: local(urls.sd).replace(/signature=./, (m) => `${m.slice(0, -1)}${m.endsWith('A') ? 'B' : 'A'}`) });
      expect(tampered.statusCode).toBe(403);
      expect(tampered.json()).toEqual({ error: 'The link is invalid or has expired', code: 'forbidden', details: [] });
      expect(tampered.headers['x-request-id']).toBeTruthy();
      const otherFile = await t.app.inject({ url: local(urls.sd).replace('/sd.mp4?', '/hd.mp4?') });
      expect(otherFile.statusCode).toBe(403);
      const unsigned = await t.app.inject({ url: new URL(urls.sd).pathname });
      expect(unsigned.statusCode).toBe(403);

      const filePath = new URL(urls.sd).pathname;
      const expired = new UrlSigner(t.config.signingSecret!, t.config.publicUrl, 60).sign(filePath, Math.floor(Date.now() / 1000) - 120);
      const old = await t.app.inject({ url: local(expired) });
      expect(old.statusCode).toBe(403);
      expect(old.json().code).toBe('forbidden');
    });

    it('POSTs the Video resource to its webhook_url once ready', async () => {
      const hooks = origin.hooks().filter((h) => h.url === '/hook?v=small');
      expect(hooks).toHaveLength(1);
      expect(hooks[0].headers['content-type']).toBe('application/json');
      expect(hooks[0].headers['x-reelbase-event']).toBe('video.ready');
      const body = JSON.parse(hooks[0].body);
      expect(Object.keys(body).sort()).toEqual(VIDEO_KEYS);
      expect(body).toMatchObject({ id: video.id, status: 'ready', seconds: 2, error_message: null });
      // Signed with the organization's key (docs/webhooks.md).
      const key = (await org.api.get(`${P}/organizations/${org.organizationId}/webhooks/signing_key`)).body.signing_key;
      expect(hooks[0].headers['webhook-id']).toMatch(/^msg_job_\d+$/);
      expect(verifySignature(hooks[0], key)).toBe(true);
      expect(verifySignature(hooks[0], 'whsec_b3RoZXI=')).toBe(false);
    });

    it('registers custom file sets fetched from URLs, selected by custom_identifier', async () => {
      const res = await org.api.post(`${P}/videos/${video.id}/files`, { custom_identifier: 'alt', sd_url: src('small.mp4') });
      expect(res.status, res.raw).toBe(202);
      expect(res.body).toMatchObject({
        id: video.id,
        custom_identifier: 'alt',
        sd_url: src('small.mp4'),
        hd_url: null,
        status: 'processing',
        error_message: null,
      });
      expect((await org.api.post(`${P}/videos/${video.id}/files`, { custom_identifier: 'bad', hd_url: src('notes.txt') })).status).toBe(202);
      expect((await org.api.post(`${P}/videos/${video.id}/files`, { custom_identifier: 'none' })).status).toBe(422);
      expect((await org.api.post(`${P}/videos/${video.id}/files`, { custom_identifier: 'x', sd_url: 'ftp://x/y' })).status).toBe(422);
      await settle(runner, t.database.db);

      const alt = (await org.api.get(`${P}/videos/${video.id}/files?custom_identifier=alt`)).body;
      expect(alt.id).toBe(video.id);
      expect(alt.urls.hd).toBeNull();
      expect(alt.urls.sd).toMatch(/\/sets\/\d+-0-[0-9a-f]+\/sd\.mp4\?/);
      const served = await t.app.inject({ url: local(alt.urls.sd) });
      expect(served.statusCode).toBe(200);
      expect(served.rawPayload.equals(fs.readFileSync(media.small))).toBe(true); // stored as sent

      // Without the parameter, only the set without an identifier.
      const main = (await org.api.get(`${P}/videos/${video.id}/files`)).body;
      expect(main.urls.sd).toMatch(/\/r0-[0-9a-f]+\/sd\.mp4\?/);
      expect((await org.api.get(`${P}/videos/${video.id}/files?custom_identifier=unknown`)).body.urls).toEqual({ sd: null, hd: null, hls: null });

      const sets = (await org.api.get(`${P}/videos/${video.id}/file_sets`)).body;
      expect(sets.map((s: any) => [s.custom_identifier, s.status])).toEqual([
        ['alt', 'ready'],
        ['bad', 'error'],
      ]);
      expect(sets[1].error_message).toMatch(/hd_url is not a video/);

      const altKey = decodeURIComponent(new URL(alt.urls.sd).pathname.slice('/media/files/'.length));
      expect(storeHas(altKey)).toBe(true);
      const del = await org.api.delete(`${P}/videos/${video.id}/files?custom_identifier=alt`);
      expect(del.status).toBe(200);
      expect(del.body.custom_identifier).toBe('alt');
      expect(storeHas(altKey)).toBe(false);
      expect((await org.api.get(`${P}/videos/${video.id}/files?custom_identifier=alt`)).body.urls).toEqual({ sd: null, hd: null, hls: null });
      expect((await org.api.delete(`${P}/videos/${video.id}/files?custom_identifier=alt`)).status).toBe(404);
      const other = await createOrg(t);
      expect((await other.api.post(`${P}/videos/${video.id}/files`, { custom_identifier: 'alt', sd_url: src('small.mp4') })).status).toBe(404);
      expect((await other.api.get(`${P}/videos/${video.id}/file_sets`)).status).toBe(404);
    });

    it('reprocesses a changed upload_url as a new version, then removes the old files', async () => {
      const before = (await org.api.get(`${P}/videos/${video.id}/files`)).body.urls.sd;
      const oldKey = new URL(before).pathname.slice('/media/files/'.length);
      const res = await org.api.patch(`${P}/videos/${video.id}`, { upload_url: `${origin.base}/redirect?to=${encodeURIComponent(src('small.mp4'))}` });
      expect(res.status).toBe(200);
      expect(res.body.status).toBeNull();
      expect((await videoRow(video.id)).media_version).toBe(1);
      // Not ready: no URLs (the old files stay in the store until the new ones replace them).
      expect((await org.api.get(`${P}/videos/${video.id}/files`)).body.urls).toEqual({ sd: null, hd: null, hls: null });
      expect(storeHas(oldKey)).toBe(true);
      // A change that keeps the URL queues nothing.
      await org.api.patch(`${P}/videos/${video.id}`, { name: 'Renamed' });
      expect(await jobsOf('video.process', video.id)).toHaveLength(2);

      await settle(runner, t.database.db);
      const after = (await org.api.get(`${P}/videos/${video.id}`)).body;
      expect(after.status).toBe('ready');
      const now = (await org.api.get(`${P}/videos/${video.id}/files`)).body.urls.sd;
      expect(now).toMatch(/\/r1-[0-9a-f]+\/sd\.mp4\?/);
      expect(storeHas(oldKey)).toBe(false);
      expect(storeHas(path.posix.dirname(oldKey))).toBe(false);
      const thumbs = await t.database.db.selectFrom('thumbnails').selectAll().where('video_id', '=', video.id).execute();
      expect(thumbs).toHaveLength(4);
      expect(thumbs.filter((th) => th.selected)).toHaveLength(1);
      expect(origin.hooks().filter((h) => h.url === '/hook?v=small')).toHaveLength(2);
    });

    it('removes its files from the store when the video is deleted', async () => {
      const row = await videoRow(video.id);
      expect(storeHas(`videos/${row.uuid}`)).toBe(true);
      expect((await org.api.delete(`${P}/videos/${video.id}`)).status).toBe(200);
      expect(storeHas(`videos/${row.uuid}`)).toBe(false);
      expect(await t.database.db.selectFrom('thumbnails').selectAll().where('video_id', '=', video.id).execute()).toEqual([]);
    });
  });

  it('queues processing for videos made through players and chapters too; a stale version never publishes', async () => {
    const player = await org.api.post(`${P}/players`, {
      player: { name: 'P', chapters_attributes: [{ position: 0, video_attributes: { name: 'A', upload_url: src('small.mp4') } }] },
    });
    expect(player.status).toBe(201);
    expect(player.body.chapters_attributes[0].video_attributes.status).toBeNull();
    const chapter = await org.api.post(`${P}/chapters`, { player_id: player.body.id, video_attributes: { name: 'B', upload_url: src('small.mp4') } });
    expect(chapter.status).toBe(201);
    expect(chapter.body.video_attributes.status).toBeNull();
    const ids = [player.body.chapters_attributes[0].video_id, chapter.body.video_id];
    // Re-sourced before any worker ran: the version-0 job must do nothing.
    await org.api.patch(`${P}/videos/${ids[1]}`, { upload_url: `${src('small.mp4')}?second` });
    await settle(runner, t.database.db);
    for (const id of ids) expect((await org.api.get(`${P}/videos/${id}`)).body.status).toBe('ready');
    const uuid = (await videoRow(ids[1])).uuid;
    expect(fs.readdirSync(path.join(t.config.mediaDir, 'videos', uuid)).filter((d) => d.startsWith('r'))).toEqual([expect.stringMatching(/^r1-/)]);
  });

  it('encodes an aligned HLS ladder once, serves it by folder link, and packages sd/hd from its streams', { timeout: 60_000 }, async () => {
    // 10 s at 640x360 with sound: rungs 360p and 240p, three segments each (4 + 4 + 2 s).
    await run(ffmpegPath, [
      '-loglevel',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=640x360:rate=30:duration=10',
      '-f',
      'lavfi',
      '-i',
      'sine=duration=10',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      path.join(media.dir, 'ten.mp4'),
    ]);
    const video = await createVideo({ upload_url: src('ten.mp4') });
    await settle(runner, t.database.db);
    const { urls } = (await org.api.get(`${P}/videos/${video.id}/files`)).body;
    expect(urls.hls).toMatch(/^http:\/\/reelbase\.test\/media\/folders\/\d+\.4\.[\w-]+\/videos\/[0-9a-f-]+\/r0-[0-9a-f]+\/hls\/master\.m3u8$/);
    const get = (url: string) => t.app.inject({ url: local(url) });

    const master = await get(urls.hls);
    expect(master.statusCode).toBe(200);
    expect(master.headers['content-type']).toBe('application/vnd.apple.mpegurl');
    const variants = master.body.split('\n').filter((l) => l.startsWith('#EXT-X-STREAM-INF:'));
    expect(variants).toHaveLength(2);
    expect(variants[0]).toMatch(
      /^#EXT-X-STREAM-INF:BANDWIDTH=\d+,AVERAGE-BANDWIDTH=\d+,RESOLUTION=640x360,CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2",FRAME-RATE=30\.000$/,
    );
    expect(variants[1]).toMatch(/RESOLUTION=426x240,/);
    const bandwidth = (line: string) => Number(/BANDWIDTH=(\d+)/.exec(line)![1]);
    expect(bandwidth(variants[0])).toBeGreaterThan(bandwidth(variants[1]));

    // Each rung by its relative URI under the same link; the same segment boundaries in both.
    const boundaries: string[] = [];
    for (const rung of ['360p', '240p']) {
      const playlist = await get(new URL(`${rung}/index.m3u8`, urls.hls as string).href);
      expect(playlist.statusCode).toBe(200);
      expect(playlist.body).toMatch(/#EXT-X-MAP:URI="init\.mp4"|#EXT-X-MAP:URI="init_\d\.mp4"/);
      const durations = [...playlist.body.matchAll(/#EXTINF:([\d.]+),/g)].map((m) => Number(m[1]).toFixed(1));
      expect(durations).toEqual(['4.0', '4.0', '2.0']);
      boundaries.push(durations.join(' '));
      const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist.body)![1];
      const first = playlist.body.split('\n').find((l) => l.endsWith('.m4s'))!;
      const initFile = await get(new URL(`${rung}/${init}`, urls.hls as string).href);
      expect(initFile.rawPayload.subarray(4, 8).toString()).toBe('ftyp');
      const segment = await get(new URL(`${rung}/${first}`, urls.hls as string).href);
      expect(segment.statusCode).toBe(200);
      expect(['styp', 'moof']).toContain(segment.rawPayload.subarray(4, 8).toString());
    }
    expect(new Set(boundaries).size).toBe(1);

    // The master names the video's published captions as subtitle renditions, each a signed link to
    // a playlist of its WebVTT file; a draft caption is not named, and a caption unpublished stops.
    expect(master.body).not.toContain('SUBTITLES');
    const published = await org.api.post(`${P}/videos/${video.id}/captions`, { language: 'fr', content: 'WEBVTT\n\n00:01.000 --> 00:02.000\nBonjour\n' });
    await settle(runner, t.database.db);
    expect((await org.api.patch(`${P}/captions/${published.body.id}/publish`)).status).toBe(200);
    await org.api.post(`${P}/videos/${video.id}/captions`, { language: 'de', content: 'WEBVTT\n\n00:01.000 --> 00:02.000\nHallo\n' });
    await settle(runner, t.database.db);
    const withCaptions = await get(urls.hls);
    const renditions = withCaptions.body.split('\n').filter((l) => l.startsWith('#EXT-X-MEDIA:TYPE=SUBTITLES'));
    expect(renditions).toHaveLength(1);
    expect(renditions[0]).toMatch(
      /LANGUAGE="fr",AUTOSELECT=YES,DEFAULT=NO,URI="http:\/\/reelbase\.test\/media\/subtitles\/\d+\.m3u8\?expires=\d+&signature=[\w-]+"$/,
    );
    expect(
      withCaptions.body
        .split('\n')
        .filter((l) => l.startsWith('#EXT-X-STREAM-INF:'))
        .every((l) => l.endsWith(',SUBTITLES="subs"')),
    ).toBe(true);
    const subtitlesUrl = /URI="([^"]+)"/.exec(renditions[0])![1];
    const subtitles = await get(subtitlesUrl);
    expect(subtitles.statusCode).toBe(200);
    expect(subtitles.headers['content-type']).toBe('application/vnd.apple.mpegurl');
    expect(subtitles.body).toMatch(
      /#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:10\.000,\n.+\/captions\/\d+\/files\/fr\.vtt\?expires=\d+&signature=[\w-]+\n#EXT-X-ENDLIST/,
    );
    const vtt = await get(subtitles.body.split('\n').find((l) => l.startsWith('http'))!);
    expect(vtt.statusCode).toBe(200);
    expect(vtt.body).toContain('Bonjour');
    expect((await get(subtitlesUrl.replace(/signature=([\w-])/, (_m: string, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`))).statusCode).toBe(403);
    expect((await org.api.patch(`${P}/captions/${published.body.id}/draft`)).status).toBe(200);
    expect((await get(subtitlesUrl)).statusCode).toBe(404);
    expect((await get(urls.hls)).body).not.toContain('SUBTITLES');

    // The link admits its own folder only, and is refused when tampered with.
    expect((await get(urls.hls.replace(/\.4\.([\w-])/, (_m: string, c: string) => `.4.${c === 'A' ? 'B' : 'A'}`))).statusCode).toBe(403);
    const elsewhere = urls.hls.replace(/videos\/[0-9a-f-]+\/r0-[0-9a-f]+\/hls/, 'videos/00000000-0000-0000-0000-000000000000/r0-00000000/hls');
    expect((await get(elsewhere)).statusCode).toBe(403);

    // sd and hd are the 360p rung remuxed: the same video packets, not a second encode.
    const files = await t.database.db.selectFrom('video_files').selectAll().where('video_id', '=', video.id).execute();
    const hlsDir = path.join(t.config.mediaDir, path.posix.dirname(files.find((f) => f.quality === 'hls')!.path));
    const hash = async (input: string) =>
      (await run(ffmpegPath, ['-loglevel', 'error', '-i', input, '-map', '0:v', '-c', 'copy', '-f', 'streamhash', '-hash', 'md5', '-'])).stdout.trim();
    const rungHash = await hash(path.join(hlsDir, '360p', 'index.m3u8'));
    for (const quality of ['sd', 'hd']) {
      const file = files.find((f) => f.quality === quality)!;
      expect([file.width, file.height]).toEqual([640, 360]);
      expect(await hash(path.join(t.config.mediaDir, file.path))).toBe(rungHash);
    }
  });

  it('backfills the ladder of a video processed before ladders existed, from its hd file, keeping its MP4 files', { timeout: 60_000 }, async () => {
    const video = await createVideo({ upload_url: src('small.mp4') });
    await settle(runner, t.database.db);
    // As a video processed by an earlier version: no ladder.
    const ladder = await t.database.db
      .selectFrom('video_files')
      .selectAll()
      .where('video_id', '=', video.id)
      .where('quality', '=', 'hls')
      .executeTakeFirstOrThrow();
    await t.database.db.deleteFrom('video_files').where('id', '=', ladder.id).execute();
    await t.container.media.store.delete(path.posix.dirname(ladder.path));
    const before = (await org.api.get(`${P}/videos/${video.id}/files`)).body.urls;
    expect(before.hls).toBeNull();

    expect(await t.services.videoMedia.queueLadderBackfill(org.organizationId)).toBe(1);
    await settle(runner, t.database.db);
    const after = (await org.api.get(`${P}/videos/${video.id}/files`)).body.urls;
    expect(after.hls).toMatch(/\/hls-[0-9a-f]{8}\/master\.m3u8$/);
    expect(new URL(after.sd).pathname).toBe(new URL(before.sd).pathname); // the MP4 files stay
    const master = await t.app.inject({ url: local(after.hls) });
    expect(master.statusCode).toBe(200);
    expect(master.body).toMatch(/RESOLUTION=320x240/);
    expect(await t.services.videoMedia.queueLadderBackfill(org.organizationId)).toBe(0);
  });

  it('transcodes a 720p source without audio to 854x480 and 1280x720, each with a silent AAC track', async () => {
    const video = await createVideo({ upload_url: src('hd.mp4') });
    await settle(runner, t.database.db);
    const row = await videoRow(video.id);
    expect([row.status, row.seconds, row.width, row.height]).toEqual(['ready', 3, 1280, 720]);
    const files = await t.database.db.selectFrom('video_files').selectAll().where('video_id', '=', video.id).orderBy('quality').execute();
    expect(files.map((f) => [f.quality, f.width, f.height])).toEqual([
      ['hd', 1280, 720],
      ['hls', 1280, 720],
      ['sd', 854, 480],
    ]);
    for (const f of files.filter((f) => f.quality !== 'hls')) {
      const info = await probeJson(path.join(t.config.mediaDir, f.path));
      const v = info.streams.find((s) => s.codec_type === 'video');
      const a = info.streams.find((s) => s.codec_type === 'audio');
      expect([v.codec_name, v.width, v.height, v.pix_fmt]).toEqual(['h264', f.width, f.height, 'yuv420p']);
      expect(a.codec_name).toBe('aac');
      expect(Number(info.format.duration)).toBeCloseTo(3, 0);
    }
  });

  describe('failures', () => {
    const failed = async (body: Record<string, unknown>) => (await createVideo({ name: 'Bad', ...body })).id as number;
    const outcome = async (id: number) => {
      const row = await videoRow(id);
      const [job] = await jobsOf('video.process', id);
      return { status: row.status, message: row.error_message ?? '', attempts: job.attempts, job: job.status };
    };

    it('sets error with a clear message: refused addresses, redirects to them, not a video, 404, unreachable', async () => {
      origin.received.length = 0;
      const refused = await failed({ upload_url: `http://localhost:${origin.port}/files/small.mp4` });
      const redirected = await failed({ upload_url: `${origin.base}/redirect?to=${encodeURIComponent(`http://localhost:${origin.port}/files/small.mp4`)}` });
      const metadata = await failed({ upload_url: 'http://169.254.169.254/latest/meta-data/' });
      const loop = await failed({ upload_url: `${origin.base}/loop?n=0` });
      const text = await failed({ upload_url: src('notes.txt'), webhook_url: `${origin.base}/hook?v=text` });
      const missing = await failed({ upload_url: src('missing.mp4') });
      const unreachable = await failed({ upload_url: `http://127.0.0.1:${deadPort}/x.mp4` });
      await settle(runner, t.database.db);

      const r = await outcome(refused);
      expect(r).toMatchObject({ status: 'error', attempts: 1, job: 'failed' });
      expect(r.message).toMatch(/upload_url was refused: The host localhost resolves to a loopback address/);
      expect((await outcome(redirected)).message).toMatch(/refused.*loopback/);
      expect((await outcome(metadata)).message).toMatch(/refused.*link-local/);
      expect((await outcome(loop)).message).toMatch(/More than 3 redirects/);
      const txt = await outcome(text);
      expect(txt).toMatchObject({ status: 'error', attempts: 1 });
      expect(txt.message).toMatch(/upload_url is not a video/);
      expect(txt.message).not.toContain(t.config.mediaDir);
      const nf = await outcome(missing);
      expect(nf).toMatchObject({ status: 'error', attempts: 1 });
      expect(nf.message).toMatch(/answered HTTP 404/);
      // Network failures are retried with backoff; after the last attempt the video fails.
      const un = await outcome(unreachable);
      expect(un).toMatchObject({ status: 'error', attempts: 5, job: 'failed' });
      expect(un.message).toMatch(/could not be fetched.*ECONNREFUSED/);

      // Nothing was requested from the origin for the refused ones.
      expect(origin.received.filter((q) => q.url.startsWith('/files/small.mp4'))).toEqual([]);
      const hook = origin.hooks().find((h) => h.url === '/hook?v=text');
      expect(JSON.parse(hook!.body)).toMatchObject({ id: text, status: 'error', error_message: txt.message });
      // The user sees the same through the API.
      const api = (await org.api.get(`${P}/videos/${text}`)).body;
      expect([api.status, api.error_message]).toEqual(['error', txt.message]);
      expect((await org.api.get(`${P}/videos/${text}/files`)).body.urls).toEqual({ sd: null, hd: null, hls: null });
    });

    it('fails a re-sourced video whose new source is bad, removing the files of the old source', async () => {
      const video = await createVideo({ upload_url: src('small.mp4') });
      await settle(runner, t.database.db);
      const key = new URL((await org.api.get(`${P}/videos/${video.id}/files`)).body.urls.hd).pathname.slice('/media/files/'.length);
      expect(storeHas(key)).toBe(true);
      await org.api.patch(`${P}/videos/${video.id}`, { upload_url: src('notes.txt') });
      await settle(runner, t.database.db);
      const after = (await org.api.get(`${P}/videos/${video.id}`)).body;
      expect([after.status, after.error_message]).toEqual(['error', expect.stringMatching(/not a video/)]);
      expect((await org.api.get(`${P}/videos/${video.id}/files`)).body.urls).toEqual({ sd: null, hd: null, hls: null });
      expect(storeHas(key)).toBe(false);
      expect(await t.database.db.selectFrom('video_files').selectAll().where('video_id', '=', video.id).execute()).toEqual([]);
      expect(await t.database.db.selectFrom('thumbnails').selectAll().where('video_id', '=', video.id).execute()).toEqual([]);
    });

    it('refuses a source larger than MAX_UPLOAD_BYTES, declared or streamed', async () => {
      const declared = await failed({ upload_url: src('small.mp4') });
      const streamed = await failed({ upload_url: `${origin.base}/chunked/small.mp4` });
      // A worker configured with MAX_UPLOAD_BYTES=5000.
      const capped = loadConfig({ ...envOf(t), MAX_UPLOAD_BYTES: '5000' });
      capped.signingSecret = t.config.signingSecret;
      await settle(makeRunner(capped), t.database.db);
      for (const id of [declared, streamed]) {
        const out = await outcome(id);
        expect(out).toMatchObject({ status: 'error', attempts: 1 });
        expect(out.message).toMatch(/too large.*5000 bytes/);
      }
    });
  });

  it('survives a worker stopping mid-transcode: ffmpeg is killed, the job released, another worker finishes', async () => {
    const video = await createVideo({ upload_url: src('small.mp4') });
    const first = makeRunner();
    const transcoding = new Promise<number>((resolve) => {
      const listener = (e: { pid: number; args: string[] }) => {
        if (e.args.includes('libx264')) {
          toolEvents.off('spawn', listener);
          resolve(e.pid);
        }
      };
      toolEvents.on('spawn', listener);
    });
    const exits: Array<{ pid: number; signal: string | null }> = [];
    const onExit = (e: { pid: number; signal: string | null }) => exits.push(e);
    toolEvents.on('exit', onExit);
    first.start();
    const pid = await transcoding;
    await first.stop(20);
    toolEvents.off('exit', onExit);
    expect(exits.find((e) => e.pid === pid)?.signal).toBe('SIGKILL');
    expect(runningTools()).toEqual([]);
    expect(() => process.kill(pid, 0)).toThrow();
    const [job] = await jobsOf('video.process', video.id);
    expect([job.status, job.attempts]).toEqual(['queued', 0]);
    expect((await videoRow(video.id)).status).toBe('processing');

    await settle(makeRunner(), t.database.db);
    expect((await videoRow(video.id)).status).toBe('ready');
    expect(fs.readdirSync(path.join(t.config.mediaDir, '.work'))).toEqual([]);
  });
});
