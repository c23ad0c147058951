import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { client, createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, unique, type OrgContext } from './helpers/factories.ts';
import { readOutbox } from '../src/mail/outbox.ts';
import { throttleOf } from '../src/modules/stakeholder-emails/stakeholder-emails.service.ts';
import { createContainer } from '../src/container.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { JobRunner } from '../src/jobs/runner.ts';

const P = '/dashboard/v1';
const URL_ = `${P}/email_stakeholders`;
const STATUS = `${P}/email_stakeholders/throttle_status`;
const now = () => Math.floor(Date.now() / 1000);

const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-mail-'));

/** A minimal SMTP server: accepts everything except recipients containing "reject", records messages. */
async function fakeSmtp() {
  const messages: Array<{ from: string; to: string[]; data: string }> = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 fake ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          messages.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 2.0.0 queued\r\n');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-fake\r\n250 8BITMIME\r\n');
        else if (verb === 'HELO') socket.write('250 fake\r\n');
        else if (verb === 'MAIL') {
          current.from = line.replace(/^MAIL FROM:\s*/i, '');
          socket.write('250 OK\r\n');
        } else if (verb === 'RCPT') {
          const rcpt = line.replace(/^RCPT TO:\s*/i, '');
          if (rcpt.includes('reject')) socket.write('550 5.1.1 no such user\r\n');
          else {
            current.to.push(rcpt.replace(/[<>]/g, ''));
            socket.write('250 OK\r\n');
          }
        } else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') {
          socket.end('221 bye\r\n');
          return;
        } else socket.write('250 OK\r\n');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

const validBody = (overrides: Record<string, unknown> = {}) => ({
  recipients: ['ceo@example.com', 'cto@example.com'],
  subject: unique('Launch video'),
  body: 'Hello,\nthe launch video is ready for review.',
  ...overrides,
});

describe('throttle arithmetic', () => {
  it('remaining and resets_at over a sliding window', () => {
    expect(throttleOf([], 10, 3600, 1000)).toEqual({ limit: 10, remaining: 10, window_seconds: 3600, resets_at: 1000 });
    expect(throttleOf([100, 200], 10, 3600, 1000)).toEqual({ limit: 10, remaining: 8, window_seconds: 3600, resets_at: 3700 });
    expect(throttleOf([100, 200, 300], 3, 3600, 1000)).toEqual({ limit: 3, remaining: 0, window_seconds: 3600, resets_at: 3700 });
    // Limit lowered below the usage: a slot frees when enough have expired.
    expect(throttleOf([100, 200, 300, 400], 2, 3600, 1000).resets_at).toBe(3900);
  });
});

