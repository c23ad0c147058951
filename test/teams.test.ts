import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createUser, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const TEAM_KEYS = ['account_id', 'created_at', 'id', 'is_admin', 'name', 'updated_at'];

function expectTeamShape(team: any, withMembers: boolean) {
  expect(Object.keys(team).sort()).toEqual(withMembers ? [...TEAM_KEYS, 'member_count', 'members'].sort() : TEAM_KEYS);
  expect(Number.isInteger(team.id)).toBe(true);
  expect(typeof team.name).toBe('string');
  expect(typeof team.is_admin).toBe('boolean');
  expect(Number.isInteger(team.account_id)).toBe(true);
  expect(Number.isInteger(team.created_at)).toBe(true);
  expect(Number.isInteger(team.updated_at)).toBe(true);
  if (withMembers) {
    expect(team.member_count).toBe(team.members.length);
    for (const m of team.members) {
      expect(Object.keys(m).sort()).toEqual(['email', 'first_name', 'id', 'last_name']);
      expect(Number.isInteger(m.id)).toBe(true);
    }
  }
}

const teamCount = async (t: TestApp, organizationId: number) =>
  Number(
    (
      await t.database.db
        .selectFrom('teams')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('organization_id', '=', organizationId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe.each(dialects)('teams on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let ada: any;
  let alan: any;
  let otherUser: any;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    ada = await createUser(org.api, { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' });
    alan = await createUser(org.api, { email: 'alan@example.com', first_name: 'Alan', last_name: 'Turing' });
    otherUser = await createUser(other.api, { email: 'someone@else.com' });
  });
  afterAll(() => t.close());

  describe('POST /v1/teams', () => {
    it('answers 201 with the team, its members and member_count', async () => {
      const before = Math.floor(Date.now() / 1000) - 5;
      const res = await org.api.post(`${P}/teams`, { name: '  Marketing  ', user_ids: [alan.id, ada.id, alan.id] });
      expect(res.status).toBe(201);
      expectTeamShape(res.body, true);
      expect(res.body).toMatchObject({ name: 'Marketing', is_admin: false, account_id: org.organizationId, member_count: 2 });
      expect(res.body.members).toEqual([
        { id: ada.id, first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        { id: alan.id, first_name: 'Alan', last_name: 'Turing', email: 'alan@example.com' },
      ]);
      expect(res.body.created_at).toBeGreaterThanOrEqual(before);
      expect(res.body.updated_at).toBe(res.body.created_at);
    });

    it('accepts the wrapped body and no members', async () => {
      const res = await org.api.post(`${P}/teams.json`, { team: { name: 'Wrapped team' } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'Wrapped team', members: [], member_count: 0 });
    });

    it('validates name and user_ids on both sides of their bounds, naming the field; nothing is created', async () => {
      const before = await teamCount(t, org.organizationId);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ name: 7 }, 'name'],
        [{ name: 'new\nline' }, 'name'],
        [{ name: 'Bad ids', user_ids: [otherUser.id] }, 'user_ids'],
        [{ name: 'Bad ids', user_ids: [ada.id, 999999] }, 'user_ids'],
        [{ name: 'Bad ids', user_ids: 'all' }, 'user_ids'],
        [{ name: 'Bad ids', user_ids: ['1'] }, 'user_ids.0'],
        [{ name: 'Bad ids', user_ids: [0] }, 'user_ids.0'],
        [{ name: 'Second admin', is_admin: true }, 'is_admin'],
      ];
      for (const [body, field] of cases) {
        const res = await org.api.post(`${P}/teams`, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details.map((d: any) => d.field)).toContain(field);
      }
      const notMine = await org.api.post(`${P}/teams`, { name: 'Bad ids', user_ids: [otherUser.id] });
      expect(notMine.body.error).toMatch(new RegExp(`user_ids .*not users of this organization: ${otherUser.id}`));
      expect(await teamCount(t, org.organizationId)).toBe(before);
      expect((await org.api.post(`${P}/teams`, { name: 'y'.repeat(255), is_admin: false })).status).toBe(201);
      expect((await org.api.post(`${P}/teams`, { name: 'z' })).status).toBe(201);
    });

    it('team names are unique in the organization regardless of case (409), not across organizations', async () => {
      await org.api.post(`${P}/teams`, { name: 'Sales' });
      for (const name of ['Sales', 'SALES', ' sales ', 'administrators']) {
        const res = await org.api.post(`${P}/teams`, { name });
        expect(res.status, name).toBe(409);
        expect(res.body.code).toBe('conflict');
        expect(res.body.details).toEqual([{ field: 'name', message: 'has already been taken' }]);
      }
      expect((await other.api.post(`${P}/teams`, { name: 'Sales' })).status).toBe(201);
    });

    it('needs teams:manage (admins and owners)', async () => {
      for (const role of ['editor', 'viewer'] as const) {
        const res = await (await org.as(role)).post(`${P}/teams`, { name: `${role} team` });
        expect(res.status, role).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
      expect((await (await org.as('admin')).post(`${P}/teams`, { name: 'Admin made' })).status).toBe(201);
      expect((await client(t.app).post(`${P}/teams`, { name: 'Anon' })).status).toBe(401);
    });
  });

  describe('GET /v1/teams', () => {
    let o: OrgContext;
    let grace: any;
    let tim: any;
    let teams: Record<string, any>;

    beforeAll(async () => {
      o = await createOrg(t);
      grace = await createUser(o.api, { email: 'grace@navy.mil', first_name: 'Grace', last_name: 'Hopper' });
      tim = await createUser(o.api, { email: 'tim@cern.ch', first_name: 'Tim', last_name: 'Berners-Lee' });
      teams = {};
      for (const [name, ids] of [
        ['Engineering', [grace.id, tim.id]],
        ['Navy', [grace.id]],
        ['Web', []],
        ['engagement', [tim.id]],
      ] as const) {
        teams[name] = (await o.api.post(`${P}/teams`, { name, user_ids: ids })).body;
      }
    });

    it('always answers {teams, summary}, by id, without members unless asked', async () => {
      const res = await o.api.get(`${P}/teams`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['summary', 'teams']);
      expect(res.body.teams.map((x: any) => x.name)).toEqual(['Administrators', 'Engineering', 'Navy', 'Web', 'engagement']);
      res.body.teams.forEach((x: any) => expectTeamShape(x, false));
      expect(res.body.teams[0]).toMatchObject({ is_admin: true, account_id: o.organizationId });
      expect(res.body.summary).toEqual({ page: 1, per_page: 5, count: 5 });
    });

    it('pages with per_page and page; count is the total', async () => {
      const p2 = await o.api.get(`${P}/teams?per_page=2&page=2`);
      expect(p2.body.teams.map((x: any) => x.name)).toEqual(['Navy', 'Web']);
      expect(p2.body.summary).toEqual({ page: 2, per_page: 2, count: 5 });
      expect((await o.api.get(`${P}/teams?per_page=0`)).status).toBe(422);
      expect((await o.api.get(`${P}/teams?per_page=201`)).status).toBe(422);
      expect((await o.api.get(`${P}/teams?per_page=200`)).status).toBe(200);
      expect((await o.api.get(`${P}/teams?per_page=1&page=0`)).status).toBe(422);
    });

    it('admin filters on the admin team', async () => {
      const yes = await o.api.get(`${P}/teams?admin=true`);
      expect(yes.body.teams.map((x: any) => x.name)).toEqual(['Administrators']);
      expect(yes.body.summary.count).toBe(1);
      const no = await o.api.get(`${P}/teams?admin=false`);
      expect(no.body.teams.map((x: any) => x.name)).toEqual(['Engineering', 'Navy', 'Web', 'engagement']);
      const bad = await o.api.get(`${P}/teams?admin=maybe`);
      expect(bad.status).toBe(422);
      expect(bad.body.details[0].field).toBe('admin');
    });

    it('query matches name prefixes, case-insensitively', async () => {
      const names = async (qs: string) => (await o.api.get(`${P}/teams?${qs}`)).body.teams.map((x: any) => x.name);
      expect(await names('query=eng')).toEqual(['Engineering', 'engagement']);
      expect(await names('query=NAV')).toEqual(['Navy']);
      expect(await names('query=gineering')).toEqual([]);
      // Member names are not searched without enable_query_team_members.
      expect(await names('query=grace')).toEqual([]);
      expect((await o.api.get(`${P}/teams?query=eng&per_page=1`)).body.summary.count).toBe(2);
    });

    it('enable_query_team_members adds members and member_count and searches member names and emails', async () => {
      const res = await o.api.get(`${P}/teams?enable_query_team_members=true`);
      res.body.teams.forEach((x: any) => expectTeamShape(x, true));
      const eng = res.body.teams.find((x: any) => x.name === 'Engineering');
      expect(eng.members.map((m: any) => m.id)).toEqual([grace.id, tim.id]);
      expect(eng.member_count).toBe(2);
      expect(res.body.teams.find((x: any) => x.name === 'Web')).toMatchObject({ members: [], member_count: 0 });
      const names = async (query: string) =>
        (await o.api.get(`${P}/teams?enable_query_team_members=true&query=${encodeURIComponent(query)}`)).body.teams.map((x: any) => x.name);
      expect(await names('grace')).toEqual(['Engineering', 'Navy']);
      expect(await names('HOPPER')).toEqual(['Engineering', 'Navy']);
      expect(await names('tim@')).toEqual(['Engineering', 'engagement']);
      expect(await names('berners')).toEqual(['Engineering', 'engagement']);
      expect(await names('web')).toEqual(['Web']);
      expect(await names('cern')).toEqual([]);
      const off = await o.api.get(`${P}/teams?enable_query_team_members=false`);
      off.body.teams.forEach((x: any) => expectTeamShape(x, false));
    });

    it('includes accepts members in the three array forms; unknown values are a 422', async () => {
      for (const qs of ['includes[]=members', 'includes=members', 'includes=members,members']) {
        const res = await o.api.get(`${P}/teams?${qs}`);
        expect(res.status, qs).toBe(200);
        res.body.teams.forEach((x: any) => expectTeamShape(x, true));
      }
      for (const qs of ['includes[]=owners', 'includes=members,videos', 'includes[]=members&includes[]=x']) {
        const res = await o.api.get(`${P}/teams?${qs}`);
        expect(res.status, qs).toBe(422);
        expect(res.body.details[0].field).toBe('includes');
      }
    });

    it('answers CSV; every role may read; no token is a 401', async () => {
      const csv = await o.api.get(`${P}/teams`, { accept: 'text/csv' });
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      expect(csv.raw.trim().split(/\r?\n/)).toHaveLength(6);
      expect((await (await o.as('viewer')).get(`${P}/teams`)).status).toBe(200);
      expect((await client(t.app).get(`${P}/teams`)).status).toBe(401);
    });

    it("a parent's token does not reach its children's teams, nor a child its parent's", async () => {
      const kid = await createOrg(t, 'Kid org', o.organizationId);
      const kidTeam = (await kid.api.post(`${P}/teams`, { name: 'Kid team' })).body;
      expect((await o.api.get(`${P}/teams/${kidTeam.id}`)).status).toBe(404);
      expect((await o.api.patch(`${P}/teams/${kidTeam.id}`, { name: 'x' })).status).toBe(404);
      expect((await o.api.delete(`${P}/teams/${kidTeam.id}`)).status).toBe(404);
      expect((await o.api.get(`${P}/teams?query=kid`)).body.teams).toEqual([]);
      expect((await kid.api.get(`${P}/teams/${teams.Navy.id}`)).status).toBe(404);
      expect((await kid.api.post(`${P}/teams`, { name: 'Mixed', user_ids: [grace.id] })).status).toBe(422);
    });

    it("never shows another organization's teams", async () => {
      const res = await other.api.get(`${P}/teams?query=eng`);
      expect(res.body.teams).toEqual([]);
      expect((await other.api.get(`${P}/teams/${teams.Navy.id}`)).status).toBe(404);
      expect((await o.api.get(`${P}/teams/${teams.Navy.id}`)).body).toEqual(teams.Navy);
    });
  });

  describe('PATCH /v1/teams/:id', () => {
    it('renames and replaces the membership with user_ids', async () => {
      const team = (await org.api.post(`${P}/teams`, { name: 'Renamable', user_ids: [ada.id] })).body;
      const res = await org.api.patch(`${P}/teams/${team.id}`, { name: 'Renamed', user_ids: [alan.id] });
      expect(res.status).toBe(200);
      expectTeamShape(res.body, true);
      expect(res.body).toMatchObject({ id: team.id, name: 'Renamed', member_count: 1 });
      expect(res.body.members.map((m: any) => m.id)).toEqual([alan.id]);
      const cleared = await org.api.patch(`${P}/teams/${team.id}.json`, { team: { user_ids: [] } });
      expect(cleared.body).toMatchObject({ name: 'Renamed', members: [], member_count: 0 });
      const nameOnly = await org.api.patch(`${P}/teams/${team.id}`, { name: 'Renamed again' });
      expect(nameOnly.body.member_count).toBe(0);
      expect((await org.api.patch(`${P}/teams/${team.id}`, { name: 'renamed AGAIN' })).status).toBe(200);
    });

    it('validates and refuses a taken name (409) or a foreign user; nothing changes', async () => {
      await org.api.post(`${P}/teams`, { name: 'Taken' });
      const team = (await org.api.post(`${P}/teams`, { name: 'Mine', user_ids: [ada.id] })).body;
      const taken = await org.api.patch(`${P}/teams/${team.id}`, { name: 'TAKEN' });
      expect(taken.status).toBe(409);
      expect(taken.body.details[0].field).toBe('name');
      const foreign = await org.api.patch(`${P}/teams/${team.id}`, { name: 'Mine 2', user_ids: [otherUser.id] });
      expect(foreign.status).toBe(422);
      expect(foreign.body.details[0].field).toBe('user_ids');
      for (const [body, field] of [
        [{ name: '' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ user_ids: [-1] }, 'user_ids.0'],
        [{ is_admin: true }, 'is_admin'],
      ] as const) {
        const res = await org.api.patch(`${P}/teams/${team.id}`, body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.details[0].field).toBe(field);
      }
      expect((await org.api.get(`${P}/teams/${team.id}`)).body).toEqual(team);
    });

    it('the admin team may be renamed and staffed but stays the admin team', async () => {
      const admin = (await org.api.get(`${P}/teams?admin=true`)).body.teams[0];
      const res = await org.api.patch(`${P}/teams/${admin.id}`, { name: 'Admins', user_ids: [ada.id], is_admin: true });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Admins', is_admin: true, member_count: 1 });
      const demote = await org.api.patch(`${P}/teams/${admin.id}`, { is_admin: false });
      expect(demote.status).toBe(422);
      expect(demote.body.details[0].field).toBe('is_admin');
    });

    it("a missing team or another organization's is a 404; needs teams:manage", async () => {
      const team = (await org.api.post(`${P}/teams`, { name: 'Guarded' })).body;
      expect((await org.api.patch(`${P}/teams/999999`, { name: 'x' })).status).toBe(404);
      expect((await other.api.patch(`${P}/teams/${team.id}`, { name: 'x' })).status).toBe(404);
      expect((await org.api.patch(`${P}/teams/abc`, { name: 'x' })).status).toBe(404);
      for (const role of ['editor', 'viewer'] as const) {
        expect((await (await org.as(role)).patch(`${P}/teams/${team.id}`, { name: 'x' })).status).toBe(403);
      }
      expect((await (await org.as('admin')).patch(`${P}/teams/${team.id}`, { name: 'Guarded 2' })).status).toBe(200);
    });
  });

  describe('DELETE /v1/teams/:id', () => {
    it('deletes the team (not its users) and answers it', async () => {
      const team = (await org.api.post(`${P}/teams`, { name: 'Doomed', user_ids: [ada.id] })).body;
      const res = await org.api.delete(`${P}/teams/${team.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(team);
      expect((await org.api.get(`${P}/teams/${team.id}`)).status).toBe(404);
      expect((await org.api.get(`${P}/users/${ada.id}`)).status).toBe(200);
      expect((await org.api.delete(`${P}/teams/${team.id}`)).status).toBe(404);
      // The name is free again.
      expect((await org.api.post(`${P}/teams`, { name: 'Doomed' })).status).toBe(201);
    });

    it('the admin team cannot be deleted (403 with a clear message)', async () => {
      const admin = (await org.api.get(`${P}/teams?admin=true`)).body.teams[0];
      const res = await org.api.delete(`${P}/teams/${admin.id}`);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
      expect(res.body.error).toBe('The admin team cannot be deleted');
      expect((await org.api.get(`${P}/teams?admin=true`)).body.teams).toHaveLength(1);
    });

    it("another organization's team is a 404; needs teams:manage", async () => {
      const team = (await org.api.post(`${P}/teams`, { name: 'Protected' })).body;
      expect((await other.api.delete(`${P}/teams/${team.id}`)).status).toBe(404);
      for (const role of ['editor', 'viewer'] as const) {
        expect((await (await org.as(role)).delete(`${P}/teams/${team.id}`)).status).toBe(403);
      }
      expect((await client(t.app).delete(`${P}/teams/${team.id}`)).status).toBe(401);
      expect((await (await org.as('admin')).delete(`${P}/teams/${team.id}`)).status).toBe(200);
    });
  });

  describe('teams allotment', () => {
    it('counts the admin team; when enforced, refuses past limit + grace_limit with 403 allotment_exceeded', async () => {
      const o = await createOrg(t);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { teams: { limit: 2, grace_limit: 1, enforced: true } } });
      expect((await o.api.post(`${P}/teams`, { name: 'T1' })).status).toBe(201);
      expect((await o.api.post(`${P}/teams`, { name: 'T2' })).status).toBe(201);
      const res = await o.api.post(`${P}/teams`, { name: 'T3' });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('allotment_exceeded');
      expect(res.body.error).toMatch(/teams allotment is used up: 3 teams of 3 allowed/);
      expect(await teamCount(t, o.organizationId)).toBe(3);
      const usage = await o.api.get(`${P}/organizations/${o.organizationId}/allotments`);
      expect(usage.body.teams).toEqual({ current_usage: 3, limit: 2, grace_limit: 1, enforced: true });
      // Renaming is not creating.
      const t1 = (await o.api.get(`${P}/teams?query=T1`)).body.teams[0];
      expect((await o.api.patch(`${P}/teams/${t1.id}`, { name: 'T1b' })).status).toBe(200);
    });

    it('concurrent creations never overshoot: exactly limit + grace_limit teams exist', async () => {
      const o = await createOrg(t);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { teams: { limit: 3, grace_limit: 2, enforced: true } } });
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => o.api.post(`${P}/teams`, { name: `Racer ${i}` })));
      expect(results.filter((r) => r.status === 201)).toHaveLength(4); // + the admin team = 5
      expect(results.filter((r) => r.status === 403 && r.body.code === 'allotment_exceeded')).toHaveLength(6);
      expect(await teamCount(t, o.organizationId)).toBe(5);
    });

    it('concurrent creations of the same name: one 201, the rest 409', async () => {
      const o = await createOrg(t);
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => o.api.post(`${P}/teams`, { name: i % 2 ? 'same' : 'SAME' })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    });
  });
});
