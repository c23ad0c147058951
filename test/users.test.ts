import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createUser, userClient, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const USER_KEYS = ['created_at', 'email', 'first_name', 'id', 'last_name', 'role', 'role_id', 'updated_at'];

function expectUserShape(u: any) {
  expect(Object.keys(u).sort()).toEqual(USER_KEYS);
  expect(Number.isInteger(u.id)).toBe(true);
  expect(typeof u.email).toBe('string');
  expect(typeof u.first_name).toBe('string');
  expect(typeof u.last_name).toBe('string');
  expect([1, 2, 3, 4]).toContain(u.role_id);
  expect(['owner', 'admin', 'editor', 'viewer'][u.role_id - 1]).toBe(u.role);
  expect(Number.isInteger(u.created_at)).toBe(true);
  expect(Number.isInteger(u.updated_at)).toBe(true);
}

/** An email address of exactly `length` characters that every validator accepts. */
function emailOfLength(length: number): string {
  const local = 'a'.repeat(60);
  let domain = '';
  const rest = length - local.length - 1 - 4; // "@" and ".com"
  for (let left = rest; left > 0;) {
    const label = Math.min(left, 60);
    // A label followed by a dot, unless it is the last one.
    const take = left - label === 0 ? label : Math.min(label, left - 2);
    domain += 'b'.repeat(take);
    left -= take;
    if (left > 0) {
      domain += '.';
      left -= 1;
    }
  }
  return `${local}@${domain}.com`;
}

const count = async (t: TestApp, table: 'users' | 'api_tokens' | 'team_members', where?: [string, number]) => {
  let q = t.database.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n'));
  if (where) q = q.where(where[0] as never, '=', where[1] as never);
  return Number((await q.executeTakeFirstOrThrow()).n);
};

