import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';

function expectVideoShape(v: any) {
  expect(Object.keys(v).sort()).toEqual(
    [
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
    ].sort(),
  );
  expect(typeof v.id).toBe('number');
  expect(typeof v.name).toBe('string');
  expect(typeof v.sync).toBe('boolean');
  expect(typeof v.audio_gain).toBe('number');
  expect(Number.isInteger(v.created_at)).toBe(true);
  expect(Number.isInteger(v.updated_at)).toBe(true);
}

describe.each(dialects)('players, chapters and videos on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(() => t.close());

  it('query: a case-insensitive prefix of the name, wildcards literal, as a range that ends where the prefix does', async () => {
    const o = await createOrg(t);
    const names = ['Zebra talk', 'zed', 'Zf', 'Z_ma', 'Z%', 'Za~', 'Za\u007f', 'Apple', 'z'];
    for (const name of names) await createPlayer(o.api, { name }, 1);
    const players = async (query: string) => (await o.api.get(`${P}/players?query=${encodeURIComponent(query)}`)).body.map((p: any) => p.name).sort();
    expect(await players('ZE')).toEqual(['Zebra talk', 'zed']);
    expect(await players('z_')).toEqual(['Z_ma']); // `_` is no wildcard
    expect(await players('Z%')).toEqual(['Z%']);
    expect(await players('za')).toEqual(['Za~', 'Za\u007f']); // the range's end is past '~' and DEL
    expect(await players('z')).toHaveLength(8);
    expect(await players('zebra talk and more')).toEqual([]);
    // Videos follow the same rule (each player above made one, named by the factory).
    const videos = (await o.api.get(`${P}/videos`)).body as Array<{ name: string }>;
    const prefix = videos[0].name.slice(0, 3).toUpperCase();
    const found = (await o.api.get(`${P}/videos?query=${encodeURIComponent(prefix)}`)).body.map((v: any) => v.name).sort();
    expect(found).toEqual(
      videos
        .filter((v) => v.name.toLowerCase().startsWith(prefix.toLowerCase()))
        .map((v) => v.name)
        .sort(),
    );
  });

  it('GET /v1/videos?status= lists the videos in that status (an addition for the dashboard), counted exactly; a status it does not know is a 422', async () => {
    const o = await createOrg(t);
    const waiting = [];
    for (const name of ['Upload one', 'Upload two', 'Upload three']) waiting.push((await o.api.post(`${P}/uploads`, { name })).body.video_id as number);
    await t.database.db.updateTable('videos').set({ status: 'ready' }).where('id', '=', waiting[1]).execute();
    const ready = await o.api.get(`${P}/videos?status=ready&per_page=10`);
    expect(ready.status).toBe(200);
    expect([ready.body.videos.map((v: any) => v.id), ready.body.summary.count]).toEqual([[waiting[1]], 1]);
    const left = await o.api.get(`${P}/videos?status=waiting_for_upload&query=upload`);
    expect(left.body.map((v: any) => v.id)).toEqual([waiting[0], waiting[2]]);
    // Paged, the count is the filtered one: the second of two, newest order aside.
    const second = await o.api.get(`${P}/videos?status=waiting_for_upload&query=upload&per_page=1&page=2`);
    expect([second.body.videos.map((v: any) => v.id), second.body.summary.count]).toEqual([[waiting[2]], 2]);
    // A video queued for processing (status null) is listed as processing, with those being processed.
    await t.database.db.updateTable('videos').set({ status: null }).where('id', '=', waiting[2]).execute();
    const processing = await o.api.get(`${P}/videos?status=processing&per_page=10`);
    expect([processing.body.videos.map((v: any) => v.id), processing.body.summary.count]).toEqual([[waiting[2]], 1]);
    const bad = await o.api.get(`${P}/videos?status=finished`);
    expect(bad.status).toBe(422);
    // Another organization's videos are never in it.
    const stranger = await createOrg(t);
    expect((await stranger.api.get(`${P}/videos?status=waiting_for_upload`)).body).toEqual([]);
  });

  it('creates a player with nested chapters and videos (spec example, .json path) with the exact shape', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await client(t.app).post(`${P}/players.json`, {
      auth_token: org.token,
      player: {
        name: 'My Player',
        chapters_attributes: [
          { position: 0, video_attributes: { name: 'Intro', upload_url: 'https://media.example.com/intro.mp4' } },
          { position: 1, video_attributes: { name: 'Main', upload_url: 'https://media.example.com/main.mp4' } },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const p = res.body;
    expect(typeof p.id).toBe('number');
    expect(p.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.name).toBe('My Player');
    expect(p.status).toBeNull();
    expect(p.access_code).toBeNull();
    for (const k of [
      'autoplay',
      'sharing_page_comments',
      'sharing_page',
      'default_hd',
      'splash_screen_fade',
      'mute_onload',
      'playlist_always_open',
      'redirect_whole_page',
      'play_button',
      'viral_sharing',
      'embed_button',
    ]) {
      expect(typeof p[k], k).toBe('boolean');
    }
    expect(Number.isInteger(p.height)).toBe(true);
    expect(Number.isInteger(p.width)).toBe(true);
    expect(Number.isInteger(p.release_date)).toBe(true);
    expect(p.expiry_date).toBeNull();
    expect(p.redirect_url).toBeNull();
    expect(p.color).toMatch(/^[0-9a-f]{6}$/);
    expect(p.whitelisted_embed_domains).toEqual([]);
    expect(p.created_at).toBeGreaterThanOrEqual(before);
    expect(Number.isInteger(p.updated_at)).toBe(true);
    expect(p.chapters_attributes).toHaveLength(2);
    const [c0, c1] = p.chapters_attributes;
    expect(c0.position).toBe(0);
    expect(c1.position).toBe(1);
    expect(c0.player_id).toBe(p.id);
    expect(c0.video_id).toBe(c0.video_attributes.id);
    expect(c0.video_attributes.name).toBe('Intro');
    expect(c0.video_attributes.upload_url).toBe('https://media.example.com/intro.mp4');
    expect(c0.video_attributes.status).toBeNull();
    expect(c0.video_attributes.error_message).toBeNull();
    expectVideoShape(c0.video_attributes);
    expect(Object.keys(c0).sort()).toEqual(['created_at', 'id', 'player_id', 'position', 'updated_at', 'video_attributes', 'video_id']);
  });

  it('accepts the flat body, settings, and normalises colour and domains', async () => {
    const res = await org.api.post(`${P}/players`, { name: 'Flat', autoplay: true, color: '#FF00AA', whitelisted_embed_domains: 'a.com, b.com', width: 800 });
    expect(res.status).toBe(201);
    expect(res.body.autoplay).toBe(true);
    expect(res.body.color).toBe('ff00aa');
    expect(res.body.whitelisted_embed_domains).toEqual(['a.com', 'b.com']);
    expect(res.body.width).toBe(800);
    expect(res.body.chapters_attributes).toEqual([]);
  });

  it('keeps chapter positions dense whatever positions are sent', async () => {
    const res = await org.api.post(`${P}/players`, {
      player: {
        name: 'Sparse',
        chapters_attributes: [
          { position: 7, video_attributes: { name: 'B', upload_url: 'https://x.test/b.mp4' } },
          { position: 2, video_attributes: { name: 'A', upload_url: 'https://x.test/a.mp4' } },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.chapters_attributes.map((c: any) => [c.position, c.video_attributes.name])).toEqual([
      [0, 'A'],
      [1, 'B'],
    ]);
  });

  it('validates player bodies with 422 naming the field, creating nothing', async () => {
    const before = (await org.api.get(`${P}/players`)).body.length;
    const cases: Array<[unknown, string]> = [
      [{ player: {} }, 'name'],
      [{ player: { name: '' } }, 'name'],
      [{ player: { name: 'x', autoplay: 'yes' } }, 'autoplay'],
      [{ player: { name: 'x', color: 'zzzzzz' } }, 'color'],
      [{ player: { name: 'x', chapters_attributes: [{ position: 0, video_attributes: { name: 'v' } }] } }, 'chapters_attributes.0.video_attributes.upload_url'],
      [
        { player: { name: 'x', chapters_attributes: [{ position: 0, video_attributes: { name: 'v', upload_url: 'ftp://x/y' } }] } },
        'chapters_attributes.0.video_attributes.upload_url',
      ],
      [
        { player: { name: 'x', chapters_attributes: [{ position: -1, video_attributes: { name: 'v', upload_url: 'https://x/y' } }] } },
        'chapters_attributes.0.position',
      ],
      [{ player: { name: 'x', chapters_attributes: [{ position: 0 }] } }, 'chapters_attributes.0.video_attributes'],
    ];
    for (const [body, field] of cases) {
      const res = await org.api.post(`${P}/players`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details.map((d: any) => d.field)).toContain(field);
    }
    expect((await org.api.get(`${P}/players`)).body.length).toBe(before);
  });

  it('reads a player by id and by uuid, and hides other organizations', async () => {
    const p = await createPlayer(org.api, {}, 2);
    expect((await org.api.get(`${P}/players/${p.id}`)).body).toEqual(p);
    expect((await org.api.get(`${P}/players/uuid=${p.uuid}`)).body).toEqual(p);
    expect((await org.api.get(`${P}/players/uuid=${p.uuid}.json`)).body.id).toBe(p.id);
    const foreign = await other.api.get(`${P}/players/${p.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('not_found');
    expect((await other.api.get(`${P}/players/uuid=${p.uuid}`)).status).toBe(404);
    expect((await org.api.get(`${P}/players/999999`)).status).toBe(404);
    expect((await org.api.get(`${P}/players/abc`)).status).toBe(404);
  });

  it('lists players as a bare array, and as an envelope with a total count when paged', async () => {
    const o = await createOrg(t);
    for (let i = 0; i < 5; i++) await createPlayer(o.api, { name: `P${i}` }, 0);
    const all = await o.api.get(`${P}/players`);
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((p: any) => p.name)).toEqual(['P0', 'P1', 'P2', 'P3', 'P4']);
    const page2 = await o.api.get(`${P}/players?per_page=2&page=2`);
    expect(page2.body.players.map((p: any) => p.name)).toEqual(['P2', 'P3']);
    expect(page2.body.summary).toEqual({ page: 2, per_page: 2, count: 5 });
    expect((await o.api.get(`${P}/players?per_page=201`)).status).toBe(422);
    expect((await o.api.get(`${P}/players?per_page=200`)).status).toBe(200);
    expect((await o.api.get(`${P}/players?per_page=0`)).status).toBe(422);
    expect((await o.api.get(`${P}/players?per_page=2&page=0`)).status).toBe(422);
  });

  it('updates a player and its nested chapters, and deletes it', async () => {
    const p = await createPlayer(org.api, {}, 2);
    const [c0, c1] = p.chapters_attributes;
    const res = await org.api.patch(`${P}/players/${p.id}`, {
      player: {
        name: 'Renamed',
        mute_onload: true,
        chapters_attributes: [
          { id: c0.id, _destroy: true },
          { position: 0, video_attributes: { name: 'New first', upload_url: 'https://x.test/n.mp4' } },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Renamed');
    expect(res.body.mute_onload).toBe(true);
    expect(res.body.chapters_attributes.map((c: any) => [c.position, c.id === c1.id])).toEqual([
      [0, false],
      [1, true],
    ]);
    expect((await org.api.patch(`${P}/players/${p.id}`, { chapters_attributes: [{ id: 999999 }] })).status).toBe(422);
    expect((await other.api.patch(`${P}/players/${p.id}`, { name: 'hijack' })).status).toBe(404);
    const del = await org.api.delete(`${P}/players/${p.id}`);
    expect(del.status).toBe(200);
    expect(del.body.name).toBe('Renamed');
    expect((await org.api.get(`${P}/players/${p.id}`)).status).toBe(404);
    // The videos stay in the library.
    expect((await org.api.get(`${P}/videos/${c1.video_id}`)).status).toBe(200);
  });

  it('enforces roles: viewers read, editors write', async () => {
    const viewer = await org.as('viewer');
    const editor = await org.as('editor');
    const denied = await viewer.post(`${P}/players`, { name: 'nope' });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
    expect((await viewer.get(`${P}/players`)).status).toBe(200);
    expect((await editor.post(`${P}/players`, { name: 'yes' })).status).toBe(201);
  });

  it('refuses a player past an enforced embeds allotment, creating nothing', async () => {
    const o = await createOrg(t);
    const set = await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { embeds: { limit: 1, grace_limit: 1, enforced: true } } });
    expect(set.status).toBe(200);
    expect((await o.api.post(`${P}/players`, { name: 'one' })).status).toBe(201);
    expect((await o.api.post(`${P}/players`, { name: 'two' })).status).toBe(201);
    const third = await o.api.post(`${P}/players`, { name: 'three' });
    expect(third.status).toBe(403);
    expect(third.body.code).toBe('allotment_exceeded');
    expect((await o.api.get(`${P}/players`)).body.map((p: any) => p.name)).toEqual(['one', 'two']);
  });

  it('manages chapters: create at a position, move, read, delete, keeping positions dense', async () => {
    const p = await createPlayer(org.api, {}, 2);
    const created = await org.api.post(`${P}/chapters`, {
      player_id: p.id,
      position: 0,
      video_attributes: { name: 'Front', upload_url: 'https://x.test/f.mp4' },
    });
    expect(created.status).toBe(201);
    expect(created.body.position).toBe(0);
    expect(created.body.video_attributes.name).toBe('Front');
    const positions = async () => (await org.api.get(`${P}/players/${p.id}`)).body.chapters_attributes.map((c: any) => c.id);
    expect(await positions()).toEqual([created.body.id, p.chapters_attributes[0].id, p.chapters_attributes[1].id]);
    const moved = await org.api.put(`${P}/chapters/${created.body.id}`, { position: 5 });
    expect(moved.status).toBe(200);
    expect(moved.body.position).toBe(2);
    expect(await positions()).toEqual([p.chapters_attributes[0].id, p.chapters_attributes[1].id, created.body.id]);
    const got = await org.api.get(`${P}/chapters/${created.body.id}`);
    expect(Object.keys(got.body).sort()).toEqual(['created_at', 'id', 'player_id', 'position', 'updated_at', 'video_attributes', 'video_id']);
    const del = await org.api.delete(`${P}/chapters/${p.chapters_attributes[0].id}`);
    expect(del.status).toBe(200);
    const after = (await org.api.get(`${P}/players/${p.id}`)).body.chapters_attributes;
    expect(after.map((c: any) => c.position)).toEqual([0, 1]);
    expect((await org.api.post(`${P}/chapters`, { player_id: p.id })).status).toBe(422);
    expect((await org.api.post(`${P}/chapters`, { player_id: 999999, video_id: 1 })).status).toBe(404);
    expect((await other.api.get(`${P}/chapters/${created.body.id}`)).status).toBe(404);
    expect((await other.api.post(`${P}/chapters`, { player_id: p.id, video_id: created.body.video_id })).status).toBe(404);
  });

  it('manages videos: create with a facade player, read, list, update, files, delete', async () => {
    const res = await org.api.post(`${P}/videos`, { video: { name: 'Solo', upload_url: 'https://x.test/solo.mp4', description: 'd' } });
    expect(res.status).toBe(201);
    expectVideoShape(res.body);
    expect(res.body.status).toBeNull();
    expect(res.body.error_message).toBeNull();
    expect(res.body.description).toBe('d');
    const id = res.body.id;
    const facade = (await org.api.get(`${P}/players`)).body.find((p: any) => p.chapters_attributes.some((c: any) => c.video_id === id));
    expect(facade.player_type).toBe('video_facade');
    expect((await org.api.get(`${P}/videos/${id}`)).body).toEqual(res.body);
    const list = await org.api.get(`${P}/videos?per_page=1`);
    expect(list.body.summary.per_page).toBe(1);
    expect(list.body.summary.count).toBeGreaterThanOrEqual(1);
    const upd = await org.api.patch(`${P}/videos/${id}`, { name: 'Solo 2', audio_gain: 3 });
    expect(upd.body.name).toBe('Solo 2');
    expect(upd.body.audio_gain).toBe(3);
    expect((await org.api.patch(`${P}/videos/${id}`, { audio_gain: 'loud' })).status).toBe(422);
    const files = await org.api.get(`${P}/videos/${id}/files`);
    expect(files.body).toEqual({ id, urls: { sd: null, hd: null, hls: null } });
    expect((await org.api.get(`${P}/videos/${id}/files?custom_identifier=alt`)).body).toEqual({ id, urls: { sd: null, hd: null, hls: null } });
    expect((await other.api.get(`${P}/videos/${id}/files`)).status).toBe(404);
    expect((await org.api.delete(`${P}/videos/${id}`)).status).toBe(200);
    expect((await org.api.get(`${P}/videos/${id}`)).status).toBe(404);
    expect((await org.api.get(`${P}/players/${facade.id}`)).body.chapters_attributes).toEqual([]);
  });
});
