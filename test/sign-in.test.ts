import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContainer } from '../src/container.ts';
import { JobRunner } from '../src/jobs/runner.ts';
import { readOutbox } from '../src/mail/outbox.ts';
import { jobHandlers } from '../src/modules/job-handlers.ts';
import { createOrg, createUser, unique, type OrgContext } from './helpers/factories.ts';
import { client, createTestApp, dialects, type TestApp } from './helpers/harness.ts';

const P = '/dashboard/v1';
const PASSWORD = 'correct horse battery';

/** A browser-like client: keeps the session cookie it is given and sends it back, with the CSRF token when told. */
function browser(t: TestApp) {
  const api = client(t.app);
  let cookie = '';
  let csrf = '';
  const remember = <T extends { headers: Record<string, unknown>; body: any }>(res: T): T => {
    const set = res.headers['set-cookie'];
    if (typeof set === 'string') cookie = set.split(';')[0];
    if (res.body && typeof res.body === 'object' && typeof res.body.csrf_token === 'string') csrf = res.body.csrf_token;
    return res;
  };
  const headers = (extra: Record<string, string> = {}, withCsrf = true) => ({
    ...(cookie ? { cookie } : {}),
    ...(withCsrf && csrf ? { 'x-csrf-token': csrf } : {}),
    ...extra,
  });
  return {
    get cookie() {
      return cookie;
    },
    get csrf() {
      return csrf;
    },
    setCookie(value: string) {
      cookie = value;
    },
    get: (url: string, extra?: Record<string, string>) => api.get(url, headers(extra)).then(remember),
    post: (url: string, body?: unknown, extra?: Record<string, string>, withCsrf = true) => api.post(url, body, headers(extra, withCsrf)).then(remember),
    patch: (url: string, body?: unknown, extra?: Record<string, string>, withCsrf = true) => api.patch(url, body, headers(extra, withCsrf)).then(remember),
    delete: (url: string, extra?: Record<string, string>, withCsrf = true) => api.delete(url, headers(extra, withCsrf)).then(remember),
  };
}