describe.each(dialects)('users on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(() => t.close());

  describe('POST /v1/users (invite)', () => {
    it('answers 201 with the user, email lower-cased, role from role_id', async () => {
      const before = Math.floor(Date.now() / 1000) - 5;
      const res = await org.api.post(`${P}/users`, { email: 'Ada.Lovelace@Example.COM', first_name: 'Ada', last_name: 'Lovelace', role_id: 3 });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectUserShape(res.body);
      expect(res.body).toMatchObject({ email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace', role_id: 3, role: 'editor' });
      expect(res.body.created_at).toBeGreaterThanOrEqual(before);
      expect(res.body.updated_at).toBe(res.body.created_at);
    });

    it('accepts the wrapped body; names default to empty and the role to viewer', async () => {
      const res = await org.api.post(`${P}/users.json`, { user: { email: 'plain@example.com' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ email: 'plain@example.com', first_name: '', last_name: '', role_id: 4, role: 'viewer' });
    });

    it('validates every field on both sides of its bounds, naming it', async () => {
      const ok = { email: 'v@example.com', first_name: 'A', last_name: 'B', role_id: 4 };
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ ...ok, email: undefined }, 'email'],
        [{ ...ok, email: 'not-an-email' }, 'email'],
        [{ ...ok, email: 'a@' }, 'email'],
        [{ ...ok, email: 'two@@example.com' }, 'email'],
        [{ ...ok, email: emailOfLength(255) }, 'email'],
        [{ ...ok, email: 42 }, 'email'],
        [{ ...ok, first_name: 'x'.repeat(256) }, 'first_name'],
        [{ ...ok, last_name: 'x'.repeat(256) }, 'last_name'],
        [{ ...ok, last_name: 'tab\there' }, 'last_name'],
        [{ ...ok, first_name: null }, 'first_name'],
        [{ ...ok, role_id: 0 }, 'role_id'],
        [{ ...ok, role_id: 5 }, 'role_id'],
        [{ ...ok, role_id: '2' }, 'role_id'],
        [{ ...ok, role_id: 2.5 }, 'role_id'],
      ];
      for (const [body, field] of bad) {
        const res = await org.api.post(`${P}/users`, body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details.map((d: any) => d.field)).toContain(field);
      }
      expect(await count(t, 'users', ['organization_id', org.organizationId])).toBeLessThan(10);
      const longest = await org.api.post(`${P}/users`, { email: emailOfLength(254), first_name: 'x'.repeat(255), last_name: 'y'.repeat(255), role_id: 1 });
      expect(longest.status).toBe(201);
      expect(longest.body.email).toHaveLength(254);
      expect((await org.api.post(`${P}/users`, { email: 'a@b.co', role_id: 2 })).status).toBe(201);
    });

    it('refuses a duplicate email in the organization (any case) with 409, but not in another', async () => {
      await createUser(org.api, { email: 'dup@example.com' });
      const before = await count(t, 'users');
      const res = await org.api.post(`${P}/users`, { email: 'DUP@example.com', first_name: 'Again' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('conflict');
      expect(res.body.error).toMatch(/dup@example\.com.*already exists/);
      expect(res.body.details).toEqual([{ field: 'email', message: 'has already been taken' }]);
      expect(await count(t, 'users')).toBe(before);
      expect((await other.api.post(`${P}/users`, { email: 'dup@example.com' })).status).toBe(201);
    });

    it('needs users:manage; an admin may not invite an owner', async () => {
      for (const role of ['editor', 'viewer'] as const) {
        const res = await (await org.as(role)).post(`${P}/users`, { email: `${role}-try@example.com` });
        expect(res.status, role).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
      const admin = await org.as('admin');
      const owner = await admin.post(`${P}/users`, { email: 'wannabe-owner@example.com', role_id: 1 });
      expect(owner.status).toBe(403);
      expect(owner.body.error).toMatch(/admin role may not manage owner users/);
      expect((await admin.post(`${P}/users`, { email: 'new-admin@example.com', role_id: 2 })).status).toBe(201);
      expect((await org.api.post(`${P}/users`, { email: 'new-owner@example.com', role_id: 1 })).status).toBe(201);
      expect((await client(t.app).post(`${P}/users`, { email: 'anon@example.com' })).status).toBe(401);
    });
  });

  describe('GET /v1/users, /v1/users/:id, /v1/roles/:role_id/users', () => {
    let fresh: OrgContext;
    let users: any[];

    beforeAll(async () => {
      fresh = await createOrg(t);
      users = [
        await createUser(fresh.api, { email: 'grace@navy.mil', first_name: 'Grace', last_name: 'Hopper', role_id: 2 }),
        await createUser(fresh.api, { email: 'alan@bletchley.uk', first_name: 'Alan', last_name: 'Turing', role_id: 3 }),
        await createUser(fresh.api, { email: 'katherine@nasa.gov', first_name: 'Katherine', last_name: 'Johnson', role_id: 4 }),
        await createUser(fresh.api, { email: 'tim@cern.ch', first_name: 'Tim', last_name: 'Berners-Lee', role_id: 3 }),
        await createUser(fresh.api, { email: 'x_y%z@example.com', first_name: 'Under_score', last_name: '100%', role_id: 4 }),
      ];
      await createUser(other.api, { email: 'grace@other.example', first_name: 'Grace' });
    });

    it("lists the organization's users by id: a bare array without per_page", async () => {
      const res = await fresh.api.get(`${P}/users`);
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.map((u: any) => u.id)).toEqual(users.map((u) => u.id));
      res.body.forEach(expectUserShape);
      expect(res.body[0]).toEqual(users[0]);
    });

    it('answers {users, summary} with per_page; count is the total', async () => {
      const p1 = await fresh.api.get(`${P}/users?per_page=2`);
      expect(Object.keys(p1.body).sort()).toEqual(['summary', 'users']);
      expect(p1.body.summary).toEqual({ page: 1, per_page: 2, count: 5 });
      const p3 = await fresh.api.get(`${P}/users?per_page=2&page=3`);
      expect(p3.body.users.map((u: any) => u.id)).toEqual([users[4].id]);
      expect(p3.body.summary).toEqual({ page: 3, per_page: 2, count: 5 });
      expect((await fresh.api.get(`${P}/users?per_page=0`)).status).toBe(422);
      expect((await fresh.api.get(`${P}/users?per_page=201`)).status).toBe(422);
      expect((await fresh.api.get(`${P}/users?per_page=200`)).status).toBe(200);
    });

    it('query is a case-insensitive prefix of first_name, last_name or email; wildcards are literal', async () => {
      const q = async (query: string) => (await fresh.api.get(`${P}/users?query=${encodeURIComponent(query)}`)).body.map((u: any) => u.email);
      expect(await q('gRa')).toEqual(['grace@navy.mil']);
      expect(await q('turing')).toEqual(['alan@bletchley.uk']);
      expect(await q('KATHERINE@')).toEqual(['katherine@nasa.gov']);
      expect(await q('t')).toEqual(['alan@bletchley.uk', 'tim@cern.ch']);
      expect(await q('opper')).toEqual([]);
      expect(await q('%')).toEqual([]);
      expect(await q('100%')).toEqual(['x_y%z@example.com']);
      expect(await q('x_y%')).toEqual(['x_y%z@example.com']);
      expect(await q('_')).toEqual([]);
      const paged = await fresh.api.get(`${P}/users?query=t&per_page=1`);
      expect(paged.body.summary.count).toBe(2);
      expect((await fresh.api.get(`${P}/users?query=${'x'.repeat(256)}`)).status).toBe(422);
    });

    it('answers CSV when asked', async () => {
      const res = await fresh.api.get(`${P}/users`, { accept: 'text/csv' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      expect(res.raw.trim().split(/\r?\n/)).toHaveLength(6);
    });

    it("gets one user; another organization's user is a 404", async () => {
      const res = await fresh.api.get(`${P}/users/${users[1].id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(users[1]);
      expect((await other.api.get(`${P}/users/${users[1].id}`)).status).toBe(404);
      expect((await fresh.api.get(`${P}/users/999999`)).status).toBe(404);
      expect((await fresh.api.get(`${P}/users/abc`)).status).toBe(404);
      expect((await client(t.app).get(`${P}/users/${users[1].id}`)).status).toBe(401);
    });

    it('lists and gets users by role; a user of another role or an unknown role is a 404', async () => {
      const editors = await fresh.api.get(`${P}/roles/3/users`);
      expect(editors.status).toBe(200);
      expect(editors.body.map((u: any) => u.id)).toEqual([users[1].id, users[3].id]);
      const paged = await fresh.api.get(`${P}/roles/3/users?per_page=1&page=2`);
      expect(paged.body).toEqual({ users: [users[3]], summary: { page: 2, per_page: 1, count: 2 } });
      expect((await fresh.api.get(`${P}/roles/1/users`)).body).toEqual([]);
      expect((await fresh.api.get(`${P}/roles/3/users?query=tim`)).body.map((u: any) => u.id)).toEqual([users[3].id]);
      expect((await fresh.api.get(`${P}/roles/5/users`)).status).toBe(404);
      expect((await fresh.api.get(`${P}/roles/0/users`)).status).toBe(404);
      expect((await fresh.api.get(`${P}/roles/3/users/${users[1].id}`)).body).toEqual(users[1]);
      expect((await fresh.api.get(`${P}/roles/4/users/${users[1].id}`)).status).toBe(404);
      expect((await fresh.api.get(`${P}/roles/9/users/${users[1].id}`)).status).toBe(404);
      expect((await other.api.get(`${P}/roles/3/users/${users[1].id}`)).status).toBe(404);
    });

    it("a parent organization's token does not reach its children's users, nor a child its parent's", async () => {
      const kid = await createOrg(t, 'Kid org', fresh.organizationId);
      const kidUser = await createUser(kid.api, { email: 'kid@example.com' });
      expect((await fresh.api.get(`${P}/users/${kidUser.id}`)).status).toBe(404);
      expect((await fresh.api.get(`${P}/users?query=kid`)).body).toEqual([]);
      expect((await fresh.api.patch(`${P}/users`, { id: kidUser.id, first_name: 'x' })).status).toBe(404);
      expect((await fresh.api.delete(`${P}/users/${kidUser.id}`)).status).toBe(404);
      expect((await kid.api.get(`${P}/users/${users[0].id}`)).status).toBe(404);
      expect((await kid.api.get(`${P}/users`)).body.map((u: any) => u.id)).toEqual([kidUser.id]);
    });

    it('every role may read users', async () => {
      expect((await (await fresh.as('viewer')).get(`${P}/users`)).status).toBe(200);
      expect((await (await fresh.as('editor')).get(`${P}/users/${users[0].id}`)).status).toBe(200);
    });
  });

  describe('PATCH /v1/users', () => {
    it('updates first_name, last_name and role_id of the user named by id', async () => {
      const u = await createUser(org.api, { first_name: 'Old', last_name: 'Name', role_id: 4 });
      const res = await org.api.patch(`${P}/users`, { id: u.id, first_name: 'New', last_name: 'Person', role_id: 3 });
      expect(res.status).toBe(200);
      expectUserShape(res.body);
      expect(res.body).toMatchObject({ id: u.id, email: u.email, first_name: 'New', last_name: 'Person', role_id: 3, role: 'editor' });
      expect(res.body.updated_at).toBeGreaterThanOrEqual(u.updated_at);
      expect((await org.api.get(`${P}/users/${u.id}`)).body).toEqual(res.body);
    });

    it('names the user by email too (any case), flat or wrapped', async () => {
      const u = await createUser(org.api, { email: 'by-email@example.com' });
      const res = await org.api.patch(`${P}/users`, { email: 'BY-Email@Example.com', first_name: 'Found' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: u.id, first_name: 'Found' });
      const wrapped = await org.api.patch(`${P}/users.json`, { user: { email: 'by-email@example.com', last_name: 'Wrapped' } });
      expect(wrapped.body).toMatchObject({ id: u.id, first_name: 'Found', last_name: 'Wrapped' });
    });

    it('needs id or email; names the field of bad input', async () => {
      const u = await createUser(org.api);
      const none = await org.api.patch(`${P}/users`, { first_name: 'Nobody' });
      expect(none.status).toBe(422);
      expect(none.body.details[0].field).toBe('id');
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ id: u.id, role_id: 5 }, 'role_id'],
        [{ id: u.id, role_id: 0 }, 'role_id'],
        [{ id: u.id, first_name: 'x'.repeat(256) }, 'first_name'],
        [{ id: 'one' }, 'id'],
        [{ id: 0 }, 'id'],
        [{ id: u.id, email: 'someone-else@example.com' }, 'email'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.patch(`${P}/users`, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.details.map((d: any) => d.field)).toContain(field);
      }
      expect((await org.api.patch(`${P}/users`, { id: u.id, first_name: 'x'.repeat(255) })).status).toBe(200);
      expect((await org.api.patch(`${P}/users`, { id: u.id, first_name: '' })).status).toBe(200);
    });

    it("a missing user, or another organization's, is a 404", async () => {
      const mine = await createUser(org.api, { email: 'mine-only@example.com' });
      expect((await org.api.patch(`${P}/users`, { id: 999999, first_name: 'x' })).status).toBe(404);
      expect((await org.api.patch(`${P}/users`, { email: 'ghost@example.com', first_name: 'x' })).status).toBe(404);
      expect((await other.api.patch(`${P}/users`, { id: mine.id, first_name: 'x' })).status).toBe(404);
      expect((await other.api.patch(`${P}/users`, { email: 'mine-only@example.com', first_name: 'x' })).status).toBe(404);
      expect((await org.api.get(`${P}/users/${mine.id}`)).body.first_name).toBe('Test');
    });

    it('needs users:manage; an admin may neither promote to owner nor change an owner', async () => {
      const u = await createUser(org.api, { role_id: 4 });
      const ownerUser = await createUser(org.api, { role_id: 1 });
      for (const role of ['editor', 'viewer'] as const) {
        expect((await (await org.as(role)).patch(`${P}/users`, { id: u.id, first_name: 'x' })).status).toBe(403);
      }
      const admin = await org.as('admin');
      expect((await admin.patch(`${P}/users`, { id: u.id, role_id: 1 })).status).toBe(403);
      expect((await admin.patch(`${P}/users`, { id: ownerUser.id, first_name: 'x' })).status).toBe(403);
      expect((await admin.patch(`${P}/users`, { id: u.id, role_id: 2 })).status).toBe(200);
      expect((await org.api.patch(`${P}/users`, { id: u.id, role_id: 1 })).status).toBe(200);
    });

    it("a user's token follows the user's role at once", async () => {
      const u = await createUser(org.api, { role_id: 3 });
      const api = await userClient(t, org.organizationId, u.id, 'editor');
      expect((await api.post(`${P}/teams`, { name: 'Editors may not' })).status).toBe(403);
      await org.api.patch(`${P}/users`, { id: u.id, role_id: 2 });
      const res = await api.post(`${P}/teams`, { name: 'Admins may' });
      expect(res.status).toBe(201);
    });
  });

  describe('DELETE /v1/users/:id', () => {
    it('removes the user, their team memberships and their tokens, which stop working at once', async () => {
      const u = await createUser(org.api, { role_id: 2 });
      const keep = await createUser(org.api);
      const team = await org.api.post(`${P}/teams`, { name: `Team of ${u.id}`, user_ids: [u.id, keep.id] });
      expect(team.body.member_count).toBe(2);
      const api = await userClient(t, org.organizationId, u.id, 'admin');
      expect((await api.get(`${P}/users/${u.id}`)).status).toBe(200);
      expect(await count(t, 'api_tokens', ['user_id', u.id])).toBe(1);

      const res = await org.api.delete(`${P}/users/${u.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(u);
      expect((await org.api.get(`${P}/users/${u.id}`)).status).toBe(404);
      const after = await api.get(`${P}/users`);
      expect(after.status).toBe(401);
      expect(await count(t, 'api_tokens', ['user_id', u.id])).toBe(0);
      expect(await count(t, 'team_members', ['user_id', u.id])).toBe(0);
      const teamAfter = await org.api.get(`${P}/teams/${team.body.id}`);
      expect(teamAfter.body.members.map((m: any) => m.id)).toEqual([keep.id]);
      expect((await org.api.delete(`${P}/users/${u.id}`)).status).toBe(404);
    });

    it("needs users:manage; another organization's user is a 404; an admin may not remove an owner", async () => {
      const u = await createUser(org.api);
      const ownerUser = await createUser(org.api, { role_id: 1 });
      for (const role of ['editor', 'viewer'] as const) {
        expect((await (await org.as(role)).delete(`${P}/users/${u.id}`)).status).toBe(403);
      }
      expect((await other.api.delete(`${P}/users/${u.id}`)).status).toBe(404);
      expect((await org.api.delete(`${P}/users/abc`)).status).toBe(404);
      expect((await client(t.app).delete(`${P}/users/${u.id}`)).status).toBe(401);
      const admin = await org.as('admin');
      expect((await admin.delete(`${P}/users/${ownerUser.id}`)).status).toBe(403);
      expect((await org.api.get(`${P}/users/${ownerUser.id}`)).status).toBe(200);
      expect((await admin.delete(`${P}/users/${u.id}`)).status).toBe(200);
    });
  });

  describe('govideo_users allotment', () => {
    it('when enforced, refuses the user past limit + grace_limit with 403 allotment_exceeded and creates nothing', async () => {
      const o = await createOrg(t);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { govideo_users: { limit: 2, grace_limit: 1, enforced: true } } });
      for (let i = 0; i < 3; i++) await createUser(o.api);
      const res = await o.api.post(`${P}/users`, { email: 'one-too-many@example.com' });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('allotment_exceeded');
      expect(res.body.error).toMatch(/govideo_users allotment is used up/);
      expect(await count(t, 'users', ['organization_id', o.organizationId])).toBe(3);
      const usage = await o.api.get(`${P}/organizations/${o.organizationId}/allotments?types[]=govideo_users`);
      expect(usage.body).toEqual({ govideo_users: { current_usage: 3, limit: 2, grace_limit: 1, enforced: true } });
      // Removing one makes room again; not enforced means no ceiling.
      const list = await o.api.get(`${P}/users`);
      await o.api.delete(`${P}/users/${list.body[0].id}`);
      expect((await o.api.post(`${P}/users`, { email: 'fits-again@example.com' })).status).toBe(201);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { govideo_users: { enforced: false } } });
      expect((await o.api.post(`${P}/users`, { email: 'unenforced@example.com' })).status).toBe(201);
    });

    it('concurrent invitations never overshoot: exactly limit + grace_limit succeed', async () => {
      const o = await createOrg(t);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { govideo_users: { limit: 3, grace_limit: 1, enforced: true } } });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => o.api.post(`${P}/users`, { email: `racer${i}@example.com` })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(4);
      expect(statuses.filter((s) => s === 403)).toHaveLength(6);
      for (const r of results.filter((x) => x.status === 403)) expect(r.body.code).toBe('allotment_exceeded');
      expect(await count(t, 'users', ['organization_id', o.organizationId])).toBe(4);
    });

    it('concurrent invitations of the same email: one 201, the rest 409', async () => {
      const o = await createOrg(t);
      const results = await Promise.all(Array.from({ length: 6 }, () => o.api.post(`${P}/users`, { email: 'same@example.com' })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    });
  });
});
