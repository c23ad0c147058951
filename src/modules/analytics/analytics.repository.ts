import { sql, type Insertable, type Kysely } from 'kysely';
import { laterOf } from '../../db/dialect.ts';
import type { AnalyticsEventsTable, DB } from '../../db/schema.ts';

export type NewAnalyticsEvent = Insertable<AnalyticsEventsTable>;

export class AnalyticsRepository {
  /**
   * `reads`: where the reports are read, which may take long (a popular player's): kept from what
   * every request needs, off the event loop or off the pool (Database.longReads).
   */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly reads: Kysely<DB> = db,
  ) {}

  /**
   * Inserts the reports; answers the dedup keys that were new (a replayed report is skipped). The
   * addresses of new identified views are recorded as the organization's and their player's, last given now.
   */
  async insertMany(rows: NewAnalyticsEvent[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const insert = async (db: Kysely<DB>) => {
      const inserted = await db
        .insertInto('analytics_events')
        .values(rows)
        .onConflict((oc) => oc.column('dedup_key').doNothing())
        .returning(['dedup_key', 'type', 'organization_id', 'player_id', 'email', 'created_at'])
        .execute();
      // Each address is the organization's and its player's, last given now.
      const identified = inserted.filter((r) => r.type === 'identified_view' && r.email !== null);
      if (identified.length > 0) {
        const ofOrganization = latestOf(identified, (r) => ({ organization_id: r.organization_id, email: r.email! }));
        const ofPlayer = latestOf(identified, (r) => ({ organization_id: r.organization_id, player_id: r.player_id, email: r.email! }));
        await db
          .insertInto('analytics_identified')
          .values(ofOrganization)
          .onConflict((oc) => oc.columns(['organization_id', 'email']).doUpdateSet({ last_seen: laterOf('analytics_identified', 'last_seen') }))
          .execute();
        await db
          .insertInto('analytics_identified_players')
          .values(ofPlayer)
          .onConflict((oc) =>
            oc.columns(['organization_id', 'player_id', 'email']).doUpdateSet({ last_seen: laterOf('analytics_identified_players', 'last_seen') }),
          )
          .execute();
      }
      return new Set(inserted.map((r) => r.dedup_key));
    };
    // Only reports that name an address write more than once; the others stay one statement.
    return rows.some((r) => r.type === 'identified_view') ? this.db.transaction().execute(insert) : insert(this.db);
  }

  /**
   * A page of the identified viewers (addresses given at an email gate), the most recently seen
   * first, of the organization or of one player, or one address; and how many there are.
   */
  async identifiedViewers(
    organizationId: number,
    filter: { playerId?: number; email?: string },
    fromMs: number,
    toMs: number,
    page: { limit: number; offset: number },
  ) {
    const base = this.reads
      .selectFrom('analytics_events')
      .where('organization_id', '=', organizationId)
      .where('type', '=', 'identified_view')
      .where('created_at', '>=', fromMs)
      .where('created_at', '<', toMs)
      .$if(filter.playerId !== undefined, (qb) => qb.where('player_id', '=', filter.playerId!))
      .$if(filter.email !== undefined, (qb) => qb.where('email', '=', filter.email!));
    const rows = await base
      .select([
        'email',
        sql<number>`min(created_at)`.as('first_seen'),
        sql<number>`max(created_at)`.as('last_seen'),
        sql<number>`count(distinct session_id)`.as('loads'),
      ])
      .groupBy('email')
      .orderBy('last_seen', 'desc')
      .orderBy('email')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    const { total } = await base.select(sql<number>`count(distinct email)`.as('total')).executeTakeFirstOrThrow();
    return {
      rows: rows.map((r) => ({ email: r.email!, first_seen: Number(r.first_seen), last_seen: Number(r.last_seen), loads: Number(r.loads) })),
      total: Number(total),
    };
  }

  /**
   * A page of the addresses last given at or after `fromMs`, at any of the organization's players
   * (analytics_identified) or at one (analytics_identified_players), the latest first, and how many
   * there are, without the period's reports (docs/analytics.md).
   */
  async recentlyIdentified(organizationId: number, playerId: number | undefined, fromMs: number, page: { limit: number; offset: number }) {
    if (playerId !== undefined) {
      const base = this.reads
        .selectFrom('analytics_identified_players')
        .where('organization_id', '=', organizationId)
        .where('player_id', '=', playerId)
        .where('last_seen', '>=', fromMs);
      return addressesPage(
        base.select('email').orderBy('last_seen', 'desc').orderBy('email').limit(page.limit).offset(page.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      );
    }
    const base = this.reads.selectFrom('analytics_identified').where('organization_id', '=', organizationId).where('last_seen', '>=', fromMs);
    return addressesPage(
      base.select('email').orderBy('last_seen', 'desc').orderBy('email').limit(page.limit).offset(page.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    );
  }

  /** When each address was first and last given in [fromMs, toMs) (at one player, or any), and in how many loads. */
  async identifiedIn(organizationId: number, emails: string[], playerId: number | undefined, fromMs: number, toMs: number) {
    if (emails.length === 0) return [];
    const rows = await this.reads
      .selectFrom('analytics_events')
      .select([
        'email',
        sql<number>`min(created_at)`.as('first_seen'),
        sql<number>`max(created_at)`.as('last_seen'),
        sql<number>`count(distinct session_id)`.as('loads'),
      ])
      .where('organization_id', '=', organizationId)
      .where('type', '=', 'identified_view')
      .where('email', 'in', emails)
      .$if(playerId !== undefined, (qb) => qb.where('player_id', '=', playerId!))
      .where('created_at', '>=', fromMs)
      .where('created_at', '<', toMs)
      .groupBy('email')
      .execute();
    return rows.map((r) => ({ email: r.email!, first_seen: Number(r.first_seen), last_seen: Number(r.last_seen), loads: Number(r.loads) }));
  }

  /** What the loads in which each address was given played, per player: seconds of playback and views. */
  async watchedBy(organizationId: number, emails: string[], playerId: number | undefined, fromMs: number, toMs: number) {
    if (emails.length === 0) return [];
    const rows = await this.reads
      .selectFrom('analytics_events as e')
      .innerJoin(
        (eb) =>
          eb
            .selectFrom('analytics_events')
            .select(['email', 'session_id'])
            .distinct()
            .where('organization_id', '=', organizationId)
            .where('type', '=', 'identified_view')
            .where('email', 'in', emails)
            .as('ids'),
        (join) => join.onRef('ids.session_id', '=', 'e.session_id'),
      )
      .innerJoin('players', 'players.id', 'e.player_id')
      .select([
        'ids.email',
        'e.player_id',
        'players.uuid',
        'players.name',
        sql<number>`sum(case when e.type = 'attention_span' then e.watched_seconds else 0 end)`.as('watch_seconds'),
        sql<number>`sum(case when e.type = 'view' and e.percent = 0 then 1 else 0 end)`.as('views'),
        sql<number>`max(case when e.type = 'view' then e.percent else null end)`.as('furthest'),
      ])
      .where('e.organization_id', '=', organizationId)
      .where('e.created_at', '>=', fromMs)
      .where('e.created_at', '<', toMs)
      .$if(playerId !== undefined, (qb) => qb.where('e.player_id', '=', playerId!))
      .groupBy(['ids.email', 'e.player_id', 'players.uuid', 'players.name'])
      .orderBy('e.player_id')
      .execute();
    return rows.map((r) => ({
      email: r.email!,
      player_id: r.player_id,
      uuid: r.uuid,
      name: r.name,
      watch_seconds: Number(r.watch_seconds ?? 0),
      views: Number(r.views ?? 0),
      furthest_percent: r.furthest === null ? null : Number(r.furthest),
    }));
  }
}

/** A page of addresses and how many there are, from their two statements. */
async function addressesPage(rows: Promise<Array<{ email: string }>>, count: Promise<{ total: number | string | bigint }>) {
  const [page, { total }] = await Promise.all([rows, count]);
  return { emails: page.map((r) => r.email), total: Number(total) };
}

/**
 * The latest report of each key (an address of an organization, or of a player) in `reports`, as a
 * row of its identified table, in key order: two batches writing the same keys in opposite orders
 * would deadlock on PostgreSQL.
 */
function latestOf<R extends { created_at: number }, K extends { organization_id: number; email: string }>(
  reports: R[],
  keyOf: (r: R) => K,
): Array<K & { last_seen: number }> {
  const latest = new Map<string, K & { last_seen: number }>();
  for (const r of reports) {
    const key = keyOf(r);
    const name = Object.values(key).join('\n');
    if ((latest.get(name)?.last_seen ?? -1) < r.created_at) latest.set(name, { ...key, last_seen: r.created_at });
  }
  return [...latest.values()].sort((a, b) => compareKeys(Object.values(a), Object.values(b)));
}

/** Keys' columns in order: numbers as numbers, text as text. */
function compareKeys(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number | string) < (b[i] as number | string) ? -1 : 1;
  return 0;
}