describe.each(dialects)('signing in (%s)', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let dataDir: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-signin-'));
    t = await createTestApp(
      dialect,
      { DATA_DIR: dataDir, LOG_LEVEL: 'info', SIGN_IN_ATTEMPTS_PER_10_MINUTES: '5' },
      { logStream: { write: (line: string) => void logLines.push(line) } },
    );
    org = await createOrg(t);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs the queued jobs (the mails of invitations and resets). */
  const runJobs = () =>
    new JobRunner(t.database.db, { handlers: jobHandlers(createContainer({ config: t.config, database: t.database })), pollMs: 10 }).drain();

  /** The link of the last mail sent to `email`, and its token. */
  async function linkMailedTo(email: string): Promise<{ url: string; token: string; subject: string }> {
    const mails = (await readOutbox(dataDir)).filter((m) => m.to.includes(email));
    expect(mails.length).toBeGreaterThan(0);
    const mail = mails.at(-1)!;
    const url = /https?:\/\/\S+/.exec(mail.text)![0];
    return { url, token: new URL(url).hash.replace('#token=', ''), subject: mail.subject };
  }

  /** A user invited by the owner through the API who accepted the invitation: a signed-in browser. */
  async function signedInUser(roleId: number) {
    const email = `${unique('person').replace(/\W+/g, '.')}@example.com`;
    const user = await createUser(org.api, { email, role_id: roleId });
    await runJobs();
    const { token } = await linkMailedTo(email);
    const b = browser(t);
    const res = await b.post(`${P}/account_links/use`, { token, password: PASSWORD });
    expect(res.status).toBe(201);
    return { b, user, email };
  }

  it('an invitation by POST /v1/users is mailed; its link sets the password once and signs the person in', async () => {
    const email = `${unique('invitee').replace(/\W+/g, '.')}@example.com`;
    const user = await createUser(org.api, { email, role_id: 3, first_name: 'Ada', last_name: '' });
    await runJobs();
    const { url, token, subject } = await linkMailedTo(email);
    expect(subject).toMatch(/invited/);
    expect(url).toMatch(/^http:\/\/reelbase\.test\/app\/invitation#token=[A-Za-z0-9_-]{40,}$/);

    const anon = client(t.app);
    const seen = await anon.post(`${P}/account_links/inspect`, { token });
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ purpose: 'invite', email, first_name: 'Ada', organization: { id: org.organizationId } });

    // A weak password is refused next to its field, and the link still works.
    for (const weak of ['short', email, 'aaaaaaaaaaaa']) {
      const refused = await anon.post(`${P}/account_links/use`, { token, password: weak });
      expect(refused.status).toBe(422);
      expect(refused.body.errors ?? refused.body).toBeTruthy();
      expect(refused.raw).toContain('password');
    }
    const b = browser(t);
    const used = await b.post(`${P}/account_links/use`, { token, password: PASSWORD, last_name: 'Lovelace' });
    expect(used.status).toBe(201);
    expect(used.body).toMatchObject({ user: { id: user.id, email, role: 'editor', last_name: 'Lovelace' }, organization: { id: org.organizationId } });
    const setCookie = String(used.headers['set-cookie']);
    expect(setCookie).toMatch(/^reelbase_session=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);

    // Used: gone.
    expect((await anon.post(`${P}/account_links/inspect`, { token })).status).toBe(404);
    expect((await anon.post(`${P}/account_links/use`, { token, password: PASSWORD })).status).toBe(404);

    const me = await b.get(`${P}/session`);
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ id: user.id, role: 'editor' });
    expect((await org.api.get(`${P}/users/${user.id}`)).body.last_name).toBe('Lovelace');
  });

  it('a session calls the same operations as a token; what changes something needs its CSRF token and our Origin', async () => {
    const { b } = await signedInUser(3);
    expect((await b.get(`${P}/players`)).status).toBe(200);
    const body = { name: unique('Player') };
    const noCsrf = await b.post(`${P}/players`, body, {}, false);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.raw).toMatch(/CSRF/);
    expect((await b.post(`${P}/players`, body, { 'x-csrf-token': 'x'.repeat(32) })).status).toBe(403);
    expect((await b.post(`${P}/players`, body, { origin: 'https://evil.example' })).status).toBe(403);
    const made = await b.post(`${P}/players`, body, { origin: 'http://reelbase.test' });
    expect(made.status).toBe(201);
    // Nothing was made by the refused ones.
    const names = (await org.api.get(`${P}/players?per_page=200`)).body.players.map((p: { name: string }) => p.name);
    expect(names.filter((n: string) => n === body.name)).toHaveLength(1);
  });

  it('tokens work as before, and a token wins over a cookie', async () => {
    const { b } = await signedInUser(4);
    // The viewer's session may not write; the owner's token beside the same cookie may.
    expect((await b.post(`${P}/players`, { name: unique('P') })).status).toBe(403);
    const withToken = await b.post(`${P}/players`, { name: unique('P') }, { authorization: `Bearer ${org.token}` }, false);
    expect(withToken.status).toBe(201);
    expect((await client(t.app).get(`${P}/players`, { cookie: 'reelbase_session=not-a-real-session-value-at-all' })).status).toBe(401);
  });

  it('signs in with the password, refuses a wrong one or an unknown address alike, and signs out', async () => {
    const { email } = await signedInUser(3);
    const b = browser(t);
    const wrong = await b.post(`${P}/session`, { email, password: 'not the password' });
    const unknown = await b.post(`${P}/session`, { email: 'nobody@example.com', password: PASSWORD });
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.body.message).toBe(unknown.body.message);
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const ok = await b.post(`${P}/session`, { email: email.toUpperCase(), password: PASSWORD });
    expect(ok.status).toBe(201);
    expect((await b.get(`${P}/players`)).status).toBe(200);
    const cookie = b.cookie;
    const out = await b.delete(`${P}/session`);
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/reelbase_session=; .*Max-Age=0/);
    b.setCookie(cookie);
    expect((await b.get(`${P}/players`)).status).toBe(401);
    expect((await b.get(`${P}/session`)).status).toBe(401);
    // Sign-in from another site's page is refused before the password is looked at.
    expect((await client(t.app).post(`${P}/session`, { email, password: PASSWORD }, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('a role change or a removal ends the sessions at once', async () => {
    const changed = await signedInUser(3);
    expect((await changed.b.get(`${P}/players`)).status).toBe(200);
    expect((await org.api.patch(`${P}/users`, { id: changed.user.id, role_id: 4 })).status).toBe(200);
    expect((await changed.b.get(`${P}/players`)).status).toBe(401);
    // Signing in again gives the new role.
    const again = browser(t);
    expect((await again.post(`${P}/session`, { email: changed.email, password: PASSWORD })).body.user.role).toBe('viewer');

    const removed = await signedInUser(3);
    expect((await org.api.delete(`${P}/users/${removed.user.id}`)).status).toBe(200);
    expect((await removed.b.get(`${P}/players`)).status).toBe(401);
    expect((await browser(t).post(`${P}/session`, { email: removed.email, password: PASSWORD })).status).toBe(401);
  });

  it('sign-in attempts are limited per account, then refused even with the right password', async () => {
    const { email } = await signedInUser(4);
    const b = browser(t);
    // From other addresses than the other tests' (the per-address limit counts them too).
    const from = { 'x-forwarded-for': '203.0.113.9' };
    for (let i = 0; i < 5; i++) expect((await b.post(`${P}/session`, { email, password: `wrong ${i} password` }, from)).status).toBe(401);
    const limited = await b.post(`${P}/session`, { email, password: PASSWORD }, from);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // Another account is not held up by this one.
    const other = await signedInUser(4);
    expect((await browser(t).post(`${P}/session`, { email: other.email, password: PASSWORD })).status).toBe(201);
  });

  it('a password reset is mailed only to an address with an account, changes the password and ends other sessions', async () => {
    const { b, email } = await signedInUser(3);
    const anon = client(t.app);
    const before = (await readOutbox(dataDir)).length;
    const unknown = await anon.post(`${P}/password_resets`, { email: 'no-such-person@example.com' });
    const known = await anon.post(`${P}/password_resets`, { email });
    expect([unknown.status, known.status]).toEqual([202, 202]);
    expect(unknown.body).toEqual(known.body);
    // The mail is queued once the answer has gone: wait for it.
    for (const end = Date.now() + 5000; (await readOutbox(dataDir)).length === before && Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
      await runJobs();
    }
    const mails = (await readOutbox(dataDir)).slice(before);
    expect(mails.map((m) => m.to[0])).toEqual([email]);
    const { url, token, subject } = await linkMailedTo(email);
    expect(subject).toMatch(/Reset/);
    expect(url).toContain('/app/reset#token=');
    expect((await anon.post(`${P}/account_links/inspect`, { token })).body.purpose).toBe('reset');

    const fresh = browser(t);
    expect((await fresh.post(`${P}/account_links/use`, { token, password: 'a brand new passphrase' })).status).toBe(201);
    expect((await b.get(`${P}/players`)).status).toBe(401);
    expect((await fresh.get(`${P}/players`)).status).toBe(200);
    expect((await browser(t).post(`${P}/session`, { email, password: PASSWORD })).status).toBe(401);
    expect((await browser(t).post(`${P}/session`, { email, password: 'a brand new passphrase' })).status).toBe(201);
  });

  it('a link used twice at once signs in once; a request a browser marks cross-site is refused', async () => {
    const email = `${unique('twice').replace(/\W+/g, '.')}@example.com`;
    await createUser(org.api, { email, role_id: 4 });
    await runJobs();
    const { token } = await linkMailedTo(email);
    const anon = client(t.app);
    const both = await Promise.all([
      anon.post(`${P}/account_links/use`, { token, password: 'first of two passwords' }),
      anon.post(`${P}/account_links/use`, { token, password: 'second of two passwords' }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 404]);
    const winner = both.find((r) => r.status === 201)!;
    const signedIn = client(t.app);
    const cookie = String(winner.headers['set-cookie']).split(';')[0];
    expect((await signedIn.get(`${P}/players`, { cookie })).status).toBe(200);
    expect((await anon.post(`${P}/session`, { email, password: 'first of two passwords' }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  });

  it('bad input is a 4xx and changes nothing', async () => {
    const anon = client(t.app);
    for (const [url, body] of [
      [`${P}/session`, { email: 'not-an-address', password: 'x' }],
      [`${P}/session`, { email: 'a@example.com' }],
      [`${P}/account_links/inspect`, { token: 'short' }],
      [`${P}/account_links/use`, { token: 'a'.repeat(43) }],
      [`${P}/account_links/use`, { token: 'a'.repeat(43), password: PASSWORD }],
      [`${P}/password_resets`, {}],
    ] as const) {
      const res = await anon.post(url, body);
      expect(res.status, `${url} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect((await t.database.db.selectFrom('user_sessions').select('id_hash').execute()).length).toBeGreaterThan(0);
  });

  it('no session secret, link token or CSRF token reaches the log', async () => {
    const { b } = await signedInUser(3);
    await b.post(`${P}/players`, { name: unique('P') });
    const secret = b.cookie.split('=')[1];
    const log = logLines.join('\n');
    expect(secret.length).toBeGreaterThan(20);
    expect(log).not.toContain(secret);
    expect(log).not.toContain(b.csrf);
    for (const mail of await readOutbox(dataDir)) {
      const token = /#token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
      if (token) expect(log).not.toContain(token);
    }
  });

  it('housekeeping removes expired sessions and links', async () => {
    await signedInUser(4);
    const far = Date.now() + 400 * 86_400_000;
    const result = await t.services.housekeeping.sweep(far);
    expect(result.sessions).toBeGreaterThan(0);
    expect(await t.database.db.selectFrom('user_sessions').select('id_hash').execute()).toEqual([]);
  });
});

describe('a session behind https (SQLite)', () => {
  it('is a __Host- cookie, Secure, and only that cookie signs in', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-signin-https-'));
    const t = await createTestApp('sqlite', { DATA_DIR: dataDir, PUBLIC_URL: 'https://reelbase.test' });
    try {
      const org = await createOrg(t);
      const user = await createUser(org.api, { role_id: 3 });
      const { url } = await t.services.users.inviteWithLink(org.organizationId, user.email, 'editor');
      const used = await client(t.app).post(`${P}/account_links/use`, { token: new URL(url).hash.replace('#token=', ''), password: PASSWORD });
      expect(String(used.headers['set-cookie'])).toMatch(/^__Host-reelbase_session=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
      const secret = String(used.headers['set-cookie']).split(';')[0].split('=')[1];
      expect((await client(t.app).get(`${P}/players`, { cookie: `__Host-reelbase_session=${secret}` })).status).toBe(200);
      // The plain name, which a sibling subdomain could set, is not read behind https.
      expect((await client(t.app).get(`${P}/players`, { cookie: `reelbase_session=${secret}` })).status).toBe(401);
    } finally {
      await t.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('reelbase user invite (SQLite)', () => {
  const run = promisify(execFile);
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelbase-invite-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function cli(...args: string[]): Promise<{ code: number; last: any }> {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'silent', PUBLIC_URL: 'http://localhost:3999' };
    delete env.DATABASE_URL;
    try {
      const { stdout } = await run(process.execPath, ['scripts/cli.mjs', ...args], { env, cwd: path.resolve(import.meta.dirname, '..') });
      return { code: 0, last: JSON.parse(stdout.trim().split('\n').at(-1)!) };
    } catch (err) {
      const e = err as { code: number; stdout: string };
      return { code: e.code, last: JSON.parse(e.stdout.trim().split('\n').at(-1)!) };
    }
  }

  it('prints the user and the invitation link; again, a new link for the same user; refuses bad input', async () => {
    const orgId = (await cli('org', 'create', '--name', 'Invite Org')).last.organization_id;
    const first = await cli('user', 'invite', '--org', String(orgId), '--email', 'Maria@Example.com', '--role', 'admin');
    expect(first.code).toBe(0);
    expect(first.last).toEqual({
      user_id: expect.any(Number),
      invite_url: expect.stringMatching(/^http:\/\/localhost:3999\/app\/invitation#token=[A-Za-z0-9_-]{40,}$/),
    });
    const second = await cli('user', 'invite', '--org', String(orgId), '--email', 'maria@example.com', '--role', 'admin');
    expect(second.last.user_id).toBe(first.last.user_id);
    expect(second.last.invite_url).not.toBe(first.last.invite_url);
    // Another role for someone already invited is refused rather than ignored.
    const otherRole = await cli('user', 'invite', '--org', String(orgId), '--email', 'maria@example.com', '--role', 'viewer');
    expect(otherRole.code).not.toBe(0);
    expect(otherRole.last.error).toMatch(/invited as admin/);
    for (const args of [
      ['--org', String(orgId), '--email', 'x@example.com', '--role', 'king'],
      ['--org', '999999', '--email', 'x@example.com'],
      ['--org', String(orgId), '--email', 'not an address'],
    ]) {
      const res = await cli('user', 'invite', ...args);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.last.error).toBeTruthy();
    }
  });
});
