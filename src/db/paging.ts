import { sql, type SelectQueryBuilder } from 'kysely';
import type { DB } from './schema.ts';

/**
 * Where to read a page of a list whose exact count is known: a page in the later half is read in
 * the opposite order from the end (an offset walks every entry before it, so the last page of a
 * million no longer walks them all) and turned round by the caller. `null`: past the end, no rows.
 */
export function nearerEnd(page: { limit: number; offset: number }, total: number | undefined): { limit: number; offset: number; reversed: boolean } | null {
  if (total === undefined || page.offset * 2 + page.limit <= total) return { ...page, reversed: false };
  if (page.offset >= total) return null;
  const end = Math.min(total, page.offset + page.limit);
  return { limit: end - page.offset, offset: total - end, reversed: true };
}

/**
 * The ids of one page of `filtered` (a query of one table with an `id`) in id order, for a deferred
 * join: read from an index alone, from the nearer end when `total` is known; a walk that would still
 * be long starts from the run of ids the page's first entry is in, when `runs` gives the list's
 * counts per run (`row_pages`). `null`: past the end.
 */
export async function pageIdsOf(
  filtered: SelectQueryBuilder<DB, any, object>,
  page: { limit: number; offset: number },
  total: number | undefined,
  runs?: () => Promise<ReadonlyArray<{ bucket: number; n: number }>>,
) {
  const read = nearerEnd(page, total);
  if (!read) return null;
  const start = runs && read.offset > DEEP_WALK ? startOf(await runs(), page.offset) : null;
  const walk = start ? fromRun(page, start) : read;
  return filtered
    .select(sql<number>`id`.as('id'))
    .$if(start !== null, (qb) => qb.where(sql.ref('id'), '>=', start!.fromId))
    .orderBy(sql`id`, walk.reversed ? 'desc' : 'asc')
    .limit(walk.limit)
    .offset(walk.offset);
}

/** The walk to a page from the start of its run (`startOf`): forward, skipping the run's entries before it. */
export function fromRun(page: { limit: number }, start: { skip: number }): { limit: number; offset: number; reversed: false } {
  return { limit: page.limit, offset: start.skip, reversed: false };
}

/**
 * Bits of an id that `event_pages` (migration 0033) and `row_pages` (migration 0034) group by: each
 * of their rows counts a list's entries in one run of 4,096 ids. Fixed by those migrations: changing
 * it needs one that rebuilds both tables.
 */
export const PAGE_RUN_BITS = 12;

/** A walk longer than this (index entries before the page) starts from the list's counts per run instead. */
export const DEEP_WALK = 2 ** (PAGE_RUN_BITS + 1);

/**
 * Where the entry at `offset` of a list is, from the list's counts per run of ids (in run order):
 * the first id of its run, and how many of the list's entries in that run come before it. Walking
 * from there costs at most one run instead of every entry before the page. `null`: past the counts.
 */
export function startOf(runs: ReadonlyArray<{ bucket: number; n: number }>, offset: number, bits = PAGE_RUN_BITS): { fromId: number; skip: number } | null {
  let before = 0;
  for (const run of runs) {
    const n = Number(run.n);
    if (before + n > offset) return { fromId: Number(run.bucket) * 2 ** bits, skip: offset - before };
    before += n;
  }
  return null;
}
