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
