import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { indexJobSubjects } from '../src/db/migrations/0014_housekeeping.ts';
import { MailDeliveryError } from '../src/mail/mailer.ts';
import { createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { BROWSER_UA, createOrg, createPlayer, createUser, unique, userClient, type OrgContext } from './helpers/factories.ts';
import { verifySignature } from './helpers/media.ts';

const P = '/dashboard/v1';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const live = (orgId: number) => `${P}/organizations/${orgId}/live`;
const emailOf = (prefix: string) => `${unique(prefix).replace(/\W+/g, '.')}@example.com`;

describe.each(dialects)('GDPR requests on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let server: http.Server;
  let hookUrl: string;
  const received: { body: any; raw: string; headers: http.IncomingHttpHeaders }[] = [];

  const drain = (backoffMs = 10) =>
    new JobRunner(t.database.db, { handlers: jobHandlers(createContainer({ config: t.config, database: t.database })), backoff: () => backoffMs }).drain();
  const file = async (api: Client, body: unknown) => {
    const res = await api.post(`${P}/gdpr_requests`, body);
    expect(res.status, res.raw).toBe(202);
    return res.body.receipt_id as string;
  };
  const statusOf = async (receipt: string, api = org.api) => {
    const res = await api.get(`${P}/gdpr_requests/${receipt}`);
    expect(res.status, res.raw).toBe(200);
    return res.body;
  };
  const stakeholderMail = async (recipients: string[]) => {
    const res = await org.api.post(`${P}/email_stakeholders`, { recipients, subject: 'New video', body: 'Have a look' });
    expect(res.status, res.raw).toBe(202);
    return res.body.id as number;
  };
  const recipientsOf = async (id: number) =>
    JSON.parse((await t.database.db.selectFrom('stakeholder_emails').select('recipients').where('id', '=', id).executeTakeFirstOrThrow()).recipients);
  /** A live stream created with the user's own token, so that its instance stores the user's email. */
  const liveBy = async (userId: number) => {
    const api = await userClient(t, org.organizationId, userId, 'editor');
    const res = await api.post(live(org.organizationId), { video_options: { video_name: 'Launch', description: 'x', stream_tags: ['launch'] } });
    expect(res.status, res.raw).toBe(201);
    return res.body.stream_instance_id as number;
  };
  /** The addresses a job is indexed under (job_subjects), sorted. */
  const subjectsOf = async (jobId: number) =>
    (await t.database.db.selectFrom('job_subjects').select('email').where('job_id', '=', jobId).orderBy('email').execute()).map((r) => r.email);
  const liveEmail = async (id: number) =>
    (await t.database.db.selectFrom('live_stream_instances').select('email').where('id', '=', id).executeTakeFirstOrThrow()).email;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        received.push({ body: JSON.parse(data || 'null'), raw: data, headers: req.headers });
        res.writeHead(req.url === '/fail-once' && received.filter((r) => r.body?.receipt_id === JSON.parse(data).receipt_id).length === 1 ? 500 : 204);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    hookUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp(dialect, { UPLOAD_ALLOWED_HOSTS: `127.0.0.1:${port}` });
    org = await createOrg(t);
    other = await createOrg(t);
  });
  afterAll(async () => {
    await t?.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('access: 202 with a receipt, the row and its job in place; the export lists every record of the email', async () => {
    const email = emailOf('ada');
    const user = await createUser(org.api, { email, first_name: 'Ada', last_name: 'Lovelace', role_id: 3 });
    const mail = await stakeholderMail([email.toUpperCase(), 'someone.else@example.com']);
    const instance = await liveBy(user.id);
    await stakeholderMail(['unrelated@example.com']);

    const receipt = await file(org.api, { request_action: 'access', email: email.toUpperCase() });
    expect(receipt).toMatch(UUID);
    const pending = await statusOf(receipt);
    expect(pending).toMatchObject({ receipt_id: receipt, request_action: 'access', email, status: 'pending' });
    expect(pending.completed_at).toBeUndefined();
    expect(pending.result).toBeUndefined();
    const jobs = await t.database.db.selectFrom('jobs').selectAll().where('type', '=', 'gdpr.process').execute();
    expect(jobs.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(jobs.map((j) => j.payload))).not.toContain(email); // the queue holds ids only

    await drain();
    const done = await statusOf(receipt);
    expect(done.status).toBe('completed');
    expect(Number.isInteger(done.completed_at)).toBe(true);
    expect(Number.isInteger(done.created_at) && Number.isInteger(done.updated_at)).toBe(true);
    const r = done.result;
    expect(r.email).toBe(email);
    expect(r.users).toHaveLength(1);
    expect(r.users[0]).toMatchObject({ id: user.id, email, first_name: 'Ada', last_name: 'Lovelace', role: 'editor' });
    expect(r.api_tokens.length).toBe(1); // the token the live stream was created with
    expect(r.api_tokens[0]).not.toHaveProperty('token_hash');
    expect(r.stakeholder_emails).toHaveLength(1);
    expect(r.stakeholder_emails[0]).toMatchObject({ id: mail, recipient: email, subject: 'New video' });
    expect(JSON.stringify(r)).not.toContain('someone.else@example.com'); // other people's addresses are not exported
    expect(r.live_stream_instances.map((l: any) => l.id)).toEqual([instance]);
    // Access changes nothing.
    expect((await org.api.get(`${P}/users/${user.id}`)).status).toBe(200);
  });

  it('access to an unknown email completes with an empty export', async () => {
    const receipt = await file(org.api, { request_action: 'access', email: 'nobody.here@example.com' });
    await drain();
    const done = await statusOf(receipt);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ users: [], stakeholder_emails: [], live_stream_instances: [] });
  });

  it("identified views in analytics messages: exported, dropped on forget, rewritten on rectify; another person's stay", async () => {
    const [gone, kept, renamed] = [emailOf('viewer-gone'), emailOf('viewer-kept'), emailOf('viewer-renamed')];
    expect((await org.api.post(`${P}/organizations/${org.organizationId}/webhooks/analytics`, { url: `${hookUrl}/analytics` })).status).toBe(201);
    const player = (
      await org.api.post(`${P}/players`, {
        player: { name: 'Gated', chapters_attributes: [{ position: 0, video_attributes: { name: 'v', upload_url: 'https://media.example.com/v.mp4' } }] },
      })
    ).body;
    let loads = 0;
    // Each address given in a load of its own.
    const identify = async (email: string) => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/watch/${player.uuid}/analytics`,
        headers: { 'user-agent': BROWSER_UA },
        payload: {
          type: 'identified_view',
          player_load_id: `l-${++loads}`,
          visitor_uuid: 'v',
          chapter: 0,
          email,
        },
      });
      expect(res.statusCode).toBe(204);
    };
    await identify(gone);
    await identify(kept);
    await identify(renamed);
    await drain();
    const carrying = async (email: string) =>
      (await t.database.db.selectFrom('jobs').select('payload').where('type', '=', 'webhook.notify').execute()).filter((j) => j.payload.includes(email)).length;
    expect(await carrying(gone)).toBe(1);

    const access = await file(org.api, { request_action: 'access', email: gone });
    await drain();
    const accessed = (await statusOf(access)).result;
    // The stored reports of the load in which the address was given.
    expect(accessed.analytics_reports).toEqual([expect.objectContaining({ type: 'identified_view', email: gone, player_id: player.id })]);
    const exported = accessed.analytics_identified_views;
    expect(exported).toEqual([
      {
        player_uuid: player.uuid,
        player_name: 'Gated',
        video_id: player.chapters_attributes[0].video_id,
        visitor_vidyard_uuid: 'v',
        timestamp: expect.any(Number),
        delivery: 'done',
      },
    ]);

    const forget = await file(org.api, { request_action: 'forget', email: gone });
    await drain();
    expect((await statusOf(forget)).result).toMatchObject({ analytics_messages_deleted: 1, analytics_reports_deleted: 1 });
    expect(await carrying(gone)).toBe(0);
    expect(await carrying(kept)).toBe(1);
    const storedEmails = async () =>
      (await t.database.db.selectFrom('analytics_events').select('email').where('player_id', '=', player.id).execute()).map((r) => r.email).sort();
    expect(await storedEmails()).toEqual([kept, renamed].sort());
    const listed = async () => ((await org.api.get(`${P}/analytics/viewers`)).body.viewers as Array<{ email: string }>).map((v) => v.email).sort();
    expect(await listed()).toEqual([kept, renamed].sort());
    // The player's own list of the identified (its rows of analytics_identified_players) follows too.
    const listedAtPlayer = async () =>
      ((await org.api.get(`${P}/analytics/players/${player.id}/viewers`)).body.viewers as Array<{ email: string }>).map((v) => v.email).sort();
    expect(await listedAtPlayer()).toEqual([kept, renamed].sort());

    const newEmail = emailOf('viewer-new');
    const rectify = await file(org.api, { request_action: 'rectify', email: renamed, new_values: { email: newEmail } });
    await drain();
    expect((await statusOf(rectify)).result).toMatchObject({ analytics_messages_updated: 1, analytics_reports_updated: 1 });
    expect(await storedEmails()).toEqual([kept, newEmail].sort());
    expect(await listed()).toEqual([kept, newEmail].sort());
    expect(await listedAtPlayer()).toEqual([kept, newEmail].sort());
    expect(await carrying(renamed)).toBe(0);
    expect(await carrying(newEmail)).toBe(1);
    // Another organization's request for the same address touches nothing here.
    const elsewhere = await file(other.api, { request_action: 'forget', email: kept });
    await drain();
    expect((await statusOf(elsewhere, other.api)).result).toMatchObject({ analytics_messages_deleted: 0, analytics_reports_deleted: 0 });
    expect(await carrying(kept)).toBe(1);
    expect(await storedEmails()).toEqual([kept, newEmail].sort());
  });

  it('forgetting an address erases its loads: another address given in one of them stays listed only as far as its other loads do', async () => {
    const [gone, shared, alone] = [emailOf('two-in-a-load'), emailOf('also-elsewhere'), emailOf('only-there')];
    const player = await createPlayer(org.api);
    const elsewhere = await createPlayer(org.api);
    const identify = async (load: string, email: string, at = player) =>
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: `/watch/${at.uuid}/analytics`,
            headers: { 'user-agent': BROWSER_UA },
            payload: { type: 'identified_view', player_load_id: load, visitor_uuid: 'v', chapter: 0, email },
          })
        ).statusCode,
      ).toBe(204);
    // One load in which three addresses were given; `shared` was also given in a load of its own, at another player.
    await identify('erased-load', gone);
    await identify('erased-load', shared);
    await identify('erased-load', alone);
    await identify('kept-load', shared, elsewhere);
    const listed = async () =>
      ((await org.api.get(`${P}/analytics/viewers?per_page=100`)).body.viewers as Array<{ email: string; loads: number }>).filter((v) =>
        [gone, shared, alone].includes(v.email),
      );
    expect((await listed()).map((v) => v.email).sort()).toEqual([gone, shared, alone].sort());

    const forget = await file(org.api, { request_action: 'forget', email: gone });
    await drain();
    expect((await statusOf(forget)).result).toMatchObject({ analytics_reports_deleted: 3 });
    expect(await listed()).toEqual([expect.objectContaining({ email: shared, loads: 1 })]);
    // Each player's list: the erased load's player lists none of them; the other still lists `shared`.
    const atPlayer = async (p: { id: number }) => (await org.api.get(`${P}/analytics/players/${p.id}/viewers`)).body.viewers;
    expect(await atPlayer(player)).toEqual([]);
    expect(await atPlayer(elsewhere)).toEqual([expect.objectContaining({ email: shared, loads: 1 })]);
  });

  it('a stakeholder mail waiting to be sent again loses a forgotten address, and is dropped with its last one', async () => {
    const [first, second] = [emailOf('waiting-a'), emailOf('waiting-b')];
    // The mail server refuses it: the email waits in its mail.stakeholder job (test/stakeholder-emails.test.ts).
    vi.spyOn(t.container.mailer, 'send').mockRejectedValueOnce(new MailDeliveryError('421 try again later'));
    const id = await stakeholderMail([first.toUpperCase(), second]);
    const job = await t.database.db
      .selectFrom('jobs')
      .select(['id', 'payload'])
      .where('type', '=', 'mail.stakeholder')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(job.payload).emailId).toBe(id);
    const waiting = async () => (await t.database.db.selectFrom('jobs').select('payload').where('id', '=', job.id).executeTakeFirst())?.payload;
    await file(org.api, { request_action: 'forget', email: first });
    await drain();
    expect(JSON.parse((await waiting())!).mail.to).toEqual([second]);
    expect(await subjectsOf(job.id)).toEqual([second]);
    await file(org.api, { request_action: 'forget', email: second });
    await drain();
    expect(await waiting()).toBeUndefined();
    expect(await subjectsOf(job.id)).toEqual([]);
  });

  it('finds queued and past messages by the job_subjects index, never by reading every job: a message that is not indexed is not touched', async () => {
    const [viewer, renamed] = [emailOf('indexed-viewer'), emailOf('indexed-renamed')];
    expect((await org.api.post(`${P}/organizations/${org.organizationId}/webhooks/analytics`, { url: `${hookUrl}/analytics` })).status).toBe(201);
    const player = (
      await org.api.post(`${P}/players`, {
        player: { name: 'Indexed', chapters_attributes: [{ position: 0, video_attributes: { name: 'v', upload_url: 'https://media.example.com/v.mp4' } }] },
      })
    ).body;
    const res = await t.app.inject({
      method: 'POST',
      url: `/watch/${player.uuid}/analytics`,
      headers: { 'user-agent': BROWSER_UA },
      payload: { type: 'identified_view', player_load_id: 'l', visitor_uuid: 'v', chapter: 0, email: viewer.toUpperCase() },
    });
    expect(res.statusCode).toBe(204);
    await drain(); // delivered: a job being run is left alone by a request
    const messages = await t.database.db.selectFrom('jobs').select(['id', 'payload']).where('type', '=', 'webhook.notify').execute();
    const indexed = messages.filter((m) => m.payload.includes(viewer));
    expect(indexed.length).toBeGreaterThanOrEqual(1);
    // Enqueued with its subject: the organization and the lower-cased address.
    for (const m of indexed) expect(await subjectsOf(m.id)).toEqual([viewer]);
    const subjects = await t.database.db.selectFrom('job_subjects').selectAll().where('job_id', '=', indexed[0].id).execute();
    expect(subjects).toEqual([{ job_id: indexed[0].id, organization_id: org.organizationId, email: viewer }]);

    // A job carrying the address that was not enqueued through the services (so not indexed): by design
    // GDPR requests do not see it (every path that puts an address in a job indexes it, and migration
    // 0014 indexed the jobs that were there before).
    const now = Date.now();
    const stray = await t.database.db
      .insertInto('jobs')
      .values({
        type: 'webhook.notify',
        payload: JSON.stringify({
          webhookId: 1,
          messageId: 'msg_stray',
          event: 'identified_view',
          body: { type: 'identified_view', organization_id: org.organizationId, email: viewer, player_uuid: player.uuid },
        }),
        status: 'done',
        run_at: now,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const strayPayload = async () => (await t.database.db.selectFrom('jobs').select('payload').where('id', '=', stray.id).executeTakeFirst())?.payload;
    const before = await strayPayload();

    const access = await file(org.api, { request_action: 'access', email: viewer });
    await drain();
    expect((await statusOf(access)).result.analytics_identified_views).toHaveLength(indexed.length);

    const rectify = await file(org.api, { request_action: 'rectify', email: viewer, new_values: { email: renamed } });
    await drain();
    expect((await statusOf(rectify)).result).toMatchObject({ analytics_messages_updated: indexed.length });
    for (const m of indexed) expect(await subjectsOf(m.id)).toEqual([renamed]);
    expect(await strayPayload()).toBe(before);

    // The index follows the rewrite: a request for the new address finds the messages.
    const forget = await file(org.api, { request_action: 'forget', email: renamed });
    await drain();
    expect((await statusOf(forget)).result).toMatchObject({ analytics_messages_deleted: indexed.length });
    for (const m of indexed) expect(await t.database.db.selectFrom('jobs').select('id').where('id', '=', m.id).executeTakeFirst()).toBeUndefined();
    expect(await t.database.db.selectFrom('job_subjects').selectAll().where('email', 'in', [viewer, renamed]).execute()).toEqual([]);
    expect(await strayPayload()).toBe(before);
  });

  it('migration 0014 indexes the jobs queued or kept before it, as the services index new ones', async () => {
    const [viewer, recipient] = [emailOf('before-0014-viewer'), emailOf('before-0014-recipient')];
    const mail = await stakeholderMail([recipient.toUpperCase(), 'other.person@example.com']);
    const now = Date.now();
    const legacy = async (type: string, payload: unknown) =>
      (
        await t.database.db
          .insertInto('jobs')
          .values({ type, payload: JSON.stringify(payload), status: 'done', run_at: now, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    const message = await legacy('webhook.notify', {
      webhookId: 1,
      messageId: 'msg_legacy',
      event: 'identified_view',
      body: { type: 'identified_view', organization_id: org.organizationId, email: viewer.toUpperCase(), player_uuid: 'p' },
    });
    const waiting = await legacy('mail.stakeholder', {
      emailId: mail,
      mail: { to: [recipient.toUpperCase(), 'other.person@example.com'], subject: 's', text: 't' },
    });
    const unrelated = await legacy('video.webhook', { videoId: 1, url: 'https://hooks.example.com/x@y', video: { status: 'ready' } });

    await indexJobSubjects(t.database.db);
    await indexJobSubjects(t.database.db); // twice changes nothing
    expect(await subjectsOf(message)).toEqual([viewer]);
    expect(await subjectsOf(waiting)).toEqual(['other.person@example.com', recipient].sort());
    expect(await subjectsOf(unrelated)).toEqual([]);

    const forget = await file(org.api, { request_action: 'forget', email: viewer });
    await drain();
    expect((await statusOf(forget)).result).toMatchObject({ analytics_messages_deleted: 1 });
    expect(await t.database.db.selectFrom('jobs').select('id').where('id', '=', message).executeTakeFirst()).toBeUndefined();
  });

  it('forget: removes the user (404, token 401), scrubs stakeholder recipients and live creator emails', async () => {
    const email = emailOf('forget');
    const user = await createUser(org.api, { email, role_id: 3 });
    const userApi = await userClient(t, org.organizationId, user.id, 'editor');
    expect((await userApi.get(`${P}/users`)).status).toBe(200);
    const team = await org.api.post(`${P}/teams`, { name: unique('Team'), user_ids: [user.id] });
    expect(team.status, team.raw).toBe(201);
    const mail = await stakeholderMail([email, 'keep.me@example.com']);
    const instance = await liveBy(user.id);
    const otherUser = await createUser(other.api, { email }); // the same address in another organization

    const receipt = await file(org.api, { request_action: 'forget', email });
    await drain();
    const done = await statusOf(receipt);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ users_deleted: 1, stakeholder_emails_scrubbed: 1, live_stream_instances_scrubbed: 1 });

    expect((await org.api.get(`${P}/users/${user.id}`)).status).toBe(404);
    expect((await userApi.get(`${P}/users`)).status).toBe(401);
    const members = await t.database.db.selectFrom('team_members').selectAll().where('user_id', '=', user.id).execute();
    expect(members).toHaveLength(0);
    expect(await recipientsOf(mail)).toEqual(['keep.me@example.com']);
    expect(await liveEmail(instance)).toBeNull();
    // Another organization's records are untouched.
    expect((await other.api.get(`${P}/users/${otherUser.id}`)).status).toBe(200);
  });

  it('rectify: rewrites the user and the address wherever it is stored', async () => {
    const email = emailOf('rect');
    const user = await createUser(org.api, { email, first_name: 'Old', last_name: 'Name', role_id: 3 });
    const mail = await stakeholderMail([email]);
    const instance = await liveBy(user.id);
    const newEmail = emailOf('renamed');

    const receipt = await file(org.api, {
      gdpr_request: {
        request_action: 'rectify',
        email,
        new_values: { email: newEmail.toUpperCase(), first_name: 'New', last_name: 'Person', company: 'Acme' },
      },
    });
    await drain();
    const done = await statusOf(receipt);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(done.result).toMatchObject({ users_updated: 1, stakeholder_emails_updated: 1, live_stream_instances_updated: 1 });

    const res = await org.api.get(`${P}/users/${user.id}`);
    expect(res.body).toMatchObject({ email: newEmail, first_name: 'New', last_name: 'Person' });
    expect(await recipientsOf(mail)).toEqual([newEmail]);
    expect(await liveEmail(instance)).toBe(newEmail);
  });

  it('rectify to an email another user has: failed with a clear reason, nothing changed', async () => {
    const a = await createUser(org.api, { first_name: 'A', role_id: 4 });
    const b = await createUser(org.api, { role_id: 4 });
    const receipt = await file(org.api, { request_action: 'rectify', email: a.email, new_values: { email: b.email, first_name: 'Changed' } });
    await drain();
    const done = await statusOf(receipt);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/already used by another user/);
    expect(Number.isInteger(done.completed_at)).toBe(true);
    expect((await org.api.get(`${P}/users/${a.id}`)).body).toMatchObject({ email: a.email, first_name: 'A' });
  });

  it('an admin may not erase an owner user: failed, the owner stays', async () => {
    const owner = await createUser(org.api, { role_id: 1 });
    const admin = await org.as('admin');
    const receipt = await file(admin, { request_action: 'forget', email: owner.email });
    await drain();
    const done = await statusOf(receipt);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/admin role/);
    expect((await org.api.get(`${P}/users/${owner.id}`)).status).toBe(200);
  });

  it('webhook: receives the outcome once done, retried after a failed delivery', async () => {
    const email = emailOf('hook');
    await createUser(org.api, { email });
    received.length = 0;
    const receipt = await file(org.api, { request_action: 'access', email, webhook: `${hookUrl}/hook` });
    await drain();
    const hits = received.filter((r) => r.body?.receipt_id === receipt);
    expect(hits).toHaveLength(1);
    const body = hits[0].body;
    expect(body).toMatchObject({ receipt_id: receipt, request_action: 'access', email, status: 'completed' });
    expect(Number.isInteger(body.completed_at)).toBe(true);
    expect(body.result.users[0].email).toBe(email);
    expect(hits[0].headers['content-type']).toContain('application/json');
    // Signed with the organization's key (docs/webhooks.md).
    const key = (await org.api.get(`/dashboard/v1/organizations/${org.organizationId}/webhooks/signing_key`)).body.signing_key;
    expect(verifySignature({ method: 'POST', url: '/hook', headers: hits[0].headers, body: hits[0].raw }, key)).toBe(true);

    const forget = await file(org.api, { request_action: 'forget', email, webhook: `${hookUrl}/fail-once` });
    // A backoff longer than the drain, so that the retry cannot be due before it ends.
    await drain(800);
    expect(received.filter((r) => r.body?.receipt_id === forget)).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 900));
    await drain();
    const tries = received.filter((r) => r.body?.receipt_id === forget);
    expect(tries).toHaveLength(2); // 500 first, then delivered
    expect(tries[1].body).toMatchObject({ receipt_id: forget, request_action: 'forget', status: 'completed' });
    expect(tries[1].headers['webhook-id']).toBe(tries[0].headers['webhook-id']);
  });

  it('a webhook on a private address outside UPLOAD_ALLOWED_HOSTS is never called', async () => {
    const receipt = await file(org.api, { request_action: 'access', email: 'x.y@example.com', webhook: 'http://10.1.2.3/hook' });
    await drain();
    expect((await statusOf(receipt)).status).toBe('completed');
    const job = await t.database.db.selectFrom('jobs').selectAll().where('type', '=', 'gdpr.webhook').where('status', '=', 'failed').execute();
    expect(job.length).toBeGreaterThanOrEqual(1);
  });

  describe('validation', () => {
    const bad = async (body: unknown, field: string) => {
      const before = Number(
        (
          await t.database.db
            .selectFrom('gdpr_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      const res = await org.api.post(`${P}/gdpr_requests`, body);
      expect(res.status, res.raw).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details.map((d: any) => d.field).join(' '), res.raw).toContain(field);
      const after = Number(
        (
          await t.database.db
            .selectFrom('gdpr_requests')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
      expect(after).toBe(before);
    };
    it('request_action is required and one of access, forget, rectify', async () => {
      await bad({ email: 'a@example.com' }, 'request_action');
      await bad({ request_action: 'delete', email: 'a@example.com' }, 'request_action');
    });
    it('email is required and valid', async () => {
      await bad({ request_action: 'access' }, 'email');
      await bad({ request_action: 'access', email: 'not an email' }, 'email');
      await bad({ request_action: 'access', email: 42 }, 'email');
    });
    it('webhook must be an http(s) URL', async () => {
      await bad({ request_action: 'access', email: 'a@example.com', webhook: 'ftp://example.com/x' }, 'webhook');
      await bad({ request_action: 'access', email: 'a@example.com', webhook: 'nope' }, 'webhook');
    });
    it('new_values: required for rectify, only for rectify, well-formed', async () => {
      await bad({ request_action: 'rectify', email: 'a@example.com' }, 'new_values');
      await bad({ request_action: 'access', email: 'a@example.com', new_values: { first_name: 'X' } }, 'new_values');
      await bad({ request_action: 'forget', email: 'a@example.com', new_values: { first_name: 'X' } }, 'new_values');
      await bad({ request_action: 'rectify', email: 'a@example.com', new_values: {} }, 'new_values');
      await bad({ request_action: 'rectify', email: 'a@example.com', new_values: { email: 'bad' } }, 'email');
      await bad({ request_action: 'rectify', email: 'a@example.com', new_values: { phone: '123' } }, 'new_values');
    });
    it('malformed JSON → 400', async () => {
      expect((await org.api.post(`${P}/gdpr_requests`, '{"request_action":')).status).toBe(400);
    });
  });

  it('editors and viewers get 403 (filing and reading)', async () => {
    const receipt = await file(org.api, { request_action: 'access', email: 'r@example.com' });
    for (const role of ['editor', 'viewer'] as const) {
      const api = await org.as(role);
      const res = await api.post(`${P}/gdpr_requests`, { request_action: 'access', email: 'r@example.com' });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
      expect((await api.get(`${P}/gdpr_requests/${receipt}`)).status).toBe(403);
    }
    expect((await (await org.as('admin')).get(`${P}/gdpr_requests/${receipt}`)).status).toBe(200);
  });

  it("another organization's receipt, or an unknown one, is 404", async () => {
    const receipt = await file(org.api, { request_action: 'access', email: 'r@example.com' });
    const res = await other.api.get(`${P}/gdpr_requests/${receipt}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect((await org.api.get(`${P}/gdpr_requests/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await org.api.get(`${P}/gdpr_requests/not-a-uuid`)).status).toBe(404);
    expect((await org.api.get(`${P}/gdpr_requests/${receipt}.json`)).status).toBe(200);
  });
});
