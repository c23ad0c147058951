import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, createUser, userClient, type OrgContext } from './helpers/factories.ts';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const P = '/dashboard/v1';

describe.each(dialects)('API tokens (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());

  it('creates a token with a role, shows its secret once, lists it without, and revokes it at once', async () => {
    const created = await org.api.post(`${P}/api_tokens`, { name: 'CRM sync', role: 'editor' });
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.body).toMatchObject({ name: 'CRM sync', role: 'editor', user_id: null, user_email: null, token: expect.stringMatching(/^rb_/) });
    const crm = client(t.app, created.body.token);
    expect((await crm.post(`${P}/players`, { name: 'From the CRM' })).status).toBe(201);
    // An editor's token may not manage tokens.
    expect((await crm.get(`${P}/api_tokens`)).status).toBe(403);

    const listed = await org.api.get(`${P}/api_tokens`);
    expect(listed.status).toBe(200);
    const entry = listed.body.find((x: any) => x.id === created.body.id);
    expect(entry).toEqual({ id: created.body.id, name: 'CRM sync', role: 'editor', user_id: null, user_email: null, created_at: expect.any(Number) });
    expect(listed.raw).not.toContain(created.body.token);
    expect(JSON.stringify(listed.body)).not.toMatch(/token_hash|rb_/);

    const revoked = await org.api.delete(`${P}/api_tokens/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.id).toBe(created.body.id);
    expect((await crm.get(`${P}/players`)).status).toBe(401);
    expect((await org.api.delete(`${P}/api_tokens/${created.body.id}`)).status).toBe(404);
  });

  it('a role creates and revokes tokens up to its own; a user token shows its user and current role', async () => {
    const admin = await org.as('admin');
    expect((await admin.post(`${P}/api_tokens`, { name: 'too strong', role: 'owner' })).status).toBe(403);
    const ok = await admin.post(`${P}/api_tokens`, { name: 'fine', role: 'admin' });
    expect(ok.status).toBe(201);
    const owners = await org.api.post(`${P}/api_tokens`, { name: 'owners only', role: 'owner' });
    expect((await admin.delete(`${P}/api_tokens/${owners.body.id}`)).status).toBe(403);
    expect((await client(t.app, owners.body.token).get(`${P}/players`)).status).toBe(200);

    const user = await createUser(org.api, { role_id: 3 });
    await userClient(t, org.organizationId, user.id, 'editor');
    const mine = (await org.api.get(`${P}/api_tokens`)).body.find((x: any) => x.user_id === user.id);
    expect(mine).toMatchObject({ role: 'editor', user_email: user.email });
    await org.api.patch(`${P}/users`, { id: user.id, role_id: 4 });
    expect((await org.api.get(`${P}/api_tokens`)).body.find((x: any) => x.user_id === user.id).role).toBe('viewer');
  });

  it("a token made by a person acts at most with the person's role and goes with them; its secret is never kept for a replay", async () => {
    const person = await createUser(org.api, { role_id: 2 });
    const asPerson = await userClient(t, org.organizationId, person.id, 'admin');
    const made = await asPerson.post(`${P}/api_tokens`, { name: 'made by a person', role: 'admin' }, { 'idempotency-key': 'token-once' });
    expect(made.status).toBe(201);
    const token = client(t.app, made.body.token);
    expect((await token.get(`${P}/api_tokens`)).status).toBe(200);
    // The same Idempotency-Key makes another token: no answer with a secret is stored to be replayed.
    const again = await asPerson.post(`${P}/api_tokens`, { name: 'made by a person', role: 'admin' }, { 'idempotency-key': 'token-once' });
    expect(again.status).toBe(201);
    expect(again.body.token).not.toBe(made.body.token);
    const stored = await t.database.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(made.body.token);
    // Demoted: the token follows down; removed: the token is gone.
    await org.api.patch(`${P}/users`, { id: person.id, role_id: 3 });
    expect((await token.get(`${P}/api_tokens`)).status).toBe(403);
    expect((await token.post(`${P}/players`, { name: 'still an editor' })).status).toBe(201);
    expect((await org.api.get(`${P}/api_tokens`)).body.find((x: any) => x.id === made.body.id).role).toBe('editor');
    await org.api.delete(`${P}/users/${person.id}`);
    expect((await token.get(`${P}/players`)).status).toBe(401);
    expect((await org.api.get(`${P}/api_tokens`)).body.map((x: any) => x.id)).not.toContain(made.body.id);
  });

  it('a blank name is refused', async () => {
    const res = await org.api.post(`${P}/api_tokens`, { name: '   ', role: 'viewer' });
    expect(res.status).toBe(422);
    expect(res.raw).toContain('name');
  });

  it("another organization's token is answered like a missing one; bad input is a 4xx and creates nothing", async () => {
    const other = await createOrg(t);
    const theirs = await other.api.post(`${P}/api_tokens`, { name: 'theirs', role: 'viewer' });
    expect((await org.api.delete(`${P}/api_tokens/${theirs.body.id}`)).status).toBe(404);
    expect((await org.api.get(`${P}/api_tokens`)).body.map((x: any) => x.id)).not.toContain(theirs.body.id);
    const before = (await org.api.get(`${P}/api_tokens`)).body.length;
    for (const body of [
      {},
      { name: '' },
      { name: 'x', role: 'king' },
      { name: 'x'.repeat(300), role: 'viewer' },
      { name: 'a\u0000b', role: 'viewer' },
      { role: 'viewer' },
    ]) {
      const res = await org.api.post(`${P}/api_tokens`, body);
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect((await org.api.get(`${P}/api_tokens`)).body.length).toBe(before);
    expect((await org.api.delete(`${P}/api_tokens/abc`)).status).toBe(404);
  });
});
