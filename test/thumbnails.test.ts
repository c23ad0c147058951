import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, unique, type OrgContext } from './helpers/factories.ts';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { sniffImage } from '../src/modules/thumbnails/images.ts';

const P = '/dashboard/v1';
const P11 = '/dashboard/v1.1';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);

const THUMBNAIL_KEYS = ['created_at', 'id', 'updated_at', 'url', 'uuid'];
const PLAYER_THUMBNAIL_KEYS = ['created_at', 'id', 'millisecond', 'thumbnail_type', 'updated_at', 'url', 'uuid', 'video_id'];

const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

describe('image sniffing', () => {
  it('recognises PNG (with size), JPEG, GIF and WebP by their first bytes', () => {
    expect(sniffImage(PNG)).toEqual({ ext: 'png', width: 1, height: 1 });
    expect(sniffImage(JPEG)?.ext).toBe('jpg');
    expect(sniffImage(Buffer.from('GIF89a\x02\x00\x03\x00', 'latin1'))).toEqual({ ext: 'gif', width: 2, height: 3 });
    expect(sniffImage(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))?.ext).toBe('webp');
    expect(sniffImage(Buffer.from('<html>'))).toBeNull();
    expect(sniffImage(Buffer.alloc(0))).toBeNull();
  });
});

