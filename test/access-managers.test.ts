import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, unique, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const FIELDS = [
  'created_at',
  'custom_approval_message',
  'custom_denial_message',
  'custom_sender_display_name',
  'enabled',
  'id',
  'max_access_code_uses',
  'moderator_id',
  'player_id',
  'player_uuid',
  'updated_at',
  'whitelisted_domains',
  'whitelisted_domains_enabled',
];

describe.each(dialects)('access managers on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let admin: Client;

  /** A user of the organization, straight in the table (users are another area's API). */
  async function addUser(organizationId: number) {
    const now = Math.floor(Date.now() / 1000);
    const row = await t.database.db
      .insertInto('users')
      .values({ organization_id: organizationId, email: `${unique('u').replace(/\W/g, '')}@example.com`, role: 'editor', created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async function managerOf(c: Client, playerId: number) {
    const res = await c.get(`${P}/access_managers?player_id=${playerId}`);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(1);
    return res.body[0];
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    admin = await org.as('admin');
  });
  afterAll(() => t.close());

  it('lists one access manager per player, made lazily with defaults, in the reference shape', async () => {
    const o = await createOrg(t);
    expect((await o.api.get(`${P}/access_managers`)).body).toEqual([]);
    const p1 = await createPlayer(o.api);
    const p2 = await createPlayer(o.api);
    const before = Math.floor(Date.now() / 1000);
    const res = await o.api.get(`${P}/access_managers`);
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((m: any) => m.player_id)).toEqual([p1.id, p2.id]);
    const m = res.body[0];
    expect(Object.keys(m).sort()).toEqual(FIELDS);
    expect(m).toMatchObject({
      player_id: p1.id,
      player_uuid: p1.uuid,
      moderator_id: null,
      enabled: false,
      custom_sender_display_name: null,
      custom_approval_message: null,
      custom_denial_message: null,
      whitelisted_domains_enabled: false,
      whitelisted_domains: [],
      max_access_code_uses: null,
    });
    expect(m.created_at).toBeGreaterThanOrEqual(before);
    expect(Number.isInteger(m.updated_at)).toBe(true);
    // Idempotent: the same rows, the same ids, whatever the number of reads (also concurrent ones).
    const again = await Promise.all([o.api.get(`${P}/access_managers`), o.api.get(`${P}/access_managers`), o.api.get(`${P}/access_managers`)]);
    for (const a of again) expect(a.body).toEqual(res.body);
    const rows = await t.database.db.selectFrom('access_managers').select('id').where('organization_id', '=', o.organizationId).execute();
    expect(rows).toHaveLength(2);
    // A new player gets one on the next read; a deleted player's goes with it.
    const p3 = await createPlayer(o.api);
    expect((await o.api.get(`${P}/access_managers`)).body.map((x: any) => x.player_id)).toEqual([p1.id, p2.id, p3.id]);
    expect((await o.api.delete(`${P}/players/${p2.id}`)).status).toBe(200);
    expect((await o.api.get(`${P}/access_managers`)).body.map((x: any) => x.player_id)).toEqual([p1.id, p3.id]);
  });

  it('pages with per_page (envelope, total count), filters by player_id, answers CSV', async () => {
    const o = await createOrg(t);
    const players = [];
    for (let i = 0; i < 5; i++) players.push(await createPlayer(o.api, {}, 0));
    const paged = await o.api.get(`${P}/access_managers?per_page=2&page=3`);
    expect(paged.status).toBe(200);
    expect(paged.body.access_managers.map((m: any) => m.player_id)).toEqual([players[4].id]);
    expect(paged.body.summary).toEqual({ page: 3, per_page: 2, count: 5 });
    const one = await o.api.get(`${P}/access_managers?player_id=${players[1].id}&per_page=10`);
    expect(one.body.summary.count).toBe(1);
    expect(one.body.access_managers[0].player_uuid).toBe(players[1].uuid);
    for (const q of ['per_page=0', 'per_page=201', 'per_page=1&page=0', 'player_id=abc', 'player_id=0']) {
      expect((await o.api.get(`${P}/access_managers?${q}`)).status, q).toBe(422);
    }
    const csv = await o.api.get(`${P}/access_managers`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.raw.split('\n')[0]).toContain('player_uuid');
    expect(csv.raw.trim().split('\n')).toHaveLength(6);
  });

  it('is readable by every role, and needs a token', async () => {
    await createPlayer(org.api);
    for (const role of ['viewer', 'editor', 'admin', 'owner'] as const) {
      expect((await (await org.as(role)).get(`${P}/access_managers`)).status, role).toBe(200);
    }
    expect((await client(t.app).get(`${P}/access_managers`)).status).toBe(401);
  });

  it('changes every field (flat, wrapped, PUT) and answers the manager', async () => {
    const player = await createPlayer(org.api);
    const m = await managerOf(admin, player.id);
    const moderator = await addUser(org.organizationId);
    const res = await admin.patch(`${P}/access_managers/${m.id}`, {
      enabled: true,
      moderator_id: moderator,
      custom_sender_display_name: '  Video Team ',
      custom_approval_message: 'Welcome!\nEnjoy the video.',
      custom_denial_message: 'Sorry.',
      whitelisted_domains_enabled: true,
      whitelisted_domains: ['Example.COM', 'sub.example.org.', 'example.com', 'xn--bcher-kva.example'],
      max_access_code_uses: 3,
    });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(FIELDS);
    expect(res.body).toMatchObject({
      id: m.id,
      player_id: player.id,
      player_uuid: player.uuid,
      enabled: true,
      moderator_id: moderator,
      custom_sender_display_name: 'Video Team',
      custom_approval_message: 'Welcome!\nEnjoy the video.',
      custom_denial_message: 'Sorry.',
      whitelisted_domains_enabled: true,
      whitelisted_domains: ['example.com', 'sub.example.org', 'xn--bcher-kva.example'],
      max_access_code_uses: 3,
    });
    expect(res.body.updated_at).toBeGreaterThanOrEqual(m.updated_at);
    expect(res.body.created_at).toBe(m.created_at);
    // Persisted, and visible in the list.
    expect(await managerOf(admin, player.id)).toEqual(res.body);
    expect((await admin.get(`${P}/access_managers/${m.id}`)).body).toEqual(res.body);

    // Wrapped body, a comma-separated domain list, and clearing with null / empty text.
    const wrapped = await admin.patch(`${P}/access_managers/${m.id}.json`, {
      access_manager: {
        whitelisted_domains: 'a.example, b.example',
        moderator_id: null,
        max_access_code_uses: null,
        custom_denial_message: '',
        custom_sender_display_name: null,
      },
    });
    expect(wrapped.status).toBe(200);
    expect(wrapped.body).toMatchObject({
      whitelisted_domains: ['a.example', 'b.example'],
      moderator_id: null,
      max_access_code_uses: null,
      custom_denial_message: null,
      custom_sender_display_name: null,
      enabled: true,
    });
    const put = await admin.put(`${P}/access_managers/${m.id}`, { enabled: false, whitelisted_domains: [] });
    expect(put.status).toBe(200);
    expect(put.body.enabled).toBe(false);
    expect(put.body.whitelisted_domains).toEqual([]);
    // An empty body changes nothing.
    const same = await admin.patch(`${P}/access_managers/${m.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(put.body);
  });

  it('validates with 422 naming the field, both sides of the bounds, changing nothing', async () => {
    const player = await createPlayer(org.api);
    const m = await managerOf(admin, player.id);
    const foreignUser = await addUser(other.organizationId);
    const cases: Array<[unknown, string]> = [
      [{ enabled: 'yes' }, 'enabled'],
      [{ whitelisted_domains_enabled: 1 }, 'whitelisted_domains_enabled'],
      [{ max_access_code_uses: 0 }, 'max_access_code_uses'],
      [{ max_access_code_uses: -1 }, 'max_access_code_uses'],
      [{ max_access_code_uses: 1.5 }, 'max_access_code_uses'],
      [{ max_access_code_uses: '3' }, 'max_access_code_uses'],
      [{ max_access_code_uses: 2147483648 }, 'max_access_code_uses'],
      [{ custom_approval_message: 'a'.repeat(1001) }, 'custom_approval_message'],
      [{ custom_denial_message: 'a'.repeat(1001) }, 'custom_denial_message'],
      [{ custom_denial_message: 'bell\u0007' }, 'custom_denial_message'],
      [{ custom_sender_display_name: 'a'.repeat(256) }, 'custom_sender_display_name'],
      [{ custom_sender_display_name: 'Evil\r\nBcc: x@example.com' }, 'custom_sender_display_name'],
      [{ whitelisted_domains: ['not a domain'] }, 'whitelisted_domains.0'],
      [{ whitelisted_domains: ['ok.example', 'http://x.example'] }, 'whitelisted_domains.1'],
      [{ whitelisted_domains: ['localhost'] }, 'whitelisted_domains.0'],
      [{ whitelisted_domains: ['192.168.0.1'] }, 'whitelisted_domains.0'],
      [{ whitelisted_domains: ['-bad.example'] }, 'whitelisted_domains.0'],
      [{ whitelisted_domains: [`${'a'.repeat(64)}.example`] }, 'whitelisted_domains.0'],
      [{ whitelisted_domains: [''] }, 'whitelisted_domains.0'],
      [{ whitelisted_domains: 'a.example, not valid' }, 'whitelisted_domains'],
      [{ whitelisted_domains: Array.from({ length: 101 }, (_, i) => `d${i}.example`) }, 'whitelisted_domains'],
      [{ whitelisted_domains: 5 }, 'whitelisted_domains'],
      [{ moderator_id: 999999 }, 'moderator_id'],
      [{ moderator_id: foreignUser }, 'moderator_id'],
      [{ moderator_id: 'x' }, 'moderator_id'],
      [{ moderator_id: 0 }, 'moderator_id'],
    ];
    for (const [body, field] of cases) {
      const res = await admin.patch(`${P}/access_managers/${m.id}`, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(
        res.body.details.map((d: any) => d.field),
        JSON.stringify(body).slice(0, 80),
      ).toContain(field);
    }
    expect(await managerOf(admin, player.id)).toEqual(m);
    // The accepted side of each bound.
    const ok = await admin.patch(`${P}/access_managers/${m.id}`, {
      max_access_code_uses: 1,
      custom_approval_message: 'a'.repeat(1000),
      custom_denial_message: 'b'.repeat(1000),
      custom_sender_display_name: 'c'.repeat(255),
      whitelisted_domains: Array.from({ length: 100 }, (_, i) => `d${i}.example`),
    });
    expect(ok.status).toBe(200);
    expect(ok.body.whitelisted_domains).toHaveLength(100);
    expect((await admin.patch(`${P}/access_managers/${m.id}`, { max_access_code_uses: 2147483647 })).body.max_access_code_uses).toBe(2147483647);
  });

  it('a moderator who is removed reads as null', async () => {
    const player = await createPlayer(org.api);
    const m = await managerOf(admin, player.id);
    const moderator = await addUser(org.organizationId);
    expect((await admin.patch(`${P}/access_managers/${m.id}`, { moderator_id: moderator })).body.moderator_id).toBe(moderator);
    await t.database.db.deleteFrom('users').where('id', '=', moderator).execute();
    expect((await admin.get(`${P}/access_managers/${m.id}`)).body.moderator_id).toBeNull();
  });

  it('changing needs security:manage (admins, owners): 403 for editors and viewers, 401 without a token', async () => {
    const player = await createPlayer(org.api);
    const m = await managerOf(admin, player.id);
    for (const role of ['editor', 'viewer'] as const) {
      const res = await (await org.as(role)).patch(`${P}/access_managers/${m.id}`, { enabled: true });
      expect(res.status, role).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await client(t.app).patch(`${P}/access_managers/${m.id}`, { enabled: true })).status).toBe(401);
    expect((await org.api.patch(`${P}/access_managers/${m.id}`, { enabled: true })).status).toBe(200);
    expect((await admin.get(`${P}/access_managers/${m.id}`)).body.enabled).toBe(true);
  });

  it("answers another organization's manager exactly like a missing one, and lists only one's own", async () => {
    const player = await createPlayer(org.api);
    const m = await managerOf(admin, player.id);
    const theirs = await other.api.get(`${P}/access_managers/${m.id}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe('not_found');
    const patch = await other.api.patch(`${P}/access_managers/${m.id}`, { enabled: true });
    expect(patch.status).toBe(404);
    expect((await admin.get(`${P}/access_managers/${m.id}`)).body.enabled).toBe(false);
    expect((await other.api.get(`${P}/access_managers?player_id=${player.id}`)).body).toEqual([]);
    const otherList = (await other.api.get(`${P}/access_managers`)).body;
    expect(otherList.every((x: any) => x.player_id !== player.id)).toBe(true);
    expect((await admin.patch(`${P}/access_managers/999999`, { enabled: true })).status).toBe(404);
    expect((await admin.patch(`${P}/access_managers/abc`, { enabled: true })).status).toBe(404);
    // A body validation error on a missing id: the 404 check comes after the schema; either is a 4xx, never a 5xx.
    expect((await admin.patch(`${P}/access_managers/999999`, { enabled: 'x' })).status).toBe(422);
  });
});
