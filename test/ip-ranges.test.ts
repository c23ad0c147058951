import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { client, createTestApp, dialects, type Client, type TestApp } from './helpers/harness.ts';
import { createOrg, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const FIELDS = ['created_at', 'id', 'ip_range', 'name', 'organization_id', 'updated_at'];

describe.each(dialects)('blacklisted IP ranges on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;
  let admin: Client;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    admin = await org.as('admin');
  });
  afterAll(() => t.close());

  it('creates a range (reference example) with the exact shape and a Location header', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await admin.post(`${P}/blacklisted_ip_ranges`, { name: 'Office', ip_range: '192.168.0.1/24' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(FIELDS);
    expect(res.body).toMatchObject({ organization_id: org.organizationId, name: 'Office', ip_range: '192.168.0.1/24' });
    expect(Number.isInteger(res.body.id)).toBe(true);
    expect(res.body.created_at).toBeGreaterThanOrEqual(before);
    expect(res.body.updated_at).toBe(res.body.created_at);
    expect(res.headers.location).toBe(`/dashboard/v1/blacklisted_ip_ranges/${res.body.id}`);
    // The Location answers the same record.
    const got = await admin.get(String(res.headers.location));
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    // Stored with its network range.
    const row = await t.database.db.selectFrom('blacklisted_ip_ranges').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.range_start).toBe('00000000000000000000ffffc0a80000');
    expect(row.range_end).toBe('00000000000000000000ffffc0a800ff');
  });

  it('accepts the wrapped form, the .json suffix, the body token, IPv6 and single addresses; name defaults to the range', async () => {
    const wrapped = await client(t.app).post(`${P}/blacklisted_ip_ranges.json`, {
      auth_token: org.token,
      blacklisted_ip_range: { name: 'v6 net', ip_range: '2001:DB8::/32' },
    });
    expect(wrapped.status).toBe(201);
    expect(wrapped.body.ip_range).toBe('2001:DB8::/32');
    const single = await org.api.post(`${P}/blacklisted_ip_ranges`, { ip_range: ' 203.0.113.7 ' });
    expect(single.status).toBe(201);
    expect(single.body.ip_range).toBe('203.0.113.7');
    expect(single.body.name).toBe('203.0.113.7');
    const mapped = await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'mapped', ip_range: '::ffff:198.51.100.0/120' });
    expect(mapped.status).toBe(201);
  });

  it('validates with 422 naming the field, storing nothing', async () => {
    const count = async () => (await admin.get(`${P}/blacklisted_ip_ranges`)).body.length;
    const before = await count();
    const cases: Array<[unknown, string]> = [
      [{ name: 'x' }, 'ip_range'],
      [{ name: 'x', ip_range: '' }, 'ip_range'],
      [{ name: 'x', ip_range: 'garbage' }, 'ip_range'],
      [{ name: 'x', ip_range: '256.1.1.1' }, 'ip_range'],
      [{ name: 'x', ip_range: '10.0.0.0/33' }, 'ip_range'],
      [{ name: 'x', ip_range: '10.0.0.0/-1' }, 'ip_range'],
      [{ name: 'x', ip_range: '2001:db8::/129' }, 'ip_range'],
      [{ name: 'x', ip_range: '1::2::3' }, 'ip_range'],
      [{ name: 'x', ip_range: 'fe80::1%eth0' }, 'ip_range'],
      [{ name: 'x', ip_range: '1'.repeat(65) }, 'ip_range'],
      [{ name: 'x', ip_range: 42 }, 'ip_range'],
      [{ name: '', ip_range: '10.0.0.1' }, 'name'],
      [{ name: '   ', ip_range: '10.0.0.1' }, 'name'],
      [{ name: 'a'.repeat(256), ip_range: '10.0.0.1' }, 'name'],
      [{ name: 'line\nbreak', ip_range: '10.0.0.1' }, 'name'],
      [{ name: 7, ip_range: '10.0.0.1' }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(`${P}/blacklisted_ip_ranges`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.code).toBe('validation_failed');
      expect(
        res.body.details.map((d: any) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const prefix = await admin.post(`${P}/blacklisted_ip_ranges`, { ip_range: '10.0.0.0/33' });
    expect(prefix.body.details[0].message).toMatch(/between 0 and 32/);
    // The other side of the bounds.
    expect((await admin.post(`${P}/blacklisted_ip_ranges`, { name: 'a'.repeat(255), ip_range: '10.0.0.0/32' })).status).toBe(201);
    expect((await admin.post(`${P}/blacklisted_ip_ranges`, { name: 'all v4', ip_range: '0.0.0.0/0' })).status).toBe(201);
    expect((await admin.post(`${P}/blacklisted_ip_ranges`, { name: 'one v6', ip_range: '2001:db8::1/128' })).status).toBe(201);
    expect(await count()).toBe(before + 3);
    // Malformed JSON is a 400, another media type 415; a form body is read like JSON (docs/api-decisions.md).
    expect((await admin.post(`${P}/blacklisted_ip_ranges`, '{"ip_range":')).status).toBe(400);
    expect((await admin.post(`${P}/blacklisted_ip_ranges`, 'ip_range=1.2.3.4', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await admin.post(`${P}/blacklisted_ip_ranges`, 'name=one&ip_range=1.2.3.4', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(
      201,
    );
    expect(await count()).toBe(before + 4);
  });

  it('lists: a bare array without per_page, the envelope with it, id ascending, CSV too', async () => {
    const fresh = await createOrg(t);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await fresh.api.post(`${P}/blacklisted_ip_ranges`, { name: `r${i}`, ip_range: `10.${i}.0.0/16` })).body.id);
    const bare = await fresh.api.get(`${P}/blacklisted_ip_ranges`);
    expect(bare.status).toBe(200);
    expect(Array.isArray(bare.body)).toBe(true);
    expect(bare.body.map((r: any) => r.id)).toEqual(ids);
    expect(Object.keys(bare.body[0]).sort()).toEqual(FIELDS);
    const paged = await fresh.api.get(`${P}/blacklisted_ip_ranges?per_page=2&page=2`);
    expect(paged.status).toBe(200);
    expect(paged.body.blacklisted_ip_ranges.map((r: any) => r.id)).toEqual(ids.slice(2, 4));
    expect(paged.body.summary).toEqual({ page: 2, per_page: 2, count: 5 });
    const past = await fresh.api.get(`${P}/blacklisted_ip_ranges?per_page=2&page=4`);
    expect(past.body).toEqual({ blacklisted_ip_ranges: [], summary: { page: 4, per_page: 2, count: 5 } });
    for (const q of ['per_page=0', 'per_page=201', 'page=0&per_page=1', 'per_page=x']) {
      const bad = await fresh.api.get(`${P}/blacklisted_ip_ranges?${q}`);
      expect(bad.status, q).toBe(422);
    }
    expect((await fresh.api.get(`${P}/blacklisted_ip_ranges?per_page=200`)).status).toBe(200);
    const csv = await fresh.api.get(`${P}/blacklisted_ip_ranges`, { accept: 'text/csv' });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.raw.split('\n')[0]).toContain('ip_range');
    expect(csv.raw).toContain('10.4.0.0/16');
    expect((await fresh.api.get(`${P}/blacklisted_ip_ranges`, { accept: 'image/png' })).status).toBe(406);
  });

  it('gets and deletes; a deleted or unknown id is a 404', async () => {
    const created = (await admin.post(`${P}/blacklisted_ip_ranges`, { name: 'temp', ip_range: '198.51.100.0/24' })).body;
    const del = await admin.delete(`${P}/blacklisted_ip_ranges/${created.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual(created);
    expect((await admin.get(`${P}/blacklisted_ip_ranges/${created.id}`)).status).toBe(404);
    const again = await admin.delete(`${P}/blacklisted_ip_ranges/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    expect((await admin.get(`${P}/blacklisted_ip_ranges/999999`)).status).toBe(404);
    expect((await admin.get(`${P}/blacklisted_ip_ranges/abc`)).status).toBe(404);
    expect((await admin.get(`${P}/blacklisted_ip_ranges/99999999999`)).status).toBe(404);
  });

  it("answers another organization's range exactly like a missing one", async () => {
    const mine = (await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'mine', ip_range: '100.64.0.0/10' })).body;
    const get = await other.api.get(`${P}/blacklisted_ip_ranges/${mine.id}`);
    const missing = await other.api.get(`${P}/blacklisted_ip_ranges/999998`);
    expect(get.status).toBe(404);
    expect(get.body.code).toBe(missing.body.code);
    expect((await other.api.delete(`${P}/blacklisted_ip_ranges/${mine.id}`)).status).toBe(404);
    expect((await org.api.get(`${P}/blacklisted_ip_ranges/${mine.id}`)).status).toBe(200);
    const list = await other.api.get(`${P}/blacklisted_ip_ranges`);
    expect(list.body.map((r: any) => r.id)).not.toContain(mine.id);
  });

  it('needs a token (401) and the security:manage permission (admins, owners) for reads and writes (403)', async () => {
    const created = (await org.api.post(`${P}/blacklisted_ip_ranges`, { name: 'perm', ip_range: '192.0.2.0/24' })).body;
    const anonymous = client(t.app);
    expect((await anonymous.get(`${P}/blacklisted_ip_ranges`)).status).toBe(401);
    expect((await anonymous.post(`${P}/blacklisted_ip_ranges`, { ip_range: '1.2.3.4' })).status).toBe(401);
    expect((await client(t.app, 'rb_wrong').get(`${P}/blacklisted_ip_ranges/${created.id}`)).status).toBe(401);
    for (const role of ['editor', 'viewer'] as const) {
      const c = await org.as(role);
      for (const res of [
        await c.get(`${P}/blacklisted_ip_ranges`),
        await c.get(`${P}/blacklisted_ip_ranges/${created.id}`),
        await c.post(`${P}/blacklisted_ip_ranges`, { ip_range: '1.2.3.4' }),
        await c.delete(`${P}/blacklisted_ip_ranges/${created.id}`),
      ]) {
        expect(res.status, role).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
    }
    expect((await admin.get(`${P}/blacklisted_ip_ranges/${created.id}`)).status).toBe(200);
  });

  it('isBlocked: one indexed query over IPv4, IPv6 and IPv4-mapped addresses, per organization', async () => {
    const o = await createOrg(t);
    const service = t.services.ipRanges;
    const add = async (ip_range: string) => expect((await o.api.post(`${P}/blacklisted_ip_ranges`, { ip_range })).status).toBe(201);
    expect(await service.isBlocked(o.organizationId, '10.1.2.3')).toBe(false);
    await add('10.0.0.0/8');
    await add('192.168.1.77');
    await add('2001:db8:abcd::/48');
    await add('172.16.5.4/12');
    const cases: Array<[string, boolean]> = [
      ['10.0.0.0', true],
      ['10.255.255.255', true],
      ['9.255.255.255', false],
      ['11.0.0.0', false],
      ['::ffff:10.20.30.40', true],
      ['::ffff:a14:1e28', true],
      ['::FFFF:11.0.0.1', false],
      ['192.168.1.77', true],
      ['192.168.1.76', false],
      ['192.168.1.78', false],
      ['172.16.0.0', true],
      ['172.31.255.255', true],
      ['172.32.0.0', false],
      ['2001:db8:abcd::1', true],
      ['2001:db8:abcd:ffff:ffff:ffff:ffff:ffff', true],
      ['2001:db8:abce::', false],
      ['2001:db8:abcc:ffff::1', false],
      ['::1', false],
      ['::a00:1', false],
      ['fe80::1%eth0', false],
      ['not an address', false],
      ['', false],
    ];
    for (const [address, blocked] of cases) expect(await service.isBlocked(o.organizationId, address), address).toBe(blocked);
    // Another organization's ranges do not apply.
    expect(await service.isBlocked(other.organizationId, '10.0.0.1')).toBe(false);
    // Overlapping ranges: a small range ending before the address does not hide a larger one covering it.
    await add('10.200.0.0/24');
    expect(await service.isBlocked(o.organizationId, '10.250.0.1')).toBe(true);
    // /0 blocks every IPv4 client but no native IPv6 one; ::/0 blocks everyone.
    const all = await createOrg(t);
    expect((await all.api.post(`${P}/blacklisted_ip_ranges`, { ip_range: '0.0.0.0/0' })).status).toBe(201);
    expect(await service.isBlocked(all.organizationId, '8.8.8.8')).toBe(true);
    expect(await service.isBlocked(all.organizationId, '::ffff:8.8.8.8')).toBe(true);
    expect(await service.isBlocked(all.organizationId, '2001:db8::1')).toBe(false);
    expect((await all.api.post(`${P}/blacklisted_ip_ranges`, { ip_range: '::/0' })).status).toBe(201);
    expect(await service.isBlocked(all.organizationId, '2001:db8::1')).toBe(true);
    // Deleting lifts the block.
    const list = (await all.api.get(`${P}/blacklisted_ip_ranges`)).body;
    for (const r of list) await all.api.delete(`${P}/blacklisted_ip_ranges/${r.id}`);
    expect(await service.isBlocked(all.organizationId, '8.8.8.8')).toBe(false);
  });

  it('isBlocked uses the (organization_id, range_start, range_end) index', async () => {
    const key = '00000000000000000000ffff0a000001';
    if (dialect === 'sqlite') {
      const plan = await sql<{ detail: string }>`explain query plan select id from blacklisted_ip_ranges
        where organization_id = ${org.organizationId} and range_start <= ${key} and range_end >= ${key} limit 1`.execute(t.database.db);
      expect(plan.rows.map((r) => r.detail).join(' ')).toMatch(/USING (COVERING )?INDEX blacklisted_ip_ranges_lookup_idx/);
    } else {
      // Byte-order comparison of the keys on PostgreSQL whatever the database collation (0006).
      const cols = await sql<{ column_name: string; collation_name: string | null }>`select column_name, collation_name from information_schema.columns
        where table_schema = current_schema() and table_name = 'blacklisted_ip_ranges' and column_name in ('range_start', 'range_end')`.execute(t.database.db);
      expect(cols.rows.map((r) => r.collation_name)).toEqual(['C', 'C']);
      // A few rows make a sequential scan cheapest; forbid it for this transaction's connection only.
      const plan = await t.database.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        return sql<{ 'QUERY PLAN': string }>`explain select id from blacklisted_ip_ranges
          where organization_id = ${org.organizationId} and range_start <= ${key} and range_end >= ${key} limit 1`.execute(trx);
      });
      expect(plan.rows.map((r) => r['QUERY PLAN']).join(' ')).toMatch(/blacklisted_ip_ranges_lookup_idx/);
    }
  });
});
