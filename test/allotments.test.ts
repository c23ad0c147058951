import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, createUser, type OrgContext } from './helpers/factories.ts';
import { openDatabase } from '../src/db/database.ts';
import { loadConfig } from '../src/config.ts';
import { createContainer } from '../src/container.ts';

const P = '/dashboard/v1';
const USAGE_KEYS = ['current_usage', 'enforced', 'grace_limit', 'limit'];
const unlimited = (current_usage: number) => ({ current_usage, limit: 0, grace_limit: 0, enforced: false });

const embedEnabled = async (t: TestApp, uuid: string) =>
  Boolean((await t.database.db.selectFrom('players').select('embed_enabled').where('uuid', '=', uuid).executeTakeFirstOrThrow()).embed_enabled);

describe.each(dialects)('allotments and player embeds on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let child: OrgContext;
  let stranger: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    child = await createOrg(t, 'Child', org.organizationId);
    stranger = await createOrg(t);
  });
  afterAll(() => t.close());

  describe('GET /v1/organizations/:organization_id/allotments', () => {
    it('answers govideo_users and teams by default, each with the exact shape; no limit row means unlimited', async () => {
      const o = await createOrg(t);
      const res = await o.api.get(`${P}/organizations/${o.organizationId}/allotments`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['govideo_users', 'teams']);
      for (const key of ['govideo_users', 'teams']) {
        expect(Object.keys(res.body[key]).sort()).toEqual(USAGE_KEYS);
        for (const k of ['current_usage', 'limit', 'grace_limit']) expect(Number.isInteger(res.body[key][k])).toBe(true);
        expect(typeof res.body[key].enforced).toBe('boolean');
      }
      expect(res.body).toEqual({ govideo_users: unlimited(0), teams: unlimited(1) });
    });

    it('counts users, teams and embed-enabled players', async () => {
      const o = await createOrg(t);
      await createUser(o.api);
      await createUser(o.api);
      await o.api.post(`${P}/teams`, { name: 'One' });
      const p1 = await createPlayer(o.api);
      await createPlayer(o.api);
      await o.api.delete(`${P}/players/uuid=${p1.uuid}/embed`);
      const res = await o.api.get(`${P}/organizations/${o.organizationId}/allotments?types[]=govideo_users&types[]=teams&types[]=embeds`);
      expect(res.body).toEqual({ govideo_users: unlimited(2), teams: unlimited(2), embeds: unlimited(1) });
    });

    it('types selects, in any of the three query array forms; duplicates are harmless', async () => {
      const base = `${P}/organizations/${org.organizationId}/allotments`;
      const keys = async (qs: string) => {
        const res = await org.api.get(`${base}?${qs}`);
        expect(res.status, qs).toBe(200);
        return Object.keys(res.body).sort();
      };
      expect(await keys('types[]=embeds')).toEqual(['embeds']);
      expect(await keys('types=embeds&types=teams')).toEqual(['embeds', 'teams']);
      expect(await keys('types=embeds,govideo_users')).toEqual(['embeds', 'govideo_users']);
      expect(await keys('types[]=teams&types[]=teams')).toEqual(['teams']);
      expect(await keys('types=')).toEqual(['govideo_users', 'teams']);
      expect(await keys('types=govideo_users,teams,embeds')).toEqual(['embeds', 'govideo_users', 'teams']);
    });

    it('an unknown type is a 422 naming types', async () => {
      for (const qs of ['types[]=seats', 'types=teams,seats', 'types[]=Teams']) {
        const res = await org.api.get(`${P}/organizations/${org.organizationId}/allotments?${qs}`);
        expect(res.status, qs).toBe(422);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.details[0].field).toBe('types');
        expect(res.body.error).toMatch(/allowed: govideo_users, teams, embeds/);
      }
    });

    it("a parent sees its children's allotments; a child sees neither its parent's nor a stranger's (404)", async () => {
      expect((await org.api.get(`${P}/organizations/${child.organizationId}/allotments`)).status).toBe(200);
      expect((await child.api.get(`${P}/organizations/${child.organizationId}/allotments`)).status).toBe(200);
      expect((await child.api.get(`${P}/organizations/${org.organizationId}/allotments`)).status).toBe(404);
      expect((await stranger.api.get(`${P}/organizations/${org.organizationId}/allotments`)).status).toBe(404);
      expect((await org.api.get(`${P}/organizations/999999/allotments`)).status).toBe(404);
      expect((await org.api.get(`${P}/organizations/abc/allotments`)).status).toBe(404);
    });

    it('every role may read; no token is a 401', async () => {
      expect((await (await org.as('viewer')).get(`${P}/organizations/${org.organizationId}/allotments.json`)).status).toBe(200);
      const anon = await client(t.app).get(`${P}/organizations/${org.organizationId}/allotments`);
      expect(anon.status).toBe(401);
    });
  });

  describe('POST and DELETE /v1/players/uuid=:uuid/embed', () => {
    it('disable and enable embedding; the embeds allotment follows by 1', async () => {
      const o = await createOrg(t);
      const player = await createPlayer(o.api);
      const usage = async () => (await o.api.get(`${P}/organizations/${o.organizationId}/allotments?types[]=embeds`)).body.embeds.current_usage;
      // A new player is embeddable (the players' default).
      expect(await usage()).toBe(1);
      const off = await o.api.delete(`${P}/players/uuid=${player.uuid}/embed`);
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ success: true, embed_enabled: false });
      expect(await embedEnabled(t, player.uuid)).toBe(false);
      const read = await (await o.as('viewer')).get(`${P}/players/uuid=${player.uuid}/embed`);
      expect([read.status, read.body]).toEqual([200, { embed_enabled: false }]);
      expect(await usage()).toBe(0);
      const again = await o.api.delete(`${P}/players/uuid=${player.uuid}/embed.json`);
      expect(again.body).toEqual({ success: true, embed_enabled: false });
      expect(await usage()).toBe(0);
      const on = await o.api.post(`${P}/players/uuid=${player.uuid}/embed`);
      expect(on.status).toBe(201);
      expect(on.body).toEqual({ success: true, embed_enabled: true });
      expect(await embedEnabled(t, player.uuid)).toBe(true);
      expect((await o.api.get(`${P}/players/uuid=${player.uuid}/embed.json`)).body).toEqual({ embed_enabled: true });
      expect(await usage()).toBe(1);
      expect((await o.api.post(`${P}/players/uuid=${player.uuid}/embed`)).body).toEqual({ success: true, embed_enabled: true });
      expect(await usage()).toBe(1);
    });

    it('when enforced, enabling past limit + grace_limit is 403 allotment_exceeded and changes nothing', async () => {
      const o = await createOrg(t);
      const players = [await createPlayer(o.api), await createPlayer(o.api), await createPlayer(o.api)];
      for (const p of players) await o.api.delete(`${P}/players/uuid=${p.uuid}/embed`);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { embeds: { limit: 1, grace_limit: 1, enforced: true } } });
      expect((await o.api.post(`${P}/players/uuid=${players[0].uuid}/embed`)).status).toBe(201);
      expect((await o.api.post(`${P}/players/uuid=${players[1].uuid}/embed`)).status).toBe(201);
      const res = await o.api.post(`${P}/players/uuid=${players[2].uuid}/embed`);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('allotment_exceeded');
      expect(await embedEnabled(t, players[2].uuid)).toBe(false);
      // Enabling an already enabled player is no new embed.
      expect((await o.api.post(`${P}/players/uuid=${players[0].uuid}/embed`)).status).toBe(201);
      // Disabling one frees a place.
      await o.api.delete(`${P}/players/uuid=${players[0].uuid}/embed`);
      expect((await o.api.post(`${P}/players/uuid=${players[2].uuid}/embed`)).status).toBe(201);
      const usage = await o.api.get(`${P}/organizations/${o.organizationId}/allotments?types=embeds`);
      expect(usage.body.embeds).toEqual({ current_usage: 2, limit: 1, grace_limit: 1, enforced: true });
    });

    it('concurrent enables never overshoot the embeds allotment', async () => {
      const o = await createOrg(t);
      const players = [];
      for (let i = 0; i < 8; i++) players.push(await createPlayer(o.api));
      for (const p of players) await o.api.delete(`${P}/players/uuid=${p.uuid}/embed`);
      await o.api.patch(`${P}/organizations/${o.organizationId}`, { allotments: { embeds: { limit: 2, grace_limit: 1, enforced: true } } });
      const results = await Promise.all(players.map((p) => o.api.post(`${P}/players/uuid=${p.uuid}/embed`)));
      expect(results.filter((r) => r.status === 201)).toHaveLength(3);
      expect(results.filter((r) => r.status === 403)).toHaveLength(5);
      const usage = await o.api.get(`${P}/organizations/${o.organizationId}/allotments?types=embeds`);
      expect(usage.body.embeds.current_usage).toBe(3);
    });

    it("another organization's or an unknown player is a 404; viewers may not; no token is a 401", async () => {
      const player = await createPlayer(org.api);
      expect((await stranger.api.get(`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(404);
      expect((await client(t.app).get(`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(401);
      for (const method of ['post', 'delete'] as const) {
        expect((await stranger.api[method](`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(404);
        expect((await child.api[method](`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(404);
        expect((await org.api[method](`${P}/players/uuid=no-such-player/embed`)).status).toBe(404);
        const viewer = await (await org.as('viewer'))[method](`${P}/players/uuid=${player.uuid}/embed`);
        expect(viewer.status).toBe(403);
        expect((await client(t.app)[method](`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(401);
      }
      expect(await embedEnabled(t, player.uuid)).toBe(true);
      expect((await (await org.as('editor')).delete(`${P}/players/uuid=${player.uuid}/embed`)).status).toBe(200);
    });
  });
});

describe('admin CLI: org limits and token create --user (SQLite)', () => {
  const run = promisify(execFile);
  let dir: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-cli-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(...args: string[]): Promise<{ code: number; last: any }> {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    try {
      const { stdout } = await run(process.execPath, ['scripts/cli.mjs', ...args], { env, cwd: path.resolve(import.meta.dirname, '..') });
      return { code: 0, last: JSON.parse(stdout.trim().split('\n').at(-1)!) };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, last: JSON.parse(e.stdout.trim().split('\n').at(-1)!) };
    }
  }

  it('sets a limit and prints the usage as the last JSON line; refuses bad input', async () => {
    const created = await cli('org', 'create', '--name', 'CLI Org');
    expect(created.code).toBe(0);
    const orgId = created.last.organization_id;
    const set = await cli('org', 'limits', '--org', String(orgId), '--type', 'teams', '--limit', '5', '--grace', '1', '--enforced', 'true');
    expect(set.code).toBe(0);
    expect(set.last).toEqual({ organization_id: orgId, type: 'teams', current_usage: 1, limit: 5, grace_limit: 1, enforced: true });
    const partial = await cli('org', 'limits', '--org', String(orgId), '--type', 'teams', '--enforced', 'false');
    expect(partial.last).toEqual({ organization_id: orgId, type: 'teams', current_usage: 1, limit: 5, grace_limit: 1, enforced: false });
    const users = await cli('org', 'limits', '--org', String(orgId), '--type', 'govideo_users', '--limit', '0');
    expect(users.last).toMatchObject({ type: 'govideo_users', current_usage: 0, limit: 0, grace_limit: 0, enforced: false });

    const bad = [
      ['--org', String(orgId), '--type', 'seats', '--limit', '1'],
      ['--org', String(orgId), '--type', 'teams', '--limit', '-1'],
      ['--org', String(orgId), '--type', 'teams', '--limit', 'many'],
      ['--org', String(orgId), '--type', 'teams', '--enforced', 'yes'],
      ['--org', '999999', '--type', 'teams', '--limit', '1'],
    ];
    const results = await Promise.all(bad.map((args) => cli('org', 'limits', ...args)));
    results.forEach((res, i) => {
      expect(res.code, bad[i].join(' ')).not.toBe(0);
      expect(typeof res.last.error).toBe('string');
    });
  }, 240_000);

  it('token create --user mints a token acting as that user', async () => {
    const created = await cli('org', 'create', '--name', 'Users Org');
    const orgId = created.last.organization_id;
    const database = openDatabase({ sqlitePath: path.join(dir, 'reelbase.sqlite') });
    try {
      const { services } = createContainer({
        config: loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SIGNING_SECRET: 'cli-test-signing-secret-0123' }),
        database,
      });
      const user = await services.users.create('owner', orgId, { email: 'cli@example.com', role_id: 3 });
      const minted = await cli('token', 'create', '--org', String(orgId), '--user', String(user.id));
      expect(minted.code).toBe(0);
      expect(minted.last).toMatchObject({ user_id: user.id, role: 'editor' });
      const auth = await services.tokens.authenticate(minted.last.auth_token);
      expect(auth).toMatchObject({ organizationId: orgId, userId: user.id, role: 'editor' });
      const [mismatch, stranger, plain, noRole] = await Promise.all([
        cli('token', 'create', '--org', String(orgId), '--user', String(user.id), '--role', 'owner'),
        cli('token', 'create', '--org', String(orgId), '--user', '999999'),
        cli('token', 'create', '--org', String(orgId), '--role', 'viewer'),
        cli('token', 'create', '--org', String(orgId)),
      ]);
      expect(mismatch.code).not.toBe(0);
      expect(stranger.code).not.toBe(0);
      expect(stranger.last.error).toMatch(/no user 999999/);
      expect(plain.code).toBe(0);
      expect(Object.keys(plain.last)).toEqual(['auth_token']);
      expect(noRole.code).not.toBe(0);
    } finally {
      await database.destroy();
    }
  }, 240_000);
});
