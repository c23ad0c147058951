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
import { ObjectIndexRepository } from '../src/media/object-index.ts';
import { AnalyticsRepository } from '../src/modules/analytics/analytics.repository.ts';
import { RollupRepository } from '../src/modules/analytics/rollup.repository.ts';
import { EventsRepository, type EventFilter } from '../src/modules/events/events.repository.ts';
import { LiveRepository } from '../src/modules/live/live.repository.ts';
import { PlayersRepository } from '../src/modules/players/players.repository.ts';
import { TagsRepository } from '../src/modules/tags/tags.repository.ts';
import { UsersRepository } from '../src/modules/users/users.repository.ts';
import { VideosRepository } from '../src/modules/videos/videos.repository.ts';
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
  async function plansOf(
    run: (
      repo: EventsRepository,
      live: LiveRepository,
      more: {
        players: PlayersRepository;
        videos: VideosRepository;
        objects: ObjectIndexRepository;
        users: UsersRepository;
        tags: TagsRepository;
        rollups: RollupRepository;
        analytics: AnalyticsRepository;
      },
    ) => Promise<unknown>,
    pgSettings: Record<string, string> = {},
  ): Promise<string[]> {
    const capture = new Capture();
    const db = t.database.db.withPlugin(capture);
    await run(new EventsRepository(db), new LiveRepository(db), {
      players: new PlayersRepository(db),
      videos: new VideosRepository(db),
      objects: new ObjectIndexRepository(db),
      users: new UsersRepository(db),
      tags: new TagsRepository(db),
      rollups: new RollupRepository(db),
      analytics: new AnalyticsRepository(db),
    });
    const plans: string[] = [];
    for (const node of capture.nodes) {
      const query = db.getExecutor().compileQuery(node, createQueryId());
      if (dialect === 'sqlite') {
        const explained = await t.database.db.executeQuery<{ detail: string }>({ ...query, sql: `EXPLAIN QUERY PLAN ${query.sql}` });
        plans.push(explained.rows.map((r) => r.detail).join(' | '));
      } else {
        const text = await t.database.db.connection().execute(async (conn) => {
          await sql`SET enable_seqscan = off`.execute(conn);
          await sql`SET enable_sort = off`.execute(conn);
          for (const [name, value] of Object.entries(pgSettings)) await sql`SELECT set_config(${name}, ${value}, false)`.execute(conn);
          try {
            const explained = await conn.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `EXPLAIN ${query.sql}` });
            return explained.rows.map((r) => r['QUERY PLAN']).join(' | ');
          } finally {
            await sql`SET enable_seqscan = on`.execute(conn);
            await sql`SET enable_sort = on`.execute(conn);
            for (const name of Object.keys(pgSettings)) await sql`SELECT set_config(${name}, NULL, false)`.execute(conn);
          }
        });
        plans.push(text);
      }
    }
    if (process.env.SHOW_PLANS) console.log(plans.join('\n\n'));
    return plans;
  }

  const uses = (index: string) => (dialect === 'sqlite' ? new RegExp(`USING (COVERING )?INDEX ${index}\\b`) : new RegExp(`(using|on) ${index}\\b`));

  /** A sort node (SQLite's temporary B-tree, PostgreSQL's Sort; not a Merge Append's sort key). */
  const SORTS = /TEMP B-TREE|\bSort {2}\(/;
  /** What finds the page's ids: on PostgreSQL what lies under the Limit (the page's rows are sorted after, 200 at most). */
  const pageIds = (plan: string) => (dialect === 'sqlite' ? plan : plan.slice(plan.indexOf('Limit')));
  /** The page's ids walk `index` alone: a covering index on SQLite, an index-only scan on PostgreSQL, no sort. */
  const walksOnly = (plan: string, index: string) => {
    expect(pageIds(plan)).toMatch(
      dialect === 'sqlite' ? new RegExp(`COVERING INDEX ${index}\\b`) : new RegExp(`Index Only Scan( Backward)? using ${index}\\b`),
    );
    expect(pageIds(plan)).not.toMatch(SORTS);
  };
  const countsFromTheTable = (plan: string) => {
    expect(plan).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_event_counts_1' : 'event_counts_pk'));
    expect(plan).not.toMatch(/\bevents\b/);
  };

  it("the object store's keys under a folder (a delete without listing): one range of stored_objects' primary key, in its order", async () => {
    // Bytewise on both dialects: the folder's keys, and not its neighbours' that sort among them in a locale's order.
    const objects = new ObjectIndexRepository(t.database.db);
    await objects.recordMany(['k/b', 'k/b/c', 'k/b-x', 'k/b.y', 'k/b0', 'k/b/d/e', 'k/B/c', 'k/b_/c', 'k/a/b']);
    expect(await objects.under('k/b', 10)).toEqual(['k/b', 'k/b/c', 'k/b/d/e']);
    const plans = await plansOf((_, __, more) => more.objects.under('videos/3f2a/r1', 1000));
    expect(plans).toHaveLength(1);
    expect(plans[0]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_stored_objects_1' : 'stored_objects_pkey'));
    expect(plans[0]).not.toMatch(SORTS);
    expect(plans[0]).not.toMatch(/MULTI-INDEX|BitmapOr/);
  });

  it("a chapter's CTAs: the count is read from event_counts, the page's ids walk the (organization, chapter, id) index, from the nearer end", async () => {
    const filter: EventFilter = { organizationId: org.organizationId, chapterId: player.chapters_attributes[0].id };
    const plans = await plansOf(async (repo) => {
      await repo.count(filter);
      await repo.list(filter, { limit: 200, offset: 1_000 }, 200_000);
      await repo.list(filter, { limit: 200, offset: 199_800 }, 200_000);
    });
    expect(plans).toHaveLength(3);
    countsFromTheTable(plans[0]);
    // The page's ids from the index alone (a deferred join), then their rows by primary key.
    walksOnly(plans[1], 'events_org_chapter_idx');
    walksOnly(plans[2], 'events_org_chapter_idx');
    if (dialect === 'postgres') expect(plans[2]).toMatch(/Index Only Scan Backward/);
  });

  it("a first page carries its count: one statement, whose ids walk the list's index and whose count reads event_counts", async () => {
    const chapter: EventFilter = { organizationId: org.organizationId, chapterId: player.chapters_attributes[0].id };
    const plans = await plansOf(async (repo) => {
      await repo.firstPageCounted(chapter, 50);
      await repo.firstPageCounted({ organizationId: org.organizationId }, 20);
    });
    expect(plans).toHaveLength(2);
    walksOnly(plans[0], 'events_org_chapter_idx');
    walksOnly(plans[1], 'events_org_idx');
    for (const plan of plans) expect(plan).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_event_counts_1' : 'event_counts_pk'));
  });

  it("a player's CTAs: a deep page starts from event_pages' runs, then one range of the (organization, player, id) index; with the defaults, a merge of two ranges, not a sort", async () => {
    const own: EventFilter = { organizationId: org.organizationId, playerId: player.id };
    // Counts of a million in the first run of ids, so that the deep pages below are found through them.
    const runs = [
      { organization_id: org.organizationId, scope: 'player' as const, scope_id: player.id, bucket: 0, n: 1_000_000 },
      { organization_id: org.organizationId, scope: 'chapter' as const, scope_id: 0, bucket: 0, n: 1_000 },
    ];
    await t.database.db.insertInto('event_pages').values(runs).execute();
    let plans: string[];
    try {
      plans = await plansOf(async (repo) => {
        await repo.list(own, { limit: 200, offset: 499_800 }, 1_000_000);
        await repo.list({ ...own, includeDefaults: true }, { limit: 200, offset: 499_800 });
      });
    } finally {
      await t.database.db.deleteFrom('event_pages').where('organization_id', '=', org.organizationId).where('bucket', '=', 0).where('n', '>=', 1_000).execute();
    }
    expect(plans).toHaveLength(4);
    for (const runsRead of [plans[0], plans[2]]) {
      expect(runsRead).toMatch(
        dialect === 'sqlite' ? /SEARCH event_pages USING PRIMARY KEY \(organization_id=\? AND scope=\? AND scope_id=\?\)/ : uses('event_pages_pk'),
      );
      expect(runsRead).not.toMatch(/\bevents\b/);
    }
    walksOnly(plans[1], 'events_org_player_idx');
    expect(pageIds(plans[1])).toMatch(dialect === 'sqlite' ? /id>\?/ : /Index Cond: .*id >= /);
    expect(pageIds(plans[3])).toMatch(dialect === 'sqlite' ? /MERGE \(UNION ALL\)/ : /Merge Append/);
    expect(pageIds(plans[3])).toMatch(uses('events_org_player_idx'));
    expect(pageIds(plans[3])).toMatch(uses(dialect === 'sqlite' ? 'events_org_(defaults|chapter)_idx' : 'events_org_defaults_idx'));
    expect(pageIds(plans[3])).not.toMatch(SORTS);
    expect(pageIds(plans[3])).not.toMatch(/Seq Scan|Filter:/);
  });

  it("a player's analytics: its days and hours are a range of their table's key; its reports not yet rolled up are found by id, not by the player's index", async () => {
    const player = { organizationId: org.organizationId, playerId: 1 };
    const day = 86_400_000;
    const plans = await plansOf(async (_, __, { rollups }) => {
      await rollups.playerDays(player.organizationId, player.playerId, 100 * day, 130 * day);
      await rollups.figuresOf({ ...player, afterId: 1_000_000, toId: 1_100_000, fromMs: 100 * day, toMs: 130 * day });
      await rollups.distinctOf({ ...player, afterId: 1_000_000, toId: 1_100_000, fromMs: 100 * day, toMs: 130 * day });
      // A backlog (the rollups stopped): the player's index, as the planner chooses.
      await rollups.figuresOf({ ...player, afterId: 0, toId: 1_000_000, fromMs: 100 * day, toMs: 130 * day });
      await rollups.playerHours(player.organizationId, player.playerId, 100 * day, 130 * day);
    });
    expect(plans).toHaveLength(5);
    expect(plans[4]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_analytics_player_hours_1' : 'analytics_player_hours_pk'));
    // (PostgreSQL prefers the key's range at this size: the player's index is not set aside.)
    expect(plans[3]).toMatch(dialect === 'sqlite' ? uses('analytics_events_player_idx') : /player_id = \d+/);
    expect(plans[3]).not.toMatch(/\+ ?player_id/);
    expect(plans[0]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_analytics_days_1' : 'analytics_days_pk'));
    // A popular player's index would read every report of its period; the reports above the rollups' progress are a few seconds' worth.
    for (const plan of plans.slice(1, 3)) {
      expect(plan).toMatch(
        dialect === 'sqlite'
          ? /^SEARCH analytics_events USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/
          : /Index Scan using analytics_events_pkey on analytics_events {2}\([^|]*\|\s+Index Cond: \(\(id > \d+\) AND \(id <= \d+\)\)/,
      );
      expect(plan).not.toMatch(/analytics_events_(player|created)_idx/);
    }
  });

  it("a CTA's analytics: its days are a range of analytics_cta_days' key; its reports not yet rolled up are found by id, not by the CTA's index", async () => {
    const day = 86_400_000;
    const plans = await plansOf(async (_, __, { rollups }) => {
      await rollups.ctaDays(org.organizationId, 5, 100 * day, 130 * day);
      await rollups.ctaFiguresOf({ afterId: 1_000_000, toId: 1_100_000, organizationId: org.organizationId, eventId: 5, fromMs: 100 * day, toMs: 130 * day });
      // A rollup batch: a range of ids alone.
      await rollups.ctaFiguresOf({ afterId: 1_000_000, toId: 1_005_000 });
    });
    expect(plans).toHaveLength(3);
    expect(plans[0]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_analytics_cta_days_1' : 'analytics_cta_days_pk'));
    for (const plan of plans.slice(1)) {
      expect(plan).toMatch(
        dialect === 'sqlite'
          ? /SEARCH analytics_events USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/
          : /Index Scan using analytics_events_pkey on analytics_events[^|]*\|\s+Index Cond: \(\(id > \d+\) AND \(id <= \d+\)\)/,
      );
      expect(plan).not.toMatch(/analytics_events_(cta|player|created)_idx/);
    }
  });

  it("a player's breakdown: its days are a range of analytics_breakdown_days' key; its starts not yet rolled up are found by id", async () => {
    const day = 86_400_000;
    const plans = await plansOf(async (_, __, { rollups }) => {
      await rollups.breakdownDays(org.organizationId, 1, 'country', 100 * day, 130 * day);
      await rollups.viewStartsBy(
        { afterId: 1_000_000, toId: 1_100_000, organizationId: org.organizationId, playerId: 1, fromMs: 100 * day, toMs: 130 * day },
        'country',
      );
    });
    expect(plans).toHaveLength(2);
    expect(plans[0]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_analytics_breakdown_days_1' : 'analytics_breakdown_days_pk'));
    expect(plans[1]).toMatch(
      dialect === 'sqlite'
        ? /SEARCH analytics_events USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/
        : /Index Scan using analytics_events_pkey on analytics_events[^|]*\|\s+Index Cond: \(\(id > \d+\) AND \(id <= \d+\)\)/,
    );
    expect(plans[1]).not.toMatch(/analytics_events_(player|created)_idx/);
  });

  it("a video's retention: its days are a range of analytics_retention_days' key; its reports not yet rolled up are found by id; their views' earlier reports by their loads", async () => {
    const day = 86_400_000;
    const plans = await plansOf(async (_, __, { rollups }) => {
      await rollups.retentionDays(org.organizationId, 3, 100 * day, 130 * day);
      await rollups.playedOf({ afterId: 1_000_000, toId: 1_100_000, organizationId: org.organizationId, videoId: 3 });
      await rollups.earlierPlayed(['load-1', 'load-2'], 1_000_000);
    });
    expect(plans).toHaveLength(3);
    expect(plans[0]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_analytics_retention_days_1' : 'analytics_retention_days_pk'));
    expect(plans[1]).toMatch(
      dialect === 'sqlite'
        ? /SEARCH analytics_events USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/
        : /Index Scan using analytics_events_pkey on analytics_events[^|]*\|\s+Index Cond: \(\(id > \d+\) AND \(id <= \d+\)\)/,
    );
    expect(plans[1]).not.toMatch(/analytics_events_(video|player|created)_idx/);
    expect(plans[2]).toMatch(uses('analytics_events_session_idx'));
  });

  it("identified viewers of a period reaching today, the organization's or a player's: a range of its (organization[, player], last seen) index, never the reports", async () => {
    const plans = await plansOf(async (_, __, { analytics }) => {
      await analytics.recentlyIdentified(org.organizationId, undefined, 1_000, { limit: 50, offset: 100 });
      await analytics.recentlyIdentified(org.organizationId, 7, 1_000, { limit: 50, offset: 100 });
    });
    // Each: the page, then its count.
    expect(plans).toHaveLength(4);
    for (const plan of plans.slice(0, 2)) expect(plan).toMatch(uses('analytics_identified_recent_idx'));
    for (const plan of plans.slice(2)) expect(plan).toMatch(uses('analytics_identified_players_recent_idx'));
    for (const plan of plans) expect(plan).not.toMatch(/analytics_events/);
  });

  it("the organization's events: the (organization, id) index, from the nearer end", async () => {
    const all: EventFilter = { organizationId: org.organizationId };
    const plans = await plansOf(async (repo) => {
      await repo.count(all);
      await repo.list(all, { limit: 200, offset: 999_800 }, 1_000_000);
    });
    countsFromTheTable(plans[0]);
    walksOnly(plans[1], 'events_org_idx');
  });

  it("cta_meta and event_meta: counts by state and by type sum rows of event_counts over the player's chapters, never reading events", async () => {
    const filter: EventFilter = { organizationId: org.organizationId, playerId: player.id };
    const plans = await plansOf(async (repo) => {
      await repo.countBy(filter, 'state');
      await repo.countBy(filter, 'event_type');
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      countsFromTheTable(plan);
      expect(plan).toMatch(uses('chapters_player_idx'));
    }
  });

  it('events search: the trigram index finds the matches (FTS5 on SQLite, pg_trgm GIN on PostgreSQL)', async () => {
    const searched = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    const rows = Array.from({ length: 2_000 }, (_, i) => ({
      organization_id: searched.organizationId,
      event_type: 'simple_overlay',
      name: `CTA ${i}`,
      description: i % 100 === 0 ? 'Join the webinar' : 'Offer',
      html: `<p>Offer ${i}</p>`,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 1_000)
      await t.database.db
        .insertInto('events')
        .values(rows.slice(i, i + 1_000))
        .execute();
    await sql`ANALYZE`.execute(t.database.db);
    const filter: EventFilter = { organizationId: searched.organizationId, text: 'webinar' };
    // On a few thousand rows PostgreSQL rather tests the text of each of the organization's events;
    // priced as at a million rows (bench/size.ts: 455 → 42 ms), the trigram indexes must be what it uses.
    const plans = await plansOf(
      async (repo) => {
        await repo.list(filter, { limit: 50, offset: 0 });
        await repo.count(filter);
      },
      { cpu_operator_cost: '1' },
    );
    expect(plans).toHaveLength(2);
    if (dialect === 'sqlite') for (const plan of plans) expect(plan).toMatch(/events_search VIRTUAL TABLE INDEX/);
    // PostgreSQL may walk the first page in id order; the count must come from the trigram indexes.
    else for (const column of ['name', 'description', 'html']) expect(plans[1]).toMatch(uses(`events_${column}_trgm_idx`));
    expect(plans[1]).not.toMatch(/SCAN events\b(?! VIRTUAL)|Seq Scan/);
  });

  it('live list: a state ordered by air date walks (organization, status, air date, id), its count too; query is the trigram index', async () => {
    const plans = await plansOf(
      async (_, live) => {
        const ongoing = { statuses: ['live'] };
        await live.list(org.organizationId, ongoing, { column: 'air_date', direction: 'desc' }, { limit: 50, offset: 0 });
        await live.count(org.organizationId, ongoing);
        await live.count(org.organizationId, { query: 'webinar' });
      },
      { cpu_operator_cost: '1' },
    );
    expect(plans).toHaveLength(3);
    expect(plans[0]).toMatch(uses('live_instances_org_status_air_idx'));
    expect(plans[0]).not.toMatch(SORTS);
    expect(plans[1]).toMatch(uses('live_instances_org_status_air_idx'));
    expect(plans[2]).toMatch(dialect === 'sqlite' ? /live_instances_search VIRTUAL TABLE INDEX/ : uses('live_stream_instances_search_text_trgm_idx'));
  });

  it("players' and videos' query: the prefix is a range of the (organization, lower(name)) index; the plain count reads row_counts; videos by status their index", async () => {
    const plans = await plansOf(
      async (_, __, { players, videos }) => {
        await players.count(org.organizationId, 'webinar');
        await videos.count(org.organizationId, { query: 'webinar' });
        await players.count(org.organizationId);
        await videos.count(org.organizationId, { status: 'ready' });
        await videos.count(org.organizationId, { status: 'processing' });
      },
      { cpu_operator_cost: '1' },
    );
    expect(plans).toHaveLength(5);
    expect(plans[0]).toMatch(uses('players_org_name_prefix_idx'));
    expect(plans[1]).toMatch(uses('videos_org_name_prefix_idx'));
    expect(plans[2]).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_row_counts_1' : 'row_counts_pk'));
    // The dashboard's status filter: a range of the (organization, status, id) index.
    expect(plans[3]).toMatch(uses('videos_org_status_idx'));
    // Processing with the queued (status null): both ranges of that index.
    expect(plans[4]).toMatch(uses('videos_org_status_idx'));
  });

  it("users' and tags' pages walk their (organization, id) index alone, from the nearer end; plain counts read row_counts; tags' query is the trigram index", async () => {
    const tagged = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    const names = Array.from({ length: 2_000 }, (_, i) => ({
      organization_id: tagged.organizationId,
      name: i % 100 === 0 ? `webinar ${i}` : `tag ${i}`,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < names.length; i += 1_000)
      await t.database.db
        .insertInto('tags')
        .values(names.slice(i, i + 1_000))
        .execute();
    await sql`ANALYZE`.execute(t.database.db);
    // Counts of a million users in the first run of ids, so that the deep page below is found through them.
    const runs = { table_name: 'users', organization_id: org.organizationId, bucket: 0, n: 1_000_000 };
    await t.database.db.insertInto('row_pages').values(runs).execute();
    let plans: string[];
    try {
      plans = await plansOf(
        async (_, __, { users, tags }) => {
          await users.count(org.organizationId, {});
          await users.list(org.organizationId, {}, { limit: 200, offset: 600_000 }, 1_000_000);
          await tags.count(org.organizationId);
          await tags.list(org.organizationId, { limit: 200, offset: 1_000 }, 1_000_000);
          await tags.count(tagged.organizationId, 'webinar');
        },
        // Priced as at a million rows, as the events search above.
        { cpu_operator_cost: '1' },
      );
    } finally {
      await t.database.db
        .deleteFrom('row_pages')
        .where('table_name', '=', 'users')
        .where('organization_id', '=', org.organizationId)
        .where('bucket', '=', 0)
        .execute();
    }
    expect(plans).toHaveLength(6);
    for (const count of [plans[0], plans[3]]) expect(count).toMatch(uses(dialect === 'sqlite' ? 'sqlite_autoindex_row_counts_1' : 'row_counts_pk'));
    // The deep page: the organization's runs from row_pages' key, then one range of the index from the run's first id.
    expect(plans[1]).toMatch(dialect === 'sqlite' ? /SEARCH row_pages USING PRIMARY KEY \(table_name=\? AND organization_id=\?\)/ : uses('row_pages_pk'));
    expect(plans[1]).not.toMatch(SORTS);
    walksOnly(plans[2], 'users_org_idx');
    expect(pageIds(plans[2])).toMatch(dialect === 'sqlite' ? /id>\?/ : /Index Cond: .*id >= /);
    walksOnly(plans[4], 'tags_org_idx');
    expect(plans[5]).toMatch(dialect === 'sqlite' ? /tags_search VIRTUAL TABLE INDEX/ : uses('tags_name_trgm_idx'));
  });

  // A PostgreSQL matter: SQLite has no such case, and the test is not made for it.
  if (dialect === 'postgres')
    it('PostgreSQL connections run without JIT (it compiled short queries for longer than they ran)', async () => {
      const { rows } = await sql<{ jit: string }>`show jit`.execute(t.database.db);
      expect(rows[0].jit).toBe('off');
    });
});
