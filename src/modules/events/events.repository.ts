import { sql, type Insertable, type Kysely, type Selectable, type Updateable, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import type { DB, EventsTable } from '../../db/schema.ts';
import { matchesText, type SearchedTable } from '../../db/text-search.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { DEEP_WALK, fromRun, nearerEnd, startOf } from '../../db/paging.ts';
import { mapMaybe, type MaybePromise } from '../../lib/maybe-promise.ts';

export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Omit<Insertable<EventsTable>, 'player_id'>;
export type EventPatch = Updateable<Omit<EventsTable, 'id' | 'organization_id' | 'created_at' | 'player_id'>>;

/** Which events of one organization a list is about. */
export interface EventFilter {
  organizationId: number;
  /** Events placed on this chapter. */
  chapterId?: number;
  /** Events placed on any chapter of this player. */
  playerId?: number;
  /** With chapterId/playerId: also the organization default events (chapter_id null). */
  includeDefaults?: boolean;
  /** Only organization default events. */
  defaultsOnly?: boolean;
  eventTypes?: readonly string[];
  state?: string;
  /** Case-insensitive text in name, description or html. */
  text?: string;
}

export interface Limit {
  limit: number;
  offset: number;
}

/** The chapter an event sits on, with its player (what owner_meta reports). */
export interface ChapterOwner {
  id: number;
  player_id: number;
  video_id: number;
  position: number;
  player_uuid: string;
}

/** What `/v1/events/search` reads (migration 0022). */
const EVENT_SEARCH: SearchedTable = { table: 'events', fts: 'events_search', columns: ['name', 'description', 'html'] };

/** Whether a filter takes in the organization's defaults: asked alone, or beside a chapter's or player's events. */
const withDefaults = (f: EventFilter) => Boolean(f.defaultsOnly || (f.includeDefaults && (f.chapterId !== undefined || f.playerId !== undefined)));

/** Queries over `events` (CTAs are events) and the chapter/player lookups their placement needs. */
export class EventsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The index ranges a filter's placement spans, each in id order: a chapter's, a player's (by
   * `player_id`), the organization's defaults; none when the filter spans the whole organization.
   */
  private ranges(f: EventFilter): Array<(eb: ExpressionBuilder<DB, 'events'>) => Expression<SqlBool>> {
    const ranges: Array<(eb: ExpressionBuilder<DB, 'events'>) => Expression<SqlBool>> = [];
    if (f.chapterId !== undefined) ranges.push((eb) => eb('events.chapter_id', '=', f.chapterId!));
    if (f.playerId !== undefined) ranges.push((eb) => eb('events.player_id', '=', f.playerId!));
    if (withDefaults(f)) ranges.push((eb) => eb('events.chapter_id', 'is', null));
    return ranges;
  }

  /** The filter's conditions but its placement. */
  private others(f: EventFilter) {
    return (eb: ExpressionBuilder<DB, 'events'>) => {
      const conds: Expression<SqlBool>[] = [eb('events.organization_id', '=', f.organizationId)];
      if (f.eventTypes && f.eventTypes.length > 0) conds.push(eb('events.event_type', 'in', [...f.eventTypes]));
      if (f.state !== undefined) conds.push(eb('events.state', '=', f.state));
      if (f.text) conds.push(matchesText(this.db, eb, EVENT_SEARCH, f.text));
      return eb.and(conds);
    };
  }

  private where(f: EventFilter) {
    const ranges = this.ranges(f);
    return (eb: ExpressionBuilder<DB, 'events'>) => (ranges.length === 0 ? this.others(f)(eb) : eb.and([this.others(f)(eb), eb.or(ranges.map((r) => r(eb)))]));
  }

  /**
   * One page, as a deferred join: the page's ids first, from an index alone (a deep page's offset
   * walks index entries, not rows), then those rows. With `total` known, a page in the later half is
   * walked to from the end. A walk that would still be long starts from the run of ids the page's
   * first entry is in, found from `event_pages`. Several ranges (a player's events and the defaults)
   * are merged in id order (a merge of ordered index scans on both dialects, not a sort).
   */
  async list(f: EventFilter, page: Limit, total?: number): Promise<EventRow[]> {
    const read = nearerEnd(page, total);
    if (!read) return [];
    return (await this.pageOf(f, page, read)).execute();
  }

  /**
   * The first page and the filter's count in one statement: the count, from the maintained counts, is a
   * scalar subquery that each row carries and the database computes once. Null when the page is empty
   * (the count then needs a query of its own) or the filter searches text (whose count is a search).
   */
  async firstPageCounted(f: EventFilter, limit: number): Promise<{ rows: EventRow[]; total: number } | null> {
    if (f.text) return null;
    const page = { limit, offset: 0 };
    const rows = await (await this.pageOf(f, page, { ...page, reversed: false })).select(() => this.countedTotal(f).as('listed_total')).execute();
    if (rows.length === 0) return null;
    return { rows: rows.map(({ listed_total: _, ...row }) => row), total: Number(rows[0].listed_total) };
  }

  private async pageOf(f: EventFilter, page: Limit, read: Limit & { reversed: boolean }) {
    const ranges = this.ranges(f);
    const deepest = ranges.length > 1 ? page.offset : read.offset;
    const start = deepest > DEEP_WALK ? await this.pageStart(f, page.offset) : null;
    const walk = start ? fromRun(page, start) : read;
    // The outer query orders the page's rows, whichever end its ids were read from.
    const ids =
      ranges.length > 1
        ? this.merged(f, ranges, start ? walk : page, start?.fromId)
        : this.db
            .selectFrom('events')
            .select('events.id')
            .where(this.where(f))
            .$if(start !== null, (qb) => qb.where('events.id', '>=', start!.fromId))
            .orderBy('events.id', walk.reversed ? 'desc' : 'asc')
            .limit(walk.limit)
            .offset(walk.offset);
    return this.db.selectFrom('events').selectAll('events').where('events.id', 'in', ids).orderBy('events.id', 'asc');
  }

  /**
   * Where the entry at `offset` of the filter's list is, from the list's counts per run of ids
   * (`event_pages`, migration 0033). `null` when the filter is not one of the counted lists (it
   * filters by type, state or text) or the counts end before the offset.
   */
  private async pageStart(f: EventFilter, offset: number) {
    if (f.text || f.state !== undefined || (f.eventTypes && f.eventTypes.length > 0)) return null;
    if (f.chapterId !== undefined && f.playerId !== undefined) return null;
    const lists: Array<['org' | 'chapter' | 'player', number]> = [];
    if (f.chapterId !== undefined) lists.push(['chapter', f.chapterId]);
    if (f.playerId !== undefined) lists.push(['player', f.playerId]);
    if (withDefaults(f)) lists.push(['chapter', 0]);
    if (lists.length === 0) lists.push(['org', 0]);
    // One range of the primary key per list (an OR of them is planned as a search of the whole organization).
    const rows = await lists
      .map(([scope, id]) =>
        this.db
          .selectFrom('event_pages')
          .select(['bucket', 'n'])
          .where('organization_id', '=', f.organizationId)
          .where('scope', '=', scope)
          .where('scope_id', '=', id),
      )
      .reduce((all, next) => all.unionAll(next))
      .execute();
    const byRun = new Map<number, number>();
    for (const row of rows) byRun.set(Number(row.bucket), (byRun.get(Number(row.bucket)) ?? 0) + Number(row.n));
    const runs = [...byRun].sort((x, y) => x[0] - y[0]).map(([bucket, n]) => ({ bucket, n }));
    return startOf(runs, offset);
  }

  /**
   * Several ranges' ids in one id order, each range ordered in a subquery of its own: that is the
   * shape PostgreSQL merges (Merge Append) rather than sorts, and SQLite merges too (MERGE UNION ALL).
   */
  private merged(f: EventFilter, ranges: ReturnType<EventsRepository['ranges']>, page: Limit, fromId?: number) {
    return ranges
      .map((range, i) =>
        this.db
          .selectFrom(
            this.db
              .selectFrom('events')
              .select('events.id')
              .where((eb) => eb.and([this.others(f)(eb), range(eb)]))
              .$if(fromId !== undefined, (qb) => qb.where('events.id', '>=', fromId!))
              .orderBy('events.id', 'asc')
              .as(`range${i}`),
          )
          .select(`range${i}.id` as 'range0.id'),
      )
      .reduce((all, next) => all.unionAll(next))
      .orderBy('id', 'asc')
      .limit(page.limit)
      .offset(page.offset);
  }

  /** How many events match: from the maintained counts, unless the filter searches text. */
  async count(f: EventFilter): Promise<number> {
    const row = f.text
      ? await this.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where(this.where(f))
          .executeTakeFirstOrThrow()
      : await this.countedTotal(f).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Counts by `state` (or by `event_type`) of the matching events. */
  async countBy(f: EventFilter, column: 'state' | 'event_type'): Promise<Record<string, number>> {
    const rows = f.text
      ? await this.db
          .selectFrom('events')
          .select((eb) => [eb.ref(`events.${column}`).as('k'), eb.fn.countAll<number>().as('n')])
          .where(this.where(f))
          .groupBy(`events.${column}`)
          .execute()
      : await this.counted(f)
          .select((eb) => [eb.ref(column).as('k'), eb.fn.sum<number>('n').as('n')])
          .groupBy(column)
          .execute();
    // A state whose shards sum to nothing has no events (PostgreSQL's counters, migration 0035).
    return Object.fromEntries(rows.filter((r) => Number(r.n) !== 0).map((r) => [r.k, Number(r.n)]));
  }

  /** The sum of the `event_counts` rows a filter without text covers: its count, as a query of one row `n`. */
  private countedTotal(f: EventFilter) {
    return this.counted(f).select((eb) => eb.fn.coalesce(eb.fn.sum<number>('n'), eb.lit(0)).as('n'));
  }

  /** The rows of `event_counts` (migration 0021) that a filter without text covers. */
  private counted(f: EventFilter) {
    return this.db
      .selectFrom('event_counts')
      .where('organization_id', '=', f.organizationId)
      .where((eb) => {
        const places = [];
        if (f.chapterId !== undefined) places.push(eb('chapter_id', '=', f.chapterId));
        if (f.playerId !== undefined) {
          const chapters = eb
            .selectFrom('chapters')
            .select('chapters.id')
            .where('chapters.player_id', '=', f.playerId)
            .where('chapters.organization_id', '=', f.organizationId);
          places.push(eb('chapter_id', 'in', chapters));
        }
        if (withDefaults(f)) places.push(eb('chapter_id', '=', 0));
        return places.length === 0 ? eb.lit(true) : eb.or(places);
      })
      .$if(!!f.eventTypes && f.eventTypes.length > 0, (qb) => qb.where('event_type', 'in', [...f.eventTypes!]))
      .$if(f.state !== undefined, (qb) => qb.where('state', '=', f.state!));
  }

  // Ids are unique across organizations: the row is cached by id alone and its organization compared
  // on the way out, so another organization's id still answers nothing.
  findById(organizationId: number, id: number): MaybePromise<EventRow | undefined> {
    const row = cachedRead(
      this.db,
      'event',
      id,
      (db) => db.selectFrom('events').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst(),
      // One row of the events table, of its organization: another organization's writes leave it, and
      // so do its own writes that add events or change other ones.
      (found) => found.organization_id,
      { table: 'events', id },
    );
    return mapMaybe(row, (found) => (found?.organization_id === organizationId ? found : undefined));
  }

  insert(row: NewEventRow): Promise<EventRow> {
    return this.db
      .insertInto('events')
      .values((eb) => ({ ...row, player_id: this.playerOf(eb, row.chapter_id) }))
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Applies `patch`; `updated_at` becomes `now`, or stays if it is later (a clock set back never moves it back). */
  update(organizationId: number, id: number, patch: Omit<EventPatch, 'updated_at'>, now: number): Promise<EventRow | undefined> {
    const updatedAt = sql<number>`case when updated_at > ${now} then updated_at else ${now} end`;
    return this.db
      .updateTable('events')
      .set((eb) => ({
        ...patch,
        ...(patch.chapter_id === undefined ? {} : { player_id: this.playerOf(eb, patch.chapter_id) }),
        updated_at: updatedAt,
      }))
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  /** `player_id` follows `chapter_id`: the chapter's player, read in the same statement. */
  private playerOf(eb: ExpressionBuilder<DB, 'events'>, chapterId: number | null | undefined) {
    return chapterId == null ? null : eb.selectFrom('chapters').select('chapters.player_id').where('chapters.id', '=', chapterId);
  }

  remove(organizationId: number, id: number): Promise<EventRow | undefined> {
    return this.db.deleteFrom('events').where('organization_id', '=', organizationId).where('id', '=', id).returningAll().executeTakeFirst();
  }

  // ---- placement lookups (read-only over chapters/players) ----

  // Every CTA written or listed by chapter asks it first: cached, and only its organization's writes
  // to chapters or players drop it (both rows are required to be the organization's).
  findChapter(organizationId: number, chapterId: number): MaybePromise<ChapterOwner | undefined> {
    return cachedRead(
      this.db,
      'chapter-owner',
      `${organizationId}:${chapterId}`,
      (db) =>
        db
          .selectFrom('chapters')
          .innerJoin('players', (join) => join.onRef('players.id', '=', 'chapters.player_id').on('players.organization_id', '=', organizationId))
          .select(['chapters.id', 'chapters.player_id', 'chapters.video_id', 'chapters.position', 'players.uuid as player_uuid'])
          .where('chapters.organization_id', '=', organizationId)
          .where('chapters.id', '=', chapterId)
          .executeTakeFirst(),
      () => organizationId,
    );
  }

  /** The player's first chapter (lowest position, then lowest id). */
  firstChapterOf(organizationId: number, playerId: number): Promise<{ id: number } | undefined> {
    return this.db
      .selectFrom('chapters')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where('player_id', '=', playerId)
      .orderBy('position', 'asc')
      .orderBy('id', 'asc')
      .limit(1)
      .executeTakeFirst();
  }

  // Asked by every player's CTA list and cta_meta: cached, dropped only by its organization's player writes.
  findPlayerById(organizationId: number, id: number): MaybePromise<{ id: number; uuid: string } | undefined> {
    return cachedRead(
      this.db,
      'player-ref-by-id',
      `${organizationId}:${id}`,
      (db) => db.selectFrom('players').select(['id', 'uuid']).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst(),
      () => organizationId,
    );
  }

  findPlayerByUuid(organizationId: number, uuid: string): MaybePromise<{ id: number; uuid: string } | undefined> {
    return cachedRead(
      this.db,
      'player-ref-by-uuid',
      `${organizationId}:${uuid}`,
      (db) => db.selectFrom('players').select(['id', 'uuid']).where('organization_id', '=', organizationId).where('uuid', '=', uuid).executeTakeFirst(),
      () => organizationId,
    );
  }
}
