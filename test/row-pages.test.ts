/**
 * Deep pages of the unfiltered lists of users and tags (and players and videos, by the same
 * triggers) start from `row_pages` (migration 0034: each organization's rows per run of 4,096 ids)
 * instead of walking every index entry before them (docs/performance.md, "Lists at size"). With
 * 30,000 rows of each seeded in one statement, a quarter another organization's, every deep page must
 * be the table's own before and after deletes through the API and a bulk delete; the counts must
 * equal a recount; and a page must really be found through them.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { numbersTo } from '../bench/seed-size.ts';
import { DEEP_WALK, PAGE_RUN_BITS } from '../src/db/paging.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const SEEDED = 30_000;
const PER_PAGE = 200;
const TABLES = ['users', 'tags'] as const;

describe.each(dialects)('deep pages of users and tags from the counts per run of ids, on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let other: OrgContext;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    other = await createOrg(t);
    await createPlayer(org.api, {}, 2);
    const orgOf = sql.raw(`CASE WHEN n.i % 4 = 3 THEN ${other.organizationId} ELSE ${org.organizationId} END`);
    const now = sql.lit(Math.floor(Date.now() / 1000));
    await sql`
      INSERT INTO users (organization_id, email, first_name, last_name, role, status, created_at, updated_at)
      SELECT ${orgOf}, 'paged' || n.i || '@example.com', 'Ann', 'Lee ' || n.i, 'viewer', 'active', ${now}, ${now}
      FROM ${numbersTo(dialect, SEEDED)}`.execute(t.database.db);
    await sql`
      INSERT INTO tags (organization_id, name, created_at, updated_at)
      SELECT ${orgOf}, 'paged-' || n.i, ${now}, ${now} FROM ${numbersTo(dialect, SEEDED)}`.execute(t.database.db);
  }, 120_000);
  afterAll(() => t.close());

  async function idsOf(table: (typeof TABLES)[number]) {
    const rows = await t.database.db.selectFrom(table).select('id').where('organization_id', '=', org.organizationId).orderBy('id').execute();
    return rows.map((r) => Number(r.id));
  }

  /** The pages whose walk (from the nearer end) is longer than DEEP_WALK, and their neighbours. */
  async function expectDeepPages() {
    for (const table of TABLES) {
      const ids = await idsOf(table);
      const pages = Math.ceil(ids.length / PER_PAGE);
      const middle = Math.floor(pages / 2);
      for (const page of [middle - 1, middle, middle + 1]) {
        expect(Math.min((page - 1) * PER_PAGE, ids.length - page * PER_PAGE)).toBeGreaterThan(DEEP_WALK);
        const res = await org.api.get(`${P}/${table}?per_page=${PER_PAGE}&page=${page}`);
        expect(res.status, res.raw).toBe(200);
        expect(
          res.body[table].map((r: { id: number }) => r.id),
          `${table} page ${page}`,
        ).toEqual(ids.slice((page - 1) * PER_PAGE, page * PER_PAGE));
        expect(res.body.summary.count).toBe(ids.length);
      }
    }
  }

  /** `row_pages` summed per run equals a recount of every paged table (runs emptied may stay at zero; PostgreSQL keeps a run in shards). */
  async function expectCountsExact() {
    const bits = sql.lit(PAGE_RUN_BITS);
    const recount = await sql<{ table_name: string; organization_id: number; bucket: number; n: number }>`
      SELECT table_name, organization_id, bucket, COUNT(*) AS n FROM (
        SELECT 'players' AS table_name, organization_id, id >> ${bits} AS bucket FROM players
        UNION ALL SELECT 'videos', organization_id, id >> ${bits} FROM videos
        UNION ALL SELECT 'users', organization_id, id >> ${bits} FROM users
        UNION ALL SELECT 'tags', organization_id, id >> ${bits} FROM tags
      ) r GROUP BY table_name, organization_id, bucket ORDER BY 1, 2, 3`.execute(t.database.db);
    const kept = await t.database.db
      .selectFrom('row_pages')
      .select((eb) => ['table_name', 'organization_id', 'bucket', eb.fn.sum<number>('n').as('n')])
      .groupBy(['table_name', 'organization_id', 'bucket'])
      .orderBy(['table_name', 'organization_id', 'bucket'])
      .execute();
    const plain = (rows: Array<Record<string, unknown>>) => rows.map((r) => ({ ...r, bucket: Number(r.bucket), n: Number(r.n) })).filter((r) => r.n !== 0);
    expect(plain(kept)).toEqual(plain(recount.rows));
  }

  it('are the rows’ own after a bulk insert', { timeout: 60_000 }, async () => {
    await expectCountsExact();
    await expectDeepPages();
  });

  it('stay exact through deletes through the API and a bulk delete', { timeout: 60_000 }, async () => {
    for (const table of TABLES) {
      const ids = await idsOf(table);
      // Early in the list, so that every deep page after them moves.
      for (const id of ids.slice(0, 3)) {
        const res = await org.api.delete(table === 'tags' ? `${P}/tags?id=${id}` : `${P}/users/${id}`);
        expect(res.status, res.raw).toBe(200);
      }
      const third = ids[Math.floor(ids.length / 3)];
      await t.database.db
        .deleteFrom(table)
        .where('organization_id', '=', org.organizationId)
        .where('id', '>=', third)
        .where('id', '<', third + 2000)
        .execute();
    }
    expect((await org.api.delete(`${P}/players/${(await createPlayer(org.api, {}, 1)).id}`)).status).toBe(200);
    await expectCountsExact();
    await expectDeepPages();
  });

  it('a deep page is found through the counts (a wrong count shows in it)', async () => {
    const ids = await idsOf('tags');
    const page = Math.floor(ids.length / PER_PAGE / 2);
    const url = `${P}/tags?per_page=${PER_PAGE}&page=${page}`;
    // One row of it (one shard's, on PostgreSQL).
    const first = await t.database.db
      .selectFrom('row_pages')
      .select(['bucket', 'shard'])
      .where('table_name', '=', 'tags')
      .where('organization_id', '=', org.organizationId)
      .orderBy('bucket')
      .executeTakeFirstOrThrow();
    const shift = (n: number) =>
      t.database.db
        .updateTable('row_pages')
        .set((eb) => ({ n: eb('n', '+', n) }))
        .where('table_name', '=', 'tags')
        .where('organization_id', '=', org.organizationId)
        .where('bucket', '=', first.bucket)
        .where('shard', '=', first.shard)
        .execute();
    await shift(1);
    try {
      const got = (await org.api.get(url)).body.tags.map((r: { id: number }) => r.id);
      expect(got).toEqual(ids.slice((page - 1) * PER_PAGE - 1, page * PER_PAGE - 1));
    } finally {
      await shift(-1);
    }
  });
});
