import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { publishPart } from './helpers/live-output.ts';
import { PlaybackGrants } from '../src/modules/watch/playback-grants.ts';
import { configOf, playbackBase } from './helpers/pages.ts';

const P = '/dashboard/v1';
const VIEWER = '203.0.113.7';
const BLOCKED = '198.51.100.20';

describe.each(dialects)('every way to a player media applies the page rules (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    expect((await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'office', ip_range: '198.51.100.0/24' })).status).toBe(201);
  });
  afterAll(() => t.close());

  const get = (url: string, ip = VIEWER, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, remoteAddress: ip, headers });
  const pathOf = (url: string) => {
    const u = new URL(url);
    return u.pathname + u.search;
  };

  /** A live instance on air, with one part of two segments as the ingest publishes them. */
  async function onAir() {
    const created = await org.api.post(`${P}/organizations/${org.organizationId}/live`, {
      video_options: { video_name: 'Town hall', description: 'x', stream_tags: [] },
    });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.stream_instance_id;
    const instance = (await org.api.get(`${P}/organizations/${org.organizationId}/live/${id}`)).body.instance_details;
    await publishPart(t.container.media.store, instance.player_uuid, 'p0001', [
      { uri: 's00000.ts', duration: 1, body: 'segment zero' },
      { uri: 's00001.ts', duration: 1, body: 'segment one' },
    ]);
    await t.database.db.updateTable('live_stream_instances').set({ status: 'live' }).where('id', '=', id).execute();
    const player = await t.database.db.selectFrom('players').select('id').where('uuid', '=', instance.player_uuid).executeTakeFirstOrThrow();
    return { uuid: instance.player_uuid as string, playerId: player.id, videoId: instance.video_id as number };
  }

  /** A ready video on a new player, with an sd file in the store as the pipeline leaves it. */
  async function readyPlayer(overrides: Record<string, unknown> = {}) {
    const player = await createPlayer(org.api, overrides);
    const videoId = player.chapters_attributes[0].video_id;
    const { uuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const key = `videos/${uuid}/run/sd.mp4`;
    fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
    fs.writeFileSync(path.join(t.config.mediaDir, key), 'sd bytes');
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .insertInto('video_files')
      .values({ video_id: videoId, custom_identifier: null, quality: 'sd', path: key, created_at: now, content_type: 'video/mp4' })
      .execute();
    await t.database.db.updateTable('videos').set({ status: 'ready' }).where('id', '=', videoId).execute();
    return { player, videoId, key };
  }

  it('live HLS: no bytes without a grant, the old public address is closed, and segments inherit the grant', async () => {
    const live = await onAir();
    expect((await get(`/live/${live.uuid}/index.m3u8`)).statusCode).toBe(403);
    expect((await get(`/live/${live.uuid}/p0001/s00000.ts`)).statusCode).toBe(403);
    const base = await playbackBase(t.app, live.uuid, {});
    const playlist = await get(`${base}/live/index.m3u8`);
    expect(playlist.statusCode).toBe(200);
    expect(playlist.headers['access-control-allow-origin']).toBeUndefined();
    const segments = playlist.body.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(segments).toEqual(['p0001/s00000.ts', 'p0001/s00001.ts']);
    // Relative to the playlist's address: the grant is a path segment, so it carries over.
    const first = await get(new URL(segments[0], `http://reelbase.test${base}/live/index.m3u8`).pathname);
    expect(first.statusCode).toBe(200);
    expect(first.body).toBe('segment zero');
    expect(first.headers['content-type']).toBe('video/mp2t');
    expect(first.headers['content-length']).toBe('12');
    expect((await get(new URL('p0001/s00009.ts', `http://reelbase.test${base}/live/index.m3u8`).pathname)).statusCode).toBe(404);
    // A grant is bound to its player, and forged or expired grants are refused.
    const other = await onAir();
    expect((await get(`/play/${other.uuid}/${base.split('/')[3]}/live/index.m3u8`)).statusCode).toBe(403);
    expect((await get(`/play/${live.uuid}/w1.${'A'.repeat(32)}/live/index.m3u8`)).statusCode).toBe(403);
    expect((await get(`/play/${live.uuid}/w9999999999.${'A'.repeat(32)}/live/index.m3u8`)).statusCode).toBe(403);
  });

  it('live HLS blocking reload (_HLS_msn): held until the asked segment is published, refused past two ahead, 503 after three target durations', async () => {
    const live = await onAir();
    const base = await playbackBase(t.app, live.uuid, {});
    const plain = await get(`${base}/live/index.m3u8`);
    expect(plain.body).toContain('#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES');
    // A listed segment: answered at once.
    const listed = await get(`${base}/live/index.m3u8?_HLS_msn=1`);
    expect(listed.statusCode).toBe(200);
    // The next one: held until the ingest publishes it, then answered with it listed.
    const started = Date.now();
    const held = get(`${base}/live/index.m3u8?_HLS_msn=2`);
    let answered = false;
    void held.then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(answered).toBe(false);
    await publishPart(t.container.media.store, live.uuid, 'p0001', [
      { uri: 's00000.ts', duration: 1, body: 'segment zero' },
      { uri: 's00001.ts', duration: 1, body: 'segment one' },
      { uri: 's00002.ts', duration: 1, body: 'segment two' },
    ]);
    const reloaded = await held;
    expect(reloaded.statusCode, reloaded.body).toBe(200);
    expect(reloaded.body).toContain('p0001/s00002.ts');
    expect(Date.now() - started).toBeLessThan(1500);
    // More than two segments past the last listed: refused at once; malformed: refused.
    expect((await get(`${base}/live/index.m3u8?_HLS_msn=9`)).statusCode).toBe(400);
    expect((await get(`${base}/live/index.m3u8?_HLS_msn=-1`)).statusCode).toBe(422);
    expect((await get(`${base}/live/index.m3u8?_HLS_msn=x`)).statusCode).toBe(422);
    // Never published: the player is told to ask again after three target durations (1 s segments here).
    const instance = await t.database.db.selectFrom('live_stream_instances').select('id').where('player_uuid', '=', live.uuid).executeTakeFirstOrThrow();
    await t.database.db.updateTable('live_stream_instances').set({ segment_length: 1 }).where('id', '=', instance.id).execute();
    const waited = Date.now();
    const late = await get(`${base}/live/index.m3u8?_HLS_msn=3`);
    expect(late.statusCode, late.body).toBe(503);
    expect(Date.now() - waited).toBeGreaterThanOrEqual(2900);
    // A broadcast that ended answers at once, with its end and without the blocking directive.
    await t.database.db.updateTable('live_stream_instances').set({ status: 'ended' }).where('id', '=', instance.id).execute();
    const ended = await get(`${base}/live/index.m3u8?_HLS_msn=3`);
    expect(ended.statusCode).toBe(200);
    expect(ended.body).toContain('#EXT-X-ENDLIST');
    expect(ended.body).not.toContain('CAN-BLOCK-RELOAD');
  });

  it('live HLS behind an email gate: a grant issued short of the gate gets none of the broadcast, until the gate goes', async () => {
    const live = await onAir();
    const chapter = (await org.api.get(`${P}/players/${live.playerId}`)).body.chapters_attributes[0];
    const gate = await org.api.post(`${P}/ctas/default_email_gate`, { chapter_id: chapter.id, is_closeable: false, is_new_contact: false });
    expect(gate.status, gate.raw).toBe(201);
    const page = configOf((await get(`/watch/${live.uuid}`)).body);
    expect(page.chapters[0]).toMatchObject({ state: 'live', gated: true, hls: null, sources: [] });
    // The grant such a page holds (the page names none of the broadcast: made here as the page makes it).
    const grants = new PlaybackGrants(t.config.signingSecret!);
    const short = grants.issue({ uuid: live.uuid, access_code: null } as any, 'watch', Math.floor(Date.now() / 1000), true);
    expect(short).toMatch(/^wg\d+\./);
    expect((await get(`/play/${live.uuid}/${short}/live/index.m3u8`)).statusCode).toBe(404);
    expect((await get(`/play/${live.uuid}/${short}/live/p0001/s00000.ts`)).statusCode).toBe(404);
    // Past the gate (its POST's grant) the broadcast plays.
    const passed = await t.app.inject({
      method: 'POST',
      url: `/watch/${live.uuid}/gate`,
      remoteAddress: VIEWER,
      payload: { email: 'viewer@example.com', chapter: 0, player_load_id: 'load', visitor_uuid: 'visitor' },
    });
    expect(passed.statusCode, passed.body).toBe(200);
    expect((await get(pathOf(passed.json().chapters[0].hls))).statusCode).toBe(200);
    // A gate removed holds nothing back any more, even for a grant issued short of it.
    expect((await org.api.delete(`${P}/events/${gate.body.id}`)).status).toBe(200);
    expect((await get(`/play/${live.uuid}/${short}/live/index.m3u8`)).statusCode).toBe(200);
  });

  it('live HLS with an access code and a blocked address: the page and every byte are refused', async () => {
    const live = await onAir();
    const base = await playbackBase(t.app, live.uuid);
    expect((await org.api.patch(`${P}/players/${live.playerId}`, { player: { access_code: 'sesame' } })).status).toBe(200);
    // Setting a code ends the grants handed out before it.
    expect((await get(`${base}/live/index.m3u8`)).statusCode).toBe(403);
    expect((await get(`/watch/${live.uuid}`, BLOCKED)).statusCode).toBe(403);
    expect((await get(`/watch/${live.uuid}`)).statusCode).toBe(403);
    // A viewer who typed the code gets a new grant...
    const form = await t.app.inject({
      method: 'POST',
      url: `/watch/${live.uuid}`,
      remoteAddress: VIEWER,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'access_code=sesame',
    });
    expect(form.statusCode).toBe(303);
    const cookie = String(form.headers['set-cookie']).split(';')[0];
    const granted = await playbackBase(t.app, live.uuid, { cookie });
    expect((await get(`${granted}/live/index.m3u8`)).statusCode).toBe(200);
    // ...that does not work from a blocked address, even with the cookie.
    expect((await get(`${granted}/live/index.m3u8`, BLOCKED)).statusCode).toBe(403);
    expect((await get(`${granted}/live/p0001/s00000.ts`, BLOCKED)).statusCode).toBe(403);
  });

  it("files and captions: only the player's own, only while its release window and embedding allow", async () => {
    const { player, key } = await readyPlayer();
    const caption = await org.api.post(`${P}/videos/${player.chapters_attributes[0].video_id}/captions`, {
      caption: { language: 'en', content: 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n' },
    });
    expect(caption.status).toBe(201);
    expect((await org.api.patch(`${P}/captions/${caption.body.id}/publish`, {})).status).toBe(200);
    const page = await get(`/watch/${player.uuid}`);
    const chapter = configOf(page.body).chapters[0];
    const [source] = chapter.sources;
    expect(source.src).toMatch(new RegExp(`/play/${player.uuid}/w\\d+\\.[\\w-]{32}/files/${key}$`));
    expect((await get(pathOf(source.src))).body).toBe('sd bytes');
    expect((await get(pathOf(source.src), VIEWER, { range: 'bytes=0-1' })).statusCode).toBe(206);
    const vtt = await get(pathOf(chapter.captions[0].src));
    expect(vtt.statusCode).toBe(200);
    expect(vtt.headers['content-type']).toMatch(/^text\/vtt/);
    expect((await get(pathOf(source.src), BLOCKED)).statusCode).toBe(403);
    expect((await get(pathOf(chapter.captions[0].src), BLOCKED)).statusCode).toBe(403);

    // Another player's file through this player's grant: answered like a missing one.
    const theirs = await readyPlayer();
    const base = pathOf(source.src).split('/files/')[0];
    expect((await get(`${base}/files/${theirs.key}`)).statusCode).toBe(404);
    expect((await get(`${base}/files/../../etc/passwd`)).statusCode).toBe(404);

    // Rules that change after the page was shown apply to the grant it handed out.
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .updateTable('players')
      .set({ expiry_date: now - 10 })
      .where('id', '=', player.id)
      .execute();
    expect((await get(pathOf(source.src))).statusCode).toBe(403);
    await t.database.db
      .updateTable('players')
      .set({ expiry_date: null, release_date: now + 3600 })
      .where('id', '=', player.id)
      .execute();
    expect((await get(pathOf(source.src))).statusCode).toBe(403);
  });

  it('an embed grant stops working when embedding is turned off', async () => {
    const { player } = await readyPlayer();
    const res = await get(`/embed/${player.uuid}`);
    expect(res.statusCode).toBe(200);
    const src = configOf(res.body).chapters[0].sources[0].src;
    expect((await get(pathOf(src))).statusCode).toBe(200);
    expect((await org.api.delete(`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(200);
    expect((await get(pathOf(src))).statusCode).toBe(403);
  });

  it("the API's signed file and caption URLs are refused from a blocked address too", async () => {
    const { player } = await readyPlayer();
    const videoId = player.chapters_attributes[0].video_id;
    const files = await org.api.get(`${P}/videos/${videoId}/files`);
    expect(files.status).toBe(200);
    const signed = pathOf(files.body.urls.sd);
    expect((await get(signed)).statusCode).toBe(200);
    expect((await get(signed, BLOCKED)).statusCode).toBe(403);
    const caption = await org.api.post(`${P}/videos/${videoId}/captions`, {
      caption: { language: 'fr', content: 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nSalut\n' },
    });
    const vtt = pathOf(caption.body.vtt_url);
    expect((await get(vtt)).statusCode).toBe(200);
    expect((await get(vtt, BLOCKED)).statusCode).toBe(403);
  });

  it('the stable poster address checks the rules at every fetch: blocked networks, release window, access codes', async () => {
    const { player, videoId } = await readyPlayer();
    const { uuid: videoUuid } = await t.database.db.selectFrom('videos').select('uuid').where('id', '=', videoId).executeTakeFirstOrThrow();
    const key = `videos/${videoUuid}/thumbnails/poster.jpg`;
    fs.mkdirSync(path.join(t.config.mediaDir, path.dirname(key)), { recursive: true });
    fs.writeFileSync(path.join(t.config.mediaDir, key), 'poster bytes');
    const now = Math.floor(Date.now() / 1000);
    await t.database.db
      .insertInto('thumbnails')
      .values({
        organization_id: org.organizationId,
        video_id: videoId,
        uuid: `${videoUuid.slice(0, 30)}-p`,
        kind: 'generated',
        path: key,
        url: null,
        millisecond: 1000,
        width: 640,
        height: 360,
        selected: true,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const poster = (ip = VIEWER) => get(`/posters/${player.uuid}`, ip);
    expect((await poster()).statusCode).toBe(200);
    expect((await poster()).body).toBe('poster bytes');
    expect((await poster(BLOCKED)).statusCode).toBe(403);
    await t.database.db
      .updateTable('players')
      .set({ release_date: now + 3600 })
      .where('id', '=', player.id)
      .execute();
    expect((await poster()).statusCode).toBe(403);
    await t.database.db
      .updateTable('players')
      .set({ release_date: now - 10, access_code: 'sesame' })
      .where('id', '=', player.id)
      .execute();
    expect((await poster()).statusCode).toBe(404);
    expect((await get('/posters/00000000-0000-0000-0000-000000000000')).statusCode).toBe(404);
  });

  it('oEmbed applies the page rules: nothing for a blocked address, no title or poster behind an access code', async () => {
    const { player } = await readyPlayer({ name: 'Board meeting' });
    const oembed = (ip: string) => get(`${P}/oembed?url=${encodeURIComponent(`http://reelbase.test/watch/${player.uuid}`)}`, ip);
    expect((await oembed(VIEWER)).statusCode).toBe(200);
    expect((await oembed(BLOCKED)).statusCode).toBe(403);
    expect((await org.api.patch(`${P}/players/${player.id}`, { player: { access_code: 'sesame' } })).status).toBe(200);
    const coded = JSON.parse((await oembed(VIEWER)).body);
    expect(coded.title).toBe('Protected video');
    expect(JSON.stringify(coded)).not.toContain('Board meeting');
    expect(coded.thumbnail_url).toBeUndefined();
  });
});
