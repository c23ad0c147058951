import rateLimit from '@fastify/rate-limit';
import Fastify, { type RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createUser, userClient, type OrgContext } from './helpers/factories.ts';
import { dashboardModules } from '../src/modules/index.ts';
import { can, Permissions, Roles, type Permission, type Role } from '../src/modules/roles/permissions.ts';

const P = '/dashboard/v1';

const expected: Record<Role, { id: number; permissions: string[] }> = {
  owner: {
    id: 1,
    permissions: ['content:read', 'content:write', 'live:manage', 'users:manage', 'teams:manage', 'webhooks:manage', 'security:manage', 'org:manage'],
  },
  admin: { id: 2, permissions: ['content:read', 'content:write', 'live:manage', 'users:manage', 'teams:manage', 'webhooks:manage', 'security:manage'] },
  editor: { id: 3, permissions: ['content:read', 'content:write', 'live:manage'] },
  viewer: { id: 4, permissions: ['content:read'] },
};

interface WriteRoute {
  method: string;
  url: string;
  permission: Permission;
}

/**
 * Every write operation the app registers, with the permission it needs: the dashboard modules are
 * registered once more on a bare instance whose onRoute hook records each route's config.
 */
async function writeRoutes(t: TestApp): Promise<WriteRoute[]> {
  const collector = Fastify();
  const seen: RouteOptions[] = [];
  collector.addHook('onRoute', (route) => {
    seen.push(route);
  });
  // Modules that limit public requests (sign-in) make their limits as they register.
  await collector.register(rateLimit, { global: false });
  await collector.register(
    async (dashboard) => {
      for (const mod of dashboardModules) await mod(dashboard, { config: t.config, services: t.services });
    },
    { prefix: '/dashboard' },
  );
  // Lets the modules release what they hold (close hooks); the collector never serves a request.
  await collector.close();
  const out: WriteRoute[] = [];
  for (const route of seen) {
    const config = (route.config ?? {}) as { public?: boolean; permission?: Permission };
    if (config.public) continue;
    for (const method of [route.method].flat()) {
      if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') continue;
      out.push({ method, url: route.url, permission: config.permission ?? 'content:write' });
    }
  }
  return out;
}

/** A concrete URL for a route: path parameters become ids that name nothing. */
function concrete(url: string): string {
  return url
    .replace(/:(\w+)/g, (_m, name: string) => (name === 'uuid' || name.endsWith('uuid') ? '00000000-0000-4000-8000-000000000000' : '999999'))
    .replace(/\*/g, 'x');
}

describe.each(dialects)('roles on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  it('GET /v1/roles lists owner, admin, editor, viewer with stable ids 1..4 and their permissions', async () => {
    const res = await org.api.get(`${P}/roles`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(Roles.map((name) => ({ id: expected[name].id, name, permissions: expected[name].permissions })));
    for (const r of res.body) expect(Object.keys(r).sort()).toEqual(['id', 'name', 'permissions']);
  });

  it('the permissions answered are the matrix of permissions.ts', async () => {
    const res = await org.api.get(`${P}/roles`);
    for (const r of res.body) {
      for (const p of Permissions) expect(r.permissions.includes(p), `${r.name} ${p}`).toBe(can(r.name, p));
    }
  });

  it('GET /v1/roles/:id answers one role; unknown and malformed ids are 404', async () => {
    for (const name of Roles) {
      const res = await org.api.get(`${P}/roles/${expected[name].id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: expected[name].id, name, permissions: expected[name].permissions });
    }
    for (const id of ['0', '5', '999999', 'abc', '-1']) {
      const res = await org.api.get(`${P}/roles/${id}`);
      expect(res.status, id).toBe(404);
    }
    expect((await org.api.get(`${P}/roles/2.json`)).body.name).toBe('admin');
  });

  it("GET /v1/roles/current answers the token's role, for every role", async () => {
    for (const name of Roles) {
      const api = name === 'owner' ? org.api : await org.as(name);
      const res = await api.get(`${P}/roles/current`);
      expect(res.status, name).toBe(200);
      expect(res.body).toEqual({ id: expected[name].id, name, permissions: expected[name].permissions });
    }
  });

  it("a user's token answers the user's current role, following role changes", async () => {
    const user = await createUser(org.api, { role_id: 4 });
    const api = await userClient(t, org.organizationId, user.id, 'viewer');
    expect((await api.get(`${P}/roles/current`)).body.name).toBe('viewer');
    expect((await org.api.patch(`${P}/users`, { id: user.id, role_id: 2 })).status).toBe(200);
    expect((await api.get(`${P}/roles/current`)).body).toMatchObject({ id: 2, name: 'admin' });
  });

  it('every role may read the roles; no token is a 401', async () => {
    for (const name of ['admin', 'editor', 'viewer'] as const) {
      expect((await (await org.as(name)).get(`${P}/roles`)).status).toBe(200);
    }
    expect((await client(t.app).get(`${P}/roles`)).status).toBe(401);
    expect((await client(t.app).get(`${P}/roles/current`)).status).toBe(401);
    expect((await client(t.app).get(`${P}/roles/1`)).status).toBe(401);
  });

  describe('the role matrix over every write operation of the app', () => {
    let routes: WriteRoute[];

    beforeAll(async () => {
      routes = await writeRoutes(t);
    });

    it('finds the write operations, each registered in the running app', () => {
      expect(routes.length).toBeGreaterThan(20);
      for (const r of routes) expect(t.app.hasRoute({ method: r.method, url: r.url }), `${r.method} ${r.url}`).toBe(true);
      const names = routes.map((r) => `${r.method} ${r.url}`);
      for (const mine of [
        'POST /dashboard/v1/users',
        'PATCH /dashboard/v1/users',
        'DELETE /dashboard/v1/users/:id',
        'POST /dashboard/v1/teams',
        'PATCH /dashboard/v1/teams/:id',
        'DELETE /dashboard/v1/teams/:id',
        'PATCH /dashboard/v1/organizations/:id',
        'POST /dashboard/v1/players/uuid=:uuid/embed',
        'DELETE /dashboard/v1/players/uuid=:uuid/embed',
      ]) {
        expect(names).toContain(mine);
      }
    });

    for (const role of Roles) {
      it(`${role}: 403 exactly where the role lacks the route's permission`, async () => {
        const api = role === 'owner' ? org.api : await org.as(role);
        const wrong: string[] = [];
        for (const r of routes) {
          const res = await api.request(r.method, concrete(r.url), {});
          // The concrete URL must reach the route itself, not the not-found handler.
          if (res.body?.code === 'route_not_found') wrong.push(`${r.method} ${r.url} did not match`);
          const allowed = can(role, r.permission);
          const ok = allowed ? res.status !== 403 && res.status !== 401 && res.status < 500 : res.status === 403 && res.body?.code === 'forbidden';
          if (!ok) wrong.push(`${r.method} ${r.url} (${r.permission}) → ${res.status} ${res.raw.slice(0, 160)}`);
        }
        expect(wrong).toEqual([]);
      });
    }
  });
});