describe.each(dialects)('stakeholder emails on %s', (dialect) => {
  let t: TestApp;
  let dataDir: string;
  let org: OrgContext;
  let other: OrgContext;
  let editor: Client;

  const outbox = () => readOutbox(dataDir);
  const bySubject = async (subject: string) => (await outbox()).filter((m) => m.subject === subject);

  beforeAll(async () => {
    dataDir = tmpDir();
    t = await createTestApp(dialect, { DATA_DIR: dataDir });
    org = await createOrg(t);
    other = await createOrg(t);
    editor = await org.as('editor');
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends to the outbox with the player watch link and answers 202 {id, recipients, subject, player_id, sent_at}', async () => {
    const player = await createPlayer(org.api);
    const body = validBody({ player_id: player.id, recipients: ['ceo@example.com', 'CEO@example.com', 'cto@example.com'] });
    const before = now();
    const res = await editor.post(URL_, body);
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'player_id', 'recipients', 'sent_at', 'subject']);
    expect(res.body).toMatchObject({ recipients: ['ceo@example.com', 'cto@example.com'], subject: body.subject, player_id: player.id });
    expect(Number.isInteger(res.body.id)).toBe(true);
    expect(res.body.sent_at).toBeGreaterThanOrEqual(before);
    const mails = await bySubject(body.subject);
    expect(mails).toHaveLength(1);
    const mail = mails[0];
    expect(mail.file).toMatch(/^\d{13}-[0-9a-f-]{36}\.json$/);
    expect(mail.to).toEqual(['ceo@example.com', 'cto@example.com']);
    expect(mail.from).toBe('Reelbase <no-reply@reelbase.test>');
    expect(mail.reply_to).toBeNull();
    expect(mail.text).toContain('the launch video is ready for review.');
    expect(mail.text).toContain(`http://reelbase.test/watch/${player.uuid}`);
    expect(mail.text).toContain(player.name);
    expect(mail.headers['X-Reelbase-Stakeholder-Email']).toBe(String(res.body.id));
    expect(mail.message_id).toMatch(/^<[0-9a-f-]{36}@reelbase\.test>$/);
    // Recorded as sent.
    const row = await t.database.db.selectFrom('stakeholder_emails').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'sent', organization_id: org.organizationId, player_id: player.id, message_id: mail.message_id });
  });

  it('takes the player by uuid, the wrapped body and the .json suffix; without a player there is no link', async () => {
    const player = await createPlayer(org.api);
    const byUuid = await client(t.app).post(`${URL_}.json`, { auth_token: org.token, email_stakeholder: validBody({ player_uuid: player.uuid }) });
    expect(byUuid.status).toBe(202);
    expect(byUuid.body.player_id).toBe(player.id);
    expect((await bySubject(byUuid.body.subject))[0].text).toContain(`/watch/${player.uuid}`);
    const both = await org.api.post(URL_, validBody({ player_uuid: player.uuid, player_id: player.id }));
    expect(both.status).toBe(202);
    const plain = await org.api.post(URL_, validBody());
    expect(plain.status).toBe(202);
    expect(plain.body.player_id).toBeNull();
    const mail = (await bySubject(plain.body.subject))[0];
    expect(mail.text).toBe('Hello,\nthe launch video is ready for review.');
    expect(mail.text).not.toContain('/watch/');
  });

  it("sets Reply-To to the sending user's address when the token belongs to a user", async () => {
    const o = await createOrg(t);
    const at = now();
    const user = await t.database.db
      .insertInto('users')
      .values({ organization_id: o.organizationId, email: 'producer@example.com', role: 'editor', created_at: at, updated_at: at })
      .returning('id')
      .executeTakeFirstOrThrow();
    const token = await t.services.tokens.issue(o.organizationId, 'editor', 'user token', user.id);
    const res = await client(t.app, token).post(URL_, validBody());
    expect(res.status).toBe(202);
    expect((await bySubject(res.body.subject))[0].reply_to).toBe('producer@example.com');
  });

  it('validates with 422 naming the field, both sides of the bounds, sending and counting nothing', async () => {
    const o = await createOrg(t);
    const ownPlayer = await createPlayer(o.api);
    const foreignPlayer = await createPlayer(other.api);
    const files = (await outbox()).length;
    const cases: Array<[unknown, string]> = [
      [{ subject: 's', body: 'b' }, 'recipients'],
      [validBody({ recipients: [] }), 'recipients'],
      [validBody({ recipients: Array.from({ length: 51 }, (_, i) => `p${i}@example.com`) }), 'recipients'],
      [validBody({ recipients: ['not-an-email'] }), 'recipients.0'],
      [validBody({ recipients: ['ok@example.com', 'a@b@c'] }), 'recipients.1'],
      [validBody({ recipients: ['x@example.com\r\nBcc: evil@example.com'] }), 'recipients.0'],
      [validBody({ recipients: [42] }), 'recipients.0'],
      [validBody({ recipients: 'ceo@example.com' }), 'recipients'],
      [{ recipients: ['a@example.com'], body: 'b' }, 'subject'],
      [validBody({ subject: '' }), 'subject'],
      [validBody({ subject: 's'.repeat(201) }), 'subject'],
      [validBody({ subject: 'two\nlines' }), 'subject'],
      [{ recipients: ['a@example.com'], subject: 's' }, 'body'],
      [validBody({ body: '' }), 'body'],
      [validBody({ body: 'b'.repeat(20_001) }), 'body'],
      [validBody({ body: 'nul\u0000' }), 'body'],
      [validBody({ player_id: 'x' }), 'player_id'],
      [validBody({ player_id: 0 }), 'player_id'],
      [validBody({ player_id: 999999 }), 'player_id'],
      [validBody({ player_id: foreignPlayer.id }), 'player_id'],
      [validBody({ player_uuid: foreignPlayer.uuid }), 'player_uuid'],
      [validBody({ player_uuid: 'no-such-uuid' }), 'player_uuid'],
      [validBody({ player_uuid: foreignPlayer.uuid, player_id: ownPlayer.id }), 'player_uuid'],
      [validBody({ player_uuid: ownPlayer.uuid, player_id: (await createPlayer(o.api)).id }), 'player_uuid'],
    ];
    for (const [body, field] of cases) {
      const res = await o.api.post(URL_, body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(
        res.body.details.map((d: any) => d.field),
        JSON.stringify(body).slice(0, 100),
      ).toContain(field);
    }
    expect((await outbox()).length).toBe(files);
    expect((await o.api.get(STATUS)).body.remaining).toBe(10);
    // The accepted side of each bound.
    const max = await o.api.post(URL_, {
      recipients: Array.from({ length: 50 }, (_, i) => `p${i}@example.com`),
      subject: 's'.repeat(200),
      body: `${'b'.repeat(19_999)}\n`,
      player_id: ownPlayer.id,
    });
    expect(max.status).toBe(202);
    expect(max.body.recipients).toHaveLength(50);
    const min = await o.api.post(URL_, { recipients: ['a@example.com'], subject: 's', body: 'b' });
    expect(min.status).toBe(202);
    expect((await o.api.get(STATUS)).body.remaining).toBe(8);
    // Malformed JSON 400, another media type 415.
    expect((await o.api.post(URL_, '{"recipients":')).status).toBe(400);
    expect((await o.api.post(URL_, 'x', { 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('permissions: editors and up send, viewers only read the throttle; 401 without a token', async () => {
    const viewer = await org.as('viewer');
    const denied = await viewer.post(URL_, validBody());
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');
    expect((await viewer.get(STATUS)).status).toBe(200);
    expect((await client(t.app).post(URL_, validBody())).status).toBe(401);
    expect((await client(t.app).get(STATUS)).status).toBe(401);
    expect((await client(t.app, 'rb_nope').get(STATUS)).status).toBe(401);
    for (const role of ['editor', 'admin', 'owner'] as const) {
      expect((await (await org.as(role)).post(URL_, validBody())).status, role).toBe(202);
    }
  });

  it('throttle_status counts the sliding hour per organization, not failed or older mail', async () => {
    const o = await createOrg(t);
    const start = now();
    const fresh = await o.api.get(STATUS);
    expect(fresh.status).toBe(200);
    expect(Object.keys(fresh.body).sort()).toEqual(['limit', 'remaining', 'resets_at', 'window_seconds']);
    expect(fresh.body).toMatchObject({ limit: 10, remaining: 10, window_seconds: 3600 });
    expect(fresh.body.resets_at).toBeGreaterThanOrEqual(start);
    expect(fresh.body.resets_at).toBeLessThanOrEqual(now());
    const insert = (created_at: number, status: string) =>
      t.database.db
        .insertInto('stakeholder_emails')
        .values({ organization_id: o.organizationId, recipients: '[]', subject: 's', body: 'b', created_at, status })
        .execute();
    await insert(start - 3601, 'sent'); // outside the window
    await insert(start - 3000, 'failed'); // failed deliveries do not count
    await insert(start - 2000, 'sent');
    await insert(start - 1000, 'sending');
    const res = (await o.api.get(STATUS)).body;
    expect(res.remaining).toBe(8);
    expect(res.resets_at).toBe(start - 2000 + 3600);
    // Another organization's usage is its own.
    expect((await other.api.get(STATUS)).body.limit).toBe(10);
    expect((await o.api.get(`${STATUS}.json`)).status).toBe(200);
  });

  it('an Idempotency-Key sends once', async () => {
    const body = validBody();
    const first = await org.api.post(URL_, body, { 'idempotency-key': `mail-${body.subject}` });
    const second = await org.api.post(URL_, body, { 'idempotency-key': `mail-${body.subject}` });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body).toEqual(first.body);
    expect(await bySubject(body.subject)).toHaveLength(1);
  });
});

describe.each(dialects)('stakeholder email limits on %s', (dialect) => {
  let t: TestApp;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tmpDir();
    t = await createTestApp(dialect, { DATA_DIR: dataDir, STAKEHOLDER_EMAILS_PER_HOUR: '3' });
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 429 rate_limited with Retry-After past the limit, and sends nothing', async () => {
    const o = await createOrg(t);
    for (let i = 0; i < 3; i++) expect((await o.api.post(URL_, validBody())).status).toBe(202);
    const status = (await o.api.get(STATUS)).body;
    expect(status).toMatchObject({ limit: 3, remaining: 0, window_seconds: 3600 });
    expect(status.resets_at).toBeGreaterThan(now() + 3500);
    const files = (await readOutbox(dataDir)).length;
    const body = validBody();
    const res = await o.api.post(URL_, body);
    expect(res.status).toBe(429);
    expect(res.body.code).toBe('rate_limited');
    expect(typeof res.body.error).toBe('string');
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((await readOutbox(dataDir)).length).toBe(files);
    expect((await readOutbox(dataDir)).some((m) => m.subject === body.subject)).toBe(false);
    // Other organizations are not affected.
    expect((await (await createOrg(t)).api.post(URL_, validBody())).status).toBe(202);
  });

  it('concurrent requests never overshoot the limit', async () => {
    const o = await createOrg(t);
    const results = await Promise.all(Array.from({ length: 12 }, () => o.api.post(URL_, validBody({ subject: `burst ${o.organizationId}` }))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    expect((await readOutbox(dataDir)).filter((m) => m.subject === `burst ${o.organizationId}`)).toHaveLength(3);
    const rows = await t.database.db.selectFrom('stakeholder_emails').select('id').where('organization_id', '=', o.organizationId).execute();
    expect(rows).toHaveLength(3);
  });
});

describe.each(dialects)('stakeholder emails over SMTP on %s', (dialect) => {
  it('delivers through SMTP_URL (nodemailer) and writes no outbox file', async () => {
    const smtp = await fakeSmtp();
    const dataDir = tmpDir();
    const t = await createTestApp(dialect, { DATA_DIR: dataDir, SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, MAIL_FROM: '"Acme Video" <video@acme.example>' });
    try {
      const o = await createOrg(t);
      const player = await createPlayer(o.api);
      const body = validBody({ player_id: player.id, recipients: ['ceo@example.com', 'reject-me@example.com'] });
      const res = await o.api.post(URL_, body);
      expect(res.status).toBe(202);
      expect(smtp.messages).toHaveLength(1);
      const m = smtp.messages[0];
      expect(m.from).toContain('video@acme.example');
      expect(m.to).toEqual(['ceo@example.com']);
      expect(m.data).toMatch(/^From: Acme Video <video@acme\.example>$/m);
      expect(m.data).toContain(`Subject: ${body.subject}`);
      expect(m.data).toContain(`/watch/${player.uuid}`);
      expect(m.data).toMatch(new RegExp(`^X-Reelbase-Stakeholder-Email: ${res.body.id}$`, 'm'));
      expect(await readOutbox(dataDir)).toEqual([]);
    } finally {
      await t.close();
      await smtp.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('an unreachable SMTP server: 202, the message is queued and sent again once the server answers', async () => {
    const dataDir = tmpDir();
    const t = await createTestApp(dialect, { DATA_DIR: dataDir, SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` });
    const smtp = await fakeSmtp();
    try {
      const o = await createOrg(t);
      const body = validBody();
      const res = await o.api.post(URL_, body);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ id: expect.any(Number), subject: body.subject, sent_at: expect.any(Number) });
      expect(JSON.stringify(res.body)).not.toContain('127.0.0.1');
      // Waiting to be sent, it counts against the throttle.
      expect((await o.api.get(STATUS)).body.remaining).toBe(9);
      const row = async () => t.database.db.selectFrom('stakeholder_emails').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect(await row()).toMatchObject({ status: 'sending', sent_at: null, error: expect.stringMatching(/SMTP delivery failed/) });
      const job = await t.database.db.selectFrom('jobs').selectAll().where('type', '=', 'mail.stakeholder').orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(job).toMatchObject({ status: 'queued', max_attempts: 20 });

      // A worker whose mail server still refuses: the attempt is recorded, the job waits for the next.
      await t.database.db.updateTable('jobs').set({ run_at: Date.now() }).where('id', '=', job.id).execute();
      await new JobRunner(t.database.db, {
        handlers: jobHandlers(createContainer({ config: t.config, database: t.database })),
        backoff: () => 60_000,
        pollMs: 10,
      }).drain();
      expect(await t.database.db.selectFrom('jobs').select(['status', 'attempts']).where('id', '=', job.id).executeTakeFirstOrThrow()).toEqual({
        status: 'queued',
        attempts: 1,
      });
      expect((await row()).status).toBe('sending');

      // Once the server answers, the message goes out as it was asked for.
      await t.database.db.updateTable('jobs').set({ run_at: Date.now() }).where('id', '=', job.id).execute();
      const working = { ...t.config, smtpUrl: `smtp://127.0.0.1:${smtp.port}` };
      await new JobRunner(t.database.db, {
        handlers: jobHandlers(createContainer({ config: working, database: t.database })),
        backoff: () => 10,
        pollMs: 10,
      }).drain();
      expect(smtp.messages).toHaveLength(1);
      expect(smtp.messages[0].data).toContain(`Subject: ${body.subject}`);
      expect(smtp.messages[0].data).toMatch(new RegExp(`^X-Reelbase-Stakeholder-Email: ${res.body.id}$`, 'm'));
      expect(await row()).toMatchObject({ status: 'sent', sent_at: expect.any(Number), error: null });
    } finally {
      await t.close();
      await smtp.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a message the mail server refuses to the last attempt is failed, and stops counting', async () => {
    const dataDir = tmpDir();
    const t = await createTestApp(dialect, { DATA_DIR: dataDir, SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` });
    try {
      const o = await createOrg(t);
      const res = await o.api.post(URL_, validBody());
      expect(res.status).toBe(202);
      await t.database.db.updateTable('jobs').set({ run_at: Date.now(), max_attempts: 1 }).where('type', '=', 'mail.stakeholder').execute();
      await new JobRunner(t.database.db, {
        handlers: jobHandlers(createContainer({ config: t.config, database: t.database })),
        backoff: () => 10,
        pollMs: 10,
      }).drain();
      const row = await t.database.db.selectFrom('stakeholder_emails').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'failed', sent_at: null, error: expect.stringMatching(/SMTP delivery failed/) });
      expect((await o.api.get(STATUS)).body.remaining).toBe(10);
    } finally {
      await t.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.each(dialects)('stakeholder email outbox on %s', (dialect) => {
  let t: TestApp;
  let dataDir: string;

  const db = () => t.database.db;
  const bySubject = async (subject: string) => (await readOutbox(dataDir)).filter((m) => m.subject === subject);
  /** A worker of its own (another process, as far as the database can tell), mailing to the outbox. */
  const worker = () =>
    new JobRunner(t.database.db, { handlers: jobHandlers(createContainer({ config: t.config, database: t.database })), backoff: () => 10, pollMs: 10 });
  const emailRow = (organizationId: number) =>
    db().selectFrom('stakeholder_emails').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  const jobsOf = async (emailId: number) =>
    (await db().selectFrom('jobs').selectAll().where('type', '=', 'mail.stakeholder').orderBy('id').execute()).filter(
      (j) => (JSON.parse(j.payload) as { emailId: number }).emailId === emailId,
    );
  /** Every email that counts against the throttle (`sending`) has a job that will send it. */
  const everyCountedEmailHasAJob = async () => {
    const sending = await db().selectFrom('stakeholder_emails').select('id').where('status', '=', 'sending').execute();
    for (const { id } of sending)
      expect(
        (await jobsOf(id)).filter((j) => j.status === 'queued' || j.status === 'running'),
        `email ${id}`,
      ).toHaveLength(1);
  };

  beforeAll(async () => {
    dataDir = tmpDir();
    t = await createTestApp(dialect, { DATA_DIR: dataDir });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('the process dies between recording the email and sending it: the job was committed with the email, and a worker sends it once', async () => {
    const o = await createOrg(t);
    const body = validBody();
    // The inline send never returns: as far as the database can tell, the process died right there.
    let die: (error: Error) => void = () => {};
    const send = vi.spyOn(t.container.mailer, 'send').mockImplementation(
      () =>
        new Promise((_resolve, reject) => {
          die = reject;
        }),
    );
    const pending = o.api.post(URL_, body);
    await vi.waitFor(() => expect(send).toHaveBeenCalledTimes(1));
    send.mockRestore();

    const row = (await emailRow(o.organizationId))!;
    expect(row).toMatchObject({ status: 'sending', sent_at: null });
    expect((await o.api.get(STATUS)).body.remaining).toBe(9); // counted…
    const jobs = await jobsOf(row.id);
    expect(jobs).toHaveLength(1); // …and its job exists: both were committed together
    expect(jobs[0]).toMatchObject({ status: 'queued', max_attempts: 20 });
    expect(JSON.parse(jobs[0].payload).mail).toMatchObject({ to: body.recipients, subject: body.subject });
    await everyCountedEmailHasAJob();

    // While the request may still be sending, no worker takes the job…
    await worker().drain();
    expect(await bySubject(body.subject)).toHaveLength(0);
    // …once its grace is over (the process is gone), a worker sends the email.
    await db().updateTable('jobs').set({ run_at: Date.now() }).where('id', '=', jobs[0].id).execute();
    await worker().drain();
    const mails = await bySubject(body.subject);
    expect(mails).toHaveLength(1);
    expect(mails[0].headers['X-Reelbase-Stakeholder-Email']).toBe(String(row.id));
    expect(await emailRow(o.organizationId)).toMatchObject({ status: 'sent', sent_at: expect.any(Number), error: null });

    // Should the dead request's send come back failing after all, nothing is sent twice.
    die(new Error('the process was killed'));
    expect((await pending).status).toBe(202);
    await db().updateTable('jobs').set({ run_at: Date.now() }).where('type', '=', 'mail.stakeholder').where('status', '=', 'queued').execute();
    await worker().drain();
    expect(await bySubject(body.subject)).toHaveLength(1);
    expect(await emailRow(o.organizationId)).toMatchObject({ status: 'sent', error: null });
  });

  it('an inline send failing with an error that is not a refusal: 202 all the same, the job stays queued and a worker sends the email', async () => {
    const o = await createOrg(t);
    const body = validBody();
    vi.spyOn(t.container.mailer, 'send').mockRejectedValueOnce(new TypeError('mailer bug'));
    const res = await o.api.post(URL_, body);
    expect(res.status, res.raw).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['id', 'player_id', 'recipients', 'sent_at', 'subject']);
    expect(JSON.stringify(res.body)).not.toContain('mailer bug');
    expect(await emailRow(o.organizationId)).toMatchObject({ id: res.body.id, status: 'sending', error: expect.stringContaining('mailer bug') });
    const jobs = await jobsOf(res.body.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0].status).toBe('queued');
    expect(Number(jobs[0].run_at)).toBeLessThanOrEqual(Date.now() + 5_000); // retried soon, not after the grace
    await everyCountedEmailHasAJob();

    await db().updateTable('jobs').set({ run_at: Date.now() }).where('id', '=', jobs[0].id).execute();
    await worker().drain();
    expect(await bySubject(body.subject)).toHaveLength(1);
    expect(await emailRow(o.organizationId)).toMatchObject({ status: 'sent', error: null });
  });

  it('an email sent at once leaves no job behind (its addresses are not kept in the queue)', async () => {
    const o = await createOrg(t);
    const res = await o.api.post(URL_, validBody());
    expect(res.status).toBe(202);
    expect(await emailRow(o.organizationId)).toMatchObject({ status: 'sent' });
    expect(await jobsOf(res.body.id)).toEqual([]);
    await everyCountedEmailHasAJob();
  });
});
