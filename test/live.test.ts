import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const live = (orgId: number) => `${P}/organizations/${orgId}/live`;

const body = (video: Record<string, unknown> = {}, stream: Record<string, unknown> | undefined = undefined) => ({
  ...(stream ? { stream_options: stream } : {}),
  video_options: { video_name: 'Launch event', description: 'Our launch', stream_tags: ['launch'], ...video },
});

const INSTANCE_KEYS = [
  'air_date',
  'backup_key',
  'backup_url',
  'created_at',
  'description',
  'dvr_enabled',
  'email',
  'end_time',
  'has_redundant_streams',
  'ingest_url',
  'name',
  'player_uuid',
  'segment_length',
  'start_time',
  'status',
  'stream_instance_id',
  'stream_key',
  'tags',
  'updated_at',
  'video_id',
  'vod_created_at',
].sort();
const LIST_ITEM_KEYS = [
  'air_date',
  'created_at',
  'id',
  'name',
  'player_id',
  'player_uuid',
  'recurring',
  'start_time',
  'status',
  'updated_at',
  'vod_created_at',
].sort();

describe.each(dialects)('live streams API on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect, { RTMP_PORT: '19350', INGEST_HOST: 'ingest.example.com' });
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(() => t.close());

  async function create(api = org.api, orgId = org.organizationId, video: Record<string, unknown> = {}, stream?: Record<string, unknown>) {
    const res = await api.post(live(orgId), body(video, stream));
    expect(res.status, res.raw).toBe(201);
    return res.body.stream_instance_id as number;
  }

  it('creates a stream instance (201 {stream_instance_id}) with its own player and video', async () => {
    const res = await org.api.post(
      live(org.organizationId),
      body({ air_date: '2030-05-01T10:00:00Z', segment_length: 10, dvr_enabled: true, stream_tags: ['launch', ['speaker', 'Jane Doe']] }, { recurring: true }),
    );
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['stream_instance_id']);
    const id = res.body.stream_instance_id;
    expect(Number.isInteger(id)).toBe(true);

    const got = await org.api.get(`${live(org.organizationId)}/${id}`);
    expect(got.status).toBe(200);
    expect(Object.keys(got.body).sort()).toEqual(['instance_details', 'stream_details']);
    const s = got.body.stream_details;
    expect(Object.keys(s).sort()).toEqual(['created_at', 'recurring', 'stream_id', 'updated_at']);
    expect(s.recurring).toBe(true);
    const d = got.body.instance_details;
    expect(Object.keys(d).sort()).toEqual(INSTANCE_KEYS);
    expect(d.stream_instance_id).toBe(id);
    expect(d.name).toBe('Launch event');
    expect(d.description).toBe('Our launch');
    expect(d.tags).toEqual([['launch'], ['speaker', 'Jane Doe']]);
    expect(d.status).toBe('unaired');
    expect(d.segment_length).toBe(10);
    expect(d.dvr_enabled).toBe(true);
    expect(d.air_date).toBe(Date.parse('2030-05-01T10:00:00Z') / 1000);
    expect([d.start_time, d.end_time, d.vod_created_at]).toEqual([0, 0, 0]);
    expect(d.ingest_url).toBe('rtmp://ingest.example.com:19350/live');
    expect(d.stream_key).toMatch(/^live_[\w-]{32}$/);
    expect(d.has_redundant_streams).toBe(false);
    expect(d.backup_url).toBeNull();
    expect(d.backup_key).toBeNull();
    expect(d.email).toBeNull();

    const video = await org.api.get(`${P}/videos/${d.video_id}`);
    expect(video.status).toBe(200);
    expect(video.body.name).toBe('Launch event');
    expect(video.body.status).toBeNull();
    const player = await org.api.get(`${P}/players/uuid=${d.player_uuid}`);
    expect(player.status).toBe(200);
    expect(player.body.chapters_attributes.map((c: any) => c.video_id)).toEqual([d.video_id]);
  });

  it('defaults: not recurring, segment_length 4, no DVR; the .json suffix works', async () => {
    const res = await org.api.post(`${live(org.organizationId)}.json`, body());
    expect(res.status).toBe(201);
    const d = (await org.api.get(`${live(org.organizationId)}/${res.body.stream_instance_id}.json`)).body;
    expect(d.stream_details.recurring).toBe(false);
    expect(d.instance_details.segment_length).toBe(4);
    expect(d.instance_details.dvr_enabled).toBe(false);
    expect(d.instance_details.air_date).toBe(0);
  });

  it('answers 422 naming the field for wrong create bodies', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'video_options'],
      [{ video_options: { description: 'x', stream_tags: [] } }, 'video_options.video_name'],
      [{ video_options: { video_name: 'x', stream_tags: [] } }, 'video_options.description'],
      [{ video_options: { video_name: 'x', description: 'x' } }, 'video_options.stream_tags'],
      [body({ video_name: '' }), 'video_options.video_name'],
      [body({ video_name: '   ' }), 'video_options.video_name'],
      [body({ segment_length: 5 }), 'video_options.segment_length'],
      [body({ segment_length: '4' }), 'video_options.segment_length'],
      [body({ air_date: 'tomorrow' }), 'video_options.air_date'],
      [body({ air_date: '2030-05-01T10:00:00' }), 'video_options.air_date'],
      [body({ air_date: '2030-06-30T23:59:60Z' }), 'video_options.air_date'],
      [body({ stream_tags: 'launch' }), 'video_options.stream_tags'],
      [body({ stream_tags: [1] }), 'video_options.stream_tags.0'],
      [body({ stream_tags: ['ok', ' '] }), 'video_options.stream_tags.1'],
      [body({ dvr_enabled: 'yes' }), 'video_options.dvr_enabled'],
      [body({ disable_notifications: 1 }), 'video_options.disable_notifications'],
      [body({ colour: 'red' }), 'video_options.colour'],
      [body({}, { recurring: 'true' }), 'stream_options.recurring'],
      [body({ has_redundant_streams: true }), 'video_options.has_redundant_streams'],
    ];
    for (const [payload, field] of cases) {
      const res = await org.api.post(live(org.organizationId), payload);
      expect(res.status, `${JSON.stringify(payload)} → ${res.raw}`).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(
        res.body.details.map((d: any) => d.field),
        JSON.stringify(payload),
      ).toContain(field);
    }
  });

  it('redundant streams only where the organization has the feature: backup URL and key', async () => {
    const res = await org.api.post(live(org.organizationId), body({ has_redundant_streams: true }));
    expect(res.status).toBe(422);
    expect(res.body.error).toMatch(/redundant_streams/);
    await t.database.db
      .updateTable('organizations')
      .set({ features: JSON.stringify({ redundant_streams: true }) })
      .where('id', '=', org.organizationId)
      .execute();
    try {
      const id = await create(org.api, org.organizationId, { has_redundant_streams: true });
      const d = (await org.api.get(`${live(org.organizationId)}/${id}`)).body.instance_details;
      expect(d.has_redundant_streams).toBe(true);
      expect(d.backup_url).toBe('rtmp://ingest.example.com:19350/backup');
      expect(d.backup_key).toMatch(/^live_/);
      expect(d.backup_key).not.toBe(d.stream_key);
    } finally {
      await t.database.db.updateTable('organizations').set({ features: '{}' }).where('id', '=', org.organizationId).execute();
    }
  });

  it('keys are shown only to roles that may manage live streams; writes need live:manage', async () => {
    const id = await create();
    const viewer = await org.as('viewer');
    const seen = await viewer.get(`${live(org.organizationId)}/${id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.instance_details.stream_key).toBeNull();
    expect(seen.body.instance_details.backup_key).toBeNull();
    expect((await viewer.get(live(org.organizationId))).status).toBe(200);
    expect((await viewer.get(`${live(org.organizationId)}/${id}/health`)).status).toBe(200);
    expect((await viewer.post(live(org.organizationId), body())).status).toBe(403);
    expect((await viewer.patch(`${live(org.organizationId)}/${id}`, { name: 'x' })).status).toBe(403);
    expect((await viewer.delete(`${live(org.organizationId)}/${id}`)).status).toBe(403);
    const editor = await org.as('editor');
    expect((await editor.get(`${live(org.organizationId)}/${id}`)).body.instance_details.stream_key).toMatch(/^live_/);
    expect((await editor.post(live(org.organizationId), body())).status).toBe(201);
    expect((await client(t.app).get(live(org.organizationId))).status).toBe(401);
  });

  it("a user's token records its email on the instance", async () => {
    const now = Math.floor(Date.now() / 1000);
    const user = await t.database.db
      .insertInto('users')
      .values({ organization_id: org.organizationId, email: `maker-${dialect}@example.com`, role: 'editor', created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const token = await t.services.tokens.issue(org.organizationId, 'editor', 'maker', user.id);
    const id = await create(client(t.app, token));
    expect((await org.api.get(`${live(org.organizationId)}/${id}`)).body.instance_details.email).toBe(`maker-${dialect}@example.com`);
  });

  it('only the organization in the path, with its own token, sees its streams (else 404; a parent is no exception)', async () => {
    const id = await create();
    for (const path of [live(org.organizationId), `${live(org.organizationId)}/${id}`, `${live(org.organizationId)}/${id}/health`]) {
      const res = await other.api.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    // The instance through another organization's path: missing there.
    expect((await other.api.get(`${live(other.organizationId)}/${id}`)).status).toBe(404);
    expect((await other.api.patch(`${live(other.organizationId)}/${id}`, { name: 'x' })).status).toBe(404);
    expect((await other.api.delete(`${live(other.organizationId)}/${id}`)).status).toBe(404);
    expect((await other.api.post(live(org.organizationId), body())).status).toBe(404);
    expect((await org.api.get(`${live(999999)}`)).status).toBe(404);
    expect((await org.api.get(`${live(org.organizationId)}/abc`)).status).toBe(404);
    expect((await org.api.get(`${live(org.organizationId)}/99999999`)).status).toBe(404);

    const child = await createOrg(t, `Child ${dialect}`, org.organizationId);
    const childId = await create(child.api, child.organizationId);
    // Content stays with its organization: the parent's token does not reach the child's streams (docs/accounts.md).
    expect((await org.api.get(`${live(child.organizationId)}/${childId}`)).status).toBe(404);
    expect((await org.api.get(live(child.organizationId))).status).toBe(404);
    expect((await org.api.post(live(child.organizationId), body())).status).toBe(404);
    expect((await child.api.get(`${live(child.organizationId)}/${childId}`)).status).toBe(200);
    expect((await child.api.get(live(org.organizationId))).status).toBe(404);
    expect((await child.api.get(`${live(org.organizationId)}/${id}`)).status).toBe(404);
  });

  describe('list', () => {
    let lister: OrgContext;
    const ids: number[] = [];
    beforeAll(async () => {
      lister = await createOrg(t);
      const airDates = ['2030-01-03T00:00:00Z', '2030-01-01T00:00:00Z', null, '2030-01-02T00:00:00Z', '2030-01-05T00:00:00Z'];
      for (const [i, air] of airDates.entries()) {
        ids.push(
          await create(lister.api, lister.organizationId, {
            video_name: `Show ${i}`,
            air_date: air,
            stream_tags: i === 3 ? ['Keynote', ['room', 'Blue Hall']] : ['misc'],
          }),
        );
      }
      // Different states, set directly (the ingest moves them in real use).
      await t.database.db.updateTable('live_stream_instances').set({ status: 'live', start_time: 2_000_000_000 }).where('id', '=', ids[1]).execute();
      await t.database.db.updateTable('live_stream_instances').set({ status: 'processing', start_time: 1_900_000_000 }).where('id', '=', ids[2]).execute();
      await t.database.db
        .updateTable('live_stream_instances')
        .set({ status: 'ready', start_time: 1_950_000_000, vod_created_at: 1_960_000_000 })
        .where('id', '=', ids[3])
        .execute();
    });
    const list = (qs = '') => lister.api.get(`${live(lister.organizationId)}${qs}`);
    const idsOf = (res: any) => res.body.stream_instances.map((i: any) => i.id);

    it('always answers the {summary, stream_instances} envelope with the list item shape, id ascending', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['stream_instances', 'summary']);
      expect(res.body.summary).toEqual({ page: 1, per_page: 5, count: 5 });
      expect(idsOf(res)).toEqual(ids);
      const item = res.body.stream_instances[1];
      expect(Object.keys(item).sort()).toEqual(LIST_ITEM_KEYS);
      expect(item.status).toBe('live');
      expect(item.recurring).toBe(false);
      expect(item.start_time).toBe(2_000_000_000);
      expect(res.body.stream_instances[2].air_date).toBe(0);
      expect(res.body.stream_instances[3].vod_created_at).toBe(1_960_000_000);
      expect(res.body.stream_instances[0].vod_created_at).toBe(0);
    });

    it('filters by states (upcoming = unaired, ongoing = live, finished = processing or ready), in every array form', async () => {
      expect(idsOf(await list('?states[]=upcoming'))).toEqual([ids[0], ids[4]]);
      expect(idsOf(await list('?states[]=ongoing'))).toEqual([ids[1]]);
      expect(idsOf(await list('?states=finished'))).toEqual([ids[2], ids[3]]);
      expect(idsOf(await list('?states=upcoming,ongoing'))).toEqual([ids[0], ids[1], ids[4]]);
      expect(idsOf(await list('?states[]=ongoing&states[]=finished'))).toEqual([ids[1], ids[2], ids[3]]);
      expect(idsOf(await list('?states='))).toEqual(ids);
      expect((await list('?states[]=ongoing')).body.summary.count).toBe(1);
    });

    it('query searches instance names and tags, case-insensitively', async () => {
      expect(idsOf(await list('?query=show%202'))).toEqual([ids[2]]);
      expect(idsOf(await list('?query=keynote'))).toEqual([ids[3]]);
      expect(idsOf(await list('?query=blue%20HALL'))).toEqual([ids[3]]);
      expect(idsOf(await list('?query=nothing-like-this'))).toEqual([]);
      expect(idsOf(await list('?query=50%25'))).toEqual([]);
    });

    it('pages: per_page/page with the total count; per_page above 200 is a 422', async () => {
      const res = await list('?per_page=2&page=2');
      expect(idsOf(res)).toEqual([ids[2], ids[3]]);
      expect(res.body.summary).toEqual({ page: 2, per_page: 2, count: 5 });
      expect(idsOf(await list('?per_page=2&page=9'))).toEqual([]);
      expect((await list('?per_page=201')).status).toBe(422);
      expect((await list('?per_page=0')).status).toBe(422);
      expect((await list('?page=0')).status).toBe(422);
    });

    it('orders only with paging, and applies direction only with order_by', async () => {
      // Without per_page or page, order_by is ignored.
      expect(idsOf(await list('?order_by=air_date&direction=desc'))).toEqual(ids);
      // With paging: air_date ascending (unset as 0), then descending.
      expect(idsOf(await list('?per_page=10&order_by=air_date'))).toEqual([ids[2], ids[1], ids[3], ids[0], ids[4]]);
      expect(idsOf(await list('?per_page=10&order_by=air_date&direction=desc'))).toEqual([ids[4], ids[0], ids[3], ids[1], ids[2]]);
      // Ties (unset start_time: 0) follow the direction too: id descending.
      expect(idsOf(await list('?page=1&order_by=start_time&direction=desc'))).toEqual([ids[1], ids[3], ids[2], ids[4], ids[0]]);
      // direction without order_by changes nothing.
      expect(idsOf(await list('?per_page=10&direction=desc'))).toEqual(ids);
      expect(idsOf(await list('?per_page=2&page=1&order_by=created_at&direction=desc')).length).toBe(2);
      expect((await list('?per_page=10&order_by=updated_at')).status).toBe(200);
    });

    it('every page of every order is the slice of the whole list, the later pages read from the end too', async () => {
      const orders = ['', '&order_by=air_date', '&order_by=air_date&direction=desc', '&order_by=start_time&direction=desc', '&order_by=created_at'];
      for (const order of orders) {
        const whole = idsOf(await list(`?per_page=10${order}`));
        expect(whole).toHaveLength(5);
        for (const perPage of [1, 2, 3]) {
          for (let page = 1; page <= Math.ceil(5 / perPage); page++) {
            expect(idsOf(await list(`?per_page=${perPage}&page=${page}${order}`)), `${order} per_page=${perPage} page=${page}`).toEqual(
              whole.slice((page - 1) * perPage, page * perPage),
            );
          }
        }
        const filtered = idsOf(await list(`?per_page=10&states[]=finished&states[]=upcoming${order}`));
        const lastTwo = idsOf(await list(`?per_page=2&page=${Math.ceil(filtered.length / 2)}&states[]=finished&states[]=upcoming${order}`));
        expect(lastTwo).toEqual(filtered.slice((Math.ceil(filtered.length / 2) - 1) * 2));
      }
    });

    it('breaks ties of order_by in the direction asked: equal created_at seconds, newer first for desc', async () => {
      await t.database.db.updateTable('live_stream_instances').set({ created_at: 1_900_000_000 }).where('id', 'in', ids).execute();
      expect(idsOf(await list('?per_page=10&order_by=created_at&direction=desc'))).toEqual([...ids].reverse());
      expect(idsOf(await list('?per_page=10&order_by=created_at&direction=asc'))).toEqual(ids);
    });

    it('answers 422 on unknown values of states, order_by and direction', async () => {
      for (const [qs, field] of [
        ['?states[]=live', 'states.0'],
        ['?states=upcoming,bogus', 'states.1'],
        ['?order_by=name', 'order_by'],
        ['?order_by=air_date&direction=up', 'direction'],
      ]) {
        const res = await list(qs);
        expect(res.status, qs).toBe(422);
        expect(
          res.body.details.map((d: any) => d.field),
          qs,
        ).toContain(field);
      }
    });

    it('answers CSV when asked', async () => {
      const res = await list('?per_page=2').then(() => lister.api.get(live(lister.organizationId), { accept: 'text/csv' }));
      expect(res.status).toBe(200);
      expect(String(res.headers['content-type'])).toMatch(/^text\/csv/);
      expect(res.raw.split('\n')[0]).toContain('player_uuid');
    });
  });

  it('PATCH updates name, description, dvr_enabled, air_date and tags → {success: true}', async () => {
    const id = await create();
    const path = `${live(org.organizationId)}/${id}`;
    const res = await org.api.patch(path, {
      name: 'Renamed',
      description: 'New text',
      dvr_enabled: true,
      air_date: '2031-02-03T04:05:06+01:00',
      stream_tags: [['track', 'A'], 'new'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const d = (await org.api.get(path)).body.instance_details;
    expect(d.name).toBe('Renamed');
    expect(d.description).toBe('New text');
    expect(d.dvr_enabled).toBe(true);
    expect(d.air_date).toBe(Date.parse('2031-02-03T04:05:06+01:00') / 1000);
    expect(d.tags).toEqual([['track', 'A'], ['new']]);
    expect((await org.api.get(`${P}/videos/${d.video_id}`)).body.name).toBe('Renamed');
    expect((await org.api.patch(path, { air_date: null })).status).toBe(200);
    expect((await org.api.get(path)).body.instance_details.air_date).toBe(0);
    expect((await org.api.patch(path, {})).body).toEqual({ success: true });
    for (const [payload, field] of [
      [{ name: '' }, 'name'],
      [{ name: '  ' }, 'name'],
      [{ air_date: 'soon' }, 'air_date'],
      [{ dvr_enabled: 'no' }, 'dvr_enabled'],
      [{ stream_tags: [''] }, 'stream_tags.0'],
    ] as const) {
      const bad = await org.api.patch(path, payload);
      expect(bad.status, JSON.stringify(payload)).toBe(422);
      expect(bad.body.details.map((x: any) => x.field)).toContain(field);
    }
    expect((await org.api.patch(`${live(org.organizationId)}/99999999`, { name: 'x' })).status).toBe(404);
  });

  it('DELETE → {success: true}; the instance is gone, and so are its (unused) player and video', async () => {
    const id = await create();
    const path = `${live(org.organizationId)}/${id}`;
    const d = (await org.api.get(path)).body.instance_details;
    const res = await org.api.delete(path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await org.api.get(path)).status).toBe(404);
    expect((await org.api.delete(path)).status).toBe(404);
    expect((await org.api.get(`${P}/videos/${d.video_id}`)).status).toBe(404);
    expect((await org.api.get(`${P}/players/uuid=${d.player_uuid}`)).status).toBe(404);
  });

  it('health is {primary: null, backup: null} while nothing arrives', async () => {
    const id = await create();
    const res = await org.api.get(`${live(org.organizationId)}/${id}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ primary: null, backup: null });
  });

  it('live output is only for viewers of the page: the old public address answers 403, and nothing airs before the broadcast', async () => {
    const id = await create();
    const uuid = (await org.api.get(`${live(org.organizationId)}/${id}`)).body.instance_details.player_uuid;
    expect((await client(t.app).get(`/live/${uuid}/index.m3u8`)).status).toBe(403);
    expect((await client(t.app).get(`/live/${uuid}/p0001/s00000.ts`)).status).toBe(403);
    // Before it airs, the page has nothing to play and hands out no live address.
    const page = await t.app.inject({ method: 'GET', url: `/watch/${uuid}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/live/index.m3u8');
    expect((await client(t.app).get('/play/00000000-0000-0000-0000-000000000000/w1.aaaa/live/index.m3u8')).status).toBe(404);
    expect((await client(t.app).get(`/play/${uuid}/w1.aaaa/live/..%2F..%2Fetc/passwd`)).status).toBe(404);
  });
});