describe.each(dialects)('thumbnails on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let server: http.Server;
  let base: string;
  let mediaDir: string;
  let imageCalls = 0;

  const drain = () =>
    new JobRunner(t.database.db, {
      handlers: { ['thumbnail.fetch']: jobHandlers(createContainer({ config: t.config, database: t.database }))['thumbnail.fetch'] },
      backoff: () => 0,
    }).drain();

  async function newVideo(api = org.api) {
    const res = await api.post(`${P}/videos`, { name: unique('Video'), upload_url: 'https://media.example.com/v.mp4' });
    expect(res.status).toBe(201);
    return res.body as { id: number; uuid: string };
  }

  /** What processing leaves behind: `count` generated thumbnails in the store, the first selected. */
  async function generate(video: { id: number; uuid: string }, organizationId = org.organizationId, count = 3) {
    const media = t.container.media;
    const now = Math.floor(Date.now() / 1000);
    const rows = [];
    for (let i = 0; i < count; i++) {
      const key = `videos/${video.uuid}/r0-test/thumbnail-${i}.jpg`;
      await media.store.put(key, Readable.from([JPEG]));
      rows.push(
        await t.database.db
          .insertInto('thumbnails')
          .values({
            organization_id: organizationId,
            video_id: video.id,
            uuid: `${video.uuid.slice(0, 30)}-t${i}`,
            kind: 'generated',
            path: key,
            url: null,
            millisecond: 1000 * (i + 1),
            width: 640,
            height: 360,
            selected: i === 0,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
      );
    }
    return rows;
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/image.png') {
        imageCalls++;
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      }
      if (req.url === '/page.html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an image</html>');
      if (req.url === '/flaky.png') return void res.writeHead(503).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    base = `http://127.0.0.1:${port}`;
    mediaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-thumbnails-'));
    t = await createTestApp(dialect, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${port}`, MEDIA_DIR: mediaDir });
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
    fs.rmSync(mediaDir, { recursive: true, force: true });
  });

  describe('a video', () => {
    it('lists its thumbnails with signed URLs that serve the images', async () => {
      const video = await newVideo();
      const rows = await generate(video);
      const res = await org.api.get(`${P}/videos/${video.id}/thumbnails`);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(3);
      expect(res.body.map((x: any) => x.id)).toEqual(rows.map((r) => r.id));
      for (const thumb of res.body) {
        expect(Object.keys(thumb).sort()).toEqual(THUMBNAIL_KEYS);
        expect(thumb.url).toMatch(/^http:\/\/reelbase\.test\/media\/files\/videos\/[\w-]+\/r0-test\/thumbnail-\d\.jpg\?expires=\d+&signature=[\w-]+$/);
        expect(Number.isInteger(thumb.created_at)).toBe(true);
      }
      expect(res.body[0].uuid).toBe(rows[0].uuid);
      const image = await client(t.app).get(local(res.body[1].url));
      expect(image.status).toBe(200);
      expect(image.headers['content-type']).toBe('image/jpeg');
      expect(Buffer.from(image.raw, 'latin1').length).toBe(JPEG.length);
      const paged = await org.api.get(`${P}/videos/${video.id}/thumbnails?per_page=2&page=2`);
      expect(paged.body.summary).toEqual({ page: 2, per_page: 2, count: 3 });
      expect(paged.body.thumbnails.map((x: any) => x.id)).toEqual([rows[2].id]);
      const csv = await org.api.get(`${P}/videos/${video.id}/thumbnails.json`, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect(csv.raw.split('\n')[0]).toBe('id,uuid,url,created_at,updated_at');
    });

    it('an unprocessed video has no thumbnails and no selected thumbnail', async () => {
      const video = await newVideo();
      expect((await org.api.get(`${P}/videos/${video.id}/thumbnails`)).body).toEqual([]);
      const selected = await org.api.get(`${P}/videos/${video.id}/selected_thumbnail`);
      expect(selected.status).toBe(404);
      expect(selected.body.code).toBe('not_found');
    });

    it('answers its selected thumbnail', async () => {
      const video = await newVideo();
      const rows = await generate(video);
      const res = await org.api.get(`${P}/videos/${video.id}/selected_thumbnail`);
      expect(res.status).toBe(200);
      expect(res.headers.deprecation).toBeUndefined();
      expect(Object.keys(res.body).sort()).toEqual(THUMBNAIL_KEYS);
      expect(res.body.id).toBe(rows[0].id);
    });

    it('selects another thumbnail by id (deprecated PATCH)', async () => {
      const video = await newVideo();
      const rows = await generate(video);
      const res = await org.api.patch(`${P}/videos/${video.id}/selected_thumbnail`, { thumbnail_id: rows[2].id });
      expect(res.status).toBe(200);
      expect(res.headers.deprecation).toBe('true');
      expect(res.body.id).toBe(rows[2].id);
      expect((await org.api.get(`${P}/videos/${video.id}/selected_thumbnail`)).body.id).toBe(rows[2].id);
      const selected = await t.database.db.selectFrom('thumbnails').select(['id']).where('video_id', '=', video.id).where('selected', '=', true).execute();
      expect(selected.map((r) => r.id)).toEqual([rows[2].id]);
      const wrapped = await org.api.patch(`${P}/videos/${video.id}/selected_thumbnail.json`, { thumbnail: { thumbnail_id: rows[1].id } });
      expect(wrapped.body.id).toBe(rows[1].id);
    });

    it('sets a custom thumbnail by URL, copied into the media store by a job', async () => {
      const video = await newVideo();
      await generate(video);
      imageCalls = 0;
      const res = await org.api.patch(`${P}/videos/${video.id}/selected_thumbnail`, { thumbnail_url: `${base}/image.png` });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(THUMBNAIL_KEYS);
      expect(res.body.url).toBe(`${base}/image.png`);
      await drain();
      expect(imageCalls).toBe(1);
      const after = await org.api.get(`${P}/videos/${video.id}/selected_thumbnail`);
      expect(after.body.id).toBe(res.body.id);
      expect(after.body.url).toMatch(new RegExp(`^http://reelbase\\.test/media/files/videos/${video.uuid}/thumbnails/${res.body.uuid}\\.png\\?expires=`));
      const image = await client(t.app).get(local(after.body.url));
      expect(image.status).toBe(200);
      expect(image.headers['content-type']).toBe('image/png');
      const list = await org.api.get(`${P}/videos/${video.id}/thumbnails`);
      expect(list.body).toHaveLength(4);
      // The same URL again selects the same custom thumbnail.
      const again = await org.api.patch(`${P}/videos/${video.id}/selected_thumbnail`, { thumbnails: [{ url: `${base}/image.png` }] });
      expect(again.body.id).toBe(res.body.id);
      await drain();
      expect(imageCalls).toBe(1);
    });

    it('a custom image that cannot be copied stays listed with its URL but is no longer selected: a stored thumbnail is', async () => {
      const video = await newVideo();
      const generated = await generate(video);
      const urls = [`${base}/page.html`, `${base}/missing.png`, 'http://127.0.0.2:9/x.png', `${base}/flaky.png`];
      for (const url of urls) expect((await org.api.patch(`${P}/videos/${video.id}/selected_thumbnail`, { thumbnail_url: url })).status).toBe(200);
      await drain();
      const list = (await org.api.get(`${P}/videos/${video.id}/thumbnails`)).body;
      expect(list.map((x: any) => x.url).slice(-4)).toEqual(urls);
      const jobs = await t.database.db.selectFrom('jobs').select(['status']).where('type', '=', 'thumbnail.fetch').execute();
      expect(jobs.every((j) => j.status === 'done')).toBe(true);
      // The refused URL (the last one set) is not what the video, its players or its pages show.
      const selected = (await org.api.get(`${P}/videos/${video.id}/selected_thumbnail`)).body;
      expect(generated.map((g: any) => g.id)).toContain(selected.id);
      expect(selected.url).not.toContain('flaky');
    });

    it('refuses bad selections with 422, other organizations with 404, viewers with 403', async () => {
      const video = await newVideo();
      const mine = await generate(video);
      const otherVideo = await newVideo();
      const elsewhere = await generate(otherVideo);
      const theirVideo = await newVideo(other.api);
      const theirs = await generate(theirVideo, other.organizationId);
      const bad: Array<[unknown, string]> = [
        [{}, 'thumbnail_id'],
        [{ thumbnail_id: elsewhere[0].id }, 'thumbnail_id'],
        [{ thumbnail_id: theirs[0].id }, 'thumbnail_id'],
        [{ thumbnail_id: '1' }, 'thumbnail_id'],
        [{ thumbnail_id: mine[1].id, thumbnail_url: `${base}/image.png` }, 'thumbnail_id'],
        [{ thumbnail_url: 'javascript:alert(1)' }, 'thumbnail_url'],
        [{ thumbnails: [] }, 'thumbnails'],
      ];
      for (const [body, field] of bad) {
        const res = await org.api.patch(`${P}/videos/${video.id}/selected_thumbnail`, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.details.map((d: any) => d.field)).toContain(field);
      }
      expect((await org.api.patch(`${P}/videos/${theirVideo.id}/selected_thumbnail`, { thumbnail_id: theirs[1].id })).status).toBe(404);
      expect((await org.api.get(`${P}/videos/${theirVideo.id}/thumbnails`)).status).toBe(404);
      expect((await org.api.get(`${P}/videos/${theirVideo.id}/selected_thumbnail`)).status).toBe(404);
      expect((await org.api.get(`${P}/videos/abc/thumbnails`)).status).toBe(404);
      const viewer = await org.as('viewer');
      expect((await viewer.get(`${P}/videos/${video.id}/thumbnails`)).status).toBe(200);
      expect((await viewer.patch(`${P}/videos/${video.id}/selected_thumbnail`, { thumbnail_id: mine[1].id })).status).toBe(403);
      expect((await client(t.app).get(`${P}/videos/${video.id}/thumbnails`)).status).toBe(401);
      expect((await org.api.get(`${P}/videos/${video.id}/selected_thumbnail`)).body.id).toBe(mine[0].id);
      expect((await other.api.get(`${P}/videos/${theirVideo.id}/selected_thumbnail`)).body.id).toBe(theirs[0].id);
    });
  });

  describe('GET /v1/thumbnails/:id (deprecated)', () => {
    it('answers the thumbnail with a Deprecation header; 404 for another organization', async () => {
      const video = await newVideo();
      const [row] = await generate(video);
      const res = await org.api.get(`${P}/thumbnails/${row.id}`);
      expect(res.status).toBe(200);
      expect(res.headers.deprecation).toBe('true');
      expect(Object.keys(res.body).sort()).toEqual(THUMBNAIL_KEYS);
      expect(res.body).toMatchObject({ id: row.id, uuid: row.uuid, created_at: row.created_at, updated_at: row.updated_at });
      const miss = await other.api.get(`${P}/thumbnails/${row.id}`);
      expect(miss.status).toBe(404);
      expect(miss.body.code).toBe('not_found');
      expect((await org.api.get(`${P}/thumbnails/99999999`)).status).toBe(404);
      expect((await client(t.app).get(`${P}/thumbnails/${row.id}`)).status).toBe(401);
    });
  });

  describe('a player', () => {
    let player: any;
    let videoA: { id: number; uuid: string };
    let videoB: { id: number; uuid: string };
    let thumbsA: any[];
    let thumbsB: any[];

    beforeAll(async () => {
      player = await createPlayer(org.api, {}, 3);
      const [a, b] = player.chapters_attributes.map((c: any) => c.video_attributes);
      videoA = a;
      videoB = b;
      thumbsA = await generate(videoA);
      thumbsB = await generate(videoB);
      // The third chapter's video is not processed: it has no thumbnail yet.
    });

    it("answers its chapters' selected thumbnails in chapter order, by id and by uuid", async () => {
      for (const url of [`${P}/players/${player.id}/selected_thumbnails`, `${P}/players/uuid=${player.uuid}/selected_thumbnails.json`]) {
        const res = await org.api.get(url);
        expect(res.status).toBe(200);
        expect(res.headers.deprecation).toBeUndefined();
        expect(res.body).toHaveLength(2);
        for (const entry of res.body) {
          expect(Object.keys(entry).sort()).toEqual(['created_at', 'thumbnail', 'updated_at']);
          expect(Object.keys(entry.thumbnail).sort()).toEqual(PLAYER_THUMBNAIL_KEYS);
          expect(entry.thumbnail.thumbnail_type).toBe('generated');
          expect(entry.thumbnail.url).toMatch(/\/media\/files\/videos\//);
        }
        expect(res.body.map((e: any) => e.thumbnail.id)).toEqual([thumbsA[0].id, thumbsB[0].id]);
        expect(res.body[0].thumbnail).toMatchObject({ video_id: videoA.id, uuid: thumbsA[0].uuid, millisecond: 1000 });
      }
    });

    it('sets thumbnails on v1.1 by uuid (both path forms) and by id, from a bare list or a wrapped one', async () => {
      const bare = await org.api.patch(`${P11}/players/uuid=${player.uuid}/selected_thumbnails`, [
        { thumbnail_id: thumbsA[2].id },
        { thumbnail_url: `${base}/image.png` },
      ]);
      expect(bare.status).toBe(200);
      expect(bare.headers.deprecation).toBeUndefined();
      expect(bare.body).toHaveLength(2);
      expect(bare.body[0].thumbnail).toMatchObject({ id: thumbsA[2].id, thumbnail_type: 'generated', video_id: videoA.id });
      expect(bare.body[1].thumbnail).toMatchObject({ thumbnail_type: 'custom', video_id: videoB.id, url: `${base}/image.png`, millisecond: null });
      expect((await org.api.get(`${P}/videos/${videoA.id}/selected_thumbnail`)).body.id).toBe(thumbsA[2].id);
      await drain();
      const stored = await org.api.get(`${P}/players/${player.id}/selected_thumbnails`);
      expect(stored.body[1].thumbnail.url).toMatch(/^http:\/\/reelbase\.test\/media\/files\/videos\/.*\.png\?/);

      const plain = await org.api.patch(`${P11}/players/${player.uuid}/selected_thumbnails.json`, { thumbnails: [{ thumbnail_id: thumbsB[1].id }] });
      expect(plain.status).toBe(200);
      expect(plain.body.map((e: any) => e.thumbnail.id)).toEqual([thumbsA[2].id, thumbsB[1].id]);
      const byId = await org.api.patch(`${P11}/players/${player.id}/selected_thumbnails`, {
        auth_token: org.token,
        selected_thumbnails: [{ thumbnail_id: thumbsA[0].id }],
      });
      expect(byId.status).toBe(200);
      expect(byId.body.map((e: any) => e.thumbnail.id)).toEqual([thumbsA[0].id, thumbsB[1].id]);
      const explicitVideo = await org.api.patch(`${P11}/players/${player.id}/selected_thumbnails`, [
        { thumbnail_url: `${base}/image.png`, video_id: videoA.id },
      ]);
      expect(explicitVideo.body[0].thumbnail).toMatchObject({ thumbnail_type: 'custom', video_id: videoA.id });
    });

    it('the v1 PATCH paths work and are deprecated', async () => {
      const byId = await org.api.patch(`${P}/players/${player.id}/selected_thumbnails`, [{ thumbnail_id: thumbsB[2].id }]);
      expect(byId.status).toBe(200);
      expect(byId.headers.deprecation).toBe('true');
      expect(byId.body.map((e: any) => e.thumbnail.id)).toContain(thumbsB[2].id);
      const byUuid = await org.api.patch(`${P}/players/uuid=${player.uuid}/selected_thumbnails`, [{ thumbnail_id: thumbsA[1].id }]);
      expect(byUuid.status).toBe(200);
      expect(byUuid.headers.deprecation).toBe('true');
      expect(byUuid.body[0].thumbnail.id).toBe(thumbsA[1].id);
    });

    it('refuses bad lists with 422 naming the item', async () => {
      const lonely = await newVideo();
      const [notInPlayer] = await generate(lonely);
      const facade = await createPlayer(org.api, {}, 1);
      const url = `${P11}/players/${player.uuid}/selected_thumbnails`;
      const cases: Array<[unknown, string]> = [
        [[], 'thumbnails'],
        [{}, 'thumbnails'],
        [{ thumbnails: 'x' }, 'thumbnails'],
        [[{}], 'thumbnails.0'],
        [[{ thumbnail_id: thumbsA[0].id, thumbnail_url: `${base}/image.png` }], 'thumbnails.0'],
        [[{ thumbnail_id: notInPlayer.id }], 'thumbnails.0.thumbnail_id'],
        [[{ thumbnail_id: thumbsA[0].id }, { thumbnail_id: thumbsA[1].id }], 'thumbnails.1'],
        [[{ thumbnail_url: `${base}/image.png`, video_id: lonely.id }], 'thumbnails.0.video_id'],
        [[{ thumbnail_id: thumbsA[0].id, video_id: videoB.id }], 'thumbnails.0.video_id'],
        [[{ thumbnail_url: 'ftp://x/y.png' }], 'thumbnails.0.thumbnail_url'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.patch(url, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(
          res.body.details.map((d: any) => d.field),
          JSON.stringify(body),
        ).toContain(field);
      }
      const beyond = await org.api.patch(`${P11}/players/${facade.id}/selected_thumbnails`, [
        { thumbnail_url: `${base}/image.png` },
        { thumbnail_url: `${base}/image.png` },
      ]);
      expect(beyond.status).toBe(422);
      expect(beyond.body.details[0].field).toBe('thumbnails.1.video_id');
      expect((await org.api.patch(url, '[{"thumbnail_id": ')).status).toBe(400);
    });

    it('answers 404 for missing players and other organizations, 403 for viewers, 401 without a token', async () => {
      const theirs = await createPlayer(other.api, {}, 1);
      const misses = [
        await org.api.get(`${P}/players/${theirs.id}/selected_thumbnails`),
        await org.api.get(`${P}/players/uuid=${theirs.uuid}/selected_thumbnails`),
        await org.api.get(`${P}/players/uuid=nope/selected_thumbnails`),
        await org.api.get(`${P}/players/99999999/selected_thumbnails`),
        await org.api.patch(`${P11}/players/${theirs.uuid}/selected_thumbnails`, [{ thumbnail_id: thumbsA[0].id }]),
        await org.api.patch(`${P11}/players/uuid=${theirs.uuid}/selected_thumbnails`, [{ thumbnail_id: thumbsA[0].id }]),
        await org.api.patch(`${P11}/players/${theirs.id}/selected_thumbnails`, [{ thumbnail_id: thumbsA[0].id }]),
        await org.api.patch(`${P}/players/${theirs.id}/selected_thumbnails`, [{ thumbnail_id: thumbsA[0].id }]),
      ];
      for (const res of misses) {
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      const viewer = await org.as('viewer');
      expect((await viewer.get(`${P}/players/${player.id}/selected_thumbnails`)).status).toBe(200);
      const denied = await viewer.patch(`${P11}/players/${player.uuid}/selected_thumbnails`, [{ thumbnail_id: thumbsA[0].id }]);
      expect(denied.status).toBe(403);
      expect((await client(t.app).get(`${P}/players/${player.id}/selected_thumbnails`)).status).toBe(401);
      expect((await client(t.app).patch(`${P11}/players/${player.uuid}/selected_thumbnails`, [{ thumbnail_id: thumbsA[0].id }])).status).toBe(401);
    });
  });
});
