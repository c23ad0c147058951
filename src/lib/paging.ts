/** Which slice of a list a caller asked for, in the domain's terms (offset and limit). */
export interface Page {
  limit: number;
  offset: number;
  page: number;
  perPage: number;
  /** True when the caller asked for a page (per_page given). */
  paged: boolean;
}

export function pageOf(query: { per_page?: number; page?: number }, defaultCap: number): Page {
  if (query.per_page === undefined) return { limit: defaultCap, offset: 0, page: 1, perPage: defaultCap, paged: false };
  const page = query.page ?? 1;
  return { limit: query.per_page, offset: (page - 1) * query.per_page, page, perPage: query.per_page, paged: true };
}

/**
 * One page of a list and the number of all matching records. A service may leave the count out of a
 * list that was not asked for by page (`paged` false: the whole list up to the cap), since no answer
 * shows it then; `total` is the items' count in that case.
 */
export interface Listing<T> {
  items: T[];
  total: number;
}
