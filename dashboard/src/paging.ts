/** One page of a list as the API answers it with per_page: its items and the total count. */
export type Listed<T> = { items: T[]; count: number } | { error: string };

/**
 * Page `page` of a list, newest first. The API lists by id (oldest first), so the count comes first
 * and the page is read from the end: the `perPage` items before the `(page - 1) * perPage` newest.
 */
export async function newestFirst<T>(perPage: number, page: number, fetchPage: (perPage: number, page: number) => Promise<Listed<T>>): Promise<Listed<T>> {
  const head = await fetchPage(1, 1);
  if ('error' in head) return head;
  const count = head.count;
  if (count === 0) return { items: [], count };
  const end = count - (page - 1) * perPage;
  const start = Math.max(0, end - perPage);
  const first = Math.floor(start / perPage) + 1;
  const last = Math.floor((end - 1) / perPage) + 1;
  const rows: T[] = [];
  for (let p = first; p <= last; p++) {
    const res = await fetchPage(perPage, p);
    if ('error' in res) return res;
    rows.push(...res.items);
  }
  const offset = (first - 1) * perPage;
  return { items: rows.slice(start - offset, end - offset).reverse(), count };
}
