import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, unique, type OrgContext } from './helpers/factories.ts';

const TAG_KEYS = ['created_at', 'id', 'name', 'player_ids', 'video_ids'];
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const MAX_INT = 2147483647;

const names = (tags: Array<{ name: string }>) => tags.map((t) => t.name);
const del = (api: Client, url: string, body?: unknown) => api.request('DELETE', url, body);

describe.each(dialects)('tags on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  /** A player of `org`, its video, and a player of `other`. */
  let player: any;
  let videoId: number;
  let otherPlayer: any;
  let otherVideoId: number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    player = await createPlayer(org.api);
    videoId = player.chapters_attributes[0].video_id;
    otherPlayer = await createPlayer(other.api);
    otherVideoId = otherPlayer.chapters_attributes[0].video_id;
  });
  afterAll(() => t.close());

  describe('POST /v1/tags', () => {
    it('creates a tag (201) with exactly the Tag fields, trimming the name', async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await org.api.post('/dashboard/v1/tags', { name: '  Launch 2024  ' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(TAG_KEYS);
      expect(res.body.id).toBeGreaterThan(0);
      expect(res.body.name).toBe('Launch 2024');
      expect(res.body.video_ids).toEqual([]);
      expect(res.body.player_ids).toEqual([]);
      expect(res.body.created_at).toBeGreaterThanOrEqual(before - 1);
      expect(res.body.created_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 1);
      expect(res.headers['content-type']).toContain('application/json');
    });

    it('accepts the wrapped form and tags videos and players given by id', async () => {
      const p2 = await createPlayer(org.api, {}, 2);
      const v2 = p2.chapters_attributes.map((c: { video_id: number }) => c.video_id);
      const res = await org.api.post('/dashboard/v1/tags.json', {
        tag: { name: unique('wrapped'), video_ids: [v2[1], videoId, v2[1]], player_ids: [p2.id, player.id] },
      });
      expect(res.status).toBe(201);
      expect(res.body.video_ids).toEqual([videoId, v2[1]].sort((a, b) => a - b));
      expect(res.body.player_ids).toEqual([player.id, p2.id].sort((a, b) => a - b));
      const read = await org.api.get(`/dashboard/v1/tags/${res.body.id}`);
      expect(read.body).toEqual(res.body);
      const onVideo = await org.api.get(`/dashboard/v1/videos/${v2[1]}/tags`);
      expect(names(onVideo.body)).toContain(res.body.name);
    });

    it('refuses a name the organization already uses (422), but another organization may use it', async () => {
      const name = unique('dup');
      expect((await org.api.post('/dashboard/v1/tags', { name })).status).toBe(201);
      const again = await org.api.post('/dashboard/v1/tags', { name: ` ${name} ` });
      expect(again.status).toBe(422);
      expect(again.body.code).toBe('validation_failed');
      expect(again.body.details).toEqual([{ field: 'name', message: 'has already been taken' }]);
      expect((await other.api.post('/dashboard/v1/tags', { name })).status).toBe(201);
      // Names are case-sensitive.
      expect((await org.api.post('/dashboard/v1/tags', { name: name.toUpperCase() })).status).toBe(201);
    });

    it('validates name on both sides of its bounds', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ name: 12 }, 'name'],
        [{ name: null }, 'name'],
        [{ name: 'tab\there' }, 'name'],
        [{ name: 'nul\u0000' }, 'name'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.post('/dashboard/v1/tags', body);
        expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
        expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
      }
      const max = 'm'.repeat(254) + String(Math.random()).slice(-1);
      const ok = await org.api.post('/dashboard/v1/tags', { name: max });
      expect(ok.status).toBe(201);
      expect(ok.body.name).toHaveLength(255);
      expect((await org.api.post('/dashboard/v1/tags', { name: 'é' })).status).toBe(201);
    });

    it('validates video_ids and player_ids: unknown or foreign ids are 422 and nothing is created', async () => {
      const name = unique('refs');
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ video_ids: [otherVideoId] }, 'video_ids'],
        [{ player_ids: [otherPlayer.id] }, 'player_ids'],
        [{ video_ids: [MAX_INT] }, 'video_ids'],
        [{ video_ids: [0] }, 'video_ids.0'],
        [{ player_ids: [MAX_INT + 1] }, 'player_ids.0'],
        [{ player_ids: ['1'] }, 'player_ids.0'],
        [{ video_ids: 'x' }, 'video_ids'],
        [{ video_ids: Array.from({ length: 1001 }, (_, i) => i + 1) }, 'video_ids'],
      ];
      for (const [extra, field] of cases) {
        const res = await org.api.post('/dashboard/v1/tags', { name, ...extra });
        expect(res.status, JSON.stringify(extra).slice(0, 60)).toBe(422);
        expect(res.body.details[0].field).toBe(field);
      }
      expect(names(await (await org.api.get('/dashboard/v1/tags')).body)).not.toContain(name);
      // 1000 ids is allowed (unknown ones are then refused by existence, not by size).
      const many = await org.api.post('/dashboard/v1/tags', { name, video_ids: Array.from({ length: 1000 }, () => videoId) });
      expect(many.status).toBe(201);
      expect(many.body.video_ids).toEqual([videoId]);
      // The other organization's video did not get the tag.
      const foreign = await other.api.get(`/dashboard/v1/videos/${otherVideoId}/tags`);
      expect(foreign.body).toEqual([]);
    });

    it('answers 400 to malformed JSON, 415 to another media type, 401 without token, 403 to viewers', async () => {
      expect((await org.api.post('/dashboard/v1/tags', '{"name":')).status).toBe(400);
      const xml = await org.api.request('POST', '/dashboard/v1/tags', '<tag name="x"/>', { 'content-type': 'application/xml' });
      expect(xml.status).toBe(415);
      expect((await client(t.app).post('/dashboard/v1/tags', { name: 'anon' })).status).toBe(401);
      const viewer = await org.as('viewer');
      const res = await viewer.post('/dashboard/v1/tags', { name: unique('viewer') });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
      const editor = await org.as('editor');
      expect((await editor.post('/dashboard/v1/tags', { name: unique('editor') })).status).toBe(201);
    });
  });

  describe('GET /v1/tags/:id', () => {
    it("answers the organization's tag, and 404 for a missing, malformed or another organization's one", async () => {
      const mine = (await org.api.post('/dashboard/v1/tags', { name: unique('get') })).body;
      const theirs = (await other.api.post('/dashboard/v1/tags', { name: unique('theirs') })).body;
      const res = await (await org.as('viewer')).get(`/dashboard/v1/tags/${mine.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(mine);
      for (const id of [theirs.id, 999999, MAX_INT, MAX_INT + 1, 0, 'abc', '1.5']) {
        const miss = await org.api.get(`/dashboard/v1/tags/${id}`);
        expect(miss.status, String(id)).toBe(404);
        expect(miss.body.code).toBe('not_found');
      }
      expect((await client(t.app).get(`/dashboard/v1/tags/${mine.id}`)).status).toBe(401);
    });
  });

  describe('GET /v1/tags and /v1/tags/names', () => {
    let listOrg: OrgContext;
    let created: any[];

    beforeAll(async () => {
      listOrg = await createOrg(t);
      created = [];
      for (const name of ['banana', 'Apple', 'cherry', 'apple pie', 'Zucchini']) {
        created.push((await listOrg.api.post('/dashboard/v1/tags', { name })).body);
      }
      await other.api.post('/dashboard/v1/tags', { name: 'aardvark' });
    });

    it('answers a bare array ordered by id without per_page', async () => {
      const res = await listOrg.api.get('/dashboard/v1/tags');
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body).toEqual(created);
    });

    it('answers {tags, summary} with per_page; count is the total', async () => {
      const p1 = await listOrg.api.get('/dashboard/v1/tags?per_page=2');
      expect(p1.status).toBe(200);
      expect(Object.keys(p1.body).sort()).toEqual(['summary', 'tags']);
      expect(p1.body.tags).toEqual(created.slice(0, 2));
      expect(p1.body.summary).toEqual({ page: 1, per_page: 2, count: 5 });
      const p3 = await listOrg.api.get('/dashboard/v1/tags?per_page=2&page=3');
      expect(p3.body.tags).toEqual(created.slice(4));
      expect(p3.body.summary).toEqual({ page: 3, per_page: 2, count: 5 });
      const beyond = await listOrg.api.get('/dashboard/v1/tags?per_page=2&page=4');
      expect(beyond.body.tags).toEqual([]);
      expect((await listOrg.api.get('/dashboard/v1/tags?per_page=200')).body.tags).toHaveLength(5);
      expect((await listOrg.api.get('/dashboard/v1/tags?per_page=1')).body.tags).toHaveLength(1);
      for (const qs of ['per_page=0', 'per_page=201', 'per_page=2&page=0', 'per_page=x']) {
        const res = await listOrg.api.get(`/dashboard/v1/tags?${qs}`);
        expect(res.status, qs).toBe(422);
        expect(res.body.code).toBe('validation_failed');
      }
    });

    it('filters by query (case-insensitive substring), wildcard characters taken literally', async () => {
      const res = await listOrg.api.get('/dashboard/v1/tags?query=APPLE');
      expect(names(res.body)).toEqual(['Apple', 'apple pie']);
      const paged = await listOrg.api.get('/dashboard/v1/tags?query=an&per_page=1');
      expect(paged.body.summary.count).toBe(1);
      expect((await listOrg.api.get('/dashboard/v1/tags?query=%25')).body).toEqual([]);
      expect((await listOrg.api.get('/dashboard/v1/tags?query=_')).body).toEqual([]);
      expect((await listOrg.api.get(`/dashboard/v1/tags?query=${'q'.repeat(256)}`)).status).toBe(422);
      expect((await listOrg.api.get('/dashboard/v1/tags?query=%00')).status).toBe(422);
    });

    it('answers CSV and XLSX, one row per tag', async () => {
      const csv = await listOrg.api.get('/dashboard/v1/tags', { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect(csv.headers['content-type']).toContain('text/csv');
      const lines = csv.raw.trim().split('\n');
      expect(lines[0]).toBe('id,name,video_ids,player_ids,created_at');
      expect(lines).toHaveLength(6);
      const xlsx = await listOrg.api.get('/dashboard/v1/tags?per_page=2', { accept: XLSX });
      expect(xlsx.status).toBe(200);
      expect(xlsx.headers['content-type']).toContain(XLSX);
      expect((await listOrg.api.get('/dashboard/v1/tags', { accept: 'text/html' })).status).toBe(406);
    });

    it("lists only the organization's tags; viewers may read; 401 without token", async () => {
      const viewer = await listOrg.as('viewer');
      expect(names((await viewer.get('/dashboard/v1/tags')).body)).not.toContain('aardvark');
      expect((await client(t.app).get('/dashboard/v1/tags')).status).toBe(401);
    });

    it('GET /v1/tags/names answers the distinct names, sorted case-insensitively, with a prefix filter', async () => {
      const res = await listOrg.api.get('/dashboard/v1/tags/names');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(['Apple', 'apple pie', 'banana', 'cherry', 'Zucchini']);
      expect((await listOrg.api.get('/dashboard/v1/tags/names?query=ap')).body).toEqual(['Apple', 'apple pie']);
      expect((await listOrg.api.get('/dashboard/v1/tags/names?query=pie')).body).toEqual([]);
      expect((await listOrg.api.get('/dashboard/v1/tags/names.json')).body).toHaveLength(5);
      expect((await (await createOrg(t)).api.get('/dashboard/v1/tags/names')).body).toEqual([]);
      expect((await client(t.app).get('/dashboard/v1/tags/names')).status).toBe(401);
    });
  });

  describe('DELETE /v1/tags', () => {
    it('deletes by name in the query and answers the deleted tags as they were', async () => {
      const p = await createPlayer(org.api);
      const tag = (await org.api.post('/dashboard/v1/tags', { name: unique('del'), player_ids: [p.id] })).body;
      const res = await del(org.api, `/dashboard/v1/tags?name=${encodeURIComponent(tag.name)}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([tag]);
      expect((await org.api.get(`/dashboard/v1/tags/${tag.id}`)).status).toBe(404);
      expect((await org.api.get(`/dashboard/v1/players/${p.id}/tags`)).body).toEqual([]);
    });

    it('deletes by id, ids (body, query arrays in all forms) and names, merged and ordered by id', async () => {
      const mk = async () => (await org.api.post('/dashboard/v1/tags', { name: unique('multi') })).body;
      const [a, b, c, d, e] = [await mk(), await mk(), await mk(), await mk(), await mk()];
      const body = await del(org.api, '/dashboard/v1/tags', { ids: [b.id, a.id, 999999], names: [c.name, 'no such tag'] });
      expect(body.status).toBe(200);
      expect(body.body).toEqual([a, b, c]);
      const query = await del(org.api, `/dashboard/v1/tags?ids=${d.id},${e.id}`);
      expect(query.body).toEqual([d, e]);
      const [f, g] = [await mk(), await mk()];
      expect((await del(org.api, `/dashboard/v1/tags?ids[]=${f.id}&ids[]=${g.id}`)).body).toEqual([f, g]);
      const h = await mk();
      expect((await del(org.api, '/dashboard/v1/tags', { tag: { id: h.id } })).body).toEqual([h]);
    });

    it("keeps the list's count exact through creations and deletions (the organization's row count), and search in step", async () => {
      const own = await createOrg(t);
      const count = async () => (await own.api.get('/dashboard/v1/tags?per_page=1')).body.summary.count;
      const names = ['Summer Webinar', 'webinar recap', 'Launch'];
      const made = [];
      for (const name of names) made.push((await own.api.post('/dashboard/v1/tags', { name })).body);
      expect(await count()).toBe(3);
      expect((await own.api.get('/dashboard/v1/tags?query=WEBINAR')).body.map((x: { name: string }) => x.name)).toEqual(['Summer Webinar', 'webinar recap']);
      await del(own.api, `/dashboard/v1/tags?ids=${made[0].id},${made[2].id}`);
      expect(await count()).toBe(1);
      expect((await own.api.get('/dashboard/v1/tags?query=webinar')).body.map((x: { name: string }) => x.name)).toEqual(['webinar recap']);
      expect((await (await createOrg(t)).api.get('/dashboard/v1/tags?per_page=1')).body.summary.count).toBe(0);
    });

    it('answers 404 when nothing matches and 422 when nothing is named', async () => {
      const none = await del(org.api, '/dashboard/v1/tags?name=never-existed');
      expect(none.status).toBe(404);
      expect(none.body.code).toBe('not_found');
      const empty = await del(org.api, '/dashboard/v1/tags');
      expect(empty.status).toBe(422);
      expect(empty.body.details[0].field).toBe('name');
      expect((await del(org.api, '/dashboard/v1/tags', {})).status).toBe(422);
      expect((await del(org.api, '/dashboard/v1/tags?name=%20%20')).status).toBe(422);
      for (const qs of ['id=0', 'id=abc', `id=${MAX_INT + 1}`, `name=${'n'.repeat(256)}`]) {
        expect((await del(org.api, `/dashboard/v1/tags?${qs}`)).status, qs).toBe(422);
      }
      expect((await del(org.api, '/dashboard/v1/tags', { ids: 'x' })).status).toBe(422);
      expect((await del(org.api, '/dashboard/v1/tags', '[1]')).status).toBe(422);
    });

    it("cannot delete another organization's tag (404, still there), nor as a viewer (403)", async () => {
      const theirs = (await other.api.post('/dashboard/v1/tags', { name: unique('keep') })).body;
      expect((await del(org.api, `/dashboard/v1/tags?id=${theirs.id}`)).status).toBe(404);
      expect((await del(org.api, `/dashboard/v1/tags?name=${encodeURIComponent(theirs.name)}`)).status).toBe(404);
      expect((await other.api.get(`/dashboard/v1/tags/${theirs.id}`)).body).toEqual(theirs);
      const mine = (await org.api.post('/dashboard/v1/tags', { name: unique('mine') })).body;
      const viewer = await org.as('viewer');
      expect((await del(viewer, `/dashboard/v1/tags?id=${mine.id}`)).status).toBe(403);
      expect((await del(client(t.app), `/dashboard/v1/tags?id=${mine.id}`)).status).toBe(401);
      expect((await org.api.get(`/dashboard/v1/tags/${mine.id}`)).status).toBe(200);
    });
  });

  describe('GET/PATCH /v1/players/:player_id/tags', () => {
    it('replaces the tags by names, reusing existing tags and creating missing ones', async () => {
      const p = await createPlayer(org.api);
      const empty = await org.api.get(`/dashboard/v1/players/${p.id}/tags`);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual([]);
      expect(empty.headers.deprecation).toBeUndefined();

      const existing = (await org.api.post('/dashboard/v1/tags', { name: unique('existing') })).body;
      const fresh = unique('fresh');
      const res = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: [fresh, ` ${existing.name} `, fresh] });
      expect(res.status).toBe(200);
      expect(res.headers.deprecation).toBeUndefined();
      expect(res.body).toHaveLength(2);
      for (const tag of res.body) expect(Object.keys(tag).sort()).toEqual(TAG_KEYS);
      expect(res.body[0]).toEqual({ ...existing, player_ids: [p.id] });
      expect(res.body[1]).toMatchObject({ name: fresh, player_ids: [p.id], video_ids: [] });
      expect(res.body[1].id).toBeGreaterThan(existing.id);
      expect((await org.api.get(`/dashboard/v1/players/${p.id}/tags`)).body).toEqual(res.body);
      expect((await org.api.get(`/dashboard/v1/tags/${existing.id}`)).body.player_ids).toEqual([p.id]);

      // Replacing drops the tags not named; the tags themselves stay.
      const replaced = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { player: { tags: [fresh] } });
      expect(names(replaced.body)).toEqual([fresh]);
      expect((await org.api.get(`/dashboard/v1/tags/${existing.id}`)).body.player_ids).toEqual([]);

      const csv = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: `${existing.name}, ${fresh},,` });
      expect(names(csv.body)).toEqual([existing.name, fresh]);

      const cleared = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: [] });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toEqual([]);
      expect((await org.api.get(`/dashboard/v1/players/${p.id}/tags.json`)).body).toEqual([]);
    });

    it('validates the body on both sides of each bound', async () => {
      const p = await createPlayer(org.api);
      await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: ['kept'] });
      const cases: Array<[unknown, string]> = [
        [{}, 'tags'],
        [{ tags: 5 }, 'tags'],
        [{ tags: ['ok', ''] }, 'tags.1'],
        [{ tags: ['ok', '   '] }, 'tags.1'],
        [{ tags: ['x'.repeat(256)] }, 'tags.0'],
        [{ tags: [1] }, 'tags.0'],
        [{ tags: Array.from({ length: 201 }, (_, i) => `t${i}`) }, 'tags'],
        [{ tags: 'ok,' + 'y'.repeat(256) }, 'tags'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, body);
        expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(422);
        expect(res.body.details[0].field).toBe(field);
      }
      expect(names((await org.api.get(`/dashboard/v1/players/${p.id}/tags`)).body)).toEqual(['kept']);
      const max = Array.from({ length: 200 }, (_, i) => `bulk ${i}`);
      const ok = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: max });
      expect(ok.status).toBe(200);
      expect(ok.body).toHaveLength(200);
      expect((await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: ['y'.repeat(255)] })).status).toBe(200);
      expect((await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, '{"tags": [')).status).toBe(400);
    });

    it("answers 404 for a missing or another organization's player and leaves it unchanged", async () => {
      await other.api.patch(`/dashboard/v1/players/${otherPlayer.id}/tags`, { tags: ['theirs'] });
      const get = await org.api.get(`/dashboard/v1/players/${otherPlayer.id}/tags`);
      expect(get.status).toBe(404);
      expect(get.body.code).toBe('not_found');
      const patch = await org.api.patch(`/dashboard/v1/players/${otherPlayer.id}/tags`, { tags: ['intruder'] });
      expect(patch.status).toBe(404);
      expect(names((await other.api.get(`/dashboard/v1/players/${otherPlayer.id}/tags`)).body)).toEqual(['theirs']);
      expect((await org.api.get('/dashboard/v1/tags/names')).body).not.toContain('intruder');
      for (const id of [999999, MAX_INT, MAX_INT + 1, 'abc', 0]) {
        expect((await org.api.get(`/dashboard/v1/players/${id}/tags`)).status, String(id)).toBe(404);
        expect((await org.api.patch(`/dashboard/v1/players/${id}/tags`, { tags: [] })).status, String(id)).toBe(404);
      }
    });

    it('lets viewers read but not write (403); anonymous callers get 401', async () => {
      const viewer = await org.as('viewer');
      expect((await viewer.get(`/dashboard/v1/players/${player.id}/tags`)).status).toBe(200);
      const res = await viewer.patch(`/dashboard/v1/players/${player.id}/tags`, { tags: ['nope'] });
      expect(res.status).toBe(403);
      expect((await client(t.app).get(`/dashboard/v1/players/${player.id}/tags`)).status).toBe(401);
      expect((await org.api.get(`/dashboard/v1/players/${player.id}/tags`, { accept: 'text/csv' })).status).toBe(200);
    });

    it('drops a deleted player from its tags', async () => {
      const p = await createPlayer(org.api);
      const [tag] = (await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: [unique('gone')] })).body;
      expect(tag.player_ids).toEqual([p.id]);
      expect((await del(org.api, `/dashboard/v1/players/${p.id}`)).status).toBe(200);
      expect((await org.api.get(`/dashboard/v1/tags/${tag.id}`)).body.player_ids).toEqual([]);
    });
  });

  describe('deprecated GET/PATCH /v1/videos/:video_id/tags', () => {
    it('works like the player operations and answers with a Deprecation header', async () => {
      const p = await createPlayer(org.api);
      const v = p.chapters_attributes[0].video_id;
      const get = await org.api.get(`/dashboard/v1/videos/${v}/tags`);
      expect(get.status).toBe(200);
      expect(get.body).toEqual([]);
      expect(get.headers.deprecation).toBe('true');
      const name = unique('video tag');
      const patch = await org.api.patch(`/dashboard/v1/videos/${v}/tags`, { video: { tags: [name] } });
      expect(patch.status).toBe(200);
      expect(patch.headers.deprecation).toBe('true');
      expect(patch.body).toHaveLength(1);
      expect(patch.body[0]).toMatchObject({ name, video_ids: [v], player_ids: [] });
      expect((await org.api.get(`/dashboard/v1/videos/${v}/tags`)).body).toEqual(patch.body);
      // Video and player tags are separate.
      expect((await org.api.get(`/dashboard/v1/players/${p.id}/tags`)).body).toEqual([]);
      const bad = await org.api.patch(`/dashboard/v1/videos/${v}/tags`, { tags: [''] });
      expect(bad.status).toBe(422);
      expect(bad.headers.deprecation).toBe('true');
      expect((await (await org.as('viewer')).patch(`/dashboard/v1/videos/${v}/tags`, { tags: [] })).status).toBe(403);
    });

    it("answers 404 for another organization's video and leaves it unchanged", async () => {
      await other.api.patch(`/dashboard/v1/videos/${otherVideoId}/tags`, { tags: ['their video'] });
      const get = await org.api.get(`/dashboard/v1/videos/${otherVideoId}/tags`);
      expect(get.status).toBe(404);
      expect(get.headers.deprecation).toBe('true');
      expect((await org.api.patch(`/dashboard/v1/videos/${otherVideoId}/tags`, { tags: ['x'] })).status).toBe(404);
      expect(names((await other.api.get(`/dashboard/v1/videos/${otherVideoId}/tags`)).body)).toEqual(['their video']);
      expect((await org.api.get('/dashboard/v1/videos/999999/tags')).status).toBe(404);
    });
  });

  describe('concurrency and odd input', () => {
    it('creates a name once under concurrent requests: one 201, the rest 422, never a 5xx', async () => {
      const name = unique('race');
      const results = await Promise.all(Array.from({ length: 6 }, () => org.api.post('/dashboard/v1/tags', { name })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 422, 422, 422, 422, 422]);
    });

    it('replaces tags under concurrent PATCHes with overlapping new names without a 5xx', async () => {
      const p = await createPlayer(org.api);
      const a = unique('ca');
      const b = unique('cb');
      const c = unique('cc');
      const bodies = [
        [a, b, c],
        [c, b, a],
        [b, a],
        [c, a, b],
      ];
      const results = await Promise.all(bodies.map((tags) => org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags })));
      for (const r of results) expect(r.status).toBe(200);
      const final = names((await org.api.get(`/dashboard/v1/players/${p.id}/tags`)).body).sort();
      expect(bodies.map((x) => [...x].sort().join('|'))).toContain(final.join('|'));
      const all = names((await org.api.get('/dashboard/v1/tags')).body);
      for (const n of [a, b, c]) expect(all.filter((x) => x === n)).toHaveLength(1);
    });

    it('stores a lone UTF-16 surrogate as U+FFFD on every database', async () => {
      const p = await createPlayer(org.api);
      const res = await org.api.post('/dashboard/v1/tags', { name: 'odd \ud800 name' });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('odd \ufffd name');
      const set = await org.api.patch(`/dashboard/v1/players/${p.id}/tags`, { tags: ['odd \ud800 name', 'odd \ufffd name'] });
      expect(set.body.map((tag: { id: number }) => tag.id)).toEqual([res.body.id]);
    });
  });

  it('documents the operations in the OpenAPI document under the tags tag', async () => {
    const doc = (await client(t.app).get('/dashboard/openapi.json')).body;
    expect(doc.paths['/dashboard/v1/tags'].post.tags).toEqual(['tags']);
    expect(doc.paths['/dashboard/v1/tags/names'].get.tags).toEqual(['tags']);
    expect(doc.paths['/dashboard/v1/players/{player_id}/tags'].patch.tags).toEqual(['tags']);
    expect(doc.paths['/dashboard/v1/videos/{video_id}/tags'].get.deprecated).toBe(true);
  });
});
