import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';
import { sql } from 'kysely';
import { migrateToLatest } from '../src/db/migrate.ts';
import * as m0005 from '../src/db/migrations/0005_accounts_more.ts';

const P = '/dashboard/v1';
const ORG_KEYS = ['account_id', 'created_at', 'embed_domain', 'id', 'name', 'parent_id', 'playback_domain', 'secure_embed_domain', 'updated_at'];

function expectOrgShape(o: any) {
  expect(Object.keys(o).sort()).toEqual(ORG_KEYS);
  expect(Number.isInteger(o.id)).toBe(true);
  expect(typeof o.name).toBe('string');
  expect(o.parent_id === null || Number.isInteger(o.parent_id)).toBe(true);
  expect(Number.isInteger(o.account_id)).toBe(true);
  for (const k of ['embed_domain', 'secure_embed_domain', 'playback_domain']) expect(typeof o[k], k).toBe('string');
  expect(Number.isInteger(o.created_at)).toBe(true);
  expect(Number.isInteger(o.updated_at)).toBe(true);
}

describe.each(dialects)('organizations and accounts on %s', (dialect) => {
  let t: TestApp;
  // Family: root ─┬─ childA ── grandchild
  //               └─ childB
  let root: OrgContext;
  let childA: OrgContext;
  let childB: OrgContext;
  let grandchild: OrgContext;
  let stranger: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    root = await createOrg(t, 'Root Co');
    childA = await createOrg(t, 'Child A', root.organizationId);
    childB = await createOrg(t, 'Child B', root.organizationId);
    grandchild = await createOrg(t, 'Grandchild', childA.organizationId);
    stranger = await createOrg(t, 'Stranger Inc');
  });
  afterAll(() => t.close());

  describe('GET /v1/organizations/:id', () => {
    it('answers the organization with the exact shape (domains default to the installation)', async () => {
      const before = Math.floor(Date.now() / 1000) - 5;
      const res = await root.api.get(`${P}/organizations/${root.organizationId}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectOrgShape(res.body);
      expect(res.body.id).toBe(root.organizationId);
      expect(res.body.name).toBe('Root Co');
      expect(res.body.parent_id).toBeNull();
      expect(res.body.account_id).toBe(root.organizationId);
      expect(res.body.embed_domain).toBe('reelbase.test');
      expect(res.body.secure_embed_domain).toBe('reelbase.test');
      expect(res.body.playback_domain).toBe('reelbase.test');
      expect(res.body.created_at).toBeGreaterThanOrEqual(before);
      expect(res.body.updated_at).toBe(res.body.created_at);
    });

    it('also answers on the .json path and with auth_token in the query', async () => {
      const res = await client(t.app).get(`${P}/organizations/${root.organizationId}.json?auth_token=${root.token}`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(root.organizationId);
    });

    it('children carry parent_id and the family root as account_id', async () => {
      const a = await root.api.get(`${P}/organizations/${childA.organizationId}`);
      expect(a.status).toBe(200);
      expect(a.body.parent_id).toBe(root.organizationId);
      expect(a.body.account_id).toBe(root.organizationId);
      const g = await root.api.get(`${P}/organizations/${grandchild.organizationId}`);
      expect(g.status).toBe(200);
      expect(g.body.parent_id).toBe(childA.organizationId);
      expect(g.body.account_id).toBe(root.organizationId);
    });

    it('a parent sees its descendants; a child sees neither its parent nor its siblings (404)', async () => {
      expect((await root.api.get(`${P}/organizations/${grandchild.organizationId}`)).status).toBe(200);
      expect((await childA.api.get(`${P}/organizations/${grandchild.organizationId}`)).status).toBe(200);
      for (const id of [root.organizationId, childB.organizationId]) {
        const res = await childA.api.get(`${P}/organizations/${id}`);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
      expect((await grandchild.api.get(`${P}/organizations/${childA.organizationId}`)).status).toBe(404);
      expect((await stranger.api.get(`${P}/organizations/${root.organizationId}`)).status).toBe(404);
      expect((await root.api.get(`${P}/organizations/${stranger.organizationId}`)).status).toBe(404);
    });

    it('answers 404 for a missing or malformed id and 401 without a token', async () => {
      expect((await root.api.get(`${P}/organizations/999999`)).status).toBe(404);
      expect((await root.api.get(`${P}/organizations/abc`)).status).toBe(404);
      expect((await root.api.get(`${P}/organizations/0`)).status).toBe(404);
      const res = await client(t.app).get(`${P}/organizations/${root.organizationId}`);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
      expect((await client(t.app, 'rb_wrong').get(`${P}/organizations/${root.organizationId}`)).status).toBe(401);
    });

    it('every role may read its organization', async () => {
      for (const role of ['admin', 'editor', 'viewer'] as const) {
        const api = await root.as(role);
        expect((await api.get(`${P}/organizations/${root.organizationId}`)).status, role).toBe(200);
      }
    });
  });

  describe('GET /v1/organizations and /v1/accounts', () => {
    const familyIds = () => [root, childA, childB, grandchild].map((o) => o.organizationId).sort((a, b) => a - b);

    it('list what the token may see, by id: a bare array without per_page', async () => {
      for (const key of ['organizations', 'accounts']) {
        const res = await root.api.get(`${P}/${key}`);
        expect(res.status).toBe(200);
        expect(Array.isArray(res.body)).toBe(true);
        expect(res.body.map((o: any) => o.id)).toEqual(familyIds());
        res.body.forEach(expectOrgShape);
        const child = await childA.api.get(`${P}/${key}`);
        expect(child.body.map((o: any) => o.id)).toEqual([childA.organizationId, grandchild.organizationId]);
        const leaf = await grandchild.api.get(`${P}/${key}`);
        expect(leaf.body.map((o: any) => o.id)).toEqual([grandchild.organizationId]);
        const other = await stranger.api.get(`${P}/${key}`);
        expect(other.body.map((o: any) => o.id)).toEqual([stranger.organizationId]);
      }
    });

    it('answer {<key>, summary} with per_page; count is the total; pages are stable', async () => {
      for (const key of ['organizations', 'accounts']) {
        const p1 = await root.api.get(`${P}/${key}?per_page=3`);
        expect(p1.status).toBe(200);
        expect(Object.keys(p1.body).sort()).toEqual([key, 'summary'].sort());
        expect(p1.body.summary).toEqual({ page: 1, per_page: 3, count: 4 });
        const p2 = await root.api.get(`${P}/${key}?per_page=3&page=2`);
        expect(p2.body.summary).toEqual({ page: 2, per_page: 3, count: 4 });
        expect([...p1.body[key], ...p2.body[key]].map((o: any) => o.id)).toEqual(familyIds());
        const beyond = await root.api.get(`${P}/${key}?per_page=3&page=9`);
        expect(beyond.body[key]).toEqual([]);
        expect(beyond.body.summary.count).toBe(4);
      }
    });

    it('validate paging on both sides of the bounds', async () => {
      expect((await root.api.get(`${P}/organizations?per_page=0`)).status).toBe(422);
      expect((await root.api.get(`${P}/organizations?per_page=1`)).status).toBe(200);
      expect((await root.api.get(`${P}/organizations?per_page=200`)).status).toBe(200);
      const tooMany = await root.api.get(`${P}/accounts?per_page=201`);
      expect(tooMany.status).toBe(422);
      expect(tooMany.body.details[0].field).toBe('per_page');
      expect((await root.api.get(`${P}/accounts?per_page=2&page=0`)).status).toBe(422);
      expect((await root.api.get(`${P}/accounts?per_page=x`)).status).toBe(422);
    });

    it('answer CSV when asked', async () => {
      const res = await root.api.get(`${P}/accounts`, { accept: 'text/csv' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      const lines = res.raw.trim().split(/\r?\n/);
      expect(lines[0]).toContain('account_id');
      expect(lines).toHaveLength(5);
    });

    it('need a token', async () => {
      expect((await client(t.app).get(`${P}/organizations`)).status).toBe(401);
      expect((await client(t.app).get(`${P}/accounts`)).status).toBe(401);
    });
  });

  describe('GET /v1/organizations/:id/family', () => {
    const keysDeep = (node: any): void => {
      expect(Object.keys(node).sort()).toEqual(['children', 'id', 'name', 'parent_id']);
      node.children.forEach(keysDeep);
    };

    it("a root's token sees the whole tree, nested by id", async () => {
      for (const id of [root.organizationId, grandchild.organizationId]) {
        const res = await root.api.get(`${P}/organizations/${id}/family`);
        expect(res.status).toBe(200);
        keysDeep(res.body);
        expect(res.body).toEqual({
          id: root.organizationId,
          name: 'Root Co',
          parent_id: null,
          children: [
            {
              id: childA.organizationId,
              name: 'Child A',
              parent_id: root.organizationId,
              children: [{ id: grandchild.organizationId, name: 'Grandchild', parent_id: childA.organizationId, children: [] }],
            },
            { id: childB.organizationId, name: 'Child B', parent_id: root.organizationId, children: [] },
          ],
        });
      }
    });

    it("a child's token sees only its own branch, and its parent's or sibling's family is a 404", async () => {
      const res = await childA.api.get(`${P}/organizations/${childA.organizationId}/family`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: childA.organizationId,
        name: 'Child A',
        parent_id: root.organizationId,
        children: [{ id: grandchild.organizationId, name: 'Grandchild', parent_id: childA.organizationId, children: [] }],
      });
      expect((await childA.api.get(`${P}/organizations/${root.organizationId}/family`)).status).toBe(404);
      expect((await childA.api.get(`${P}/organizations/${childB.organizationId}/family`)).status).toBe(404);
      expect((await stranger.api.get(`${P}/organizations/${root.organizationId}/family`)).status).toBe(404);
      expect((await root.api.get(`${P}/organizations/999999/family`)).status).toBe(404);
    });

    it('an organization without relatives is a one-node tree', async () => {
      const res = await stranger.api.get(`${P}/organizations/${stranger.organizationId}/family`);
      expect(res.body).toEqual({ id: stranger.organizationId, name: 'Stranger Inc', parent_id: null, children: [] });
    });
  });

  describe('PATCH /v1/organizations/:id', () => {
    it('renames (trimmed), flat or wrapped, and bumps updated_at', async () => {
      const org = await createOrg(t, 'Before');
      const res = await org.api.patch(`${P}/organizations/${org.organizationId}`, { name: '  After  ' });
      expect(res.status).toBe(200);
      expectOrgShape(res.body);
      expect(res.body.name).toBe('After');
      expect(res.body.updated_at).toBeGreaterThanOrEqual(res.body.created_at);
      const wrapped = await org.api.patch(`${P}/organizations/${org.organizationId}.json`, { organization: { name: 'Wrapped' } });
      expect(wrapped.status).toBe(200);
      expect(wrapped.body.name).toBe('Wrapped');
      expect((await org.api.get(`${P}/organizations/${org.organizationId}`)).body.name).toBe('Wrapped');
    });

    it('validates name on both sides of its bounds', async () => {
      const org = await createOrg(t);
      for (const name of ['', '   ', 'x'.repeat(256), 42, null, 'bad\u0001name']) {
        const res = await org.api.patch(`${P}/organizations/${org.organizationId}`, { name });
        expect(res.status, JSON.stringify(name)).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details[0].field).toBe('name');
      }
      expect((await org.api.patch(`${P}/organizations/${org.organizationId}`, { name: 'x' })).status).toBe(200);
      expect((await org.api.patch(`${P}/organizations/${org.organizationId}`, { name: 'y'.repeat(255) })).status).toBe(200);
    });

    it('sets the domains (lower-cased) and null restores the installation default', async () => {
      const org = await createOrg(t);
      const res = await org.api.patch(`${P}/organizations/${org.organizationId}`, {
        embed_domain: 'Embed.Example.com',
        secure_embed_domain: 'secure.example.com',
        playback_domain: 'play.example.com:8443',
      });
      expect(res.status).toBe(200);
      expect(res.body.embed_domain).toBe('embed.example.com');
      expect(res.body.secure_embed_domain).toBe('secure.example.com');
      expect(res.body.playback_domain).toBe('play.example.com:8443');
      const reset = await org.api.patch(`${P}/organizations/${org.organizationId}`, { embed_domain: null });
      expect(reset.body.embed_domain).toBe('reelbase.test');
      expect(reset.body.secure_embed_domain).toBe('secure.example.com');
      for (const bad of ['not a domain', 'http://x.com', '-x.com', 'x'.repeat(254), 5]) {
        const r = await org.api.patch(`${P}/organizations/${org.organizationId}`, { playback_domain: bad });
        expect(r.status, String(bad)).toBe(422);
        expect(r.body.details[0].field).toBe('playback_domain');
      }
    });

    it('needs org:manage: only owners; admins, editors and viewers get 403', async () => {
      const org = await createOrg(t);
      for (const role of ['admin', 'editor', 'viewer'] as const) {
        const res = await (await org.as(role)).patch(`${P}/organizations/${org.organizationId}`, { name: 'Nope' });
        expect(res.status, role).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
      expect((await client(t.app).patch(`${P}/organizations/${org.organizationId}`, { name: 'Nope' })).status).toBe(401);
    });

    it("a parent's owner may update its children; a child may not touch its parent or siblings (404)", async () => {
      const parent = await createOrg(t, 'P');
      const kid = await createOrg(t, 'K', parent.organizationId);
      const sib = await createOrg(t, 'S', parent.organizationId);
      const res = await parent.api.patch(`${P}/organizations/${kid.organizationId}`, { name: 'Kid renamed' });
      expect(res.status).toBe(200);
      expect(res.body.name).toBe('Kid renamed');
      expect((await kid.api.patch(`${P}/organizations/${parent.organizationId}`, { name: 'X' })).status).toBe(404);
      expect((await kid.api.patch(`${P}/organizations/${sib.organizationId}`, { name: 'X' })).status).toBe(404);
      expect((await stranger.api.patch(`${P}/organizations/${parent.organizationId}`, { name: 'X' })).status).toBe(404);
      expect((await parent.api.get(`${P}/organizations/${parent.organizationId}`)).body.name).toBe('P');
      // A parent's admin still lacks org:manage.
      expect((await (await parent.as('admin')).patch(`${P}/organizations/${kid.organizationId}`, { name: 'X' })).status).toBe(403);
    });

    it('sets allotment limits; fields not sent keep their value', async () => {
      const org = await createOrg(t);
      const res = await org.api.patch(`${P}/organizations/${org.organizationId}`, {
        allotments: { govideo_users: { limit: 10, grace_limit: 2, enforced: true }, teams: { limit: 3 } },
      });
      expect(res.status).toBe(200);
      expectOrgShape(res.body);
      let a = await org.api.get(`${P}/organizations/${org.organizationId}/allotments?types[]=govideo_users&types[]=teams&types[]=embeds`);
      expect(a.body.govideo_users).toEqual({ current_usage: 0, limit: 10, grace_limit: 2, enforced: true });
      expect(a.body.teams).toEqual({ current_usage: 1, limit: 3, grace_limit: 0, enforced: false });
      expect(a.body.embeds).toEqual({ current_usage: 0, limit: 0, grace_limit: 0, enforced: false });
      await org.api.patch(`${P}/organizations/${org.organizationId}`, {
        allotments: { govideo_users: { enforced: false }, embeds: { limit: 0, grace_limit: 0 } },
      });
      a = await org.api.get(`${P}/organizations/${org.organizationId}/allotments?types=govideo_users,embeds`);
      expect(a.body.govideo_users).toEqual({ current_usage: 0, limit: 10, grace_limit: 2, enforced: false });
      expect(a.body.embeds).toEqual({ current_usage: 0, limit: 0, grace_limit: 0, enforced: false });
    });

    it('validates allotment limits, naming the field; nothing is half-written', async () => {
      const org = await createOrg(t);
      const cases: Array<[unknown, string]> = [
        [{ teams: { limit: -1 } }, 'allotments.teams.limit'],
        [{ teams: { limit: 2147483648 } }, 'allotments.teams.limit'],
        [{ teams: { limit: 1.5 } }, 'allotments.teams.limit'],
        [{ teams: { grace_limit: -1 } }, 'allotments.teams.grace_limit'],
        [{ teams: { enforced: 'yes' } }, 'allotments.teams.enforced'],
        [{ seats: { limit: 1 } }, 'allotments.seats'],
        [{ teams: 5 }, 'allotments.teams'],
        ['all', 'allotments'],
      ];
      for (const [allotments, field] of cases) {
        const res = await org.api.patch(`${P}/organizations/${org.organizationId}`, { name: 'Changed', allotments });
        expect(res.status, JSON.stringify(allotments)).toBe(422);
        expect(res.body.details.map((d: any) => d.field)).toContain(field);
      }
      expect((await org.api.patch(`${P}/organizations/${org.organizationId}`, { allotments: { teams: { limit: 0, grace_limit: 2147483647 } } })).status).toBe(
        200,
      );
      expect((await org.api.get(`${P}/organizations/${org.organizationId}`)).body.name).not.toBe('Changed');
    });

    it("a child's allotments are set by its parent, not by the child itself", async () => {
      const parent = await createOrg(t);
      const kid = await createOrg(t, 'Kid', parent.organizationId);
      const self = await kid.api.patch(`${P}/organizations/${kid.organizationId}`, { name: 'Kid 2', allotments: { teams: { limit: 99 } } });
      expect(self.status).toBe(403);
      expect(self.body.code).toBe('forbidden');
      expect((await kid.api.get(`${P}/organizations/${kid.organizationId}`)).body.name).toBe('Kid');
      expect((await kid.api.patch(`${P}/organizations/${kid.organizationId}`, { name: 'Kid 2' })).status).toBe(200);
      const byParent = await parent.api.patch(`${P}/organizations/${kid.organizationId}`, { allotments: { teams: { limit: 5, enforced: true } } });
      expect(byParent.status).toBe(200);
      const a = await kid.api.get(`${P}/organizations/${kid.organizationId}/allotments`);
      expect(a.body.teams).toEqual({ current_usage: 1, limit: 5, grace_limit: 0, enforced: true });
      // A root may set its own.
      expect((await parent.api.patch(`${P}/organizations/${parent.organizationId}`, { allotments: { teams: { limit: 5 } } })).status).toBe(200);
    });

    it('an empty body changes nothing; a missing organization is a 404', async () => {
      const org = await createOrg(t, 'Same');
      const before = (await org.api.get(`${P}/organizations/${org.organizationId}`)).body;
      const res = await org.api.patch(`${P}/organizations/${org.organizationId}`, {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual(before);
      expect((await org.api.patch(`${P}/organizations/999999`, { name: 'x' })).status).toBe(404);
    });
  });

  describe('creation (service, used by the CLI and first start)', () => {
    it('creates the admin team with the organization', async () => {
      const org = await createOrg(t);
      const res = await org.api.get(`${P}/teams?admin=true`);
      expect(res.status).toBe(200);
      expect(res.body.teams).toHaveLength(1);
      expect(res.body.teams[0]).toMatchObject({ name: 'Administrators', is_admin: true, account_id: org.organizationId });
    });

    it('migration 0005 backfills account_id and the missing admin teams of existing organizations', async () => {
      const db = t.database.db;
      // Back to the state an older build left: 0005 not applied, no account_id, no admin team.
      await m0005.down(db);
      await db
        .deleteFrom('kysely_migration' as never)
        .where('name' as never, '=', '0005_accounts_more' as never)
        .execute();
      const now = Math.floor(Date.now() / 1000);
      const top = await db
        .insertInto('organizations')
        .values({ name: 'Legacy top', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const mid = await db
        .insertInto('organizations')
        .values({ name: 'Legacy mid', parent_id: top.id, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const leaf = await db
        .insertInto('organizations')
        .values({ name: 'Legacy leaf', parent_id: mid.id, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await migrateToLatest(db);
      const rows = await db.selectFrom('organizations').select(['id', 'account_id']).where('id', 'in', [top.id, mid.id, leaf.id]).orderBy('id').execute();
      expect(rows.map((r) => r.account_id)).toEqual([top.id, top.id, top.id]);
      for (const id of [top.id, mid.id, leaf.id]) {
        const admins = await db.selectFrom('teams').select(['name', 'is_admin']).where('organization_id', '=', id).execute();
        expect(admins.map((a) => [a.name, Boolean(a.is_admin)])).toEqual([['Administrators', true]]);
      }
      // Organizations that had their admin team keep exactly one; the indexes are back.
      const perOrg = await sql<{ n: number }>`select count(*) as n from teams where is_admin = ${true} group by organization_id having count(*) > 1`.execute(
        db,
      );
      expect(perOrg.rows).toEqual([]);
      await expect(
        db.insertInto('teams').values({ organization_id: top.id, name: 'Second admin', is_admin: true, created_at: now, updated_at: now }).execute(),
      ).rejects.toThrow();
      await expect(
        db.insertInto('teams').values({ organization_id: top.id, name: 'ADMINISTRATORS', created_at: now, updated_at: now }).execute(),
      ).rejects.toThrow();
    });

    it('refuses an unknown parent and creates nothing', async () => {
      const count = async () =>
        Number(
          (
            await t.database.db
              .selectFrom('organizations')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const teams = async () =>
        Number(
          (
            await t.database.db
              .selectFrom('teams')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const [orgsBefore, teamsBefore] = [await count(), await teams()];
      await expect(t.services.organizations.createWithOwner('Orphan', 999999)).rejects.toMatchObject({ code: 'not_found' });
      await expect(t.services.organizations.createWithOwner('   ')).rejects.toMatchObject({ code: 'validation_failed' });
      expect(await count()).toBe(orgsBefore);
      expect(await teams()).toBe(teamsBefore);
    });
  });
});
