import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, createUser, userClient, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
// The change clock looks for other connections' commits once a millisecond has passed (docs/performance.md).
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 3));

/**
 * Token lookups and records read by id are answered from memory while nothing in the database has
 * changed (src/db/read-cache.ts). These tests read everything twice first, so that the second read
 * is a cached one, then change the database and check that the next request sees the change.
 */
describe.each(dialects)('read cache on %s', (dialect) => {
  let t: TestApp;
  let dir: string;
  let other: Database;
  let org: OrgContext;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-cache-'));
    // A file, not :memory:, so that a second connection (another process) can open the same database.
    t = await createTestApp(dialect, {}, { sqlitePath: path.join(dir, 'reelbase.sqlite') });
    other = t.openAnother();
    org = await createOrg(t);
  });

  afterAll(async () => {
    await other.destroy();
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function newCta(api = org.api) {
    const player = await createPlayer(api);
    const res = await api.post(`${P}/ctas`, { chapter_id: player.chapters_attributes[0].id, second: 1, duration: 5, width: 200, html: 'before' });
    expect(res.status).toBe(201);
    return res.body as { id: number };
  }

  async function readTwice(url: string, api = org.api) {
    const first = await api.get(url);
    const second = await api.get(url);
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    return second;
  }

  it('answers a change another connection committed on the next request', async () => {
    const cta = await newCta();
    expect((await readTwice(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
    await other.db.updateTable('events').set({ html: 'changed elsewhere' }).where('id', '=', cta.id).execute();
    await nextTurn();
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('changed elsewhere');
  });

  it('refuses a token another connection deleted, on the next request', async () => {
    const viewer = await org.as('viewer');
    await readTwice(`${P}/players`, viewer);
    await other.db.deleteFrom('api_tokens').where('role', '=', 'viewer').where('organization_id', '=', org.organizationId).execute();
    await nextTurn();
    expect((await viewer.get(`${P}/players`)).status).toBe(401);
  });

  it("follows a role changed by another connection, and stops a removed user's token", async () => {
    const user = await createUser(org.api, { role_id: 2 });
    const asUser = await userClient(t, org.organizationId, user.id, 'admin');
    const cta = await newCta();
    expect((await asUser.patch(`${P}/ctas/${cta.id}`, { html: 'by an admin' })).status).toBe(200);
    await readTwice(`${P}/ctas/${cta.id}`, asUser);
    await other.db.updateTable('users').set({ role: 'viewer' }).where('id', '=', user.id).execute();
    await nextTurn();
    expect((await asUser.patch(`${P}/ctas/${cta.id}`, { html: 'by a viewer' })).status).toBe(403);
    expect((await asUser.get(`${P}/ctas/${cta.id}`)).body.html).toBe('by an admin');
    await other.db.deleteFrom('users').where('id', '=', user.id).execute();
    await nextTurn();
    expect((await asUser.get(`${P}/ctas/${cta.id}`)).status).toBe(401);
  });

  it('sees its own writes at once, with no turn in between', async () => {
    const cta = await newCta();
    await readTwice(`${P}/ctas/${cta.id}`);
    const [patched, read] = [await org.api.patch(`${P}/ctas/${cta.id}`, { html: 'after' }), await org.api.get(`${P}/ctas/${cta.id}`)];
    expect(patched.status).toBe(200);
    expect(read.body.html).toBe('after');
    expect((await org.api.delete(`${P}/ctas/${cta.id}`)).status).toBe(200);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).status).toBe(404);
  });

  it("answers another organization's cached record like a missing one", async () => {
    const cta = await newCta();
    const stranger = await createOrg(t);
    await readTwice(`${P}/ctas/${cta.id}`);
    const res = await stranger.api.get(`${P}/ctas/${cta.id}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect((await stranger.api.patch(`${P}/ctas/${cta.id}`, { html: 'not yours' })).status).toBe(404);
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
  });

  it('does not serve a read made inside a transaction that rolled back', async () => {
    const cta = await newCta();
    await readTwice(`${P}/ctas/${cta.id}`);
    await expect(
      t.database.db.transaction().execute(async (trx) => {
        await trx.updateTable('events').set({ html: 'rolled back' }).where('id', '=', cta.id).execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect((await org.api.get(`${P}/ctas/${cta.id}`)).body.html).toBe('before');
  });
});
