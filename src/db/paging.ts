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
 * join: read from an index alone, from the nearer end when `total` is known. `null`: past the end.
 */
export function pageIdsOf(filtered: SelectQueryBuilder<DB, any, object>, page: { limit: number; offset: number }, total: number | undefined) {
  const read = nearerEnd(page, total);
  if (!read) return null;
  return filtered
    .select(sql<number>`id`.as('id'))
    .orderBy(sql`id`, read.reversed ? 'desc' : 'asc')
    .limit(read.limit)
    .offset(read.offset);
}

/**
 * Bits of an id that `event_pages` (migration 0033) groups by: each of its rows counts a list's
 * events in one run of 4,096 ids. Fixed by that migration: changing it needs one that rebuilds the table.
 */
export const EVENT_PAGE_BITS = 12;

/**
 * Where the entry at `offset` of a list is, from the list's counts per run of ids (in run order):
 * the first id of its run, and how many of the list's entries in that run come before it. Walking
 * from there costs at most one run instead of every entry before the page. `null`: past the counts.
 */
export function startOf(runs: ReadonlyArray<{ bucket: number; n: number }>, offset: number, bits = EVENT_PAGE_BITS): { fromId: number; skip: number } | null {
  let before = 0;
  for (const run of runs) {
    const n = Number(run.n);
    if (before + n > offset) return { fromId: Number(run.bucket) * 2 ** bits, skip: offset - before };
    before += n;
  }
  return null;
}
