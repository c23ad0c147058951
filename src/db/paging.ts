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
