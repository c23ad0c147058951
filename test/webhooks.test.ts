import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { BROWSER_UA, createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { startOrigin, verifySignature as verify } from './helpers/media.ts';

const P = '/dashboard/v1';

/**
 * Analytics and player webhooks (docs/webhooks.md): registration on the wire, player changes and
 * viewers' reports delivered as signed POSTs by the job queue.
 */
describe.each(dialects)('webhooks on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let origin: Awaited<ReturnType<typeof startOrigin>>;
  let runner: JobRunner;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-webhooks-'));
    origin = await startOrigin(dir);
    t = await createTestApp(dialect, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${origin.port}`, DATA_DIR: dir });
    org = await createOrg(t, 'Hooked Org');
    runner = new JobRunner(t.database.db, {
      handlers: jobHandlers(createContainer({ config: t.config, database: t.database })),
      backoff: () => 10,
      pollMs: 10,
    });
  });

  afterAll(async () => {
    await t.close();
    await origin.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the queue until no webhook message is waiting. */
  async function deliver() {
    for (const end = Date.now() + 20_000; ;) {
      await runner.drain();
      const open = await t.database.db
        .selectFrom('jobs')
        .select('id')
        .where('type', '=', 'webhook.notify')
        .where('status', 'in', ['queued', 'running'])
        .execute();
      if (open.length === 0) return;
      if (Date.now() > end) throw new Error('webhook messages still open');
      await new Promise((r) => setTimeout(r, 15));
    }
  }

  const hooksFor = (tag: string) => origin.hooks().filter((h) => h.url === `/hook?${tag}`);

  describe('registration', () => {
    it('registers an analytics webhook (201), lists it without its key, and deletes it', async () => {
      const res = await org.api.post(`${P}/organizations/${org.organizationId}/webhooks/analytics`, {
        url: 'https://hooks.example.com/a',
        security_key: 'my-shared-secret',
        event_subscriptions: ['view'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ webhook_id: expect.any(Number), status: 'Successfully registered the webhook', security_key: 'my-shared-secret' });
      const list = await org.api.get(`${P}/organizations/${org.organizationId}/webhooks/analytics`);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([
        {
          id: res.body.webhook_id,
          url: 'https://hooks.example.com/a',
          event_subscriptions: ['view'],
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
      ]);
      expect(list.raw).not.toContain('my-shared-secret');
      const csv = await org.api.get(`${P}/organizations/${org.organizationId}/webhooks/analytics`, { accept: 'text/csv' });
      expect(csv.status).toBe(200);
      expect(csv.raw.split('\n')[0]).toBe('id,url,event_subscriptions,created_at,updated_at');
      const deleted = await org.api.delete(`${P}/organizations/${org.organizationId}/webhooks/analytics/${res.body.webhook_id}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ status: 'Successfully deleted the webhook' });
      expect((await org.api.delete(`${P}/organizations/${org.organizationId}/webhooks/analytics/${res.body.webhook_id}`)).status).toBe(404);
    });

    it('makes a key when none is given, subscribes to every event by default, and takes the wrapped body', async () => {
      const res = await org.api.post(`${P}/organizations/${org.organizationId}/webhooks/players`, { webhook: { url: 'https://hooks.example.com/p' } });
      expect(res.status).toBe(201);
      expect(res.body.security_key).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      const [hook] = (await org.api.get(`${P}/organizations/${org.organizationId}/webhooks/players`)).body.filter((h: any) => h.id === res.body.webhook_id);
      expect(hook.event_subscriptions).toEqual([
        'videofacade_create',
        'videofacade_update',
        'videofacade_destroy',
        'playlist_create',
        'playlist_update',
        'playlist_destroy',
      ]);
      // An analytics id is not a player webhook's.
      expect((await org.api.delete(`${P}/organizations/${org.organizationId}/webhooks/analytics/${res.body.webhook_id}`)).status).toBe(404);
      expect((await org.api.delete(`${P}/organizations/${org.organizationId}/webhooks/players/${res.body.webhook_id}`)).status).toBe(200);
    });

    it('refuses bad bodies with 4xx and registers nothing', async () => {
      const url = `${P}/organizations/${org.organizationId}/webhooks/analytics`;
      const before = (await org.api.get(url)).body.length;
      for (const body of [
        {},
        { url: 'ftp://hooks.example.com' },
        { url: 'https://hooks.example.com', event_subscriptions: ['playlist_create'] },
        { url: 'https://hooks.example.com', event_subscriptions: [] },
        { url: 'https://hooks.example.com', event_subscriptions: ['view', 'view'] },
        { url: 'https://hooks.example.com', security_key: 'short' },
        { url: 'https://hooks.example.com', security_key: 'has a space in it' },
      ]) {
        const res = await org.api.post(url, body);
        expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
        expect(res.status, JSON.stringify(body)).toBeLessThan(500);
      }
      expect((await org.api.get(url)).body.length).toBe(before);
    });

    it("answers the organization's signing key for video and GDPR webhooks, made once, and replaces it on POST", async () => {
      const url = `${P}/organizations/${org.organizationId}/webhooks/signing_key`;
      const first = await org.api.get(url);
      expect(first.status).toBe(200);
      expect(first.body.signing_key).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect((await org.api.get(url)).body).toEqual(first.body);
      const rotated = await org.api.post(url);
      expect(rotated.status).toBe(201);
      expect(rotated.body.signing_key).not.toBe(first.body.signing_key);
      expect((await org.api.get(url)).body).toEqual(rotated.body);
      expect((await (await org.as('editor')).get(url)).status).toBe(403);
      expect((await (await createOrg(t)).api.get(url)).status).toBe(404);
    });

    it('is for admins and owners, and for their own organization only', async () => {
      const url = `${P}/organizations/${org.organizationId}/webhooks/players`;
      const editor = await org.as('editor');
      expect((await editor.post(url, { url: 'https://hooks.example.com/e' })).status).toBe(403);
      expect((await editor.get(url)).status).toBe(403);
      const admin = await org.as('admin');
      const made = await admin.post(url, { url: 'https://hooks.example.com/admin' });
      expect(made.status).toBe(201);
      const stranger = await createOrg(t);
      expect((await stranger.api.get(url)).status).toBe(404);
      expect((await stranger.api.post(url, { url: 'https://hooks.example.com/s' })).status).toBe(404);
      expect((await stranger.api.delete(`${url}/${made.body.webhook_id}`)).status).toBe(404);
      expect((await stranger.api.delete(`${P}/organizations/${stranger.organizationId}/webhooks/players/${made.body.webhook_id}`)).status).toBe(404);
      expect((await admin.delete(`${url}/${made.body.webhook_id}`)).status).toBe(200);
    });
  });

  describe('deliveries', () => {
    it('a test message is delivered signed; the deliveries list it with its status and attempts, and a failing one with why', async () => {
      const base = `/dashboard/v1/organizations/${org.organizationId}/webhooks/analytics`;
      const ok = await org.api.post(base, { url: `${origin.base}/hook?deliveries-ok` });
      expect(ok.status).toBe(201);
      const sent = await org.api.post(`${base}/${ok.body.webhook_id}/test`);
      expect(sent.status).toBe(202);
      expect(sent.body).toEqual({ delivery_id: expect.any(Number) });
      await deliver();
      const received = hooksFor('deliveries-ok');
      expect(received).toHaveLength(1);
      expect(JSON.parse(received[0].body)).toMatchObject({ type: 'webhook.test', test: true, organization_id: org.organizationId });
      expect(received[0].headers['x-reelbase-delivery']).toBe(String(sent.body.delivery_id));
      expect(verify(received[0], ok.body.security_key)).toBe(true);
      const listed = await org.api.get(`${base}/${ok.body.webhook_id}/deliveries`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([
        {
          id: sent.body.delivery_id,
          event: 'webhook.test',
          status: 'delivered',
          attempts: 1,
          max_attempts: 30,
          last_error: null,
          created_at: expect.any(Number),
          next_attempt_at: null,
          updated_at: expect.any(Number),
        },
      ]);

      const failing = await org.api.post(base, { url: `${origin.base}/status/500` });
      const failed = await org.api.post(`${base}/${failing.body.webhook_id}/test`);
      await deliver();
      const [row] = (await org.api.get(`${base}/${failing.body.webhook_id}/deliveries`)).body;
      expect(row).toMatchObject({ id: failed.body.delivery_id, status: 'failed', attempts: 30, last_error: expect.stringContaining('HTTP 500') });

      // Another organization's webhook, an unknown one, the other kind's path: like missing ones.
      const other = await createOrg(t);
      expect((await other.api.get(`/dashboard/v1/organizations/${other.organizationId}/webhooks/analytics/${ok.body.webhook_id}/deliveries`)).status).toBe(404);
      expect((await other.api.post(`/dashboard/v1/organizations/${other.organizationId}/webhooks/analytics/${ok.body.webhook_id}/test`)).status).toBe(404);
      expect((await org.api.get(`${base}/999999/deliveries`)).status).toBe(404);
      expect((await org.api.get(`/dashboard/v1/organizations/${org.organizationId}/webhooks/players/${ok.body.webhook_id}/deliveries`)).status).toBe(404);
      expect((await (await org.as('editor')).post(`${base}/${ok.body.webhook_id}/test`)).status).toBe(403);
      // Deleted with their webhook.
      expect((await org.api.delete(`${base}/${ok.body.webhook_id}`)).status).toBe(200);
      expect(await t.database.db.selectFrom('webhook_deliveries').select('job_id').where('webhook_id', '=', ok.body.webhook_id).execute()).toEqual([]);
    });
  });

  describe('player changes', () => {
    it("are delivered signed, named after the player's type (playlist_* or videofacade_*), with the player; every way of making a player announces it", async () => {
      const own = await createOrg(t, 'Player Watchers');
      const reg = await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/players`, {
        url: `${origin.base}/hook?players`,
        security_key: 'whsec_c2VjcmV0LWtleS1vZi10aGUtdGVzdA==',
      });
      expect(reg.status).toBe(201);
      const single = await createPlayer(own.api, { name: 'One' }, 1);
      const many = await createPlayer(own.api, { name: 'Two' }, 2);
      // A video alone makes a video facade player, and a live instance too: both announce themselves.
      expect((await own.api.post(`${P}/videos`, { name: 'Alone', upload_url: 'https://media.example.com/a.mp4' })).status).toBe(201);
      const live = await own.api.post(`${P}/organizations/${own.organizationId}/live`, {
        video_options: { video_name: 'On air', description: 'x', stream_tags: [] },
      });
      expect(live.status, live.raw).toBe(201);
      expect((await own.api.patch(`${P}/players/${single.id}`, { name: 'One, renamed' })).status).toBe(200);
      expect((await own.api.delete(`${P}/players/${many.id}`)).status).toBe(200);
      // Another organization's changes are not ours to hear.
      await createPlayer(org.api, { name: 'Elsewhere' });
      await deliver();
      const hooks = hooksFor('players');
      // Messages are independent (the queue runs several at once): compared without order.
      expect(hooks.map((h) => `${JSON.parse(h.body).type} ${JSON.parse(h.body).player.name}`).sort()).toEqual([
        'playlist_create One',
        'playlist_create Two',
        'playlist_destroy Two',
        'playlist_update One, renamed',
        'videofacade_create Alone',
        'videofacade_create On air',
      ]);
      for (const hook of hooks) {
        const body = JSON.parse(hook.body);
        expect(body.type.startsWith(body.player.player_type === 'video_facade' ? 'videofacade_' : 'playlist_')).toBe(true);
      }
      for (const hook of hooks) {
        expect(verify(hook, 'whsec_c2VjcmV0LWtleS1vZi10aGUtdGVzdA==')).toBe(true);
        expect(verify(hook, 'whsec_b3RoZXI=')).toBe(false);
        expect(hook.headers['webhook-id']).toMatch(/^msg_[0-9a-f-]{36}$/);
        expect(Math.abs(Number(hook.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
        const body = JSON.parse(hook.body);
        expect(body).toMatchObject({
          request_id: hook.headers['webhook-id'],
          organization_id: own.organizationId,
          organization_name: 'Player Watchers',
          security_key: 'whsec_c2VjcmV0LWtleS1vZi10aGUtdGVzdA==',
        });
        expect(body.player.uuid).toBe(body.player_uuid);
      }
      expect(JSON.parse(hooks.find((h) => JSON.parse(h.body).type === 'videofacade_create')!.body).player.chapters_attributes).toHaveLength(1);
    });

    it('sends only the events subscribed to, nothing for a rolled-back change, and nothing after deletion', async () => {
      const own = await createOrg(t);
      const reg = await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/players`, {
        url: `${origin.base}/hook?subscribed`,
        event_subscriptions: ['playlist_destroy'],
      });
      const player = await createPlayer(own.api);
      // A failed update (validation) changes nothing and announces nothing.
      expect((await own.api.patch(`${P}/players/${player.id}`, { width: 0 })).status).toBe(422);
      expect((await own.api.delete(`${P}/players/${player.id}`)).status).toBe(200);
      await deliver();
      expect(hooksFor('subscribed').map((h) => JSON.parse(h.body).type)).toEqual(['playlist_destroy']);
      expect((await own.api.delete(`${P}/organizations/${own.organizationId}/webhooks/players/${reg.body.webhook_id}`)).status).toBe(200);
      await own.api.delete(`${P}/players/${(await createPlayer(own.api)).id}`);
      await deliver();
      expect(hooksFor('subscribed')).toHaveLength(1);
    });

    it('announce a chapter added, moved or removed as an update of its player', async () => {
      const own = await createOrg(t);
      await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/players`, {
        url: `${origin.base}/hook?chapters`,
        event_subscriptions: ['videofacade_update', 'playlist_update'],
      });
      const player = await createPlayer(own.api, {}, 1);
      const added = await own.api.post(`${P}/chapters`, {
        player_id: player.id,
        video_attributes: { name: 'Second', upload_url: 'https://media.example.com/2.mp4' },
      });
      expect(added.status).toBe(201);
      expect((await own.api.put(`${P}/chapters/${added.body.id}`, { position: 0 })).status).toBe(200);
      expect((await own.api.delete(`${P}/chapters/${added.body.id}`)).status).toBe(200);
      await deliver();
      const bodies = hooksFor('chapters').map((h) => JSON.parse(h.body));
      expect(bodies.map((b) => `${b.type} ${b.player.chapters_attributes.length}`).sort()).toEqual([
        'playlist_update 1',
        'playlist_update 2',
        'playlist_update 2',
      ]);
      // The move is announced with the chapter in its new place.
      expect(bodies.filter((b) => b.player.chapters_attributes.find((c: any) => c.position === 0).id === added.body.id)).toHaveLength(1);
    });

    it('keeps one message id across retries of a failing receiver', async () => {
      const own = await createOrg(t);
      await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/players`, { url: `${origin.base}/status/503?retry` });
      await createPlayer(own.api);
      await runner.drain();
      await new Promise((r) => setTimeout(r, 50));
      await runner.drain();
      const attempts = origin.received.filter((r) => r.url === '/status/503?retry');
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1);
      const job = await t.database.db
        .selectFrom('jobs')
        .select(['attempts', 'max_attempts', 'status'])
        .where('type', '=', 'webhook.notify')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(job.max_attempts).toBe(30);
      expect(job.attempts).toBeGreaterThanOrEqual(2);
      await t.database.db.deleteFrom('jobs').where('type', '=', 'webhook.notify').where('status', '=', 'queued').execute();
    });
  });

  describe("viewers' reports", () => {
    const beacon = (uuid: string, body: Record<string, unknown>, ip = '203.0.113.9') =>
      t.app.inject({
        method: 'POST',
        url: `/watch/${uuid}/analytics`,
        remoteAddress: ip,
        headers: { 'user-agent': BROWSER_UA },
        payload: { player_load_id: 'load-1', visitor_uuid: 'visitor-1', chapter: 0, ...body },
      });

    it('go to the analytics webhooks subscribed to their type, with the payload the reference describes', async () => {
      const own = await createOrg(t, 'Analytics Org');
      const views = await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/analytics`, {
        url: `${origin.base}/hook?views`,
        security_key: 'view-secret-123',
        event_subscriptions: ['view'],
      });
      const all = await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/analytics`, {
        url: `${origin.base}/hook?all`,
        security_key: 'all-secret-1234',
      });
      expect([views.status, all.status]).toEqual([201, 201]);
      const player = await createPlayer(own.api, { name: 'Watched' }, 2);
      const second = player.chapters_attributes.find((c: any) => c.position === 1);
      expect((await beacon(player.uuid, { type: 'view', percent_watched: 50, chapter: 1, embed_url: 'https://blog.example.com/post' })).statusCode).toBe(204);
      expect((await beacon(player.uuid, { type: 'identified_view', email: 'Viewer@Example.com' })).statusCode).toBe(204);
      const buckets = Array.from({ length: 20 }, (_, i) => (i < 10 ? 1 : 0));
      expect((await beacon(player.uuid, { type: 'attention_span', buckets })).statusCode).toBe(204);
      await deliver();

      const viewHooks = hooksFor('views');
      expect(viewHooks).toHaveLength(1);
      expect(verify(viewHooks[0], 'view-secret-123')).toBe(true);
      expect(JSON.parse(viewHooks[0].body)).toEqual({
        type: 'view',
        timestamp: expect.any(Number),
        request_id: viewHooks[0].headers['webhook-id'],
        visitor_vidyard_uuid: 'visitor-1',
        organization_id: own.organizationId,
        organization_name: 'Analytics Org',
        account_id: (await t.database.db.selectFrom('organizations').select('account_id').where('id', '=', own.organizationId).executeTakeFirstOrThrow())
          .account_id,
        player_uuid: player.uuid,
        player_name: 'Watched',
        video_id: second.video_id,
        video_name: second.video_attributes.name,
        player_load_id: 'load-1',
        percent_watched: 50,
        embed_url: 'https://blog.example.com/post',
        security_key: 'view-secret-123',
      });
      const allHooks = hooksFor('all').map((h) => JSON.parse(h.body));
      expect(allHooks.map((b) => b.type).sort()).toEqual(['attention_span', 'identified_view', 'view']);
      expect(allHooks.find((b) => b.type === 'identified_view').email).toBe('viewer@example.com');
      expect(allHooks.find((b) => b.type === 'attention_span').attention_span).toEqual({ bucket_count: 20, buckets });
      expect(hooksFor('all').every((h) => verify(h, 'all-secret-1234'))).toBe(true);
    });

    it('refuse what is malformed or about nothing, and send nothing for them', async () => {
      const own = await createOrg(t);
      await own.api.post(`${P}/organizations/${own.organizationId}/webhooks/analytics`, { url: `${origin.base}/hook?refused` });
      const player = await createPlayer(own.api);
      expect((await beacon(player.uuid, { type: 'view' })).statusCode).toBe(422);
      expect((await beacon(player.uuid, { type: 'identified_view', email: 'not-an-email' })).statusCode).toBe(422);
      expect((await beacon(player.uuid, { type: 'attention_span', buckets: [1, 2] })).statusCode).toBe(422);
      expect((await beacon(player.uuid, { type: 'click', percent_watched: 0 })).statusCode).toBe(422);
      expect((await beacon(player.uuid, { type: 'view', percent_watched: 33 })).statusCode).toBe(422);
      expect((await beacon(player.uuid, { type: 'view', percent_watched: 0, chapter: 5 })).statusCode).toBe(404);
      expect((await beacon('00000000-0000-4000-8000-000000000000', { type: 'view', percent_watched: 0 })).statusCode).toBe(404);
      const blocked = await own.api.post(`${P}/blacklisted_ip_ranges`, { ip_range: '198.18.0.0/15' });
      expect(blocked.status).toBe(201);
      expect((await beacon(player.uuid, { type: 'view', percent_watched: 0 }, '198.18.0.1')).statusCode).toBe(404);
      const notJson = await t.app.inject({
        method: 'POST',
        url: `/watch/${player.uuid}/analytics`,
        headers: { 'content-type': 'text/plain' },
        payload: 'view',
      });
      expect(notJson.statusCode).toBe(415);
      await deliver();
      expect(hooksFor('refused')).toEqual([]);
    });

    it('are limited per address and player', async () => {
      const player = await createPlayer(org.api);
      let status = 204;
      let sent = 0;
      while (status === 204 && sent < 700) {
        status = (await beacon(player.uuid, { type: 'view', percent_watched: 0 }, '192.0.2.77')).statusCode;
        sent++;
      }
      expect(sent).toBe(601);
      expect(status).toBe(429);
      expect((await beacon(player.uuid, { type: 'view', percent_watched: 0 }, '192.0.2.78')).statusCode).toBe(204);
    });
  });
});
