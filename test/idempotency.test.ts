/**
 * Idempotency-Key under failure: a claim whose request died (the process crashed between claiming the
 * key and storing the answer) holds the key only for its lease, and bodies of any depth are
 * fingerprinted without overflowing the stack.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestFingerprint } from '../src/modules/idempotency/idempotency.service.ts';
import { createTestApp, dialects, type Response, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';

function expectError(res: Response, status: number, code: string) {
  expect(res.status, res.raw).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'error']);
  expect(res.body.code).toBe(code);
}

/** `[[[…]]]` / `{"a":{"a":…}}` nested `depth` times, as JSON text. */
const deepArray = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe.each(dialects)('Idempotency-Key leases and deep bodies on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  const playerCount = async () => ((await org.api.get(`${P}/players`)).body as unknown[]).length;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
  });
  afterAll(() => t.close());
  afterEach(() => vi.useRealTimers());

  it('runs a key again once the lease of a crashed first request has run out, and not before', async () => {
    const body = { name: 'Crashed once' };
    const before = await playerCount();
    // What a process that died between claiming the key and storing the answer leaves behind: a claim
    // nobody will ever complete (made by the service, exactly as the request would have made it).
    await t.services.idempotency.begin(org.organizationId, 'k-crash', requestFingerprint('POST', `${P}/players`, body));
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });

    expectError(await org.api.post(`${P}/players`, body, { 'idempotency-key': 'k-crash' }), 409, 'idempotency_in_progress');
    vi.setSystemTime(Date.now() + 30_000);
    expectError(await org.api.post(`${P}/players`, body, { 'idempotency-key': 'k-crash' }), 409, 'idempotency_in_progress');
    expect(await playerCount()).toBe(before);

    // The lease (60 s) is over: the key is claimed anew and the request runs, once.
    vi.setSystemTime(Date.now() + 31_000);
    const retried = await org.api.post(`${P}/players`, body, { 'idempotency-key': 'k-crash' });
    expect(retried.status, retried.raw).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const replay = await org.api.post(`${P}/players`, body, { 'idempotency-key': 'k-crash' });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(retried.body.id);
    expect(await playerCount()).toBe(before + 1);
  });

  it('lets a request that outlived its lease store nothing over the claim that replaced it', async () => {
    const body = { name: 'Late' };
    const fingerprint = requestFingerprint('POST', `${P}/players`, body);
    const stale = await t.services.idempotency.begin(org.organizationId, 'k-late', fingerprint);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
    const fresh = await org.api.post(`${P}/players`, body, { 'idempotency-key': 'k-late' });
    expect(fresh.status).toBe(201);
    // The first request finally answers (a 500, or anything else): the key keeps the second one's answer.
    if (stale && 'lease' in stale) {
      await t.services.idempotency.finish(org.organizationId, 'k-late', stale.lease, { status: 500, body: 'late', type: 'text/plain' });
      await t.services.idempotency.finish(org.organizationId, 'k-late', stale.lease, { status: 200, body: 'late', type: 'text/plain' });
    }
    const replay = await org.api.post(`${P}/players`, body, { 'idempotency-key': 'k-late' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(fresh.body.id);
  });

  it('answers a 20,000-deep body with an Idempotency-Key like one without, never 500', async () => {
    for (const [key, nested] of [
      ['k-deep-array', deepArray(20_000)],
      ['k-deep-object', deepObject(20_000)],
    ] as const) {
      const text = `{"name":"Deep","extra":${nested}}`;
      const first = await org.api.post(`${P}/players`, text, { 'idempotency-key': key });
      expect(first.status, first.raw).toBe(201);
      const again = await org.api.post(`${P}/players`, text, { 'idempotency-key': key });
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      // Another body under the same key is still told apart, however deep the difference lies.
      const other = `{"name":"Deep","extra":${nested.replace('1', '2').replace('[]', '[0]')}}`;
      expectError(await org.api.post(`${P}/players`, other, { 'idempotency-key': key }), 422, 'idempotency_key_reused');
    }
  });
});
