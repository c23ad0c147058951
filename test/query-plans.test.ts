/**
 * A guard on the query plans of the lists at size (docs/performance.md, "Lists at size"): the
 * queries the repositories really send (captured as they run) are explained on each dialect, and each
 * must use the index it was built for, so that a later change to a query or an index cannot
 * silently fall back to a scan. The test database is small, so PostgreSQL is asked with sequential
 * scans disabled: the question is whether the index *can* serve the query, not what a planner
 * prefers for ten rows (bench/size.ts measures the real sizes).
 */
import {
  createQueryId,
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type RootOperationNode,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventsRepository, type EventFilter } from '../src/modules/events/events.repository.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';

/**
 * Records the queries a Kysely instance sends: a subquery is transformed on its own too, so only the
 * nodes whose results come back (the executed ones) are kept, in the order they complete.
 */
class Capture implements KyselyPlugin {
  private readonly seen = new Map<QueryId, RootOperationNode>();
  nodes: RootOperationNode[] = [];
  transformQuery({ node, queryId }: PluginTransformQueryArgs) {
    this.seen.set(queryId, node);
    return node;
  }
  async transformResult({ result, queryId }: PluginTransformResultArgs) {
    const node = this.seen.get(queryId);
    if (node) this.nodes.push(node);
    return result;
  }
}

describe.each(dialects)('query plans of the lists at size on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let player: { id: number; chapters_attributes: Array<{ id: number }> };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    player = await createPlayer(org.api, {}, 2);
  });
  afterAll(() => t.close());

  /** The plans of the queries `run` sends through the repository, one text per query. */
  async function plansOf(run: (repo: EventsRepository) => Promise<unknown>): Promise<string[]> {
    const capture = new Capture();
    const db = t.database.db.withPlugin(capture);
    await run(new EventsRepository(db));
    const plans: string[] = [];
    for (const node of capture.nodes) {
      const query = db.getExecutor().compileQuery(node, createQueryId());
      if (dialect === 'sqlite') {
        const explained = await t.database.db.executeQuery<{ detail: string }>({ ...query, sql: `EXPLAIN QUERY PLAN ${query.sql}` });
        plans.push(explained.rows.map((r) => r.detail).join(' | '));
      } else {
        const text = await t.database.db.connection().execute(async (conn) => {
          await sql`SET enable_seqscan = off`.execute(conn);
          try {
            const explained = await conn.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `EXPLAIN ${query.sql}` });
            return explained.rows.map((r) => r['QUERY PLAN']).join(' | ');
          } finally {
            await sql`SET enable_seqscan = on`.execute(conn);
          }
        });
        plans.push(text);
      }
    }
    return plans;
  }

  const uses = (index: string) => (dialect === 'sqlite' ? new RegExp(`USING (COVERING )?INDEX ${index}\\b`) : new RegExp(`using ${index}\\b`));

  it("a chapter's CTAs: the page and its count walk the (organization, chapter, id) index", async () => {
    const filter: EventFilter = { organizationId: org.organizationId, chapterId: player.chapters_attributes[0].id };
    const plans = await plansOf(async (repo) => {
      await repo.list(filter, { limit: 200, offset: 199_800 });
      await repo.count(filter);
    });
    expect(plans).toHaveLength(2);
    // The page's ids from the index alone (a deferred join), then their rows by primary key.
    expect(plans[0]).toMatch(uses('events_org_chapter_idx'));
    if (dialect === 'sqlite') expect(plans[0]).toMatch(/COVERING INDEX events_org_chapter_idx/);
    else expect(plans[0]).toMatch(/Index Only Scan using events_org_chapter_idx/);
    // The count may walk either index that leads with (organization, chapter): both cover it.
    expect(plans[1]).toMatch(uses('events_org_chapter(_state)?_idx'));
    if (dialect === 'sqlite') expect(plans[1]).toMatch(/COVERING INDEX/);
    else expect(plans[1]).toMatch(/Index Only Scan/);
  });

  it('cta_meta: each count by state is a range of the (organization, chapter, state) index, not a scan', async () => {
    const filter = (state: string): EventFilter => ({ organizationId: org.organizationId, playerId: player.id, state });
    const plans = await plansOf(async (repo) => {
      await repo.count(filter('public'));
      await repo.count(filter('draft'));
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      expect(plan).toMatch(uses('events_org_chapter_state_idx'));
      if (dialect === 'sqlite') expect(plan).not.toMatch(/SCAN events/);
    }
  });
});
