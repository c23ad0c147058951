/**
 * The adaptive stream of a watch page (docs/media.md, "Adaptive streaming"): the video's HLS master
 * through the viewer's grant, with the published captions as WebVTT subtitle renditions whose
 * playlists and files resolve under the same grant; the page rules apply to every playlist.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeMaster } from '../src/media/hls.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { configOf } from './helpers/pages.ts';

const P = '/dashboard/v1';
const VIEWER = '203.0.113.7';
const BLOCKED = '198.51.100.20';

describe.each(dialects)('the HLS ladder on the watch page (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    expect((await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'office', ip_range: '198.51.100.0/24' })).status).toBe(201);
  });
  afterAll(() => t.close());

  const get = (url: string, ip = VIEWER) => t.app.inject({ method: 'GET', url, remoteAddress: ip });
  const pathOf = (url: string) => new URL(url).pathname;

  /** A ready video whose run has a two-rung ladder in the store, as the pipeline leaves it. */
  async function ladderPlayer() {
    const player = await createPlayer(org.api);
    const videoId = player.chapters_attributes[0].video_id as number;
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const folder = `videos/${uuid}/r0-abc`;
    const store = t.container.media.store;
    const master = composeMaster([
      { name: '720p', width: 1280, height: 720, bandwidth: 3_000_000, averageBandwidth: 2_500_000, codecs: 'avc1.64001f,mp4a.40.2', frameRate: 30 },
      { name: '360p', width: 640, height: 360, bandwidth: 800_000, averageBandwidth: 600_000, codecs: 'avc1.64001e,mp4a.40.2', frameRate: 30 },
    ]);
    for (const rung of ['720p', '360p']) {
      await store.put(`${folder}/hls/${rung}/index.m3u8`, Readable.from(['#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:4.0,\nseg-00000.m4s\n#EXT-X-ENDLIST\n']));
      await store.put(`${folder}/hls/${rung}/seg-00000.m4s`, Readable.from([`segment of ${rung}`]));
    }
    await store.put(`${folder}/hls/master.m3u8`, Readable.from([master]));
    await store.put(`${folder}/sd.mp4`, Readable.from(['sd bytes']));
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .insertInto('video_files')
      .values([
        { video_id: videoId, custom_identifier: null, quality: 'sd', path: `${folder}/sd.mp4`, created_at: now, content_type: 'video/mp4' },
        {
          video_id: videoId,
          custom_identifier: null,
          quality: 'hls',
          path: `${folder}/hls/master.m3u8`,
          created_at: now,
          content_type: 'application/vnd.apple.mpegurl',
        },
      ])
      .execute();
    await t.database.db.updateTable('videos').set({ status: 'ready', seconds: 42 }).where('id', '=', videoId).execute();
    return { player, videoId };
  }

  it('serves the master with the published captions as subtitle renditions, each resolving under the grant', async () => {
    const { player, videoId } = await ladderPlayer();
    const draft = await org.api.post(`${P}/videos/${videoId}/captions`, {
      caption: { language: 'fr', content: 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBonjour\n' },
    });
    expect(draft.status).toBe(201);
    const published = await org.api.post(`${P}/videos/${videoId}/captions`, {
      caption: { language: 'en', content: 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n' },
    });
    expect((await org.api.patch(`${P}/captions/${published.body.id}/publish`, {})).status).toBe(200);

    const chapter = configOf((await get(`/watch/${player.uuid}`)).body).chapters[0];
    expect(chapter.hls).toMatch(new RegExp(`/play/${player.uuid}/w\\d+\\.[\\w-]{32}/files/videos/[0-9a-f-]+/r0-abc/hls/master\\.m3u8$`));
    const master = await get(pathOf(chapter.hls));
    expect(master.statusCode).toBe(200);
    expect(master.headers['content-type']).toBe('application/vnd.apple.mpegurl');
    const media = master.body.split('\n').filter((l) => l.startsWith('#EXT-X-MEDIA:TYPE=SUBTITLES'));
    // Only the published caption: drafts stay out.
    expect(media).toHaveLength(1);
    expect(media[0]).toMatch(/GROUP-ID="subs",NAME="[^"]+",LANGUAGE="en",AUTOSELECT=YES,DEFAULT=(YES|NO),URI="([^"]+)"/);
    for (const line of master.body.split('\n').filter((l) => l.startsWith('#EXT-X-STREAM-INF:'))) expect(line).toMatch(/,SUBTITLES="subs"$/);

    const subtitlesUrl = new URL(/URI="([^"]+)"/.exec(media[0])![1], chapter.hls).href;
    const subtitles = await get(pathOf(subtitlesUrl));
    expect(subtitles.statusCode).toBe(200);
    expect(subtitles.body).toMatch(/#EXTINF:42\.000,\n\d+\.vtt\n#EXT-X-ENDLIST/);
    const vtt = await get(pathOf(new URL(/\n(\d+\.vtt)\n/.exec(subtitles.body)![1], subtitlesUrl).href));
    expect(vtt.statusCode).toBe(200);
    expect(vtt.body).toMatch(/^WEBVTT/);

    // The rungs and their segments resolve under the grant too.
    const rung = await get(pathOf(new URL('360p/index.m3u8', chapter.hls).href));
    expect(rung.statusCode).toBe(200);
    expect((await get(pathOf(new URL('360p/seg-00000.m4s', chapter.hls).href))).body).toBe('segment of 360p');
  });

  it('applies the page rules to the master and the subtitle playlists, and answers a caption of another video like a missing one', async () => {
    const { player } = await ladderPlayer();
    const chapter = configOf((await get(`/watch/${player.uuid}`)).body).chapters[0];
    expect((await get(pathOf(chapter.hls), BLOCKED)).statusCode).toBe(403);
    // Every byte: a rung's playlist and its segments too, from a blocked network or past the expiry.
    const rung = pathOf(new URL('360p/index.m3u8', chapter.hls).href);
    const segment = pathOf(new URL('360p/seg-00000.m4s', chapter.hls).href);
    expect((await get(segment)).statusCode).toBe(200);
    expect((await get(rung, BLOCKED)).statusCode).toBe(403);
    expect((await get(segment, BLOCKED)).statusCode).toBe(403);
    const base = pathOf(chapter.hls).split('/files/')[0];
    expect((await get(`${base}/captions/999999.m3u8`)).statusCode).toBe(404);
    expect((await get(pathOf(chapter.hls).replace(/\/play\/([^/]+)\/[^/]+\//, '/play/$1/w1.forged0000000000000000000000000/'))).statusCode).toBe(403);
    await t.database.db
      .updateTable('players')
      .set({ expiry_date: Math.floor(Date.now() / 1000) - 10 })
      .where('id', '=', player.id)
      .execute();
    expect((await get(pathOf(chapter.hls))).statusCode).toBe(403);
    expect((await get(segment)).statusCode).toBe(403);
  });
});
