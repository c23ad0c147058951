import { Type, type Static } from 'typebox';

/** `per_page` 1..200 (more is a 422); `page` ≥ 1, meaningful only with per_page. */
export const PagingQuery = {
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, description: 'Items per page (1..200)' })),
  // Bounded so that (page - 1) * per_page stays a safe integer and fits a SQL OFFSET.
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Page number, default 1; applies only with per_page' })),
};

export const Summary = Type.Object({
  page: Type.Integer(),
  per_page: Type.Integer(),
  count: Type.Integer({ description: 'Total number of matching records' }),
});
export type Summary = Static<typeof Summary>;

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

/** Summary of a list: `count` is the total, `per_page` the page size (the number returned when not paged). */
export function summaryOf(page: Page, total: number, returned: number): Summary {
  return { page: page.page, per_page: page.paged ? page.perPage : returned, count: total };
}

/** The envelope `{<key>: items, summary}` used by the paged list operations. */
export function listEnvelope<K extends string, T>(key: K, items: T[], page: Page, total: number) {
  return { [key]: items, summary: summaryOf(page, total, items.length) } as { [P in K]: T[] } & { summary: Summary };
}

/**
 * DESIGN §2's rule for the reference's older lists (players, videos, accounts, …): a bare array
 * without per_page, the `{<key>: items, summary}` envelope with it.
 */
export function arrayOrEnvelope<K extends string, T>(key: K, items: T[], page: Page, total: number) {
  return page.paged ? listEnvelope(key, items, page, total) : items;
}
